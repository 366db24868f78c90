#include "ferry/sync.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ferry/publish.h"
#include "ferry/verify.h"
#include "formats/delta/rdiff_format.h"
#include "formats/manifest/manifest.h"
#include "remote/file_backend.h"
#include "sync/cache.h"
#include "sync/fetching.h"
#include "sync/fs_util.h"
#include "sync/layout.h"
#include "sync/plan.h"
#include "sync/sqlite_db.h"
#include "testutil/publish_tree.h"
#include "testutil/sync_fixture.h"
#include "testutil/test_util.h"

namespace ferry {
namespace {

using test::ReadFile;
using test::Snapshot;
using test::WriteFile;

// Manifest bytes without the writer's checks: what a hostile publisher
// could put in a bucket.
std::string RawManifest(const std::vector<manifest::File>& files,
                        uint32_t version = 1) {
  auto varint = [](uint64_t v) {
    std::string out;
    while (v >= 0x80) {
      out.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
    return out;
  };
  manifest::Header h;
  h.set_format_version(version);
  h.set_part_size(manifest::kDefaultPartSize);
  std::string plain;
  std::string rec = h.SerializeAsString();
  plain += varint(rec.size()) + rec;
  uint64_t total = 0;
  for (const manifest::File& f : files) {
    rec = f.SerializeAsString();
    plain += varint(rec.size()) + rec;
    total += f.size();
  }
  plain += varint(0);
  manifest::Footer footer;
  footer.set_file_count(files.size());
  footer.set_total_bytes(total);
  footer.set_records_xxh3_64(manifest::PartHash(plain));
  rec = footer.SerializeAsString();
  plain += varint(rec.size()) + rec;
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  std::string out(ZSTD_compressBound(plain.size()), '\0');
  size_t n =
      ZSTD_compress2(cctx, out.data(), out.size(), plain.data(), plain.size());
  ZSTD_freeCCtx(cctx);
  out.resize(n);
  return std::string(manifest::kMagic) + out;
}

manifest::File FileOf(const std::string& path, const std::string& data) {
  manifest::FileHasher hasher(manifest::kDefaultPartSize);
  hasher.Update(data);
  manifest::File f;
  f.set_path(path);
  f.set_mode(0644);
  hasher.Finish(&f);
  return f;
}

class SyncTest : public test::SyncFixture {
 protected:
  Hash128 Publish() {
    auto id = test::PublishTree(env_, src_, bucket_);
    EXPECT_OK(id.status());
    return id.ok() ? *id : Hash128{};
  }
  Result<SyncReport> Run(const SyncOptions& o) { return Sync(o, env_); }
  SyncReport RunOk(const SyncOptions& o) {
    auto r = Run(o);
    EXPECT_OK(r.status());
    return r.ok() ? *r : SyncReport{};
  }
  // The paths and contents below root, ferry's own files left out.
  std::map<std::string, std::string> Tree(const std::string& root) {
    std::map<std::string, std::string> out;
    auto files = ListFilesRecursive(env_, root);
    if (!files.ok()) return out;
    for (const std::string& f : *files) {
      if (f.rfind(".ferry-sync", 0) == 0 || f == kViewLockName) continue;
      out[f] = ReadFile(env_, JoinPath(root, f));
    }
    return out;
  }
  // Every path below the scratch folder, to see that nothing was written.
  std::vector<std::string> Everything() {
    auto files = ListFilesRecursive(env_, dir_.path());
    return files.ok() ? *files : std::vector<std::string>{};
  }
};

TEST_F(SyncTest, ColdSyncMakesDestALinkToAViewOfHardLinksIntoTheCache) {
  Write("a.txt", "alpha");
  Write("sub/b.bin", std::string(3000, 'b'));
  Write("sub/same.bin", std::string(3000, 'b'));  // one object, two paths
  Hash128 id = Publish();
  SyncReport r = RunOk(Options());
  EXPECT_FALSE(r.unchanged);
  EXPECT_EQ(r.manifest_id, id.ToHex());
  EXPECT_EQ(r.files, 3u);
  EXPECT_EQ(r.objects_fetched, 2u);
  EXPECT_EQ(r.bytes_fetched, 3005u);
  EXPECT_EQ(Tree(dest_), Tree(src_));
  auto kind = sync::LinkKind(dest_);
  ASSERT_OK(kind.status());
  EXPECT_EQ(*kind, sync::PathKind::kLink);
  auto target = sync::ReadLink(dest_);
  EXPECT_EQ(*target, ".dest.ferry-views/" + id.ToHex());
  struct stat a, b;
  ASSERT_EQ(::stat(JoinPath(dest_, "sub/b.bin").c_str(), &a), 0);
  ASSERT_EQ(::stat(JoinPath(dest_, "sub/same.bin").c_str(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);  // both links to the one cached object
  EXPECT_GE(a.st_nlink, 3u);
  EXPECT_TRUE(env_->FileExists(JoinPath(dest_, std::string(kViewStateName))));
  // Nothing left in partial/ but empty folders.
  auto left = ListFilesRecursive(env_, JoinPath(cache_, "partial"));
  ASSERT_OK(left.status());
  EXPECT_TRUE(left->empty()) << (*left)[0];
}

TEST_F(SyncTest, UnchangedRefIsANoOpOfOneRequest) {
  Write("a.txt", "alpha");
  Publish();
  RunOk(Options());
  SyncReport r = RunOk(Options());
  EXPECT_TRUE(r.unchanged);
  EXPECT_EQ(r.requests, 1u);
  EXPECT_EQ(r.objects_fetched, 0u);
  EXPECT_EQ(r.view, dir_.Join("nodes/.dest.ferry-views/" + r.manifest_id));
  EXPECT_EQ(r.files, 1u);
}

// HEAD rewritten with the bytes it had (a backup restored, a mirror job, a
// touch) has a new ETag: that sync moves nothing and says unchanged, and
// DEST records the new ETag, so the next one is the one-request no-op
// again (it was a full run every time), for a view and --in-place alike.
TEST_F(SyncTest, ARefRewrittenWithTheSameIdIsRecordedAndStaysANoOp) {
  Write("a.txt", "alpha");
  Hash128 id = Publish();
  SyncOptions view = Options();
  SyncOptions in_place = Options(dir_.Join("nodes/flat"));
  in_place.in_place = true;
  const std::string head = JoinPath(bucket_, ".ferry/refs/HEAD");
  for (const SyncOptions& o : {view, in_place}) {
    SCOPED_TRACE(o.in_place ? "--in-place" : "view");
    RunOk(o);
    const std::string bytes = ReadFile(env_, head);
    WriteFile(env_, head, bytes);
    std::filesystem::last_write_time(
        head, std::filesystem::last_write_time(head) + std::chrono::seconds(5));
    SyncReport r = RunOk(o);
    EXPECT_TRUE(r.unchanged);
    EXPECT_EQ(r.manifest_id, id.ToHex());
    EXPECT_EQ(r.requests, 1u);
    EXPECT_EQ(r.files, 1u);
    EXPECT_EQ(r.files_placed, 0u);
    r = RunOk(o);
    EXPECT_TRUE(r.unchanged);
    EXPECT_EQ(r.requests, 1u);
    EXPECT_EQ(Tree(o.dest), Tree(src_));
  }
}

// An object whose bytes in the bucket do not match the manifest: each part
// is checked against the manifest's XXH3-64 (in the manifest's part size) as
// it lands, the bad part is fetched again up to the retry limit, then the
// sync fails (Corruption) with nothing installed: no cache object, no view,
// DEST untouched.
TEST_F(SyncTest, APartThatDoesNotMatchTheManifestIsRefetchedThenFails) {
  const std::string data = test::RandomBytes(300000, 5);
  Write("big.bin", data);
  Write("small.txt", "fine");
  test::PublishTreeOptions po;
  po.part_size = 64 << 10;
  auto id = test::PublishTree(env_, src_, bucket_, po);
  ASSERT_OK(id.status());
  const std::string hex = HashBytes(data).ToHex();
  const std::string obj =
      JoinPath(bucket_, ".ferry/objects/" + hex.substr(0, 2) + "/" + hex);
  std::string bad = data;
  bad[2 * (64 << 10) + 3] ^= 1;  // part 2
  WriteFile(env_, obj, bad);
  SyncOptions o = Options();
  o.transfer.max_retries = 2;
  auto r = Run(o);
  ASSERT_OK(r.status());
  ASSERT_EQ(r->failures.size(), 1u);
  EXPECT_EQ(r->failures[0].first, "big.bin");
  EXPECT_TRUE(r->failures[0].second.IsCorruption())
      << r->failures[0].second.ToString();
  EXPECT_NE(r->failures[0].second.ToString().find("part 2"), std::string::npos)
      << r->failures[0].second.ToString();
  EXPECT_EQ(r->retries["part-hash"], 2u);
  EXPECT_FALSE(env_->FileExists(dest_));
  // Not in the cache (its good parts wait in partial/ for a resume).
  for (const std::string& f : Everything())
    if (f.rfind("cache/objects/", 0) == 0 || f.rfind("nodes/", 0) == 0)
      EXPECT_EQ(f.find(hex), f.npos) << f;
}

// An object in the bucket of another size than the manifest's (same part
// count: its one part hash cannot tell before the bytes land): the sync
// fails with Corruption at the server's size, before a byte is fetched and
// without refetching it max_retries times.
TEST_F(SyncTest, ServerObjectOfAnotherSizeFailsBeforeAByteIsFetched) {
  Write("a", "x");
  Publish();
  const std::string hex = HashBytes("x").ToHex();
  WriteFile(env_,
            JoinPath(bucket_, ".ferry/objects/" + hex.substr(0, 2) + "/" + hex),
            std::string(5000, 'y'));
  auto r = Run(Options());
  ASSERT_OK(r.status());
  ASSERT_EQ(r->failures.size(), 1u);
  const Status& s = r->failures[0].second;
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("has 5000 bytes, the manifest says 1"),
            std::string::npos)
      << s.ToString();
  EXPECT_EQ(r->bytes_fetched, 0u);
  EXPECT_EQ(r->objects_fetched, 0u);
  EXPECT_EQ(r->retries["part-hash"], 0u);
  EXPECT_FALSE(env_->FileExists(dest_));
  // Nor the view it started, nor the views folder (before: both left).
  EXPECT_FALSE(env_->FileExists(dir_.Join("nodes/.dest.ferry-views")));
  for (const std::string& f : Everything())  // no part file, no cache object
    if (f.rfind("cache/", 0) == 0 || f.rfind("nodes/", 0) == 0)
      EXPECT_EQ(f.find(hex), f.npos) << f;
}

TEST_F(SyncTest, IncrementalSyncFetchesOnlyWhatChangedAndDropsTheOldView) {
  for (int i = 0; i < 10; ++i)
    Write("f" + std::to_string(i), "content " + std::to_string(i));
  Hash128 v1 = Publish();
  RunOk(Options());
  Write("f3", "changed");
  Write("new", "brand new");
  ASSERT_OK(env_->RemoveFile(JoinPath(src_, "f7")));
  Hash128 v2 = Publish();
  ASSERT_FALSE(v1 == v2);
  SyncReport r = RunOk(Options());
  EXPECT_EQ(r.objects_fetched, 2u);
  EXPECT_EQ(r.files_cached, 8u);  // 10 files, 2 of them new
  EXPECT_EQ(r.old_views_removed, 1u);
  EXPECT_EQ(Tree(dest_), Tree(src_));
  EXPECT_FALSE(
      env_->FileExists(dir_.Join("nodes/.dest.ferry-views/" + v1.ToHex())));
}

TEST_F(SyncTest, AnOldViewAReaderHoldsStaysUntilItIsFree) {
  Write("a", "one");
  Hash128 v1 = Publish();
  RunOk(Options());
  const std::string v1_dir = dir_.Join("nodes/.dest.ferry-views/" + v1.ToHex());
  int fd = ::open((v1_dir + "/.ferry-view.lock").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_SH), 0);  // what docs/sync.md tells readers
  Write("a", "two");
  Publish();
  SyncReport r = RunOk(Options());
  EXPECT_EQ(r.old_views_in_use, 1u);
  EXPECT_EQ(ReadFile(env_, v1_dir + "/a"), "one");  // the reader's data
  EXPECT_EQ(ReadFile(env_, dest_ + "/a"), "two");
  ::close(fd);
  // The reader is gone: even a no-op sync removes the old view now.
  r = RunOk(Options());
  EXPECT_TRUE(r.unchanged);
  EXPECT_EQ(r.requests, 1u);
  EXPECT_EQ(r.old_views_removed, 1u);
  EXPECT_FALSE(env_->FileExists(v1_dir));
}

// Counts the files removed below a folder (by this process).
class RemoveCountingEnv : public EnvWrapper {
 public:
  RemoveCountingEnv(Env* target, std::string below)
      : EnvWrapper(target), below_(std::move(below)) {}
  Status RemoveFile(const std::string& path) override {
    if (path.rfind(below_, 0) == 0) ++removed;
    return EnvWrapper::RemoveFile(path);
  }
  int removed = 0;

 private:
  std::string below_;
};

// Waits (up to 10 s) until the views folder holds no trash folder.
bool TrashGone(Env* env, const std::string& views) {
  for (int i = 0; i < 1000; ++i) {
    auto children = env->GetChildren(views);
    bool any = false;
    if (children.ok())
      for (const DirEntry& e : *children)
        any = any || e.name.rfind(".trash-", 0) == 0;
    if (!any) return true;
    usleep(10000);
  }
  return false;
}

// A cold sync lists what killed runs left in partial/ once, instead of
// trying to remove each object's possible leftovers (an adopted copy, a
// patch, blocks and ranges: 8 names an object) one unlink at a time.
TEST_F(SyncTest, AColdSyncDoesNotTryToRemoveLeftoversThatAreNotThere) {
  constexpr int kFiles = 30;
  for (int i = 0; i < kFiles; ++i)
    Write("f" + std::to_string(i), "object " + std::to_string(i));
  Publish();
  RemoveCountingEnv env(env_, cache_ + "/partial/");
  auto r = Sync(Options(), &env);
  ASSERT_OK(r.status());
  EXPECT_EQ(r->objects_fetched, static_cast<uint64_t>(kFiles));
  // What is left: the engine's own (a journal each part file may have had,
  // twice an object; lib/remote/download.cc), not these 8.
  EXPECT_LE(env.removed, 2 * kFiles) << "unlinks tried below partial/";
  EXPECT_EQ(Tree(dest_), Tree(src_));
}

// With detach_old_view_removal (the CLI's), the old view leaves the views
// folder before Sync returns (one rename), and its files are unlinked by a
// cleaner process, not by the sync: this process removes none of them. The
// cleaner then records the objects' new ctime, so the next sync re-hashes
// nothing; it holds no lock of DEST (a sync right after runs).
TEST_F(SyncTest, DetachedRemovalTakesTheOldViewsUnlinksOffTheSync) {
  for (int i = 0; i < 20; ++i)
    Write("d/f" + std::to_string(i), "content " + std::to_string(i));
  Hash128 v1 = Publish();
  RunOk(Options());
  Write("d/f3", "changed");
  Publish();
  const std::string views = dir_.Join("nodes/.dest.ferry-views");
  RemoveCountingEnv env(env_, views + "/");
  SyncOptions o = Options();
  o.detach_old_view_removal = true;
  auto r = Sync(o, &env);
  ASSERT_OK(r.status());
  EXPECT_EQ(r->old_views_removed, 1u);
  EXPECT_FALSE(env_->FileExists(JoinPath(views, v1.ToHex())));
  EXPECT_EQ(env.removed, 0);  // the 20 unlinks were the cleaner's
  EXPECT_TRUE(TrashGone(env_, views));
  EXPECT_EQ(Tree(dest_), Tree(src_));
  // Every object's stamp is recorded as it is after the cleaner's unlinks.
  auto cache = sync::Cache::Open(env_, cache_);
  ASSERT_OK(cache.status());
  const std::string rk =
      sync::RemoteKey("file://" + *sync::AbsolutePath(bucket_));
  for (int i = 0; i < 20; ++i) {
    const std::string data = "content " + std::to_string(i);
    sync::CacheKey k{rk, HashBytes(data), data.size()};
    auto now = sync::StampOf((*cache)->ObjectPath(k));
    ASSERT_OK(now.status());
    auto same = (*cache)->StampMatches(k, *now);
    ASSERT_OK(same.status());
    EXPECT_TRUE(*same) << "f" << i;
  }
  // And it dropped the old view's pins (not the sync: its largest index
  // change).
  auto pinned = (*cache)->PinnedViews();
  ASSERT_OK(pinned.status());
  EXPECT_EQ(*pinned, std::vector<std::string>{r->view});
  cache->reset();
  r = Sync(o, env_);
  ASSERT_OK(r.status());
  EXPECT_TRUE(r->unchanged);
}

// A reader's shared lock on an old view still keeps it with detached
// removal; once free, the next sync (a no-op) hands it to a cleaner.
TEST_F(SyncTest, DetachedRemovalHonoursAReadersLock) {
  Write("a", "one");
  Hash128 v1 = Publish();
  SyncOptions o = Options();
  o.detach_old_view_removal = true;
  RunOk(o);
  const std::string views = dir_.Join("nodes/.dest.ferry-views");
  const std::string v1_dir = JoinPath(views, v1.ToHex());
  int fd = ::open((v1_dir + "/.ferry-view.lock").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_SH), 0);
  Write("a", "two");
  Publish();
  SyncReport r = RunOk(o);
  EXPECT_EQ(r.old_views_in_use, 1u);
  EXPECT_EQ(r.old_views_removed, 0u);
  EXPECT_EQ(ReadFile(env_, v1_dir + "/a"), "one");
  ::close(fd);
  r = RunOk(o);
  EXPECT_TRUE(r.unchanged);
  EXPECT_EQ(r.old_views_removed, 1u);
  EXPECT_FALSE(env_->FileExists(v1_dir));
  EXPECT_TRUE(TrashGone(env_, views));
}

// A cleaner killed midway leaves a trash folder (lock free): the next sync,
// a no-op too, removes it.
TEST_F(SyncTest, TrashAKilledCleanerLeftIsRemovedByTheNextSync) {
  Write("a", "one");
  Publish();
  RunOk(Options());
  const std::string trash = dir_.Join("nodes/.dest.ferry-views/.trash-0123-1");
  WriteFile(env_, trash + "/sub/x", "left");
  WriteFile(env_, trash + "/.ferry-view.lock", "");
  SyncReport r = RunOk(Options());
  EXPECT_TRUE(r.unchanged);
  EXPECT_FALSE(env_->FileExists(trash));
}

TEST_F(SyncTest, RanksShareTheShardsByBytesAndAllGetTheRest) {
  Write("dataset.json", "{}");
  Write("labels.txt", "cat\ndog\n");
  std::vector<std::string> shards;
  for (int i = 0; i < 5; ++i) {
    std::string name = "train-0000" + std::to_string(i) + "-of-00005.tfrecord";
    Write(name, std::string(1000 * (i + 1), 'a' + i));
    Write(name + ".idx", "idx" + std::to_string(i));
    shards.push_back(name);
  }
  Publish();
  std::map<std::string, int> owner;
  uint64_t bytes[2] = {0, 0};
  for (int rank = 0; rank < 2; ++rank) {
    SyncOptions o = Options(dir_.Join("nodes/rank" + std::to_string(rank)));
    o.selection.rank = rank;
    o.selection.world_size = 2;
    RunOk(o);
    auto tree = Tree(o.dest);
    EXPECT_EQ(tree.count("dataset.json"), 1u);
    EXPECT_EQ(tree.count("labels.txt"), 1u);
    for (const std::string& s : shards) {
      if (!tree.count(s)) continue;
      EXPECT_EQ(owner.count(s), 0u) << s << " on two ranks";
      owner[s] = rank;
      bytes[rank] += tree[s].size();
      EXPECT_EQ(tree.count(s + ".idx"), 1u) << "index goes with its shard";
    }
  }
  EXPECT_EQ(owner.size(), shards.size());
  // Largest first to the least loaded: 5000 | 4000, +3000 -> 1, +2000 -> 0,
  // +1000 -> 0 or 1: 8000 / 7000.
  EXPECT_EQ(bytes[0], 8000u);
  EXPECT_EQ(bytes[1], 7000u);
}

// A cache whose index was deleted still holds its objects, which a sync
// finds at their paths and indexes again (nothing fetched): a dry run
// predicts that, and still writes nothing (no index made). It predicted
// every object fetched, and the manifest too.
TEST_F(SyncTest, DryRunCountsObjectsOnDiskWithoutAnIndexAsCached) {
  Write("a", std::string(3000, 'a'));
  Write("b", std::string(5000, 'b'));
  Publish();
  RunOk(Options(dir_.Join("nodes/one")));
  for (const char* f : {"index.sqlite", "index.sqlite-wal", "index.sqlite-shm"})
    (void)env_->RemoveFile(JoinPath(cache_, f));
  const std::vector<std::string> before = Everything();
  SyncOptions o = Options();
  o.dry_run = true;
  SyncReport plan = RunOk(o);
  EXPECT_EQ(plan.objects_fetched, 0u);
  EXPECT_EQ(plan.bytes_fetched, 0u);
  EXPECT_EQ(plan.files_cached, 2u);
  EXPECT_EQ(plan.requests, 1u);  // the ref; the manifest is cached
  EXPECT_EQ(Everything(), before);
  EXPECT_FALSE(env_->FileExists(JoinPath(cache_, "index.sqlite")));
  o.dry_run = false;
  SyncReport r = RunOk(o);
  EXPECT_EQ(r.objects_fetched, plan.objects_fetched);
  EXPECT_EQ(r.files_cached, plan.files_cached);
  EXPECT_EQ(r.requests, plan.requests);
  EXPECT_EQ(ReadFile(env_, dest_ + "/b"), std::string(5000, 'b'));
}

// A dry run against a cache with an index wrote to it: SQLite's WAL and
// shared memory, the cache's folders, an older index's migration (and as a
// user who may only read the cache, it failed: "readonly database").
TEST_F(SyncTest, DryRunWritesNothingToAnExistingCache) {
  Write("a", std::string(3000, 'a'));
  Write("b", std::string(5000, 'b'));
  Publish();
  RunOk(Options(dir_.Join("nodes/one")));
  SyncOptions o = Options();
  o.dry_run = true;
  for (const std::string& index :
       {std::string("current"), std::string("old")}) {
    SCOPED_TRACE(index);
    if (index == "old") {  // before objects had stamps: Open adds them
      auto db = sync::Db::Open(JoinPath(cache_, "index.sqlite"), 1000, true);
      ASSERT_OK(db.status());
      for (const char* col : {"ino", "mtime", "ctime"})
        ASSERT_OK(
            (*db)->Exec(std::string("ALTER TABLE objects DROP COLUMN ") + col));
    }
    const auto before = Snapshot(dir_.path());
    SyncReport plan = RunOk(o);
    EXPECT_EQ(plan.objects_fetched, 0u);
    EXPECT_EQ(plan.files_cached, 2u);
    EXPECT_EQ(Snapshot(dir_.path()), before);
  }
}

// An unmanaged remote's dry run predicted every file fetched that another
// DEST had fetched into the cache; the real sync found them (the index
// recalls their hashes by path, ETag and size).
TEST_F(SyncTest, UnmanagedDryRunCountsFilesTheCacheHasAsCached) {
  WriteFile(env_, JoinPath(bucket_, "a"), std::string(3000, 'a'));
  WriteFile(env_, JoinPath(bucket_, "b"), std::string(5000, 'b'));
  // --no-fsync: the index's WAL is left for the next opener, unseen by a
  // read of the index alone (it predicted both fetched, warning "no such
  // table"); the dry run reads a private copy of both.
  SyncOptions first = Options(dir_.Join("nodes/one"));
  first.transfer.fsync = false;
  RunOk(first);
  auto wal = env_->Stat(JoinPath(cache_, "index.sqlite-wal"));
  ASSERT_TRUE(wal.ok() && wal->size > 0);
  SyncOptions o = Options();
  o.dry_run = true;
  const auto before = Snapshot(dir_.path());
  SyncReport plan = RunOk(o);
  EXPECT_TRUE(plan.warnings.empty()) << plan.warnings[0];
  EXPECT_TRUE(plan.unmanaged);
  EXPECT_EQ(plan.objects_fetched, 0u);
  EXPECT_EQ(plan.files_cached, 2u);
  EXPECT_EQ(Snapshot(dir_.path()), before);
  o.dry_run = false;
  SyncReport r = RunOk(o);
  EXPECT_EQ(r.objects_fetched, plan.objects_fetched);
  EXPECT_EQ(r.files_cached, plan.files_cached);
}

TEST_F(SyncTest, CacheLimitBelowTheViewFailsBeforeAnyByteIsFetched) {
  Write("big", std::string(5000, 'x'));
  Write("small", "s");
  Publish();
  SyncOptions o = Options();
  o.cache_limit = 4000;
  auto r = Run(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kResourceExhausted);
  EXPECT_NE(r.status().message().find("the view alone needs 5001 bytes"),
            std::string_view::npos)
      << r.status().ToString();
  EXPECT_FALSE(env_->FileExists(dest_));
  auto objects = ListFilesRecursive(env_, JoinPath(cache_, "objects"));
  EXPECT_TRUE(!objects.ok() || objects->empty());
}

TEST_F(SyncTest, CacheLimitEvictsObjectsNoViewUses) {
  Write("a", std::string(3000, 'a'));
  Publish();
  RunOk(Options(dir_.Join("nodes/one")));
  ASSERT_OK(sync::RemoveTree(env_, dir_.Join("nodes/.one.ferry-views")));
  ASSERT_OK(env_->RemoveFile(dir_.Join("nodes/one")));
  Write("a", std::string(3000, 'b'));
  Publish();
  SyncOptions o = Options();
  o.cache_limit = 4000;
  SyncReport r = RunOk(o);
  EXPECT_EQ(r.evicted_objects, 1u);
  EXPECT_EQ(ReadFile(env_, dest_ + "/a"), std::string(3000, 'b'));
}

// Runs once, the first time the cache's eviction lock is taken (MakeRoom):
// there a test plays another sync sharing the cache.
class BeforeEvictionEnv : public EnvWrapper {
 public:
  BeforeEvictionEnv(std::string lock, std::function<void()> then)
      : EnvWrapper(Env::Default()),
        lock_(std::move(lock)),
        then_(std::move(then)) {}
  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path,
                                             bool wait) override {
    if (path == lock_ && then_) std::exchange(then_, nullptr)();
    return EnvWrapper::LockFile(path, wait);
  }

 private:
  std::string lock_;
  std::function<void()> then_;
};

// Another sync of the same version into the same cache fetches every object
// between this one's lookups and its eviction: they are in the cache once,
// and the limit (room for one copy) holds both views. Counting them as
// still missing failed this sync ("needs ... more bytes").
TEST_F(SyncTest, CacheLimitCountsObjectsAnotherSyncFetchedMeanwhileOnce) {
  Write("a", std::string(3000, 'a'));
  Write("b", std::string(3000, 'b'));
  Publish();
  BeforeEvictionEnv env(JoinPath(cache_, "lock"), [&] {
    auto other = Sync(Options(dir_.Join("nodes/other")), Env::Default());
    ASSERT_OK(other.status());
    EXPECT_EQ(other->objects_fetched, 2u);
  });
  SyncOptions o = Options();
  o.cache_limit = 8000;
  auto r = Sync(o, &env);
  ASSERT_OK(r.status());
  EXPECT_EQ(r->objects_fetched, 0u);
  EXPECT_EQ(r->files_cached, 2u);
  EXPECT_EQ(r->evicted_objects, 0u);
  EXPECT_EQ(ReadFile(env_, dest_ + "/b"), std::string(3000, 'b'));
}

// Runs once, when the sync writes a file into dir (the manifest into the
// cache: after its room was made, before its first download): there a test
// plays another sync sharing the cache.
class BeforeDownloadsEnv : public EnvWrapper {
 public:
  BeforeDownloadsEnv(std::string dir, std::function<void()> then)
      : EnvWrapper(Env::Default()),
        dir_(std::move(dir)),
        then_(std::move(then)) {}
  Result<std::unique_ptr<WritableFile>> NewTempFile(
      const std::string& path) override {
    if (then_ && path.rfind(dir_ + "/", 0) == 0)
      std::exchange(then_, nullptr)();
    return EnvWrapper::NewTempFile(path);
  }

 private:
  std::string dir_;
  std::function<void()> then_;
};

// The sum of the sizes of the files below dir.
uint64_t BytesBelow(Env* env, const std::string& dir) {
  uint64_t n = 0;
  auto files = ListFilesRecursive(env, dir);
  if (!files.ok()) return 0;
  for (const std::string& f : *files) {
    auto info = env->Stat(JoinPath(dir, f));
    if (info.ok()) n += info->size;
  }
  return n;
}

// Two syncs of other remotes into one cache under --cache-limit: the second
// makes its room after the first made its own, before the first fetched
// anything. It counts the first's downloads to come (reserved) and refuses
// before fetching anything; the first completes, and the cache holds its
// limit. Each counted only what was in the cache: both fetched, and a limit
// of 8,000 bytes held 12,000 (the CLI: 20 MB under --cache-limit 15MiB).
TEST_F(SyncTest, CacheLimitHoldsForTwoSyncsMakingRoomAtOnce) {
  Write("a", std::string(3000, 'a'));
  Write("b", std::string(3000, 'b'));
  Publish();
  const std::string bucket2 = dir_.Join("bucket2");
  WriteFile(env_, dir_.Join("src2/c"), std::string(3000, 'c'));
  WriteFile(env_, dir_.Join("src2/d"), std::string(3000, 'd'));
  ASSERT_OK(test::PublishTree(env_, dir_.Join("src2"), bucket2).status());
  SyncOptions other = Options(dir_.Join("nodes/other"));
  other.remote = bucket2;
  other.cache_limit = 8000;
  Status other_status;
  BeforeDownloadsEnv env(JoinPath(cache_, "manifests"), [&] {
    other_status = Sync(other, Env::Default()).status();
  });
  SyncOptions o = Options();
  o.cache_limit = 8000;
  auto r = Sync(o, &env);
  ASSERT_OK(r.status());
  EXPECT_EQ(r->objects_fetched, 2u);
  EXPECT_EQ(ReadFile(env_, dest_ + "/b"), std::string(3000, 'b'));
  EXPECT_EQ(other_status.code(), Status::Code::kResourceExhausted)
      << other_status.ToString();
  EXPECT_NE(other_status.message().find(
                "needs 6000 more bytes; 6000 in use (6000 of them reserved "
                "by other syncs running now)"),
            std::string_view::npos)
      << other_status.ToString();
  EXPECT_FALSE(env_->FileExists(other.dest));
  EXPECT_EQ(BytesBelow(env_, JoinPath(cache_, "objects")), 6000u);
  EXPECT_EQ(BytesBelow(env_, JoinPath(cache_, "partial")), 0u);
  // After it, the other refuses as before: the first's view pins 6,000.
  auto again = Sync(other, Env::Default());
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find(
                "needs 6000 more bytes; 6000 in use, 0 of them evictable"),
            std::string_view::npos)
      << again.status().ToString();
}

// A damaged index (here: a page overwritten) failed every sync until
// removed by hand. It is set aside, the sync runs again and finds the
// objects by their files (nothing fetched), with a warning naming it.
TEST_F(SyncTest, DamagedCacheIndexIsSetAsideAndTheSyncGoesOn) {
  Write("a", std::string(3000, 'a'));
  Write("b", std::string(3000, 'b'));
  Publish();
  RunOk(Options());
  const std::string index = JoinPath(cache_, "index.sqlite");
  for (const std::string& damage :
       {std::string("page"), std::string("header"), std::string("lru")}) {
    SCOPED_TRACE(damage);
    ASSERT_EQ(::unlink(dest_.c_str()), 0);  // the view stays
    std::string bytes = ReadFile(env_, index);
    ASSERT_GT(bytes.size(), 8192u);
    if (damage == "page") {
      std::fill(bytes.begin() + 4096, bytes.begin() + 8192, '\xff');
    } else if (damage == "lru") {
      // One bit of an objects_lru entry: PRAGMA quick_check finds nothing
      // (it does not compare an index with its table); every sync failed.
      uint64_t page = 0;
      {
        auto db = sync::Db::Open(index, 1000, false);
        ASSERT_OK(db.status());
        auto st = (*db)->Prepare(
            "SELECT pageno FROM dbstat WHERE name = 'objects_lru' AND"
            " pagetype = 'leaf' LIMIT 1");
        ASSERT_OK(st.status());
        auto row = st->Step();
        ASSERT_TRUE(row.ok() && *row);
        page = static_cast<uint64_t>(st->Int(0));
        ASSERT_TRUE(st->Step().ok());
      }
      bytes = ReadFile(env_, index);
      const size_t at = (page - 1) * 4096;
      ASSERT_LT(at, bytes.size());
      const std::regex hex("[0-9a-f]{32}");
      std::smatch m;
      const std::string leaf = bytes.substr(at, 4096);
      ASSERT_TRUE(std::regex_search(leaf, m, hex));
      bytes[at + m.position(0) + 31] ^= 1;
    } else {
      bytes = std::string(8192, '\xff');
    }
    for (const char* side : {"-wal", "-shm"})
      (void)env_->RemoveFile(index + side);
    WriteFile(env_, index, bytes);
    auto r = Run(Options());
    ASSERT_OK(r.status());
    EXPECT_EQ(r->objects_fetched, 0u);
    EXPECT_EQ(r->files_cached, 2u);
    ASSERT_EQ(r->warnings.size(), 1u);
    EXPECT_NE(r->warnings[0].find(index + ".damaged"), std::string::npos)
        << r->warnings[0];
    EXPECT_EQ(ReadFile(env_, index + ".damaged"), bytes);
    EXPECT_EQ(ReadFile(env_, dest_ + "/b"), std::string(3000, 'b'));
    EXPECT_TRUE(RunOk(Options()).unchanged);
  }
}

// The same for an unmanaged remote (files listed, no .ferry): another sync
// into another DEST fetches both files between this one's lookups and its
// eviction. Counted as still missing, they failed this sync ("needs 6000
// more bytes; 6000 in use, 0 of them evictable").
TEST_F(SyncTest,
       UnmanagedCacheLimitCountsFilesAnotherSyncFetchedMeanwhileOnce) {
  WriteFile(env_, JoinPath(bucket_, "a"), std::string(3000, 'a'));
  WriteFile(env_, JoinPath(bucket_, "b"), std::string(3000, 'b'));
  BeforeEvictionEnv env(JoinPath(cache_, "lock"), [&] {
    auto other = Sync(Options(dir_.Join("nodes/other")), Env::Default());
    ASSERT_OK(other.status());
    EXPECT_TRUE(other->unmanaged);
    EXPECT_EQ(other->objects_fetched, 2u);
  });
  SyncOptions o = Options();
  o.cache_limit = 8000;
  auto r = Sync(o, &env);
  ASSERT_OK(r.status());
  EXPECT_TRUE(r->unmanaged);
  EXPECT_EQ(r->objects_fetched, 0u);
  EXPECT_EQ(r->files_cached, 2u);
  EXPECT_EQ(r->evicted_objects, 0u);
  EXPECT_EQ(ReadFile(env_, dest_ + "/b"), std::string(3000, 'b'));
}

// An unmanaged remote's sync reserves the cached files it will link before
// it looks them up (no view pins them until all its hashes are known).
// Another sync under --cache-limit, making its room between that lookup and
// this sync's link, evicted them, and this one failed at its end, after its
// downloads ("left the cache during the sync"). Now the other refuses.
TEST_F(SyncTest, AnotherSyncNeverEvictsTheCachedFilesAnUnmanagedSyncLinks) {
  WriteFile(env_, JoinPath(bucket_, "a"), std::string(3000, 'a'));
  WriteFile(env_, JoinPath(bucket_, "b"), std::string(3000, 'b'));
  const std::string first = dir_.Join("nodes/first");
  RunOk(Options(first));  // a and b cached, no view left to pin them
  ASSERT_OK(sync::RemoveTree(env_, dir_.Join("nodes/.first.ferry-views")));
  ASSERT_OK(env_->RemoveFile(first));
  WriteFile(env_, JoinPath(bucket_, "c"), std::string(3000, 'c'));
  const std::string bucket2 = dir_.Join("bucket2");
  WriteFile(env_, dir_.Join("src2/d"), std::string(3000, 'd'));
  ASSERT_OK(test::PublishTree(env_, dir_.Join("src2"), bucket2).status());
  SyncOptions other = Options(dir_.Join("nodes/other"));
  other.remote = bucket2;
  other.cache_limit = 6000;
  Status other_status;
  BeforeEvictionEnv env(JoinPath(cache_, "lock"), [&] {
    other_status = Sync(other, Env::Default()).status();
  });
  SyncOptions o = Options();
  o.cache_limit = 12000;
  auto r = Sync(o, &env);
  ASSERT_OK(r.status());
  EXPECT_TRUE(r->unmanaged);
  EXPECT_EQ(r->files_cached, 2u);
  EXPECT_EQ(r->objects_fetched, 1u);
  EXPECT_EQ(ReadFile(env_, dest_ + "/a"), std::string(3000, 'a'));
  EXPECT_EQ(other_status.code(), Status::Code::kResourceExhausted)
      << other_status.ToString();
  EXPECT_FALSE(env_->FileExists(other.dest));
}

// A --list that never ends (a pipe fed forever: `yes |` into /dev/stdin)
// is refused, naming it, once it passes 64 MiB: it was read up to 1 GiB
// (2.1 GB resident) first. The writer stops at twice the limit, so the
// test needs no gigabytes, with the fix or without.
TEST_F(SyncTest, AListThatNeverEndsIsRefusedAtItsLimit) {
  WriteFile(env_, JoinPath(bucket_, "a"), "alpha");  // unmanaged: no .ferry
  const std::string fifo = dir_.Join("list");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const uint64_t limit = uint64_t{64} << 20;
  std::atomic<uint64_t> written{0};
  std::thread writer([&] {
    // A write the reader closed the pipe on fails (EPIPE), no SIGPIPE.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    int fd = ::open(fifo.c_str(), O_WRONLY);
    if (fd < 0) return;
    // Lines of 4 KiB, each "a" ("./" dropped): few strings to parse.
    std::string lines;
    for (int i = 0; i < 16; ++i) {
      for (int j = 0; j < 2047; ++j) lines += "./";
      lines += "a\n";
    }
    while (written < 2 * limit) {
      ssize_t n = ::write(fd, lines.data(), lines.size());
      if (n <= 0) break;
      written += static_cast<uint64_t>(n);
    }
    ::close(fd);
  });
  SyncOptions o = Options();
  o.list = fifo;
  auto r = Run(o);
  // A writer still waiting for a reader is let through (to EPIPE).
  int unblock = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  if (unblock >= 0) ::close(unblock);
  writer.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("--list " + fifo + ": more than 64 MiB"),
            std::string_view::npos)
      << r.status().ToString();
  // Read up to the limit, not on.
  EXPECT_LT(written, limit + (uint64_t{4} << 20));
  EXPECT_FALSE(env_->FileExists(dest_));
}

// Each name of a --list is a string, a request and an entry of the view:
// a short list of many names (60 MiB of "a\n" took 1.4 GB) is refused too.
TEST_F(SyncTest, AListOfMoreThanAMillionNamesIsRefused) {
  WriteFile(env_, JoinPath(bucket_, "a"), "alpha");  // unmanaged: no .ferry
  std::string names;
  for (int i = 0; i < 1000001; ++i) names += "a\n";
  const std::string list = dir_.Join("list.txt");
  WriteFile(env_, list, names);
  SyncOptions o = Options();
  o.list = list;
  auto r = Run(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(
      r.status().message().find("--list " + list + ": more than 1000000 names"),
      std::string_view::npos)
      << r.status().ToString();
  EXPECT_FALSE(env_->FileExists(dest_));
  // A million is still a list.
  names.resize(names.size() - 2);
  WriteFile(env_, list, names);
  RunOk(o);
  EXPECT_EQ(ReadFile(env_, dest_ + "/a"), "alpha");
}

// A name longer than any file's (PATH_MAX) is refused as the list is read:
// a 64 MiB line was stat'ed, and its message held it twice (134 MB).
TEST_F(SyncTest, AListNamingAnOverlongFileIsRefusedShortly) {
  WriteFile(env_, JoinPath(bucket_, "a"), "alpha");  // unmanaged: no .ferry
  const std::string list = dir_.Join("list.txt");
  WriteFile(env_, list, "a\n" + std::string(1 << 20, 'x') + "\n");
  SyncOptions o = Options();
  o.list = list;
  auto r = Run(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("more than 4096 bytes"),
            std::string_view::npos)
      << r.status().ToString().substr(0, 300);
  EXPECT_LT(r.status().message().size(), 1000u);
  EXPECT_FALSE(env_->FileExists(dest_));
}

class HostileManifestTest : public SyncTest {
 protected:
  // Publishes raw manifest bytes under id (its true id unless given) and
  // expects the sync to refuse it with Corruption naming `why`, writing
  // nothing but the cache's own folders.
  void ExpectRefused(const std::string& bytes, const std::string& why,
                     std::string id = "") {
    if (id.empty()) id = HashBytes(bytes).ToHex();
    ASSERT_OK(test::PutManifest(env_, bucket_, id, bytes));
    auto before = Everything();
    auto r = Run(Options());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Status::Code::kCorruption)
        << r.status().ToString();
    EXPECT_NE(r.status().ToString().find(why), std::string::npos)
        << r.status().ToString();
    EXPECT_FALSE(env_->FileExists(dest_));
    auto after = Everything();
    std::vector<std::string> added;
    for (const std::string& f : after)
      if (std::find(before.begin(), before.end(), f) == before.end())
        added.push_back(f);
    for (const std::string& f : added)
      EXPECT_EQ(f.rfind("cache/index.sqlite", 0), 0u) << f << " was written";
  }
};

TEST_F(HostileManifestTest, DotDotPathIsRefused) {
  ExpectRefused(RawManifest({FileOf("a/../../escape", "x")}), "'..'");
}

TEST_F(HostileManifestTest, AbsolutePathIsRefused) {
  ExpectRefused(RawManifest({FileOf("/etc/evil", "x")}), "absolute");
}

TEST_F(HostileManifestTest, DuplicatePathIsRefused) {
  ExpectRefused(RawManifest({FileOf("a", "x"), FileOf("a", "y")}), "a");
}

TEST_F(HostileManifestTest, PathThroughAFileIsRefused) {
  ExpectRefused(RawManifest({FileOf("a", "x"), FileOf("a/b", "y")}),
                "leads through the file 'a'");
}

// The file a path leads through need not be the entry just before it, nor
// in the same folder as the entries between (ReadManifest checks a path's
// prefixes again whenever its folder differs from the previous path's).
TEST_F(HostileManifestTest, PathThroughAnEarlierFileIsRefused) {
  ExpectRefused(RawManifest({FileOf("d/a", "x"), FileOf("d/a!x", "y"),
                             FileOf("d/a.b/c", "z"), FileOf("d/a/x", "w")}),
                "leads through the file 'd/a'");
}

// One object per (hash, size): the first file using it, in file order.
TEST(UniqueObjectsTest, FirstFileOfEachHashAndSizeInFileOrder) {
  auto entry = [](const std::string& path, const std::string& data,
                  uint64_t size) {
    sync::Entry e;
    e.path = path;
    e.hash = HashBytes(data);
    e.size = size;
    return e;
  };
  std::vector<sync::Entry> files = {entry("a", "x", 1), entry("b", "y", 1),
                                    entry("c", "x", 1), entry("d", "x", 2),
                                    entry("e", "y", 1), entry("f", "z", 1)};
  EXPECT_EQ(sync::UniqueObjects(files), (std::vector<size_t>{0, 1, 3, 5}));
  EXPECT_TRUE(sync::UniqueObjects({}).empty());
}

TEST_F(HostileManifestTest, FerrysOwnFileNameIsRefused) {
  ExpectRefused(RawManifest({FileOf(".ferry-sync.json", "{}")}),
                "ferry's own file");
}

TEST_F(HostileManifestTest, IdThatDoesNotMatchTheBytesIsRefused) {
  std::string bytes = RawManifest({FileOf("a", "x")});
  ExpectRefused(bytes, "manifest", std::string(32, '7'));
}

TEST_F(HostileManifestTest, TruncatedManifestIsRefused) {
  std::string bytes = RawManifest({FileOf("a", "x"), FileOf("b", "y")});
  bytes.resize(bytes.size() - 5);
  // Stored under the truncated bytes' own id: only the format catches it.
  ExpectRefused(bytes, "Corruption");
}

TEST_F(HostileManifestTest, HugeDeclaredSizeIsRefused) {
  manifest::File f = FileOf("a", "x");
  f.set_size(uint64_t{1} << 60);
  ExpectRefused(RawManifest({f}), "a");
}

// sync::Entry holds mode in 16 bits and sig_strong_len in 8 (plan.h): a
// manifest whose values would wrap to allowed ones (0644, 16) is refused by
// the reader, never narrowed into them.
TEST_F(HostileManifestTest, ModeOrStrongLengthPastTheirFieldsIsRefused) {
  manifest::File f = FileOf("a", "x");
  f.set_mode(0x10000 | 0644);
  ExpectRefused(RawManifest({f}), "permission bits");
  manifest::File g = FileOf("b", std::string(100000, 'y'));
  g.set_sig_block_len(delta::format::RecommendedBlockLen(g.size()));
  g.set_sig_strong_len(256 + 16);
  ExpectRefused(RawManifest({g}), "sig_strong_len");
}

TEST_F(SyncTest, FirstSyncIntoAFolderAdoptsItsFilesAndMovesItAside) {
  Write("keep/a.bin", std::string(4000, 'a'));
  Write("moved.bin", std::string(4000, 'm'));
  Write("new.bin", std::string(4000, 'n'));
  Publish();
  // DEST holds earlier copies (as rsync left them), one under another name,
  // and a file of the user's that is not in the dataset.
  WriteFile(env_, dest_ + "/keep/a.bin", std::string(4000, 'a'));
  WriteFile(env_, dest_ + "/elsewhere/m.bin", std::string(4000, 'm'));
  WriteFile(env_, dest_ + "/mine.txt", "user's notes");
  SyncReport r = RunOk(Options());
  EXPECT_EQ(r.files_adopted, 2u);
  EXPECT_EQ(r.objects_fetched, 1u);
  EXPECT_EQ(Tree(dest_), Tree(src_));
  ASSERT_FALSE(r.replaced_folder.empty());
  EXPECT_EQ(ReadFile(env_, r.replaced_folder + "/mine.txt"), "user's notes");
}

TEST_F(SyncTest, DeleteRemovesTheReplacedFolder) {
  Write("a", "a");
  Publish();
  WriteFile(env_, dest_ + "/mine.txt", "user's notes");
  SyncOptions o = Options();
  o.remove_replaced = true;
  SyncReport r = RunOk(o);
  EXPECT_TRUE(r.replaced_folder.empty());
  EXPECT_EQ(Tree(dest_), Tree(src_));
  auto left = env_->GetChildren(dir_.Join("nodes"));
  ASSERT_OK(left.status());
  for (const DirEntry& e : *left)
    EXPECT_EQ(e.name.find("ferry-old"), std::string::npos) << e.name;
}

// What a killed sync left in partial/<rk>/ for objects the next version
// does not have is removed once a sync completes; what others use stays:
// an object's files whose lock another sync holds, pack downloads (a
// running sync creates them long before it writes them), an unmanaged
// remote's u-* names; and a partial/<rk> that is a link is not swept. They
// stayed for good (a killed sync of big shards left their part files,
// outside --cache-limit, once the version moved on).
TEST_F(SyncTest, WhatAKilledSyncLeftOfAnOlderVersionGoesOthersFilesStay) {
  Write("big.bin", test::RandomBytes(3 << 20, 7));
  Write("a.txt", "alpha");
  Publish();
  const pid_t pid = test::ForkAlone();
  if (pid == 0) {
    test::KillAtCacheEnv killing(env_);
    (void)Sync(Options(), &killing);
    _exit(0);
  }
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  const std::string rk = sync::RemoteKey("file://" + bucket_);
  const std::string dir = JoinPath(cache_, "partial/" + rk);
  auto left = env_->GetChildren(dir);
  ASSERT_OK(left.status());
  ASSERT_FALSE(left->empty()) << "the killed run left nothing";
  for (const DirEntry& e : *left) test::AgeFile(JoinPath(dir, e.name), 700);
  // The next version has neither file.
  ASSERT_OK(env_->RemoveFile(JoinPath(src_, "big.bin")));
  Write("a.txt", "bravo");
  Publish();
  // Others' files: an object's download whose lock is held, a pack's
  // download being written, an unmanaged remote's.
  const Hash128 theirs = HashBytes("theirs");
  sync::ObjectLocks locks(env_, JoinPath(cache_, "locks"));
  ASSERT_OK(locks.Lock(sync::CacheKey{rk, theirs, 0}, false));
  const std::vector<std::string> kept = {
      theirs.ToHex() + ".ferry-part", theirs.ToHex() + ".ferry-part.journal",
      "pack-" + std::string(32, 'c') + "-" + std::string(16, 'd') +
          ".ferry-part",
      "u-" + std::string(32, 'e')};
  for (const std::string& name : kept)
    WriteFile(env_, JoinPath(dir, name), "x");
  const std::string old_pack =
      "pack-" + std::string(32, 'a') + "-" + std::string(16, 'b');
  WriteFile(env_, JoinPath(dir, old_pack), "x");
  test::AgeFile(JoinPath(dir, old_pack), 700);  // queued that long: kept
  RunOk(Options());
  EXPECT_EQ(Tree(dest_), Tree(src_));
  auto now = env_->GetChildren(dir);
  ASSERT_OK(now.status());
  std::vector<std::string> names;
  for (const DirEntry& e : *now)
    if (e.name.rfind("pack-", 0) != 0 || e.name == old_pack ||
        std::find(kept.begin(), kept.end(), e.name) != kept.end())
      names.push_back(e.name);
  std::sort(names.begin(), names.end());
  std::vector<std::string> want = kept;
  want.push_back(old_pack);
  std::sort(want.begin(), want.end());
  EXPECT_EQ(names, want);
  ASSERT_OK(locks.UnlockAll());
  // Freed, the object's files go with the next sync that does work.
  Write("a.txt", "charlie");
  Publish();
  RunOk(Options());
  now = env_->GetChildren(dir);
  ASSERT_OK(now.status());
  for (const DirEntry& e : *now)
    EXPECT_EQ(e.name.find(theirs.ToHex()), std::string::npos) << e.name;
  // partial/<rk> a link to a folder outside the cache: not swept.
  const std::string outside = dir_.Join("outside");
  const std::string victim = JoinPath(outside, theirs.ToHex() + ".ferry-part");
  WriteFile(env_, victim, "not the cache's");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directory_symlink(outside, dir);
  Write("a.txt", "delta");
  Publish();
  RunOk(Options());
  EXPECT_TRUE(env_->FileExists(victim)) << "swept through a link";
}

TEST_F(SyncTest, CountersAddUpWithAKilledRunsFinishedDownload) {
  Write("a", "alpha");
  Write("b", "beta");
  Write("c", "beta");  // one object, two files
  Publish();
  // A download a killed run finished but did not index.
  const std::string rk = sync::RemoteKey("file://" + bucket_);
  ASSERT_OK(env_->CreateDirs(JoinPath(cache_, "partial/" + rk)));
  WriteFile(
      env_,
      JoinPath(cache_, "partial/" + rk + "/" + HashBytes("alpha").ToHex()),
      "alpha");
  SyncReport r = RunOk(Options());
  EXPECT_EQ(r.files, 3u);
  EXPECT_EQ(r.objects, 2u);
  EXPECT_EQ(r.files_cached, 1u);  // the killed run's
  EXPECT_EQ(r.objects_fetched, 1u);
  EXPECT_EQ(r.files_cached + r.files_adopted + r.objects_fetched, r.objects);
  EXPECT_EQ(Tree(dest_), Tree(src_));
}

TEST_F(SyncTest, TemporariesOfAKilledRunAreRemoved) {
  Write("a", "a");
  Publish();
  RunOk(Options());
  const std::string rk = sync::RemoteKey("file://" + bucket_);
  const std::string dead = ".ferry-tmp-999999-0123456789ab-";
  WriteFile(env_, JoinPath(cache_, "manifests/" + dead + "m"), "x");
  WriteFile(env_, JoinPath(cache_, "partial/" + rk + "/" + dead + "o.adopt"),
            "x");
  Write("a", "b");
  Publish();
  RunOk(Options());
  EXPECT_FALSE(env_->FileExists(JoinPath(cache_, "manifests/" + dead + "m")));
  EXPECT_FALSE(env_->FileExists(
      JoinPath(cache_, "partial/" + rk + "/" + dead + "o.adopt")));
}

TEST_F(SyncTest, ASecondSyncIntoTheSameDestFailsAtOnce) {
  Write("a", "a");
  Publish();
  // One lock beside DEST whatever the mode (docs/sync.md layout).
  ASSERT_OK(env_->CreateDirs(dir_.Join("nodes")));
  auto held = env_->LockFile(dir_.Join("nodes/.dest.ferry-sync.lock"), false);
  ASSERT_OK(held.status());
  auto r = Run(Options());
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsUnavailable()) << r.status().ToString();
  EXPECT_NE(r.status().message().find("another ferry sync"),
            std::string_view::npos);
  EXPECT_FALSE(env_->FileExists(dest_));
  EXPECT_FALSE(env_->FileExists(dir_.Join("nodes/.dest.ferry-views")));
  SyncOptions in_place = Options();
  in_place.in_place = true;
  r = Run(in_place);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsUnavailable()) << r.status().ToString();
  EXPECT_FALSE(env_->FileExists(dest_));
  held->reset();
  RunOk(Options());
  EXPECT_EQ(Tree(dest_), Tree(src_));
}

TEST_F(SyncTest, DestThatIsAFileIsRefused) {
  Write("a", "a");
  Publish();
  WriteFile(env_, dest_, "a file");
  auto r = Run(Options());
  EXPECT_EQ(r.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(ReadFile(env_, dest_), "a file");
}

TEST_F(SyncTest, CheckFindsChangedMissingAndExtraFiles) {
  Write("a", "aaaa");
  Write("b", "bbbb");
  Write("c", "cccc");
  Publish();
  RunOk(Options());
  auto ok = CheckView(dest_, env_);
  ASSERT_OK(ok.status());
  EXPECT_TRUE(ok->problems.empty());
  EXPECT_EQ(ok->files, 3u);
  ASSERT_OK(sync::SetMode(dest_ + "/a", 0644));
  WriteFile(env_, dest_ + "/a", "AAAA");
  ASSERT_OK(env_->RemoveFile(dest_ + "/b"));
  WriteFile(env_, dest_ + "/extra", "x");
  auto bad = CheckView(dest_, env_);
  ASSERT_OK(bad.status());
  ASSERT_EQ(bad->problems.size(), 3u);
  EXPECT_EQ(bad->problems[0].first, "a");
  EXPECT_NE(bad->problems[0].second.find("XXH3-128"), std::string::npos);
  EXPECT_EQ(bad->problems[1].first, "b");
  EXPECT_EQ(bad->problems[2].first, "extra");
}

// Runs once, when a file below dir other than ferry's own (.ferry-*) is
// first opened for reading (a check hashing a view's first file): there a
// test plays a sync switching DEST.
class OnFirstReadEnv : public EnvWrapper {
 public:
  OnFirstReadEnv(std::string dir, std::function<void()> then)
      : EnvWrapper(Env::Default()),
        dir_(std::move(dir)),
        then_(std::move(then)) {}
  Result<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& path) override {
    if (path.rfind(dir_ + "/", 0) == 0 &&
        path.find("/.ferry-", dir_.size()) == std::string::npos && then_)
      std::exchange(then_, nullptr)();
    return EnvWrapper::NewSequentialFile(path);
  }

 private:
  std::string dir_;
  std::function<void()> then_;
};

// A sync of a mirror of the bucket (the same manifest id from another
// remote) switches DEST while a check reads it: the check reads the view it
// started on, kept under its lock, and finds it intact. That view was
// removed under it: its files reported missing, exit 3 for an intact DEST.
TEST_F(SyncTest, CheckReadsItsViewUnderItsLockWhileASyncSwitchesDest) {
  Write("a", "aaaa");
  Write("b", "bbbb");
  Write("c", "cccc");
  Publish();
  RunOk(Options());
  const std::string mirror = dir_.Join("mirror");
  std::filesystem::copy(bucket_, mirror,
                        std::filesystem::copy_options::recursive);
  auto before = sync::ReadLink(dest_);
  ASSERT_OK(before.status());
  const std::string views = dir_.Join("nodes/.dest.ferry-views");
  OnFirstReadEnv env(views, [&] {
    SyncOptions o = Options();
    o.remote = mirror;
    auto r = Sync(o, Env::Default());
    ASSERT_OK(r.status());
    EXPECT_EQ(r->old_views_in_use, 1u);
    auto after = sync::ReadLink(dest_);
    ASSERT_OK(after.status());
    EXPECT_NE(*after, *before);  // switched while the check reads
  });
  auto check = CheckView(dest_, &env);
  ASSERT_OK(check.status());
  EXPECT_TRUE(check->problems.empty())
      << check->problems.size() << " problems, the first: "
      << (check->problems.empty() ? "" : check->problems[0].second);
  EXPECT_EQ(check->files, 3u);
  // Once the check is done, the next sync removes that view.
  SyncOptions o = Options();
  o.remote = mirror;
  SyncReport r = RunOk(o);
  EXPECT_TRUE(r.unchanged);
  EXPECT_FALSE(env_->FileExists(JoinPath(dir_.Join("nodes"), *before)));
}

// ferry verify DEST while a sync switches DEST to the next version: it
// reads the view DEST showed when it began, kept under that view's lock.
// Through the link it read files of both versions, and an intact DEST was
// reported damaged (each file then "hash": the next version's bytes).
TEST_F(SyncTest, VerifyReadsTheViewUnderItsLockWhileASyncSwitchesDest) {
  std::string list;
  for (const char* f : {"a", "b", "c"}) {
    const std::string bytes(4, f[0]);
    Write(f, bytes);
    list += HashBytes(bytes).ToHex() + "  ./" + f + "\n";
  }
  Publish();
  RunOk(Options());
  const std::string list_file = dir_.Join("v1.xxh128");
  WriteFile(env_, list_file, list);
  for (const char* f : {"a", "b", "c"}) Write(f, std::string(4, f[0] - 32));
  Publish();
  OnFirstReadEnv env(dir_.Join("nodes"), [&] {
    auto r = Sync(Options(), Env::Default());
    ASSERT_OK(r.status());
    EXPECT_FALSE(r->unchanged);
    EXPECT_EQ(r->old_views_in_use, 1u);
  });
  VerifyOptions vo;
  vo.env = &env;
  vo.hashes_file = list_file;
  auto rep = Verify(dest_, vo);
  ASSERT_OK(rep.status());
  EXPECT_EQ(rep->files, 3u);
  EXPECT_TRUE(rep->problems.empty())
      << rep->problems.size() << " problems, the first: "
      << (rep->problems.empty()
              ? ""
              : rep->problems[0].file + ": " + rep->problems[0].detail);
  EXPECT_EQ(ReadFile(env_, dest_ + "/a"), "AAAA");  // switched meanwhile
}

// A FIFO, a link or a folder in a file's place is a problem named as such,
// never opened: the FIFO blocked the check for a writer (it hung).
TEST_F(SyncTest, CheckNamesNonRegularFilesWithoutOpeningThem) {
  ::alarm(60);  // fail, do not hang
  Write("fifo", "f");
  Write("link", "l");
  Write("dir", "d");
  Write("sub/b", "b");
  Publish();
  RunOk(Options());
  // A folder on the way replaced by a link to one with the right bytes.
  WriteFile(env_, dir_.Join("elsewhere/b"), "b");
  ASSERT_OK(sync::RemoveTree(env_, dest_ + "/sub"));
  ASSERT_EQ(::symlink(dir_.Join("elsewhere").c_str(), (dest_ + "/sub").c_str()),
            0);
  for (const char* name : {"fifo", "link", "dir"})
    ASSERT_OK(env_->RemoveFile(dest_ + "/" + name));
  ASSERT_EQ(::mkfifo((dest_ + "/fifo").c_str(), 0644), 0);
  WriteFile(env_, dir_.Join("l"), "l");
  ASSERT_EQ(::symlink(dir_.Join("l").c_str(), (dest_ + "/link").c_str()), 0);
  ASSERT_OK(env_->CreateDirs(dest_ + "/dir"));
  auto bad = CheckView(dest_, env_);
  ASSERT_OK(bad.status());
  ASSERT_EQ(bad->problems.size(), 4u) << bad->problems.back().second;
  EXPECT_EQ(bad->problems[3].first, "sub/b");
  EXPECT_NE(bad->problems[3].second.find("'sub' on its way is not a folder"),
            std::string::npos)
      << bad->problems[3].second;
  EXPECT_EQ(bad->problems[0],
            std::make_pair(std::string("dir"), std::string("is a folder")));
  EXPECT_EQ(bad->problems[1],
            std::make_pair(std::string("fifo"),
                           std::string("is not a regular file")));
  EXPECT_EQ(
      bad->problems[2],
      std::make_pair(std::string("link"), std::string("is a symbolic link")));
  ::alarm(0);
}

TEST_F(SyncTest, ObjectsOfAnotherRemoteAreNotReused) {
  Write("a", "same bytes");
  Publish();
  RunOk(Options());
  std::string other = dir_.Join("other-bucket");
  ASSERT_OK(test::PublishTree(env_, src_, other).status());
  SyncOptions o = Options(dir_.Join("nodes/two"));
  o.remote = other;
  SyncReport r = RunOk(o);
  EXPECT_EQ(r.files_cached, 0u);
  EXPECT_EQ(r.objects_fetched, 1u);
}

// Two processes sync the same dataset into two DESTs on one cache at once:
// both complete and every object is fetched once in all.
// A sync holds a lock on every object it fetches: with a descriptor each,
// a cold sync of more objects than the descriptor limit failed ("Too many
// open files", seen at 100,000 objects). Here 450 objects under a limit of
// 380 descriptors (the transfer engine keeps up to 256 small objects open
// while they wait for their syncfs; the locks take up to 64).
TEST_F(SyncTest, ColdSyncOfMoreObjectsThanTheDescriptorLimit) {
  constexpr int kFiles = 450;
  for (int i = 0; i < kFiles; ++i)
    Write("f" + std::to_string(i), "object " + std::to_string(i));
  Publish();
  pid_t pid = test::ForkAlone();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    struct rlimit lim = {380, 380};
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) _exit(9);
    auto r = Sync(Options(), Env::Default());
    if (!r.ok()) {
      fprintf(stderr, "sync: %s\n", r.status().ToString().c_str());
      _exit(10);
    }
    for (const auto& [name, st] : r->failures)
      fprintf(stderr, "sync: %s: %s\n", name.c_str(), st.ToString().c_str());
    _exit(r->failures.empty() && r->objects_fetched == kFiles ? 0 : 11);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(Tree(dest_), Tree(src_));
}

TEST_F(SyncTest, TwoSyncsOnOneCacheFetchEachObjectOnce) {
  constexpr int kFiles = 40;
  for (int i = 0; i < kFiles; ++i)
    Write("f" + std::to_string(i), std::string(20000 + i, 'a' + i % 26));
  Publish();
  std::vector<pid_t> kids;
  for (int p = 0; p < 2; ++p) {
    pid_t pid = test::ForkAlone();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      SyncOptions o = Options(dir_.Join("nodes/d" + std::to_string(p)));
      o.transfer.connections = 4;
      auto r = Sync(o, Env::Default());
      if (!r.ok()) {
        fprintf(stderr, "sync %d: %s\n", p, r.status().ToString().c_str());
        _exit(10);
      }
      for (const auto& [name, st] : r->failures)
        fprintf(stderr, "sync %d: %s: %s\n", p, name.c_str(),
                st.ToString().c_str());
      if (!r->failures.empty()) _exit(11);
      FILE* f = fopen(dir_.Join("fetched" + std::to_string(p)).c_str(), "w");
      fprintf(f, "%llu", (unsigned long long)r->objects_fetched);
      fclose(f);
      _exit(0);
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  int total = std::stoi(ReadFile(env_, dir_.Join("fetched0"))) +
              std::stoi(ReadFile(env_, dir_.Join("fetched1")));
  EXPECT_EQ(total, kFiles);
  EXPECT_EQ(Tree(dir_.Join("nodes/d0")), Tree(src_));
  EXPECT_EQ(Tree(dir_.Join("nodes/d1")), Tree(src_));
}

// The new view's files whose objects are cached are linked while the rest
// downloads; when a download then fails, DEST stays the old view and the
// new one is left empty, its links undone, with each object's stamp in the
// index as the file is now (a link and an unlink change its ctime): the
// next lookup trusts it without re-hashing.
TEST_F(SyncTest, AFailedIncrementalUndoesItsLinksAndKeepsTheObjectsStamps) {
  for (int i = 0; i < 6; ++i)
    Write("f" + std::to_string(i), "content " + std::to_string(i));
  Publish();
  RunOk(Options());
  const auto v1_tree = Tree(src_);
  Write("f2", "changed");
  Hash128 v2 = Publish();
  const std::string hex = HashBytes("changed").ToHex();
  WriteFile(env_,
            JoinPath(bucket_, ".ferry/objects/" + hex.substr(0, 2) + "/" + hex),
            "chanGed");  // the server's byte is wrong: the download fails
  SyncOptions o = Options();
  o.transfer.max_retries = 1;
  auto r = Run(o);
  ASSERT_OK(r.status());
  ASSERT_EQ(r->failures.size(), 1u);
  EXPECT_EQ(Tree(dest_), v1_tree);
  const std::string v2_view =
      dir_.Join("nodes/.dest.ferry-views/" + v2.ToHex());
  // Its view folder goes too (before: left empty until v2 synced), the
  // current view stays.
  EXPECT_FALSE(env_->FileExists(v2_view));
  auto views = env_->GetChildren(dir_.Join("nodes/.dest.ferry-views"));
  ASSERT_OK(views.status());
  EXPECT_EQ(views->size(), 1u);
  auto cache = sync::Cache::Open(env_, cache_);
  ASSERT_OK(cache.status());
  const std::string rk =
      sync::RemoteKey("file://" + *sync::AbsolutePath(bucket_));
  for (int i = 0; i < 6; ++i) {
    if (i == 2) continue;
    const std::string data = "content " + std::to_string(i);
    sync::CacheKey k{rk, HashBytes(data), data.size()};
    auto now = sync::StampOf((*cache)->ObjectPath(k));
    ASSERT_OK(now.status());
    auto same = (*cache)->StampMatches(k, *now);
    ASSERT_OK(same.status());
    EXPECT_TRUE(*same) << "f" << i;
  }
}

// Opening a bucket object for the first time waits (up to 10 s) until the
// view holds the file of every object opened before it, and notes whether
// it did. Objects are read one at a time (file://), in order.
class WaitForEarlierLinksEnv : public EnvWrapper {
 public:
  WaitForEarlierLinksEnv(Env* target, std::string objects, std::string view,
                         std::map<std::string, std::string> path_of)
      : EnvWrapper(target),
        objects_(std::move(objects)),
        view_(std::move(view)),
        path_of_(std::move(path_of)) {}
  Result<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& path) override {
    auto it = path_of_.find(path);
    if (it != path_of_.end() && std::find(opened_.begin(), opened_.end(),
                                          it->second) == opened_.end()) {
      if (!opened_.empty()) {
        bool all = false;
        for (int i = 0; i < 1000 && !all; ++i) {
          all = true;
          for (const std::string& p : opened_)
            all = all && FileExists(JoinPath(view_, p));
          if (!all) usleep(10000);
        }
        ++(all ? waits_met : waits_timed_out);
      }
      opened_.push_back(it->second);
    }
    return EnvWrapper::NewRandomAccessFile(path);
  }
  int waits_met = 0, waits_timed_out = 0;

 private:
  std::string objects_, view_;
  std::map<std::string, std::string> path_of_;  // object file -> view path
  std::vector<std::string> opened_;
};

// A cold sync links each downloaded object into the new view as it lands,
// while the next ones download (not all at the end): when an object is
// opened, the files of those fetched before it are in the view already.
TEST_F(SyncTest, DownloadedObjectsAreLinkedIntoTheNewViewAsTheyLand) {
  std::map<std::string, std::string> path_of;
  for (int i = 0; i < 4; ++i) {
    const std::string data = test::RandomBytes(10000, 40 + i);
    Write("d/f" + std::to_string(i), data);
    const std::string hex = HashBytes(data).ToHex();
    path_of[JoinPath(bucket_, ".ferry/objects/" + hex.substr(0, 2) + "/" +
                                  hex)] = "d/f" + std::to_string(i);
  }
  test::PublishTreeOptions po;
  po.part_size = 4096;  // 3 parts each: journalled downloads
  auto id = test::PublishTree(env_, src_, bucket_, po);
  ASSERT_OK(id.status());
  WaitForEarlierLinksEnv env(
      env_, JoinPath(bucket_, ".ferry/objects"),
      dir_.Join("nodes/.dest.ferry-views/" + id->ToHex()), path_of);
  auto r = Sync(Options(), &env);
  ASSERT_OK(r.status());
  EXPECT_TRUE(r->failures.empty());
  EXPECT_EQ(r->objects_fetched, 4u);
  EXPECT_EQ(env.waits_met, 3);
  EXPECT_EQ(env.waits_timed_out, 0);
  EXPECT_EQ(Tree(dest_), Tree(src_));
}

// Counts the files opened for reading below a folder.
class ReadCountingEnv : public EnvWrapper {
 public:
  ReadCountingEnv(Env* target, std::string below)
      : EnvWrapper(target), below_(std::move(below)) {}
  Result<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& path) override {
    if (path.rfind(below_, 0) == 0 &&  // ferry's state files left out
        path.compare(path.rfind('/') + 1, 6, ".ferry") != 0)
      reads.push_back(path);
    return EnvWrapper::NewSequentialFile(path);
  }
  std::vector<std::string> reads;

 private:
  std::string below_;
};

// A file rewritten with the same size keeps its path: the old view's file
// there is a candidate for adoption by path and size, but ferry placed it
// and its stamp says it still holds the old object, so it is not copied and
// hashed to find that out.
TEST_F(SyncTest, AnOldViewsFileKnownToHoldAnotherObjectIsNotReadForAdoption) {
  Write("shard.tar", test::RandomBytes(200000, 1));
  Write("a", "unchanged");
  Publish();
  RunOk(Options());
  Write("shard.tar", test::RandomBytes(200000, 2));  // same size
  Publish();
  ReadCountingEnv env(env_, dir_.Join("nodes/.dest.ferry-views/"));
  auto r = Sync(Options(), &env);
  ASSERT_OK(r.status());
  EXPECT_EQ(r->objects_fetched, 1u);
  EXPECT_EQ(r->files_adopted, 0u);
  EXPECT_EQ(env.reads, std::vector<std::string>{});
  EXPECT_EQ(Tree(dest_), Tree(src_));
}

}  // namespace
}  // namespace ferry

namespace ferry {
namespace {

// ---------------------------------------------------------------- packs

// Publishes src_ with ferry publish (small files in packs) into the bucket.
class PackSyncTest : public SyncTest {
 protected:
  Hash128 PublishPacked() {
    auto backend = remote::NewFileBackend(bucket_, "bucket", env_);
    PublishOptions o;
    o.cache_dir = dir_.Join("publish-cache");
    o.part_size = 1 << 20;
    auto r = ferry::Publish(src_, backend.get(), o, env_);
    EXPECT_OK(r.status());
    if (!r.ok()) return Hash128{};
    packs_ = r->packs_uploaded;
    return r->id;
  }
  // The bucket's pack files (paths below it).
  std::vector<std::string> Packs() {
    std::vector<std::string> out;
    auto files = ListFilesRecursive(env_, JoinPath(bucket_, ".ferry/packs"));
    if (files.ok())
      for (const std::string& f : *files)
        out.push_back(JoinPath(bucket_, ".ferry/packs/" + f));
    return out;
  }
  uint64_t packs_ = 0;
};

TEST_F(PackSyncTest, AColdSyncCutsEveryFileOutOfItsPack) {
  std::string total;
  for (int i = 0; i < 12; ++i) {
    std::string data = test::RandomBytes(20000 + 7000 * i, 100 + i);
    Write("img/" + std::to_string(100 + i) + ".jpg", data);
  }
  Write("img/copy.jpg", test::RandomBytes(20000, 100));  // = img/100.jpg
  Write("empty", "");
  Write("shard.tar", test::RandomBytes(1500000, 7));  // its own object
  PublishPacked();
  EXPECT_EQ(packs_, 1u);  // 12 files, 702,000 bytes: one pack of 1 MiB
  ASSERT_EQ(Packs().size(), 1u);
  SyncReport r = RunOk(Options());
  EXPECT_EQ(Tree(dest_), Tree(src_));
  EXPECT_EQ(r.objects_fetched, 14u);  // 12 packed, the shard, the empty file
  // Each object's bytes once (the copy is the same object); nothing more.
  EXPECT_EQ(r.bytes_fetched, 702000u + 1500000u);
  auto left = ListFilesRecursive(env_, JoinPath(cache_, "partial"));
  ASSERT_OK(left.status());
  EXPECT_TRUE(left->empty()) << (*left)[0];
  // A second node: the same.
  SyncReport again = RunOk(Options(dir_.Join("nodes/other")));
  EXPECT_EQ(again.objects_fetched, 0u);
  EXPECT_EQ(Tree(dir_.Join("nodes/other")), Tree(src_));
}

TEST_F(PackSyncTest, ASelectionFetchesOnlyItsFilesRangesOfAPack) {
  for (int i = 0; i < 8; ++i)
    Write("f" + std::to_string(i), test::RandomBytes(100000, 200 + i));
  PublishPacked();
  ASSERT_EQ(Packs().size(), 1u);
  SyncOptions o = Options();
  o.selection.filters = {{false, "*"}, {true, "f3"}, {true, "f6"}};
  SyncReport r = RunOk(o);
  EXPECT_EQ(r.objects_fetched, 2u);
  // Two ranges 200,000 bytes apart: 200,000 bytes, not the 800,000 pack.
  EXPECT_EQ(r.bytes_fetched, 200000u);
  EXPECT_EQ(ReadFile(env_, JoinPath(dest_, "f6")),
            ReadFile(env_, JoinPath(src_, "f6")));
  EXPECT_FALSE(env_->FileExists(JoinPath(dest_, "f2")));
  auto left = ListFilesRecursive(env_, JoinPath(cache_, "partial"));
  ASSERT_OK(left.status());
  EXPECT_TRUE(left->empty()) << (*left)[0];
  // Then the rest of the dataset: the other six (half of the pack or more:
  // the whole pack, whose two cached files are not moved in twice).
  SyncReport all = RunOk(Options());
  EXPECT_EQ(all.objects_fetched, 6u);
  EXPECT_EQ(Tree(dest_), Tree(src_));
}

TEST_F(PackSyncTest, AFlippedByteInAPackFailsItsFileAndNoOther) {
  for (int i = 0; i < 4; ++i)
    Write("f" + std::to_string(i), test::RandomBytes(50000, 300 + i));
  PublishPacked();
  auto packs = Packs();
  ASSERT_EQ(packs.size(), 1u);
  std::string bytes = ReadFile(env_, packs[0]);
  ASSERT_EQ(bytes.size(), 200000u);
  bytes[2 * 50000 + 17] ^= 1;  // in f2
  WriteFile(env_, packs[0], bytes);
  auto r = Run(Options());
  ASSERT_OK(r.status());
  ASSERT_EQ(r->failures.size(), 1u);
  EXPECT_EQ(r->failures[0].first, "f2");
  const Status& s = r->failures[0].second;
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("bytes 100000..150000 are not object"),
            std::string::npos)
      << s.ToString();
  EXPECT_FALSE(env_->FileExists(dest_));  // DEST stays as it was
  // The others are in the cache; f2's bytes nowhere but the bucket.
  const std::string bad =
      HashBytes(ReadFile(env_, JoinPath(src_, "f2"))).ToHex();
  int cached = 0;
  for (const std::string& f : Everything()) {
    if (f.rfind("cache/objects/", 0) == 0) ++cached;
    if (f.rfind("cache/", 0) == 0 || f.rfind("nodes/", 0) == 0)
      EXPECT_EQ(f.find(bad), f.npos) << f;
  }
  EXPECT_EQ(cached, 3);
  auto left = ListFilesRecursive(env_, JoinPath(cache_, "partial"));
  ASSERT_OK(left.status());
  EXPECT_TRUE(left->empty()) << (*left)[0];
}

TEST_F(PackSyncTest, APackOfAnotherSizeFailsItsFilesBeforeAByteIsFetched) {
  Write("a", "alpha");
  Write("b", "bravo");
  PublishPacked();
  auto packs = Packs();
  ASSERT_EQ(packs.size(), 1u);
  WriteFile(env_, packs[0], "alphabravoX");
  auto r = Run(Options());
  ASSERT_OK(r.status());
  ASSERT_EQ(r->failures.size(), 2u);
  for (const auto& [name, s] : r->failures)
    EXPECT_TRUE(s.IsCorruption()) << name << ": " << s.ToString();
  EXPECT_EQ(r->bytes_fetched, 0u);
  EXPECT_FALSE(env_->FileExists(dest_));
}

// A manifest (not ferry publish's: packs hold files below 1 MiB) may pack
// a file of any size its pack holds: it is cut in pieces of 1 MiB, memory
// flat, and checked whole.
TEST_F(PackSyncTest, AFileOfSeveralMiBInAPackIsCutInPieces) {
  const std::string big = test::RandomBytes(3 * (1 << 20) + 12345, 77);
  const std::string small = "small";
  const Hash128 pack_id{7, 7};
  const std::string pack = small + big;
  WriteFile(env_, JoinPath(bucket_, sync::PackKey(pack_id)), pack);
  manifest::File a = FileOf("a", small), b = FileOf("b", big);
  for (manifest::File* f : {&a, &b}) {
    f->set_pack(manifest::HashToBytes(pack_id));
    f->set_pack_size(pack.size());
  }
  b.set_pack_offset(small.size());
  const std::string bytes = RawManifest({a, b}, 2);
  ASSERT_OK(test::PutManifest(env_, bucket_, HashBytes(bytes).ToHex(), bytes));
  SyncReport r = RunOk(Options());
  EXPECT_EQ(r.objects_fetched, 2u);
  EXPECT_TRUE(ReadFile(env_, JoinPath(dest_, "b")) == big);
  EXPECT_EQ(ReadFile(env_, JoinPath(dest_, "a")), small);
  // One byte of its last piece flipped: that file fails, exit 3.
  std::string bad = pack;
  bad[pack.size() - 10] ^= 1;
  WriteFile(env_, JoinPath(bucket_, sync::PackKey(pack_id)), bad);
  SyncOptions o = Options(dir_.Join("nodes/other"));
  o.cache_dir = dir_.Join("cache2");
  auto r2 = Run(o);
  ASSERT_OK(r2.status());
  ASSERT_EQ(r2->failures.size(), 1u);
  EXPECT_EQ(r2->failures[0].first, "b");
  EXPECT_TRUE(r2->failures[0].second.IsCorruption());
}

}  // namespace
}  // namespace ferry
