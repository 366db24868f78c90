// file:// transfers of the engine (GetObjects/PutObjects without HTTP):
// --bwlimit holds for them (a clock that moves only when they sleep), and a
// source that changes during a put fails naming the file.
#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "ferry/hash.h"
#include "ferry/remote.h"
#include "ferry/transfer.h"
#include "remote/token_bucket.h"
#include "testutil/test_util.h"

namespace ferry::remote {
namespace {

// A clock for BlockingBucket that moves only when it sleeps.
class FakeClockEnv : public EnvWrapper {
 public:
  FakeClockEnv() : EnvWrapper(Env::Default()) {}
  uint64_t NowMicros() override { return now_; }
  void Sleep(uint64_t us) {
    now_ += us;
    slept_ += us;
  }
  uint64_t slept() const { return slept_; }

 private:
  uint64_t now_ = 1000000;
  uint64_t slept_ = 0;
};

TEST(FileTransferTest, BlockingBucketSleepsForTheRate) {
  FakeClockEnv env;
  BlockingBucket b(1000, &env, [&](uint64_t us) { env.Sleep(us); });
  b.Take(10000);
  b.Settle();
  // 10 kB at 1 kB/s, less the first second's burst.
  EXPECT_GE(env.slept(), 9000000u);
  EXPECT_LE(env.slept(), 10100000u);
  FakeClockEnv env2;
  BlockingBucket unlimited(0, &env2, [&](uint64_t us) { env2.Sleep(us); });
  unlimited.Take(1 << 30);
  unlimited.Settle();
  EXPECT_EQ(env2.slept(), 0u);
}

// A clock 100 s further on at each reading: the bucket is always full, so
// nothing sleeps, and the readings count how often the bucket was asked.
class CountingClockEnv : public EnvWrapper {
 public:
  CountingClockEnv() : EnvWrapper(Env::Default()) {}
  uint64_t NowMicros() override { return (++reads_) * 100000000; }
  uint64_t reads() const { return reads_; }

 private:
  uint64_t reads_ = 0;
};

// --bwlimit holds for file:// transfers too: put and get ask the run's bucket
// for every burst (1 kB at 1 kB/s) of the 10 kB (they copied at disk speed).
TEST(FileTransferTest, FileTransfersAskTheBucket) {
  test::ScratchDir dir;
  test::WriteFile(Env::Default(), dir.Join("src.bin"),
                  test::RandomBytes(10000, 1));
  auto reads = [&](uint64_t bwlimit, bool put) {
    CountingClockEnv env;
    auto backend = OpenBackend("file://" + dir.Join("bucket"), {}, &env);
    EXPECT_TRUE(backend.ok()) << backend.status().ToString();
    TransferOptions opt;
    opt.bwlimit = bwlimit;
    const uint64_t before = env.reads();
    if (put) {
      auto r = PutObjects(backend->get(), {PutItem{dir.Join("src.bin"), "k"}},
                          opt, &env);
      EXPECT_TRUE(r.ok() && r->failures.empty());
    } else {
      GetItem item;
      item.key = "k";
      item.dest = dir.Join("got.bin");
      auto r = GetObjects(backend->get(), {item}, opt, &env);
      EXPECT_TRUE(r.ok() && r->failures.empty());
      EXPECT_EQ(test::ReadFile(&env, dir.Join("got.bin")),
                test::RandomBytes(10000, 1));
    }
    return env.reads() - before;
  };
  for (bool put : {true, false}) {
    const uint64_t unlimited = reads(0, put);
    EXPECT_GE(reads(1000, put), unlimited + 10) << (put ? "put" : "get");
  }
}

// GetItem::ranges: only those bytes are fetched, each at its offset in
// the object (cut into parts of at most the part size); the rest of the
// file is holes (zeros), its size the object's. A range past the object's
// end fails the item with Corruption and leaves no file.
TEST(FileTransferTest, RangesOfAnObjectLandAtTheirOffsets) {
  test::ScratchDir dir;
  Env* env = Env::Default();
  const std::string object = test::RandomBytes(100000, 3);
  test::WriteFile(env, dir.Join("bucket/k"), object);
  auto backend = OpenBackend("file://" + dir.Join("bucket"), {}, env);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  TransferOptions opt;
  opt.part_size = 4096;
  GetItem item;
  item.key = "k";
  item.dest = dir.Join("got.bin");
  item.ranges = {ByteRange{10, 20}, ByteRange{5000, 10000},
                 ByteRange{99990, 10}};
  auto r = GetObjects(backend->get(), {item}, opt, env);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->failures.empty());
  EXPECT_EQ(r->bytes, 10030u);
  EXPECT_EQ(r->requests, 1u + 1 + 3 + 1);  // a stat; 10000 B in 3 parts
  std::string want(object.size(), '\0');
  for (const ByteRange& b : item.ranges)
    want.replace(b.offset, b.length, object.substr(b.offset, b.length));
  EXPECT_TRUE(test::ReadFile(env, dir.Join("got.bin")) == want);

  item.dest = dir.Join("past.bin");
  item.ranges = {ByteRange{99990, 11}};
  r = GetObjects(backend->get(), {item}, opt, env);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->failures.size(), 1u);
  EXPECT_TRUE(r->failures[0].second.IsCorruption())
      << r->failures[0].second.ToString();
  EXPECT_FALSE(env->FileExists(dir.Join("past.bin")));
  EXPECT_FALSE(env->FileExists(dir.Join("past.bin.ferry-part")));
}

// A file whose size, as its open handle says, is 100 bytes more than it
// holds: it shrank after the put looked at it.
class ShrinkingEnv : public EnvWrapper {
 public:
  ShrinkingEnv() : EnvWrapper(Env::Default()) {}
  Result<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& path) override {
    FERRY_ASSIGN_OR_RETURN(auto f, target()->NewRandomAccessFile(path));
    if (path.find("shrinks") == std::string::npos) return f;
    return std::unique_ptr<RandomAccessFile>(new Lying(std::move(f)));
  }

 private:
  class Lying : public RandomAccessFile {
   public:
    explicit Lying(std::unique_ptr<RandomAccessFile> f) : f_(std::move(f)) {}
    Status Read(uint64_t offset, size_t n, std::string_view* result,
                char* scratch) const override {
      return f_->Read(offset, n, result, scratch);
    }
    Result<uint64_t> Size() const override {
      FERRY_ASSIGN_OR_RETURN(uint64_t size, f_->Size());
      return size + 100;
    }

   private:
    std::unique_ptr<RandomAccessFile> f_;
  };
};

TEST(FileTransferTest, SourceChangedDuringPutIsNamed) {
  test::ScratchDir dir;
  ShrinkingEnv env;
  test::WriteFile(&env, dir.Join("shrinks.bin"), test::RandomBytes(5000, 2));
  test::WriteFile(&env, dir.Join("fine.bin"), "fine");
  auto backend = OpenBackend("file://" + dir.Join("bucket"), {}, &env);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  auto put = PutObjects(backend->get(),
                        {PutItem{dir.Join("shrinks.bin"), "a"},
                         PutItem{dir.Join("fine.bin"), "b"}},
                        TransferOptions{}, &env);
  ASSERT_TRUE(put.ok());
  EXPECT_EQ(put->files_done, 1u);
  ASSERT_EQ(put->failures.size(), 1u);
  const std::string why = put->failures[0].second.ToString();
  EXPECT_NE(why.find("shrinks.bin: changed while being uploaded"),
            std::string::npos)
      << why;
  EXPECT_FALSE(env.FileExists(dir.Join("bucket/a")));
}

// Logs the syncs and renames of a run, in order.
class SyncLogEnv : public EnvWrapper {
 public:
  SyncLogEnv() : EnvWrapper(Env::Default()) {}
  Result<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path) override {
    FERRY_ASSIGN_OR_RETURN(auto f, EnvWrapper::NewWritableFile(path));
    return std::unique_ptr<WritableFile>(new File(this, std::move(f)));
  }
  Result<std::unique_ptr<WritableFile>> NewTempFile(
      const std::string& path) override {
    FERRY_ASSIGN_OR_RETURN(auto f, EnvWrapper::NewTempFile(path));
    return std::unique_ptr<WritableFile>(new File(this, std::move(f)));
  }
  Status RenameFile(const std::string& from, const std::string& to) override {
    log.push_back("rename " + to);
    return EnvWrapper::RenameFile(from, to);
  }
  Status SyncDir(const std::string& dir) override {
    log.push_back("syncdir");
    return EnvWrapper::SyncDir(dir);
  }
  Status SyncFileSystem(const std::string& path) override {
    log.push_back("syncfs");
    return EnvWrapper::SyncFileSystem(path);
  }
  std::vector<std::string> log;

 private:
  class File : public WritableFile {
   public:
    File(SyncLogEnv* env, std::unique_ptr<WritableFile> f)
        : env_(env), f_(std::move(f)) {}
    Status Append(std::string_view data) override { return f_->Append(data); }
    Status Flush() override { return f_->Flush(); }
    Status Sync() override {
      env_->log.push_back("fsync");
      return f_->Sync();
    }
    Status Close() override { return f_->Close(); }

   private:
    SyncLogEnv* env_;
    std::unique_ptr<WritableFile> f_;
  };
};

// put to file:// publishes many files with one syncfs (not an fsync of each
// file and its folder), and no file gets its name before that sync.
TEST(FileTransferTest, PutToFilesSyncsOnceBeforeAnyRename) {
  test::ScratchDir dir;
  SyncLogEnv env;
  std::vector<PutItem> items;
  for (int i = 0; i < 20; ++i) {
    std::string src = dir.Join("src" + std::to_string(i));
    test::WriteFile(&env, src, test::RandomBytes(1000 + i, i));
    items.push_back(
        PutItem{src, "d" + std::to_string(i % 3) + "/f" + std::to_string(i)});
  }
  auto backend = OpenBackend("file://" + dir.Join("bucket"), {}, &env);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  env.log.clear();
  auto put = PutObjects(backend->get(), items, TransferOptions{}, &env);
  ASSERT_TRUE(put.ok());
  EXPECT_EQ(put->files_done, 20u);
  size_t syncfs = 0, fsyncs = 0, renames = 0;
  for (const std::string& e : env.log) {
    if (e == "syncfs") ++syncfs;
    if (e == "fsync") ++fsyncs;
    if (e.rfind("rename ", 0) == 0) {
      EXPECT_EQ(syncfs, 1u) << e << " before the bytes were synced";
      ++renames;
    }
  }
  EXPECT_EQ(syncfs, 1u);
  EXPECT_EQ(fsyncs, 0u);
  EXPECT_EQ(renames, 20u);
  for (const PutItem& item : items) {
    auto got = ReadFileToString(&env, dir.Join("bucket/" + item.key), 1 << 20);
    auto want = ReadFileToString(&env, item.src, 1 << 20);
    ASSERT_TRUE(got.ok()) << item.key;
    EXPECT_EQ(*got, *want) << item.key;
  }
}

// on_installed is called once for each item that got its final name, on
// the calling thread, when the file is there under that name: small
// objects (published in batches) and objects of several parts (journalled)
// alike; never for a missing object nor for one whose bytes do not match.
TEST(FileTransferTest, OnInstalledIsCalledOncePerInstalledItemNeverForAFailed) {
  test::ScratchDir dir;
  Env* env = Env::Default();
  const std::string small = test::RandomBytes(1000, 3);
  const std::string big = test::RandomBytes(10000, 4);  // 3 parts of 4096
  test::WriteFile(env, dir.Join("bucket/small"), small);
  test::WriteFile(env, dir.Join("bucket/big"), big);
  test::WriteFile(env, dir.Join("bucket/bad"), "not what is expected");
  auto backend = OpenBackend("file://" + dir.Join("bucket"), {}, env);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  std::vector<GetItem> items;
  for (const char* key : {"small", "big", "missing", "bad"}) {
    GetItem item;
    item.key = key;
    item.dest = dir.Join(std::string("got/") + key);
    items.push_back(item);
  }
  items[0].have_expected = items[1].have_expected = true;
  items[0].expected = HashBytes(small);
  items[1].expected = HashBytes(big);
  items[3].have_expected = true;
  items[3].expected = HashBytes("something else");
  TransferOptions opt;
  opt.part_size = 4096;
  std::map<std::string, int> calls;
  bool all_there = true, all_on_caller = true;
  const auto caller = std::this_thread::get_id();
  opt.on_installed = [&](const GetItem& item) {
    ++calls[item.key];
    all_there = all_there && env->FileExists(item.dest);
    all_on_caller = all_on_caller && std::this_thread::get_id() == caller;
  };
  auto r = GetObjects(backend->get(), items, opt, env);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->files_done, 2u);
  EXPECT_EQ(r->files_failed, 2u);
  EXPECT_EQ(calls, (std::map<std::string, int>{{"big", 1}, {"small", 1}}));
  EXPECT_TRUE(all_there);
  EXPECT_TRUE(all_on_caller);
  EXPECT_EQ(test::ReadFile(env, dir.Join("got/big")), big);
}

}  // namespace
}  // namespace ferry::remote
