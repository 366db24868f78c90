// Which files are inputs: classification by content and name, the scan that
// convert, split and pack share, and reading an input within its limit.
#include "ferry/input.h"

#include <gtest/gtest.h>

#include "testutil/test_util.h"

namespace ferry {
namespace {

const std::string kPng = "\x89PNG\r\n\x1a\n";
const std::string kJpeg = "\xFF\xD8\xFF\xE0";

TEST(InputTest, ImagesAreKnownByContentNotName) {
  EXPECT_EQ(ClassifyInput(kPng + "rest", "a.txt").cls, InputClass::kImage);
  EXPECT_EQ(ClassifyInput(kJpeg, "noext").format, image::Format::kJpeg);
  InputVerdict text = ClassifyInput("hello", "README.txt");
  EXPECT_EQ(text.cls, InputClass::kSkip);
  EXPECT_EQ(text.why.code(), Status::Code::kNotSupported);
  // Named like an image but is not one: a failure, not a skip.
  for (const char* name : {"a.png", "b/c.JPG", "d.jpeg", "x.Png"}) {
    InputVerdict v = ClassifyInput("hello", name);
    EXPECT_EQ(v.cls, InputClass::kFail) << name;
    EXPECT_NE(v.why.ToString().find("not a PNG or JPEG"), std::string::npos);
  }
  EXPECT_EQ(ClassifyInput("", "empty.png").cls, InputClass::kFail);
  EXPECT_EQ(ClassifyInput("", ".png").cls, InputClass::kSkip);  // hidden name
  EXPECT_EQ(ClassifyInput("", "dir.png/file").cls, InputClass::kSkip);
}

TEST(InputTest, ScanSortsImagesSkipsAndFailuresWhateverTheJobs) {
  auto env = NewMemEnv();
  test::WriteFile(env.get(), "t/b/2.png", kPng);
  test::WriteFile(env.get(), "t/a/1.jpg", kJpeg);
  test::WriteFile(env.get(), "t/a/notes.txt", "n");
  test::WriteFile(env.get(), "t/a/.DS_Store", "x");
  test::WriteFile(env.get(), "t/a/fake.png", "text");
  test::WriteFile(env.get(), "t/c/0001.json", "{}");
  test::WriteFile(env.get(), "t/c/0001.png", kPng);
  for (int jobs : {1, 2, 4}) {
    InputScanOptions o;
    o.jobs = jobs;
    auto scan = ScanInputs(env.get(), "t", o);
    ASSERT_OK(scan.status());
    std::vector<std::string> images = {"a/1.jpg", "b/2.png", "c/0001.png"};
    EXPECT_EQ(scan->images, images);
    ASSERT_EQ(scan->skipped.size(), 3u);
    EXPECT_EQ(scan->skipped[0].path, "a/.DS_Store");
    EXPECT_EQ(scan->skipped[1].path, "a/notes.txt");
    EXPECT_EQ(scan->skipped[2].path, "c/0001.json");
    ASSERT_EQ(scan->failed.size(), 1u);
    EXPECT_EQ(scan->failed[0].path, "a/fake.png");
  }
  InputScanOptions hidden;
  hidden.include_hidden = true;
  auto scan = ScanInputs(env.get(), "t", hidden);
  ASSERT_OK(scan.status());
  EXPECT_EQ(scan->skipped[0].path, "a/.DS_Store");  // now sniffed: not an image
  EXPECT_EQ(scan->skipped[0].status.message(), "not an image");
}

TEST(InputTest, ReadInputRefusesFilesAboveTheLimitBeforeReading) {
  auto env = NewMemEnv();
  test::WriteFile(env.get(), "big.png", kPng + std::string(100, 'x'));
  auto over = ReadInputFile(env.get(), "big.png", 107);
  EXPECT_EQ(over.status().code(), Status::Code::kResourceExhausted);
  EXPECT_NE(over.status().ToString().find("above the limit"),
            std::string::npos);
  auto ok = ReadInputFile(env.get(), "big.png", 108);
  ASSERT_OK(ok.status());
  EXPECT_EQ(ok->size(), 108u);
  auto empty = ReadInputFile(env.get(), "missing", 10);
  EXPECT_TRUE(empty.status().IsNotFound());
}

}  // namespace
}  // namespace ferry
