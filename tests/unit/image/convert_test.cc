#include "ferry/convert.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>

#include "ferry/atomic_file.h"
#include "ferry/fault_env.h"
#include "testutil/image_util.h"
#include "testutil/test_util.h"

namespace ferry {
namespace {

namespace fs = std::filesystem;
using Outcome = ConvertItem::Outcome;

class ConvertTest : public ::testing::Test {
 protected:
  void SetUp() override {
    src_ = dir_.Join("src");
    fs::create_directories(src_);
    dst_ = dir_.Join("dst");
    fs::copy(test::SamplesDir() + "/dataset/cat", src_ + "/cat",
             fs::copy_options::recursive);
    fs::copy(test::SamplesDir() + "/images/png/rgba8.png", src_ + "/rgba.png");
    test::WriteFile(Env::Default(), src_ + "/notes.txt", "not an image");
    std::string png = test::SampleBytes("images/png/rgb8.png");
    test::WriteFile(Env::Default(), src_ + "/broken/truncated.png",
                    png.substr(0, png.size() / 2));
    test::WriteFile(Env::Default(), src_ + "/broken/fake.png",
                    "text, named like a PNG");
    opt_.transcode.resize.width = opt_.transcode.resize.height = 64;
  }

  std::map<std::string, ConvertItem> Run(ConvertSummary* sum,
                                         const ConvertOptions* o = nullptr) {
    std::map<std::string, ConvertItem> items;
    auto r = ConvertTree(src_, dst_, o ? *o : opt_,
                         [&](const ConvertItem& i) { items[i.input] = i; });
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (r.ok() && sum) *sum = *r;
    return items;
  }

  // Output name -> bytes, ignoring ferry's own state files.
  std::map<std::string, std::string> Outputs() {
    std::map<std::string, std::string> out;
    auto files = ListFilesRecursive(Env::Default(), dst_);
    if (!files.ok()) return out;
    for (const auto& rel : *files) {
      if (rel.rfind(".ferry", 0) == 0) continue;
      out[rel] = test::ReadFile(Env::Default(), dst_ + "/" + rel);
    }
    return out;
  }

  test::ScratchDir dir_;
  std::string src_, dst_;
  ConvertOptions opt_;
};

TEST_F(ConvertTest, ConvertsEveryImageAndReportsEachBadOne) {
  ConvertSummary sum;
  auto items = Run(&sum);
  EXPECT_EQ(sum.converted, 21u);  // 20 cats + rgba
  EXPECT_EQ(sum.skipped, 1u);     // notes.txt
  EXPECT_EQ(sum.failed, 2u);
  EXPECT_EQ(items["notes.txt"].outcome, Outcome::kSkipped);
  EXPECT_EQ(items["broken/truncated.png"].outcome, Outcome::kFailed);
  EXPECT_NE(items["broken/truncated.png"].error.ToString().find("truncated"),
            std::string::npos);
  EXPECT_EQ(items["broken/fake.png"].outcome, Outcome::kFailed);
  EXPECT_EQ(items["rgba.png"].output, "rgba.jpg");
  auto outputs = Outputs();
  EXPECT_EQ(outputs.size(), 21u);
  for (const auto& [name, bytes] : outputs) {
    auto img = image::DecodeJpeg(bytes, {});
    ASSERT_TRUE(img.ok()) << name;
    EXPECT_EQ(std::max(img->width, img->height), 64) << name;
  }
  EXPECT_FALSE(fs::exists(dst_ + "/broken/truncated.jpg"));
}

TEST_F(ConvertTest, RerunKeepsUpToDateOutputsAndRedoesChangedInputs) {
  ConvertSummary sum;
  Run(&sum);
  auto before = fs::last_write_time(dst_ + "/rgba.jpg");
  Run(&sum);
  EXPECT_EQ(sum.converted, 0u);
  EXPECT_EQ(sum.up_to_date, 21u);
  EXPECT_EQ(fs::last_write_time(dst_ + "/rgba.jpg"), before);
  // A newer input is converted again; the rest stay.
  fs::last_write_time(src_ + "/rgba.png", fs::file_time_type::clock::now() +
                                              std::chrono::seconds(5));
  auto items = Run(&sum);
  EXPECT_EQ(sum.converted, 1u);
  EXPECT_EQ(items["rgba.png"].outcome, Outcome::kConverted);
}

TEST_F(ConvertTest, ChangedOptionsMakeEveryOutputStale) {
  ConvertSummary sum;
  Run(&sum);
  ConvertOptions bigger = opt_;
  bigger.transcode.resize.width = bigger.transcode.resize.height = 32;
  Run(&sum, &bigger);
  EXPECT_EQ(sum.converted, 21u);
  Run(&sum, &bigger);
  EXPECT_EQ(sum.converted, 0u);
}

TEST_F(ConvertTest, OutputIsTheSameWhateverTheThreadCount) {
  ConvertSummary sum;
  opt_.jobs = 1;
  Run(&sum);
  auto one = Outputs();
  fs::remove_all(dst_);
  opt_.jobs = 3;
  Run(&sum);
  EXPECT_EQ(Outputs(), one);
}

TEST_F(ConvertTest, DryRunWritesNothing) {
  opt_.dry_run = true;
  ConvertSummary sum;
  auto items = Run(&sum);
  EXPECT_EQ(sum.would_convert, 21u);
  EXPECT_EQ(sum.failed, 2u);
  EXPECT_FALSE(fs::exists(dst_));
}

TEST_F(ConvertTest, StaleTempFilesOfAKilledRunAreRemoved) {
  test::WriteFile(Env::Default(), dst_ + "/cat/cat_000.jpg.tmp-0123456789ab",
                  "half");
  ConvertSummary sum;
  Run(&sum);
  EXPECT_FALSE(fs::exists(dst_ + "/cat/cat_000.jpg.tmp-0123456789ab"));
}

TEST_F(ConvertTest, CollidingOutputNamesFailTheSecondInput) {
  fs::copy(test::SamplesDir() + "/images/jpeg/baseline.jpg",
           src_ + "/rgba.jpg");
  ConvertSummary sum;
  auto items = Run(&sum);
  EXPECT_EQ(items["rgba.jpg"].outcome, Outcome::kConverted);  // sorted first
  EXPECT_EQ(items["rgba.png"].outcome, Outcome::kFailed);
  EXPECT_NE(
      items["rgba.png"].error.ToString().find("already made from rgba.jpg"),
      std::string::npos);
}

TEST_F(ConvertTest, FailuresMidRunLeaveNoPartialOutputAndARerunFinishes) {
  for (int n : {3, 10, 25, 60}) {
    SCOPED_TRACE(n);
    fs::remove_all(dst_);
    FaultInjectionEnv fenv(Env::Default());
    fenv.FailNthOperation(n);
    ConvertOptions o = opt_;
    o.env = &fenv;
    o.jobs = 2;
    (void)ConvertTree(src_, dst_, o, [](const ConvertItem&) {});
    for (const auto& [name, bytes] : Outputs()) {
      EXPECT_FALSE(IsAtomicTempName(name)) << name;
      EXPECT_TRUE(image::DecodeJpeg(bytes, {}).ok()) << name;
    }
    ConvertSummary sum;
    Run(&sum);
    EXPECT_EQ(sum.converted + sum.up_to_date, 21u);
    EXPECT_EQ(Outputs().size(), 21u);
  }
}

TEST_F(ConvertTest, ASecondWriterOnTheSameDestinationIsRefused) {
  ASSERT_OK(Env::Default()->CreateDirs(dst_));
  auto lock = Env::Default()->LockFile(dst_ + "/.ferry-convert.lock", false);
  ASSERT_OK(lock.status());
  auto r = ConvertTree(src_, dst_, opt_, [](const ConvertItem&) {});
  EXPECT_TRUE(r.status().IsUnavailable()) << r.status().ToString();
}

TEST_F(ConvertTest, ASingleFileConvertsToTheNamedOutput) {
  auto r = ConvertTree(src_ + "/rgba.png", dir_.Join("one.jpg"), opt_,
                       [](const ConvertItem&) {});
  ASSERT_OK(r.status());
  EXPECT_EQ(r->converted, 1u);
  EXPECT_TRUE(fs::exists(dir_.Join("one.jpg")));
}

TEST(JpegOutputNameTest, ReplacesTheExtension) {
  EXPECT_EQ(JpegOutputName("a/b.png"), "a/b.jpg");
  EXPECT_EQ(JpegOutputName("a/b.tar.PNG"), "a/b.tar.jpg");
  EXPECT_EQ(JpegOutputName("a.d/noext"), "a.d/noext.jpg");
  EXPECT_EQ(JpegOutputName(".hidden"), ".hidden.jpg");
}

TEST(IccTest, ProfilesSurviveWhenAskedFor) {
  const std::string profile(3000, 'I');
  // PNG: an iCCP chunk.
  std::string png = test::SampleBytes("images/png/rgb8.png");
  std::string iccp =
      std::string("test profile") + '\0' + '\0' + test::ZlibCompress(profile);
  png = png.substr(0, 33) + test::PngChunk("iCCP", iccp) + png.substr(33);
  image::DecodeOptions want;
  want.read_icc = true;
  EXPECT_EQ(image::DecodePng(png, want)->icc_profile, profile);
  EXPECT_EQ(image::DecodePng(png, {})->icc_profile, "");
  // Through transcode, into the JPEG, and back.
  image::JpegEncoder enc;
  image::TranscodeOptions t;
  t.keep_icc = true;
  auto jpeg = image::Transcode(png, t, &enc);
  ASSERT_OK(jpeg.status());
  EXPECT_EQ(image::DecodeJpeg(*jpeg, want)->icc_profile, profile);
  t.keep_icc = false;
  EXPECT_EQ(image::Transcode(png, t, &enc)->find("ICC_PROFILE"),
            std::string::npos);
}

}  // namespace
}  // namespace ferry
