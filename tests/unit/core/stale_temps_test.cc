// RemoveStaleTemps judges a temporary file by its writer's lock (and its
// age), not by the pid in its name: a writer on another machine, or in
// another pid namespace, has a pid that means nothing here.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "ferry/atomic_file.h"
#include "testutil/test_util.h"

namespace ferry {
namespace {

StaleTempOptions Shared() {
  StaleTempOptions o;
  o.shared = true;
  return o;
}

// A child process that holds an AtomicFileWriter open on dir/name and
// reports its temporary's path, until killed.
class ChildWriter {
 public:
  ChildWriter(const std::string& dir, const std::string& name) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    pid_ = test::ForkAlone();
    if (pid_ == 0) {
      ::close(fds[0]);
      auto w = AtomicFileWriter::Create(Env::Default(), JoinPath(dir, name));
      std::string out = w.ok() && (*w)->Append("partial").ok()
                            ? (*w)->temp_path()
                            : std::string("error");
      out += '\n';
      (void)!::write(fds[1], out.data(), out.size());
      for (;;) ::pause();
    }
    ::close(fds[1]);
    char buf[4096];
    ssize_t n = 0, got;
    while ((got = ::read(fds[0], buf + n, sizeof(buf) - n)) > 0) {
      n += got;
      if (buf[n - 1] == '\n') break;
    }
    ::close(fds[0]);
    temp_.assign(buf, n > 0 ? n - 1 : 0);
  }
  ~ChildWriter() { Kill(); }
  void Kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  const std::string& temp() const { return temp_; }

 private:
  pid_t pid_ = -1;
  std::string temp_;
};

TEST(StaleTempsTest, AForkedLiveWritersTempIsKeptHoweverOldThenRemoved) {
  test::ScratchDir dir;
  Env* env = Env::Default();
  ChildWriter child(dir.path(), "shard");
  ASSERT_TRUE(IsAtomicTempName(child.temp())) << child.temp();
  test::AgeFile(child.temp(), 3600);
  // Alive, holding its lock: kept by the shared rule (no pid asked) and
  // the local one alike.
  EXPECT_EQ(RemoveStaleTemps(env, dir.path(), Shared()), 0u);
  EXPECT_EQ(RemoveStaleTemps(env, dir.path()), 0u);
  EXPECT_TRUE(env->FileExists(child.temp()));
  child.Kill();
  EXPECT_EQ(RemoveStaleTemps(env, dir.path(), Shared()), 1u);
  EXPECT_FALSE(env->FileExists(child.temp()));
}

TEST(StaleTempsTest, AKilledWritersYoungTempWaitsForTheSettleTimeOnShared) {
  test::ScratchDir dir;
  Env* env = Env::Default();
  ChildWriter child(dir.path(), "shard");
  child.Kill();
  // Its lock is free, but on shared storage a young file may be one whose
  // writer has not locked it yet, or one on a file system whose locks
  // other machines do not see: kept until 60 s old.
  EXPECT_EQ(RemoveStaleTemps(env, dir.path(), Shared()), 0u);
  test::AgeFile(child.temp(), 50);
  EXPECT_EQ(RemoveStaleTemps(env, dir.path(), Shared()), 0u);
  test::AgeFile(child.temp(), 61);
  EXPECT_EQ(RemoveStaleTemps(env, dir.path(), Shared()), 1u);
  EXPECT_FALSE(env->FileExists(child.temp()));
}

TEST(StaleTempsTest, OnALocalFolderAGoneWritersTempGoesAtOnce) {
  test::ScratchDir dir;
  Env* env = Env::Default();
  if (!env->OnLocalFileSystem(dir.path()))
    GTEST_SKIP() << dir.path() << " is not on a local file system";
  ChildWriter child(dir.path(), "shard");
  child.Kill();
  EXPECT_EQ(RemoveStaleTemps(env, dir.path()), 1u);
  EXPECT_FALSE(env->FileExists(child.temp()));
}

// A writer in another pid namespace (a container sharing the folder): the
// pid in its temporary's name is gone here, but it holds the lock.
TEST(StaleTempsTest, ALockedTempIsKeptWhenItsPidIsGoneHere) {
  test::ScratchDir dir;
  Env* env = Env::Default();
  const std::string temp = dir.Join(".ferry-tmp-2147483646-0123456789ab-shard");
  auto file = env->NewWritableFile(temp);
  ASSERT_OK(file.status());
  auto lock = (*file)->LockWriter();
  ASSERT_OK(lock.status());
  ASSERT_OK((*file)->Close());  // the lock outlives the descriptor written
  test::AgeFile(temp, 3600);
  EXPECT_EQ(RemoveStaleTemps(env, dir.path()), 0u);
  EXPECT_EQ(RemoveStaleTemps(env, dir.path(), Shared()), 0u);
  EXPECT_TRUE(env->FileExists(temp));
  lock->reset();
  EXPECT_EQ(RemoveStaleTemps(env, dir.path(), Shared()), 1u);
  EXPECT_FALSE(env->FileExists(temp));
}

TEST(StaleTempsTest, ThisProcesssLiveAndDetachedTempsAreKeptHoweverOld) {
  test::ScratchDir dir;
  Env* env = Env::Default();
  auto live = AtomicFileWriter::Create(env, dir.Join("live"));
  ASSERT_OK(live.status());
  ASSERT_OK((*live)->Append("x"));
  auto detached = AtomicFileWriter::Create(env, dir.Join("detached"));
  ASSERT_OK(detached.status());
  ASSERT_OK((*detached)->Append("y"));
  ASSERT_OK((*detached)->Detach());
  const std::string detached_temp = (*detached)->temp_path();
  AtomicBatch batch(env, dir.path());
  batch.Add(std::move(*detached));
  test::AgeFile((*live)->temp_path(), 3600);
  test::AgeFile(detached_temp, 3600);
  EXPECT_EQ(RemoveStaleTemps(env, dir.path(), Shared()), 0u);
  EXPECT_EQ(RemoveStaleTemps(env, dir.path()), 0u);
  ASSERT_OK((*live)->Commit());
  int failed = 0;
  batch.Commit([&](size_t, const Status& s) { failed += !s.ok(); });
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(test::ReadFile(env, dir.Join("live")), "x");
  EXPECT_EQ(test::ReadFile(env, dir.Join("detached")), "y");
}

TEST(StaleTempsTest, GcCountsInADryRunAndSweepsBelowWhenAsked) {
  test::ScratchDir dir;
  Env* env = Env::Default();
  const std::string top = dir.Join(".ferry-tmp-2147483646-0123456789ab-a");
  const std::string deep = dir.Join("x/y/.ferry-tmp-2147483646-0123456789ab-b");
  test::WriteFile(env, top, "t");
  test::WriteFile(env, deep, "t");
  test::AgeFile(top, 3600);
  test::AgeFile(deep, 3600);
  StaleTempOptions o = Shared();
  o.recursive = true;
  o.dry_run = true;
  EXPECT_EQ(RemoveStaleTemps(env, dir.path(), o), 2u);
  EXPECT_TRUE(env->FileExists(top));
  EXPECT_TRUE(env->FileExists(deep));
  EXPECT_EQ(RemoveStaleTemps(env, dir.path(), Shared()), 1u);  // top only
  EXPECT_TRUE(env->FileExists(deep));
  o.dry_run = false;
  EXPECT_EQ(RemoveStaleTemps(env, dir.path(), o), 1u);
  EXPECT_FALSE(env->FileExists(deep));
}

// A cleaner that takes a new temporary's lock between its creation and its
// writer's lock (the writer's pid is not visible to it) removes it; the
// writer notices and writes under another name.
class CleanerFirstEnv : public EnvWrapper {
 public:
  using EnvWrapper::EnvWrapper;
  Result<std::unique_ptr<WritableFile>> NewTempFile(
      const std::string& path) override {
    auto file = EnvWrapper::NewTempFile(path);
    if (file.ok() && races_ > 0) {
      --races_;
      FileInfo info;
      auto lock = LockIfNoWriter(path, &info);
      EXPECT_OK(lock.status());
      EXPECT_OK(RemoveFile(path));
    }
    return file;
  }
  int races_ = 2;
};

TEST(StaleTempsTest, AWriterWhoseNewTempACleanerRemovedWritesAnother) {
  test::ScratchDir dir;
  CleanerFirstEnv env(Env::Default());
  ASSERT_OK(WriteFileAtomically(&env, dir.Join("out"), "payload"));
  EXPECT_EQ(env.races_, 0);
  EXPECT_EQ(test::ReadFile(&env, dir.Join("out")), "payload");
  auto kids = env.GetChildren(dir.path());
  ASSERT_OK(kids.status());
  EXPECT_EQ(kids->size(), 1u);
}

// Someone who can write the folder plants a link at the temporary's name
// (guessed, or seen): the writer never writes through it, takes another
// name, and the link's target is untouched.
class PlantsALinkEnv : public EnvWrapper {
 public:
  PlantsALinkEnv(std::string target)
      : EnvWrapper(Env::Default()), target_(std::move(target)) {}
  Result<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path) override {
    Plant(path);
    return EnvWrapper::NewWritableFile(path);
  }
  Result<std::unique_ptr<WritableFile>> NewTempFile(
      const std::string& path) override {
    Plant(path);
    return EnvWrapper::NewTempFile(path);
  }
  void Plant(const std::string& path) {
    if (planted_.empty() && IsAtomicTempName(path)) {
      EXPECT_EQ(::symlink(target_.c_str(), path.c_str()), 0);
      planted_ = path;
    }
  }
  std::string target_, planted_;
};

TEST(StaleTempsTest, ALinkAtTheTemporarysNameIsNeverWrittenThrough) {
  test::ScratchDir dir;
  test::WriteFile(Env::Default(), dir.Join("victim"), "precious");
  PlantsALinkEnv env(dir.Join("victim"));
  ASSERT_OK(env.CreateDir(dir.Join("bucket")));
  ASSERT_OK(WriteFileAtomically(&env, dir.Join("bucket/out"), "payload"));
  EXPECT_FALSE(env.planted_.empty());
  EXPECT_EQ(test::ReadFile(&env, dir.Join("victim")), "precious");
  EXPECT_EQ(test::ReadFile(&env, dir.Join("bucket/out")), "payload");
  struct stat st;
  ASSERT_EQ(::lstat(dir.Join("bucket/out").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode)) << "the key became a link";
  // The link is no temporary of ours: no cleaner follows or removes it.
  EXPECT_EQ(RemoveStaleTemps(&env, dir.Join("bucket")), 0u);
  EXPECT_EQ(::lstat(env.planted_.c_str(), &st), 0);
  EXPECT_EQ(test::ReadFile(&env, dir.Join("victim")), "precious");
}

// A FIFO, a folder or a device with a temporary's name is never opened or
// removed (a FIFO opened for reading would wait for a writer).
TEST(StaleTempsTest, NonRegularFilesWithATemporarysNameAreLeftAlone) {
  test::ScratchDir dir;
  Env* env = Env::Default();
  const std::string fifo = dir.Join(".ferry-tmp-2147483646-0123456789ab-f");
  const std::string folder = dir.Join(".ferry-tmp-2147483646-0123456789ab-d");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  ASSERT_OK(env->CreateDir(folder));
  test::AgeFile(fifo, 3600);
  test::AgeFile(folder, 3600);
  StaleTempOptions o = Shared();
  o.recursive = true;
  EXPECT_EQ(RemoveStaleTemps(env, dir.path(), o), 0u);
  EXPECT_EQ(RemoveStaleTemps(env, dir.path()), 0u);
  EXPECT_TRUE(env->FileExists(fifo));
  EXPECT_TRUE(env->FileExists(folder));
}

// The cleaner holds its lock while it removes: a writer locking meanwhile
// is refused, whatever the order of the two.
TEST(StaleTempsTest, WriterAndCleanerLocksExcludeEachOther) {
  test::ScratchDir dir;
  Env* env = Env::Default();
  const std::string path = dir.Join("f");
  auto file = env->NewWritableFile(path);
  ASSERT_OK(file.status());
  FileInfo info;
  {
    auto reader = env->LockIfNoWriter(path, &info);
    ASSERT_OK(reader.status());
    EXPECT_TRUE((*file)->LockWriter().status().IsUnavailable());
  }
  auto writer = (*file)->LockWriter();
  ASSERT_OK(writer.status());
  EXPECT_TRUE(env->LockIfNoWriter(path, &info).status().IsUnavailable());
}

}  // namespace
}  // namespace ferry
