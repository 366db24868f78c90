#include "remote/byte_sources.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "testutil/test_util.h"

namespace ferry::remote {
namespace {

// Past the file system's timestamp tick (a coarse clock: ~4 ms), so that a
// write after it moves mtime and ctime.
void NextTick() { std::this_thread::sleep_for(std::chrono::milliseconds(30)); }

TEST(FileSourceTest, AnUntouchedFileIsUnchanged) {
  test::ScratchDir dir;
  Env* env = Env::Default();
  test::WriteFile(env, dir.Join("f"), std::string(100000, 'a'));
  auto src = FileSource::Open(env, dir.Join("f"));
  ASSERT_TRUE(src.ok()) << src.status().ToString();
  NextTick();
  EXPECT_TRUE((*src)->CheckUnchanged().ok());
}

// A file rewritten in place at its size while it is uploaded would go up
// as a mix of old and new bytes: "changed while being uploaded" (before,
// only its size was compared, and the put succeeded).
TEST(FileSourceTest, AFileRewrittenInPlaceAtItsSizeChanged) {
  test::ScratchDir dir;
  Env* env = Env::Default();
  const std::string path = dir.Join("f");
  test::WriteFile(env, path, std::string(100000, 'a'));
  auto src = FileSource::Open(env, path);
  ASSERT_TRUE(src.ok()) << src.status().ToString();
  NextTick();
  FILE* f = std::fopen(path.c_str(), "r+b");
  ASSERT_NE(f, nullptr);
  std::fseek(f, 100, SEEK_SET);
  std::fputs("BBBB", f);
  std::fclose(f);
  Status s = (*src)->CheckUnchanged();
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.ToString().find("changed while being uploaded"),
            std::string::npos);
}

TEST(FileSourceTest, AnotherFileUnderItsNameChanged) {
  test::ScratchDir dir;
  Env* env = Env::Default();
  const std::string path = dir.Join("f");
  test::WriteFile(env, path, std::string(1000, 'a'));
  auto src = FileSource::Open(env, path);
  ASSERT_TRUE(src.ok()) << src.status().ToString();
  test::WriteFile(env, dir.Join("g"), std::string(1000, 'a'));
  ASSERT_EQ(::rename(dir.Join("g").c_str(), path.c_str()), 0);
  EXPECT_FALSE((*src)->CheckUnchanged().ok());
}

}  // namespace
}  // namespace ferry::remote
