#include "remote/byte_sources.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <utility>

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

// A device or FIFO has no size to upload (stat says 0): refused by name,
// never opened (a FIFO would wait for a writer). put uploaded /dev/zero
// and `echo x | ferry put /dev/stdin` as empty objects.
TEST(FileSourceTest, ADeviceOrFifoIsRefusedUnopened) {
  test::ScratchDir dir;
  const std::string fifo = dir.Join("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  // A writer is there, so a source that opened the FIFO would not hang.
  const int writer = ::open(fifo.c_str(), O_RDWR);
  ASSERT_GE(writer, 0);
  for (const auto& [path, type] :
       {std::pair<std::string, std::string>{fifo, "FIFO"},
        {"/dev/zero", "character device"}}) {
    auto src = FileSource::Open(Env::Default(), path);
    ASSERT_FALSE(src.ok()) << path;
    EXPECT_TRUE(src.status().IsInvalidArgument()) << src.status().ToString();
    EXPECT_NE(src.status().ToString().find(path + ": not a regular file (" +
                                           type + ")"),
              std::string::npos)
        << src.status().ToString();
  }
  ::close(writer);
}

// /proc files say size 0 and read bytes: uploaded as empty objects before.
TEST(FileSourceTest, AFileThatReadsPastItsSizeIsRefused) {
  auto src = FileSource::Open(Env::Default(), "/proc/self/status");
  ASSERT_FALSE(src.ok());
  EXPECT_TRUE(src.status().IsIOError()) << src.status().ToString();
  EXPECT_NE(src.status().ToString().find("changed while being uploaded"),
            std::string::npos)
      << src.status().ToString();
}

// A file found walking a folder must still be below it when opened: a
// link put in its place since the walk (here, already there) that leads
// outside fails, whatever its name says; links that stay inside are files.
TEST(FileSourceTest, AFileOpenedOutsideItsWalkedFolderIsRefused) {
  test::ScratchDir dir;
  Env* env = Env::Default();
  ASSERT_TRUE(env->CreateDirs(dir.Join("tree/sub")).ok());
  test::WriteFile(env, dir.Join("tree/sub/f"), "inside");
  test::WriteFile(env, dir.Join("secret"), "outside");
  ASSERT_EQ(::symlink(dir.Join("secret").c_str(), dir.Join("tree/z").c_str()),
            0);
  ASSERT_EQ(::symlink("sub/f", dir.Join("tree/in").c_str()), 0);
  ASSERT_EQ(::symlink(dir.Join("tree/sub").c_str(), dir.Join("link").c_str()),
            0);
  auto root = env->RealPath(dir.Join("tree"));
  ASSERT_TRUE(root.ok());
  auto out = FileSource::Open(env, dir.Join("tree/z"), *root);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().ToString().find("now leads outside"),
            std::string::npos)
      << out.status().ToString();
  EXPECT_TRUE(FileSource::Open(env, dir.Join("tree/in"), *root).ok());
  EXPECT_TRUE(FileSource::Open(env, dir.Join("tree/sub/f"), *root).ok());
  // Through a folder that became a link: still inside, or not.
  EXPECT_TRUE(FileSource::Open(env, dir.Join("link/f"), *root).ok());
  EXPECT_FALSE(
      FileSource::Open(env, dir.Join("link/f"), *root + "/sub/x").ok());
  // No root: no check (a file named on the command line).
  EXPECT_TRUE(FileSource::Open(env, dir.Join("tree/z")).ok());
}

}  // namespace
}  // namespace ferry::remote
