// One conformance suite for every Env: POSIX (in a scratch directory) and
// in-memory must behave the same.
#include "ferry/env.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "testutil/test_util.h"

namespace ferry {
namespace {

struct PosixEnvFixture {
  test::ScratchDir dir;
  Env* env() { return Env::Default(); }
  std::string root() { return dir.path(); }
};

struct MemEnvFixture {
  std::unique_ptr<Env> mem = NewMemEnv();
  MemEnvFixture() { (void)mem->CreateDirs("/mem/root"); }
  Env* env() { return mem.get(); }
  std::string root() { return "/mem/root"; }
};

template <typename F>
class EnvConformanceTest : public ::testing::Test {
 protected:
  F f_;
  Env* env() { return f_.env(); }
  std::string P(const std::string& rel) { return f_.root() + "/" + rel; }
};

using Fixtures = ::testing::Types<PosixEnvFixture, MemEnvFixture>;
TYPED_TEST_SUITE(EnvConformanceTest, Fixtures);

TYPED_TEST(EnvConformanceTest, WriteThenReadSequentiallyRoundTrips) {
  std::string data(100000, 'x');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i % 251);
  test::WriteFile(this->env(), this->P("a.bin"), data);
  auto f = this->env()->NewSequentialFile(this->P("a.bin"));
  ASSERT_OK(f.status());
  std::string got, scratch(4096, '\0');
  for (;;) {
    std::string_view chunk;
    ASSERT_OK((*f)->Read(scratch.size(), &chunk, scratch.data()));
    if (chunk.empty()) break;
    got.append(chunk);
  }
  EXPECT_EQ(got, data);
}

TYPED_TEST(EnvConformanceTest, SkipMovesTheReadPosition) {
  test::WriteFile(this->env(), this->P("s"), "0123456789");
  auto f = this->env()->NewSequentialFile(this->P("s"));
  ASSERT_OK(f.status());
  ASSERT_OK((*f)->Skip(4));
  char scratch[3];
  std::string_view got;
  ASSERT_OK((*f)->Read(3, &got, scratch));
  EXPECT_EQ(got, "456");
}

TYPED_TEST(EnvConformanceTest, RandomAccessReadsAtOffsetsAndShortAtEnd) {
  test::WriteFile(this->env(), this->P("r"), "abcdefghij");
  auto f = this->env()->NewRandomAccessFile(this->P("r"));
  ASSERT_OK(f.status());
  char scratch[16];
  std::string_view got;
  ASSERT_OK((*f)->Read(3, 4, &got, scratch));
  EXPECT_EQ(got, "defg");
  ASSERT_OK((*f)->Read(8, 10, &got, scratch));
  EXPECT_EQ(got, "ij");
  ASSERT_OK((*f)->Read(20, 4, &got, scratch));
  EXPECT_EQ(got, "");
  EXPECT_EQ(*(*f)->Size(), 10u);
}

TYPED_TEST(EnvConformanceTest, MissingFileIsNotFound) {
  EXPECT_TRUE(
      this->env()->NewSequentialFile(this->P("nope")).status().IsNotFound());
  EXPECT_TRUE(
      this->env()->NewRandomAccessFile(this->P("nope")).status().IsNotFound());
  EXPECT_TRUE(this->env()->Stat(this->P("nope")).status().IsNotFound());
  EXPECT_TRUE(this->env()->RemoveFile(this->P("nope")).IsNotFound());
  EXPECT_FALSE(this->env()->FileExists(this->P("nope")));
}

TYPED_TEST(EnvConformanceTest, WritingIntoMissingDirectoryFails) {
  EXPECT_FALSE(this->env()->NewWritableFile(this->P("no/such/dir/f")).ok());
}

TYPED_TEST(EnvConformanceTest, NewWritableFileTruncates) {
  test::WriteFile(this->env(), this->P("t"), "long old content");
  test::WriteFile(this->env(), this->P("t"), "new");
  EXPECT_EQ(test::ReadFile(this->env(), this->P("t")), "new");
  EXPECT_EQ(this->env()->Stat(this->P("t"))->size, 3u);
}

TYPED_TEST(EnvConformanceTest, GetChildrenIsSortedAndMarksDirectories) {
  Env* env = this->env();
  test::WriteFile(env, this->P("d/b"), "");
  test::WriteFile(env, this->P("d/a"), "");
  test::WriteFile(env, this->P("d/c/x"), "");
  test::WriteFile(env, this->P("d/B"), "");
  auto kids = env->GetChildren(this->P("d"));
  ASSERT_OK(kids.status());
  ASSERT_EQ(kids->size(), 4u);
  EXPECT_EQ((*kids)[0].name, "B");
  EXPECT_EQ((*kids)[1].name, "a");
  EXPECT_EQ((*kids)[2].name, "b");
  EXPECT_EQ((*kids)[3].name, "c");
  EXPECT_TRUE((*kids)[3].is_dir);
  EXPECT_FALSE((*kids)[0].is_dir);
}

TYPED_TEST(EnvConformanceTest, ListFilesRecursiveSortsWholeRelativePaths) {
  Env* env = this->env();
  for (const char* f : {"a.txt", "a/x", "a/b/y", "b", "c/é.png"}) {
    test::WriteFile(env, this->P(std::string("tree/") + f), f);
  }
  auto files = ListFilesRecursive(env, this->P("tree"));
  ASSERT_OK(files.status());
  std::vector<std::string> want = {"a.txt", "a/b/y", "a/x", "b", "c/é.png"};
  EXPECT_EQ(*files, want);
}

TYPED_TEST(EnvConformanceTest, ListFilesRecursiveOfAFileIsItself) {
  test::WriteFile(this->env(), this->P("single"), "1");
  auto files = ListFilesRecursive(this->env(), this->P("single"));
  ASSERT_OK(files.status());
  EXPECT_EQ(*files, std::vector<std::string>{""});
}

TYPED_TEST(EnvConformanceTest, RenameReplacesTargetAtomically) {
  Env* env = this->env();
  test::WriteFile(env, this->P("from"), "new");
  test::WriteFile(env, this->P("to"), "old");
  ASSERT_OK(env->RenameFile(this->P("from"), this->P("to")));
  EXPECT_EQ(test::ReadFile(env, this->P("to")), "new");
  EXPECT_FALSE(env->FileExists(this->P("from")));
}

TYPED_TEST(EnvConformanceTest, CreateDirsMakesParentsAndIsIdempotent) {
  Env* env = this->env();
  ASSERT_OK(env->CreateDirs(this->P("x/y/z")));
  ASSERT_OK(env->CreateDirs(this->P("x/y/z")));
  EXPECT_TRUE(env->Stat(this->P("x/y"))->is_dir);
  ASSERT_OK(env->SyncDir(this->P("x/y")));
  EXPECT_FALSE(env->RemoveDir(this->P("x/y")).ok());  // not empty
  ASSERT_OK(env->RemoveDir(this->P("x/y/z")));
  ASSERT_OK(env->RemoveDir(this->P("x/y")));
}

TYPED_TEST(EnvConformanceTest, LockExcludesSecondHolderUntilReleased) {
  Env* env = this->env();
  auto first = env->LockFile(this->P("LOCK"), /*wait=*/false);
  ASSERT_OK(first.status());
  EXPECT_TRUE(env->LockFile(this->P("LOCK"), false).status().IsUnavailable());
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    auto second = env->LockFile(this->P("LOCK"), /*wait=*/true);
    got = second.ok();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(got);
  first->reset();  // release
  waiter.join();
  EXPECT_TRUE(got);
}

TEST(PathTest, JoinAndDirName) {
  EXPECT_EQ(JoinPath("a", "b"), "a/b");
  EXPECT_EQ(JoinPath("a/", "b"), "a/b");
  EXPECT_EQ(JoinPath("a", "/b"), "a/b");
  EXPECT_EQ(JoinPath("", "b"), "b");
  EXPECT_EQ(JoinPath("a", ""), "a");
  EXPECT_EQ(DirName("a/b/c"), "a/b");
  EXPECT_EQ(DirName("c"), ".");
  EXPECT_EQ(DirName("/c"), "/");
  EXPECT_EQ(DirName("a/b/"), "a");
}

}  // namespace
}  // namespace ferry

namespace ferry {
namespace {

TEST(PosixEnvTest, ListFilesIncludesFileLinksButNotDirectoryLinks) {
  test::ScratchDir dir;
  Env* env = Env::Default();
  test::WriteFile(env, dir.Join("t/real/f"), "f");
  ASSERT_EQ(::symlink("real/f", dir.Join("t/link_to_file").c_str()), 0);
  ASSERT_EQ(::symlink("real", dir.Join("t/link_to_dir").c_str()), 0);
  ASSERT_EQ(::symlink("..", dir.Join("t/real/loop").c_str()), 0);
  auto files = ListFilesRecursive(env, dir.Join("t"));
  ASSERT_OK(files.status());
  std::vector<std::string> want = {"link_to_file", "real/f"};
  EXPECT_EQ(*files, want);
  // A dangling link is an entry that cannot be read: the listing says so.
  ASSERT_EQ(::symlink("nowhere", dir.Join("t/dangling").c_str()), 0);
  EXPECT_FALSE(ListFilesRecursive(env, dir.Join("t")).ok());
}

// A link in a lock file's place had the lock file created (or locked)
// wherever it pointed; a FIFO there opens at once, not waiting for a writer.
TEST(PosixEnvTest, LockFileFollowsNoLinkAndWaitsForNoFifo) {
  ::alarm(60);
  test::ScratchDir dir;
  Env* env = Env::Default();
  const std::string lock = dir.Join("lock");
  ASSERT_EQ(::symlink(dir.Join("elsewhere").c_str(), lock.c_str()), 0);
  auto l = env->LockFile(lock, /*wait=*/false);
  EXPECT_TRUE(l.status().IsFailedPrecondition()) << l.status().ToString();
  EXPECT_NE(l.status().message().find("symbolic link"), std::string::npos);
  EXPECT_FALSE(env->FileExists(dir.Join("elsewhere")));
  ASSERT_EQ(::unlink(lock.c_str()), 0);
  ASSERT_EQ(::mkfifo(lock.c_str(), 0644), 0);
  l = env->LockFile(lock, /*wait=*/false);
  EXPECT_OK(l.status());
  if (l.ok()) l->reset();  // released
  // A socket: "No such device or address" said nothing.
  ASSERT_EQ(::unlink(lock.c_str()), 0);
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(lock.size(), sizeof addr.sun_path);
  std::memcpy(addr.sun_path, lock.c_str(), lock.size() + 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  l = env->LockFile(lock, /*wait=*/false);
  EXPECT_TRUE(l.status().IsFailedPrecondition()) << l.status().ToString();
  EXPECT_NE(l.status().message().find("is a socket"), std::string::npos);
  ::close(fd);
  ::alarm(0);
}

}  // namespace
}  // namespace ferry
