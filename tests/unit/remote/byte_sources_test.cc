#include "remote/byte_sources.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "testutil/test_util.h"

namespace ferry::remote {
namespace {

// Past the file system's timestamp tick (a coarse clock: ~4 ms), so that a
// write after it moves mtime and ctime.
void NextTick() { std::this_thread::sleep_for(std::chrono::milliseconds(30)); }

// path written with n bytes, then opened as a source.
std::unique_ptr<FileSource> Opened(const std::string& path, size_t n) {
  Env* env = Env::Default();
  test::WriteFile(env, path, std::string(n, 'a'));
  auto src = FileSource::Open(env, path);
  EXPECT_TRUE(src.ok()) << src.status().ToString();
  return src.ok() ? std::move(*src) : nullptr;
}

TEST(FileSourceTest, AnUntouchedFileIsUnchanged) {
  test::ScratchDir dir;
  auto src = Opened(dir.Join("f"), 100000);
  ASSERT_NE(src, nullptr);
  NextTick();
  EXPECT_TRUE(src->CheckUnchanged().ok());
}

// A file rewritten in place at its size while it is uploaded would go up
// as a mix of old and new bytes: "changed while being uploaded" (before,
// only its size was compared, and the put succeeded).
TEST(FileSourceTest, AFileRewrittenInPlaceAtItsSizeChanged) {
  test::ScratchDir dir;
  const std::string path = dir.Join("f");
  auto src = Opened(path, 100000);
  ASSERT_NE(src, nullptr);
  NextTick();
  FILE* f = std::fopen(path.c_str(), "r+b");
  ASSERT_NE(f, nullptr);
  std::fseek(f, 100, SEEK_SET);
  std::fputs("BBBB", f);
  std::fclose(f);
  Status s = src->CheckUnchanged();
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.ToString().find("changed while being uploaded"),
            std::string::npos);
}

TEST(FileSourceTest, AnotherFileUnderItsNameChanged) {
  test::ScratchDir dir;
  const std::string path = dir.Join("f");
  auto src = Opened(path, 1000);
  ASSERT_NE(src, nullptr);
  test::WriteFile(Env::Default(), dir.Join("g"), std::string(1000, 'a'));
  ASSERT_EQ(::rename(dir.Join("g").c_str(), path.c_str()), 0);
  EXPECT_FALSE(src->CheckUnchanged().ok());
}

// Cut short after Open (its size now smaller): changed.
TEST(FileSourceTest, AFileCutShortChanged) {
  test::ScratchDir dir;
  const std::string path = dir.Join("f");
  auto src = Opened(path, 1000);
  ASSERT_NE(src, nullptr);
  ASSERT_EQ(::truncate(path.c_str(), 10), 0);
  EXPECT_FALSE(src->CheckUnchanged().ok());
}

}  // namespace
}  // namespace ferry::remote
