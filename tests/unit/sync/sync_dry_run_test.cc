// ferry sync --dry-run against the sync it predicts: each test runs the dry
// run, then the same sync for real, and holds the two reports' figures (or
// errors) equal, and the dry run to have written nothing.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <initializer_list>
#include <map>
#include <string>

#include "ferry/sync.h"
#include "sync/fs_util.h"
#include "sync/sqlite_db.h"
#include "testutil/publish_tree.h"
#include "testutil/sync_fixture.h"
#include "testutil/test_util.h"

namespace ferry {
namespace {

using test::ReadFile;
using test::WriteFile;

// What a sync reports having done (or a dry run expects), one line.
std::string Figures(const Result<SyncReport>& r) {
  if (!r.ok()) return r.status().ToString();
  auto n = [](const char* name, uint64_t v) {
    return std::string(name) + " " + std::to_string(v) + ", ";
  };
  return n("files", r->files) + n("bytes", r->bytes) +
         n("objects", r->objects) + n("cached", r->files_cached) +
         n("bytes_cached", r->bytes_cached) + n("adopted", r->files_adopted) +
         n("bytes_adopted", r->bytes_adopted) +
         n("fetched", r->objects_fetched) +
         n("bytes_fetched", r->bytes_fetched) + n("whole", r->objects_whole) +
         n("evicted", r->evicted_objects) +
         n("bytes_evicted", r->evicted_bytes);
}

class DryRunSyncTest : public test::SyncFixture {
 protected:
  void Publish() {
    // Each version on its own: the files of the last one only.
    auto id = test::PublishTree(env_, src_, bucket_);
    ASSERT_OK(id.status());
    ASSERT_OK(sync::RemoveTree(env_, src_));
  }
  void SyncOk(const std::string& dest) {
    ASSERT_OK(Sync(Options(dest), env_).status());
  }
  // A DEST synced and then removed by hand (link and views): its objects
  // stay in the cache, pinned by a view that is gone.
  void SyncAndDrop(const std::string& name) {
    SyncOk(dir_.Join("nodes/" + name));
    ASSERT_OK(
        sync::RemoveTree(env_, dir_.Join("nodes/." + name + ".ferry-views")));
    ASSERT_OK(env_->RemoveFile(dir_.Join("nodes/" + name)));
  }
  // Cuts a file (a view's hard link: its cached object too) to 100 bytes.
  void Truncate(const std::string& path) {
    ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
    ASSERT_EQ(::truncate(path.c_str(), 100), 0);
  }
  // The cached object a view's file is a hard link to.
  std::string ObjectOf(const std::string& file) {
    namespace fs = std::filesystem;
    struct stat want;
    EXPECT_EQ(::stat(file.c_str(), &want), 0);
    for (const auto& e :
         fs::recursive_directory_iterator(JoinPath(cache_, "objects"))) {
      struct stat st;
      if (::lstat(e.path().c_str(), &st) == 0 && st.st_ino == want.st_ino)
        return e.path().string();
    }
    ADD_FAILURE() << "no object for " << file;
    return "";
  }
  // Every entry below the scratch folder (size, inode, mtime, mode; links
  // not followed) and the bytes of the cache's index.
  std::map<std::string, std::string> Snapshot() {
    std::map<std::string, std::string> out = test::Snapshot(dir_.path());
    for (const char* f : {"index.sqlite", "index.sqlite-wal"}) {
      const std::string p = JoinPath(cache_, f);
      if (env_->FileExists(p)) out[p + " bytes"] = ReadFile(env_, p);
    }
    return out;
  }
  // o as a dry run, which must write nothing, then for real: both reports'
  // figures (or both errors), the dry run's first.
  std::pair<std::string, std::string> DryRunThenSync(SyncOptions o) {
    const auto before = Snapshot();
    o.dry_run = true;
    const std::string plan = Figures(Sync(o, env_));
    EXPECT_TRUE(Snapshot() == before) << "the dry run wrote";
    o.dry_run = false;
    return {plan, Figures(Sync(o, env_))};
  }
  // o's dry run predicts the sync (DryRunThenSync), whose figures (or
  // error) hold each of `wants`.
  void ExpectPredicted(const SyncOptions& o,
                       std::initializer_list<std::string> wants) {
    auto [plan, real] = DryRunThenSync(o);
    EXPECT_EQ(plan, real);
    for (const std::string& want : wants)
      EXPECT_NE(real.find(want), std::string::npos) << real;
  }
  // DEST's file a (4,000 bytes) written through its view, with its
  // object: the dry run predicts the sync's repair (figures `repair`), and
  // after it both agree again.
  void ExpectRepairPredicted(const std::string& repair) {
    const std::string a = JoinPath(dest_, "a");
    ASSERT_EQ(::chmod(a.c_str(), 0644), 0);
    WriteFile(env_, a, test::RandomBytes(4000, 12));
    ExpectPredicted(Options(dest_), {repair});
    auto [plan, real] = DryRunThenSync(Options(dest_));
    EXPECT_EQ(plan, real);
  }
  // a (5,000 bytes) and b (6,000) in the remote (published, or plain
  // objects of an unmanaged one) synced to nodes/one, then a cut through its
  // view (Truncate): the dry run predicts the sync that fetches a again
  // (figures `fetch`).
  void ExpectDamagedObjectFetched(bool published, const std::string& fetch) {
    const std::string root = published ? src_ : bucket_;
    WriteFile(env_, JoinPath(root, "a"), test::RandomBytes(5000, 5));
    WriteFile(env_, JoinPath(root, "b"), test::RandomBytes(6000, 6));
    if (published) Publish();
    SyncOk(dir_.Join("nodes/one"));
    Truncate(dir_.Join("nodes/one/a"));
    ExpectPredicted(Options(dest_), {fetch});
  }
};

// The cache holds x (1,000 bytes, used first) and y (3,000), both unpinned
// (their views removed by hand: their pins name folders that are gone);
// 2,000 more under a limit of 5,000 evict x alone. The dry run predicted
// nothing evicted.
TEST_F(DryRunSyncTest, PredictsWhatACacheLimitEvicts) {
  Write("x", std::string(1000, 'x'));
  Publish();
  SyncAndDrop("one");
  Write("y", std::string(3000, 'y'));
  Publish();
  SyncAndDrop("two");
  Write("z", std::string(2000, 'z'));
  Publish();
  SyncOptions o = Options(dest_);
  o.cache_limit = 5000;
  ExpectPredicted(o, {"evicted 1, bytes_evicted 1000"});
}

// A view in use pins its 3,000 bytes; 3,000 more do not fit in 4,000 and
// nothing can be evicted: the sync refuses before fetching anything, and
// so does its dry run (it predicted a sync that fetched).
TEST_F(DryRunSyncTest, PredictsACacheLimitRefusal) {
  Write("a", std::string(3000, 'a'));
  Publish();
  SyncOk(dir_.Join("nodes/one"));
  Write("b", std::string(3000, 'b'));
  Publish();
  SyncOptions o = Options(dest_);
  o.cache_limit = 4000;
  auto [plan, real] = DryRunThenSync(o);
  EXPECT_EQ(plan, real);
  EXPECT_EQ(real.rfind("ResourceExhausted: cache ", 0), 0u) << real;
  EXPECT_FALSE(env_->FileExists(dest_));
}

// An unmanaged remote's sync marks the files it finds cached used before it
// makes room (they are not pinned): a, cached longest, stays and b (cached
// since, from another remote) goes. The dry run predicted nothing evicted.
TEST_F(DryRunSyncTest, PredictsWhichObjectsAnUnmanagedCacheLimitEvicts) {
  WriteFile(env_, JoinPath(bucket_, "a"), std::string(1000, 'a'));
  SyncAndDrop("one");
  const std::string other = bucket_;
  bucket_ = dir_.Join("other-bucket");
  WriteFile(env_, JoinPath(bucket_, "b"), std::string(1200, 'b'));
  SyncAndDrop("two");
  bucket_ = other;
  WriteFile(env_, JoinPath(bucket_, "c"), std::string(1500, 'c'));
  SyncOptions o = Options(dest_);
  o.cache_limit = 3000;
  ExpectPredicted(o, {"evicted 1, bytes_evicted 1200"});
}

// The cached files an unmanaged remote's sync links are kept when it makes
// room: a and b (cached by a DEST since removed, unpinned) and x (another
// remote's, pinned by two) leave no room for c and d under 4,500, and the
// sync refuses before fetching. It evicted a to make room, fetched c and
// d, then failed ("a: left the cache during the sync"), and every rerun
// the same way (evicting b, then a again). The dry run predicted a evicted
// (taken last, as used, but taken).
TEST_F(DryRunSyncTest, PredictsThatAnUnmanagedSyncKeepsTheFilesItLinks) {
  WriteFile(env_, JoinPath(bucket_, "a"), std::string(1000, 'a'));
  WriteFile(env_, JoinPath(bucket_, "b"), std::string(1000, 'b'));
  SyncAndDrop("one");
  const std::string other = bucket_;
  bucket_ = dir_.Join("other-bucket");
  WriteFile(env_, JoinPath(bucket_, "x"), std::string(1000, 'x'));
  SyncOk(dir_.Join("nodes/two"));
  bucket_ = other;
  WriteFile(env_, JoinPath(bucket_, "c"), std::string(1000, 'c'));
  WriteFile(env_, JoinPath(bucket_, "d"), std::string(1000, 'd'));
  SyncOptions o = Options(dest_);
  o.cache_limit = 4500;
  for (int run = 0; run < 2; ++run) {
    SCOPED_TRACE(run);
    ExpectPredicted(o, {"ResourceExhausted: cache ",
                        "needs 2000 more bytes; 3000 in use, 0 of them "
                        "evictable"});
  }
  // With x's view gone, x goes; a and b were never fetched again.
  ASSERT_OK(sync::RemoveTree(env_, dir_.Join("nodes/.two.ferry-views")));
  ExpectPredicted(o,
                  {"cached 2, bytes_cached 2000, adopted 0, bytes_adopted 0, "
                   "fetched 2, bytes_fetched 2000, whole 2, evicted 1, "
                   "bytes_evicted 1000"});
  EXPECT_EQ(ReadFile(env_, JoinPath(dest_, "a")), std::string(1000, 'a'));
}

// A first sync into a folder rsync filled adopts its files by content: a at
// its own path, b moved to another path of its size; c, of its size at its
// path but other bytes, is hashed and fetched. The dry run predicted all
// three fetched.
TEST_F(DryRunSyncTest, PredictsWhatASyncAdoptsFromAFolder) {
  const std::string a = test::RandomBytes(4000, 1);
  const std::string b = test::RandomBytes(5000, 2);
  Write("a", a);
  Write("b", b);
  Write("c", test::RandomBytes(6000, 3));
  Publish();
  WriteFile(env_, JoinPath(dest_, "a"), a);
  WriteFile(env_, JoinPath(dest_, "old/b"), b);
  WriteFile(env_, JoinPath(dest_, "c"), test::RandomBytes(6000, 4));
  ExpectPredicted(Options(dest_), {"adopted 2, bytes_adopted 9000, fetched 1"});
}

// A cached object truncated (through the hard link of the view that placed
// it, after a chmod): a sync's lookup finds it another size than its name
// says and fetches it again. The dry run counted it cached (the index
// recalls the file and a file is at the object's name).
TEST_F(DryRunSyncTest, PredictsThatAnUnmanagedRemotesDamagedObjectIsFetched) {
  ExpectDamagedObjectFetched(
      /*published=*/false,
      "cached 1, bytes_cached 6000, adopted 0, bytes_adopted 0, fetched 1, "
      "bytes_fetched 5000");
}

// The same for a published remote (the dry run only asked whether a file
// was at the object's name).
TEST_F(DryRunSyncTest, PredictsThatADamagedObjectIsFetched) {
  ExpectDamagedObjectFetched(
      /*published=*/true,
      "cached 1, bytes_cached 6000, adopted 0, bytes_adopted 0, fetched 1, "
      "bytes_fetched 5000");
}

// A cached object damaged in place (its bytes overwritten, same size), then
// one replaced by a FIFO: a sync's lookup drops its row before it makes
// room, so 3,000 bytes in use and 1,000 (then 2,000) missing fit in 3,000.
// The dry run counted the damaged object in use and missing alike and
// refused ("needs 1000 more bytes; 3000 in use, 0 of them evictable").
TEST_F(DryRunSyncTest, PredictsTheRoomADamagedObjectLeaves) {
  Write("a", test::RandomBytes(1000, 7));
  Write("b", test::RandomBytes(2000, 8));
  Publish();
  SyncOk(dir_.Join("nodes/one"));
  const std::string a = dir_.Join("nodes/one/a");
  ASSERT_EQ(::chmod(a.c_str(), 0644), 0);
  WriteFile(env_, a, test::RandomBytes(1000, 9));
  SyncOptions o = Options(dest_);
  o.cache_limit = 3000;
  ExpectPredicted(o,
                  {"cached 1, bytes_cached 2000, adopted 0, bytes_adopted 0, "
                   "fetched 1, bytes_fetched 1000"});
  const std::string b = ObjectOf(dir_.Join("nodes/one/b"));
  ASSERT_OK(env_->RemoveFile(b));
  ASSERT_EQ(::mkfifo(b.c_str(), 0644), 0);
  o.dest = dir_.Join("nodes/two");
  ExpectPredicted(o,
                  {"cached 1, bytes_cached 1000, adopted 0, bytes_adopted 0, "
                   "fetched 1, bytes_fetched 2000"});
}

// An object whose row was lost (a crash between its rename into the cache
// and the index write): a sync's lookup indexes it again, and it counts in
// use. With c (1,000, pinned by one) and a (3,000) in use, b's 1,500 more
// do not fit in 5,000: the sync refuses. The dry run left a out of the
// total and predicted a sync that fetched b.
TEST_F(DryRunSyncTest, PredictsTheRoomAnObjectWithoutARowTakes) {
  Write("a", std::string(3000, 'a'));
  Write("c", std::string(1000, 'c'));
  Publish();
  SyncOk(dir_.Join("nodes/one"));
  {
    auto db = sync::Db::Open(JoinPath(cache_, "index.sqlite"), 1000, true);
    ASSERT_OK(db.status());
    ASSERT_OK((*db)->Exec("DELETE FROM objects WHERE size = 3000"));
  }
  Write("a", std::string(3000, 'a'));
  Write("b", std::string(1500, 'b'));
  Publish();
  SyncOptions o = Options(dest_);
  o.cache_limit = 5000;
  ExpectPredicted(
      o, {"ResourceExhausted: cache ", "needs 1500 more bytes; 4000 in use"});
}

// An unchanged ref (the server answers 304) over a view whose file was
// written through (its object with it): the sync finds DEST not intact and
// repairs it, fetching the object again. The dry run said unchanged
// without looking at DEST.
TEST_F(DryRunSyncTest, PredictsTheRepairOfADamagedViewOnAnUnchangedRef) {
  Write("a", test::RandomBytes(4000, 10));
  Write("b", test::RandomBytes(5000, 11));
  Publish();
  SyncOk(dest_);
  ExpectRepairPredicted(
      "cached 1, bytes_cached 5000, adopted 0, bytes_adopted 0, fetched 1, "
      "bytes_fetched 4000");
}

// The same for an unmanaged remote whose listing is unchanged: the sync
// finds DEST not intact and repairs it, fetching a again. The dry run said
// unchanged without looking at DEST.
TEST_F(DryRunSyncTest, PredictsTheRepairOfADamagedViewOfAnUnmanagedRemote) {
  WriteFile(env_, JoinPath(bucket_, "a"), test::RandomBytes(4000, 13));
  WriteFile(env_, JoinPath(bucket_, "b"), test::RandomBytes(5000, 14));
  SyncOk(dest_);
  ExpectRepairPredicted(
      "cached 1, bytes_cached 5000, adopted 0, bytes_adopted 0, fetched 1, "
      "bytes_fetched 4000");
}

}  // namespace
}  // namespace ferry
