#include "ferry/atomic_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "ferry/fault_env.h"
#include "testutil/test_util.h"

namespace ferry {
namespace {

// No file in dir other than `allowed` (so no temporary files are left).
void ExpectOnlyFile(Env* env, const std::string& dir,
                    const std::string& allowed) {
  auto kids = env->GetChildren(dir);
  ASSERT_OK(kids.status());
  for (const DirEntry& e : *kids) EXPECT_EQ(e.name, allowed) << "stray file";
}

TEST(AtomicFileTest, CommitPublishesContentAndLeavesNoTemp) {
  test::ScratchDir dir;
  Env* env = Env::Default();
  ASSERT_OK(WriteFileAtomically(env, dir.Join("out"), "payload"));
  EXPECT_EQ(test::ReadFile(env, dir.Join("out")), "payload");
  ExpectOnlyFile(env, dir.path(), "out");
}

TEST(AtomicFileTest, NothingAppearsUnderFinalNameBeforeCommit) {
  auto env = NewMemEnv();
  auto w = AtomicFileWriter::Create(env.get(), "out");
  ASSERT_OK(w.status());
  ASSERT_OK((*w)->Append("partial"));
  EXPECT_FALSE(env->FileExists("out"));
  EXPECT_TRUE(IsAtomicTempName((*w)->temp_path()));
  ASSERT_OK((*w)->Commit());
  EXPECT_EQ(test::ReadFile(env.get(), "out"), "partial");
}

TEST(AtomicFileTest, DestroyingWithoutCommitRemovesTemp) {
  auto env = NewMemEnv();
  test::WriteFile(env.get(), "out", "old");
  {
    auto w = AtomicFileWriter::Create(env.get(), "out");
    ASSERT_OK(w.status());
    ASSERT_OK((*w)->Append("new"));
  }
  EXPECT_EQ(test::ReadFile(env.get(), "out"), "old");
  ExpectOnlyFile(env.get(), ".", "out");
}

// Fail each counted operation in turn: the final name always holds the old
// content or the new, complete, and no temporary file is left behind.
TEST(AtomicFileTest, FailingEachStepLeavesOldOrNewNeverPartial) {
  const std::string old_content = "old content";
  const std::string new_content(200000, 'n');  // several buffered writes
  int steps = 0;
  {
    auto mem = NewMemEnv();
    FaultInjectionEnv fenv(mem.get());
    fenv.FailNthOperation(0);
    ASSERT_OK(WriteFileAtomically(&fenv, "f", new_content));
    steps = fenv.operations();
  }
  ASSERT_GE(steps, 5);  // open, append, sync, close, rename, syncdir
  int saw_old = 0, saw_new = 0;
  for (int n = 1; n <= steps; ++n) {
    auto mem = NewMemEnv();
    test::WriteFile(mem.get(), "f", old_content);
    FaultInjectionEnv fenv(mem.get());
    fenv.FailNthOperation(n);
    Status s = WriteFileAtomically(&fenv, "f", new_content);
    EXPECT_FALSE(s.ok()) << "step " << n << " should have failed";
    std::string now = test::ReadFile(mem.get(), "f");
    EXPECT_TRUE(now == old_content || now == new_content) << "step " << n;
    (now == old_content ? saw_old : saw_new)++;
    ExpectOnlyFile(mem.get(), ".", "f");
  }
  EXPECT_GT(saw_old, 0);
  EXPECT_GT(saw_new, 0);  // a failed directory sync after the rename
}

TEST(AtomicFileTest, FullDiskFailsCleanly) {
  test::ScratchDir dir;
  FaultInjectionEnv fenv(Env::Default());
  test::WriteFile(Env::Default(), dir.Join("f"), "old");
  fenv.SetNoSpace(true);
  Status s = WriteFileAtomically(&fenv, dir.Join("f"), "new");
  EXPECT_NE(s.ToString().find("No space left"), std::string::npos)
      << s.ToString();
  EXPECT_EQ(test::ReadFile(Env::Default(), dir.Join("f")), "old");
  ExpectOnlyFile(Env::Default(), dir.path(), "f");
}

TEST(AtomicFileTest, FailedFsyncNeverPublishes) {
  auto mem = NewMemEnv();
  FaultInjectionEnv fenv(mem.get());
  fenv.SetSyncFails(true);
  EXPECT_FALSE(WriteFileAtomically(&fenv, "f", "new").ok());
  EXPECT_FALSE(mem->FileExists("f"));
  ExpectOnlyFile(mem.get(), ".", "none");
}

TEST(AtomicFileTest, ErrorsAreSticky) {
  auto mem = NewMemEnv();
  FaultInjectionEnv fenv(mem.get());
  auto w = AtomicFileWriter::Create(&fenv, "f");
  ASSERT_OK(w.status());
  fenv.SetNoSpace(true);
  EXPECT_FALSE((*w)->Append("a").ok());
  fenv.SetNoSpace(false);
  EXPECT_FALSE((*w)->Append("b").ok());
  EXPECT_FALSE((*w)->Commit().ok());
  EXPECT_FALSE(mem->FileExists("f"));
}

TEST(AtomicFileTest, TempNamesAreOursOnly) {
  EXPECT_TRUE(IsAtomicTempName(".ferry-tmp-123-0123456789ab-shard.tfrecord"));
  EXPECT_TRUE(IsAtomicTempName("d/.ferry-tmp-1-0123456789ab-x"));
  // A user's files are never ours, whatever they look like.
  EXPECT_FALSE(IsAtomicTempName("shard.tfrecord.tmp-0123456789ab"));
  EXPECT_FALSE(IsAtomicTempName("draft.tmp-2024"));
  EXPECT_FALSE(IsAtomicTempName("shard.tfrecord"));
  EXPECT_FALSE(IsAtomicTempName(".ferry-tmp-"));
  EXPECT_FALSE(IsAtomicTempName(".ferry-tmp-12-zz"));
  EXPECT_FALSE(IsAtomicTempName(".ferry-tmp-x-0123456789ab-a"));
}

TEST(AtomicFileTest, TempFilesAreHiddenBesideTheirTargetAndFitANameMax) {
  auto env = NewMemEnv();
  ASSERT_OK(env->CreateDirs("d"));
  auto w = AtomicFileWriter::Create(env.get(), "d/" + std::string(250, 'n'));
  ASSERT_OK(w.status());
  const std::string& temp = (*w)->temp_path();
  EXPECT_EQ(temp.compare(0, 13, "d/.ferry-tmp-"), 0) << temp;
  EXPECT_LE(temp.size() - 2, 255u);
}

TEST(AtomicFileTest, StaleTempsOfGoneProcessesAreRemovedOthersKept) {
  auto env = NewMemEnv();
  ASSERT_OK(env->CreateDirs("d/sub"));
  // A writer of this (live) process, a dead writer's leftover, user files.
  auto live = AtomicFileWriter::Create(env.get(), "d/live");
  ASSERT_OK(live.status());
  ASSERT_OK((*live)->Append("x"));
  test::WriteFile(env.get(), "d/.ferry-tmp-2147483646-0123456789ab-dead", "x");
  test::WriteFile(env.get(), "d/sub/.ferry-tmp-2147483646-0123456789ab-deep",
                  "x");
  test::WriteFile(env.get(), "d/draft.tmp-2024", "keep");
  // Our pid but another process tag: an earlier process that had our pid.
  std::string reused = (*live)->temp_path();
  const size_t tag_at =
      reused.find('-', std::string("d/.ferry-tmp-").size()) + 1;
  reused[tag_at] = reused[tag_at] == '0' ? '1' : '0';
  test::WriteFile(env.get(), reused, "x");
  EXPECT_EQ(RemoveStaleTemps(env.get(), "d"), 2u);
  EXPECT_FALSE(env->FileExists(reused));
  EXPECT_FALSE(env->FileExists("d/.ferry-tmp-2147483646-0123456789ab-dead"));
  EXPECT_TRUE(env->FileExists((*live)->temp_path()));
  EXPECT_TRUE(env->FileExists("d/draft.tmp-2024"));
  // Only the folder named, not below it.
  EXPECT_TRUE(env->FileExists("d/sub/.ferry-tmp-2147483646-0123456789ab-deep"));
  ASSERT_OK((*live)->Commit());
}

}  // namespace
}  // namespace ferry

namespace ferry {
namespace {

// Publish three detached files as one batch, failing each operation in turn:
// every final name holds its old or its new content, whole, and no
// temporary file survives.
TEST(AtomicBatchTest, FailingEachStepLeavesEachFileOldOrNew) {
  auto run = [](FaultInjectionEnv* env, Env* base, int fail_at, int* ops) {
    for (int i = 0; i < 3; ++i)
      test::WriteFile(base, "d/f" + std::to_string(i), "old");
    env->FailNthOperation(fail_at);
    AtomicBatch batch(env, "d");
    std::vector<std::unique_ptr<AtomicFileWriter>> writers;
    for (int i = 0; i < 3; ++i) {
      auto w = AtomicFileWriter::Create(env, "d/f" + std::to_string(i));
      if (!w.ok()) continue;
      if ((*w)->Append(std::string(1000, 'n')).ok() && (*w)->Detach().ok()) {
        batch.Add((*w)->temp_path(), "d/f" + std::to_string(i));
      }
      writers.push_back(std::move(w).value());
    }
    int failed = 0;
    batch.Commit([&](size_t, const Status& s) { failed += !s.ok(); });
    writers.clear();
    if (ops) *ops = env->operations();
    return failed;
  };
  int steps = 0;
  {
    auto mem = NewMemEnv();
    FaultInjectionEnv fenv(mem.get());
    EXPECT_EQ(run(&fenv, mem.get(), 0, &steps), 0);
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(test::ReadFile(mem.get(), "d/f" + std::to_string(i)),
                std::string(1000, 'n'));
  }
  ASSERT_GE(steps,
            12);  // 3 x (open, append, close) + syncfs + 3 renames + syncdir
  for (int n = 1; n <= steps; ++n) {
    auto mem = NewMemEnv();
    FaultInjectionEnv fenv(mem.get());
    run(&fenv, mem.get(), n, nullptr);
    for (int i = 0; i < 3; ++i) {
      std::string now = test::ReadFile(mem.get(), "d/f" + std::to_string(i));
      EXPECT_TRUE(now == "old" || now == std::string(1000, 'n'))
          << "step " << n;
    }
    auto kids = mem->GetChildren("d");
    ASSERT_OK(kids.status());
    EXPECT_EQ(kids->size(), 3u) << "stray temporary file at step " << n;
  }
}

TEST(AtomicBatchTest, FailedFileSystemSyncPublishesNothing) {
  auto mem = NewMemEnv();
  FaultInjectionEnv fenv(mem.get());
  test::WriteFile(mem.get(), "d/f", "old");
  AtomicBatch batch(&fenv, "d");
  auto w = AtomicFileWriter::Create(&fenv, "d/f");
  ASSERT_OK(w.status());
  ASSERT_OK((*w)->Append("new"));
  ASSERT_OK((*w)->Detach());
  batch.Add((*w)->temp_path(), "d/f");
  fenv.SetSyncFails(true);
  int failed = 0;
  batch.Commit([&](size_t, const Status& s) { failed += !s.ok(); });
  EXPECT_EQ(failed, 1);
  EXPECT_EQ(test::ReadFile(mem.get(), "d/f"), "old");
  EXPECT_EQ(mem->GetChildren("d")->size(), 1u);
}

// /dev/stdout is a link to /proc/self/fd/1, which resolves to a regular
// file when stdout is redirected to one: a link into /dev or /proc is
// never replaced, however it resolves; a link to a file is.
TEST(AtomicFileTest, ALinkIntoDevOrProcIsNeverReplaced) {
  test::ScratchDir dir;
  Env* env = Env::Default();
  test::WriteFile(env, dir.Join("file"), "x");
  ASSERT_EQ(::symlink("/proc/self/fd/1", dir.Join("out").c_str()), 0);
  ASSERT_EQ(::symlink("/dev/null", dir.Join("null").c_str()), 0);
  ASSERT_EQ(::symlink(dir.Join("file").c_str(), dir.Join("plain").c_str()), 0);
  EXPECT_TRUE(CheckNotSpecialFile(env, dir.Join("out")).IsInvalidArgument());
  EXPECT_TRUE(CheckNotSpecialFile(env, dir.Join("null")).IsInvalidArgument());
  EXPECT_TRUE(CheckNotSpecialFile(env, dir.Join("plain")).ok());
  EXPECT_TRUE(CheckNotSpecialFile(env, dir.Join("file")).ok());
  EXPECT_TRUE(CheckNotSpecialFile(env, dir.Join("none")).ok());
  auto w = AtomicFileWriter::Create(env, dir.Join("out"));
  EXPECT_FALSE(w.ok());
}

}  // namespace
}  // namespace ferry
