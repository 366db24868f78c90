// ferry sync's delta path (docs/delta.md "Sync side"): v1 published and
// synced, v2 published by lib publish (with its deltas); the v2 sync patches
// the cached v1 objects instead of fetching v2's (which are removed from the
// bucket to prove it), and any damaged, missing or wrong delta falls back to
// the whole object with nothing wrong installed.
#include <gtest/gtest.h>
#include <librsync.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <map>
#include <string>

#include "ferry/delta.h"
#include "ferry/publish.h"
#include "ferry/sync.h"
#include "formats/delta/rdiff_format.h"
#include "remote/file_backend.h"
#include "sync/deltas.h"
#include "sync/fetch_paths.h"
#include "sync/layout.h"
#include "testutil/delta_bytes.h"
#include "testutil/test_util.h"

namespace ferry {
namespace {

using test::RandomBytes;

std::string Zstd(const std::string& plain) {
  std::string out(ZSTD_compressBound(plain.size()), '\0');
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
  size_t n =
      ZSTD_compress2(c, out.data(), out.size(), plain.data(), plain.size());
  ZSTD_freeCCtx(c);
  out.resize(n);
  return out;
}

// The signature ferry published before File.sig_strong_len: strong sums of
// 32 bytes (`rdiff signature`'s default), made by librsync itself.
std::string Sign32(const std::string& data) {
  rs_job_t* job = rs_sig_begin(delta::format::RecommendedBlockLen(data.size()),
                               32, RS_RK_BLAKE2_SIG_MAGIC);
  rs_buffers_t buf{};
  buf.next_in = const_cast<char*>(data.data());
  buf.avail_in = data.size();
  buf.eof_in = 1;
  std::string out;
  char piece[1 << 16];
  rs_result r;
  do {
    buf.next_out = piece;
    buf.avail_out = sizeof piece;
    r = rs_job_iter(job, &buf);
    out.append(piece, sizeof piece - buf.avail_out);
  } while (r == RS_BLOCKED);
  rs_job_free(job);
  EXPECT_EQ(r, RS_DONE);
  return out;
}

// v1 of a 2 MiB shard, and v2: most bytes shared, shifted.
std::string V1() { return RandomBytes(2 << 20, 31); }
std::string V2() {
  std::string s = V1();
  s.replace(100000, 500, RandomBytes(500, 32));
  s.insert(700000, RandomBytes(3000, 33));
  s.erase(1500000, 9000);
  return s;
}

class SyncDeltaTest : public ::testing::Test {
 protected:
  SyncDeltaTest()
      : backend_(remote::NewFileBackend(dir_.Join("bucket"), "bucket", env_)) {
    EXPECT_OK(env_->CreateDirs(dir_.Join("nodes")));
  }
  void Write(const std::string& rel, const std::string& data) {
    test::WriteFile(env_, dir_.Join("src/" + rel), data);
  }
  PublishReport Publish() {
    PublishOptions po;
    po.cache_dir = dir_.Join("pubcache");
    po.use_stat_cache = false;
    if (part_size_ > 0) po.part_size = part_size_;
    auto r = ferry::Publish(dir_.Join("src"), backend_.get(), po, env_);
    EXPECT_OK(r.status());
    return r.ok() ? *r : PublishReport{};
  }
  SyncReport Sync(bool dry_run = false, const std::string& basis = "",
                  const std::string& cache = "cache") {
    SyncOptions o;
    o.remote = dir_.Join("bucket");
    o.dest = dir_.Join("nodes/dest");
    o.cache_dir = dir_.Join(cache);
    o.dry_run = dry_run;
    o.basis_dir = basis;
    auto r = ferry::Sync(o, env_);
    EXPECT_OK(r.status());
    return r.ok() ? *r : SyncReport{};
  }
  std::string Bucket(const std::string& key) {
    return dir_.Join("bucket/" + key);
  }
  std::map<std::string, std::string> Tree(const std::string& root) {
    std::map<std::string, std::string> out;
    auto files = ListFilesRecursive(env_, root);
    if (!files.ok()) return out;
    for (const std::string& f : *files) {
      if (f.rfind(".ferry-sync", 0) == 0 || f == kViewLockName) continue;
      out[f] = test::ReadFile(env_, JoinPath(root, f));
    }
    return out;
  }
  // Files left in the cache's partial/ folder (none after a good sync).
  std::vector<std::string> Partial() {
    auto files = ListFilesRecursive(env_, dir_.Join("cache/partial"));
    return files.ok() ? *files : std::vector<std::string>{};
  }
  // v1 synced, v2 published: its big shard has a delta from v1's.
  void SyncV1PublishV2() {
    Write("big.tfrecord", V1());
    Write("small.txt", "v1");
    Publish();
    Sync();
    Write("big.tfrecord", V2());
    Write("small.txt", "v2");
    PublishReport v2 = Publish();
    ASSERT_EQ(v2.deltas_uploaded, 1u);
  }
  std::string DeltaPath() {
    return Bucket(sync::DeltaKey(HashBytes(V1()), HashBytes(V2())));
  }
  // The shard's delta failed: the next path (block reuse, from the view's
  // file and the delta's source) made it; small.txt came whole.
  void ExpectFellBackCleanly(const SyncReport& r, const std::string& why) {
    EXPECT_EQ(r.objects_patched, 0u);
    EXPECT_EQ(r.delta_fallbacks, 1u);
    EXPECT_EQ(r.objects_reused, 1u);
    EXPECT_EQ(r.bytes_reused, V2().size());
    EXPECT_EQ(r.objects_whole, 1u);
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_NE(r.warnings[0].find(why), std::string::npos) << r.warnings[0];
    // The warning names the path that made the object.
    EXPECT_NE(r.warnings[0].find("): made by block reuse instead"),
              std::string::npos)
        << r.warnings[0];
    EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
    EXPECT_EQ(Partial(), std::vector<std::string>{});
  }

  // The shard's delta gone and its signature refused (the warning says
  // `why`): both objects came whole, nothing left behind.
  void ExpectSignatureRefused(const SyncReport& r, const std::string& why) {
    EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
    EXPECT_EQ(r.objects_reused, 0u);
    EXPECT_EQ(r.block_fallbacks, 1u);
    EXPECT_EQ(r.objects_whole, 2u);
    ASSERT_EQ(r.warnings.size(), 2u);  // the delta's and the signature's
    EXPECT_NE(r.warnings[1].find(why), std::string::npos) << r.warnings[1];
    EXPECT_EQ(Partial(), std::vector<std::string>{});
  }

  // The cache's partial/<remote key>/ folder (after a first sync).
  std::string PartialDir() {
    auto rks = env_->GetChildren(dir_.Join("cache/partial"));
    EXPECT_TRUE(rks.ok() && rks->size() == 1);
    return rks.ok() && !rks->empty()
               ? dir_.Join("cache/partial/" + (*rks)[0].name)
               : std::string();
  }
  // v1's object gone from the cache (no delta path), its link in DEST's
  // view still there: v2 by block reuse from it.
  void DropCachedV1() {
    auto rks = env_->GetChildren(dir_.Join("cache/objects"));
    ASSERT_OK(rks.status());
    const std::string hex = HashBytes(V1()).ToHex();
    ASSERT_OK(env_->RemoveFile(dir_.Join("cache/objects/" + (*rks)[0].name +
                                         "/" + hex.substr(0, 2) + "/" + hex)));
  }

  Env* env_ = Env::Default();
  test::ScratchDir dir_;
  std::unique_ptr<Backend> backend_;
  uint64_t part_size_ = 0;  // publish's; 0: its default
};

TEST_F(SyncDeltaTest, V2PatchesTheCachedV1InsteadOfFetchingTheObject) {
  SyncV1PublishV2();
  const uint64_t delta_size = env_->Stat(DeltaPath())->size;
  // The plan first: the shard by its delta, small.txt whole.
  SyncReport plan = Sync(/*dry_run=*/true);
  EXPECT_EQ(plan.objects_patched, 1u);
  EXPECT_EQ(plan.delta_bytes_fetched, delta_size);
  EXPECT_EQ(plan.bytes_patched, V2().size());
  EXPECT_EQ(plan.objects_whole, 1u);
  EXPECT_EQ(plan.bytes_fetched, delta_size + 2);
  // v2's object is not in the bucket: only the delta can make it.
  ASSERT_OK(env_->RemoveFile(Bucket(sync::ObjectKey(HashBytes(V2())))));
  SyncReport r = Sync();
  EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
  EXPECT_EQ(r.objects_fetched, 2u);
  EXPECT_EQ(r.objects_patched, 1u);
  EXPECT_EQ(r.delta_bytes_fetched, delta_size);
  EXPECT_EQ(r.bytes_patched, V2().size());
  EXPECT_EQ(r.objects_whole, 1u);
  EXPECT_EQ(r.bytes_whole, 2u);
  EXPECT_EQ(r.bytes_fetched, delta_size + 2);
  EXPECT_EQ(r.delta_fallbacks, 0u);
  EXPECT_EQ(r.bytes_cached, 0u);  // v1's objects are not in v2's view
  EXPECT_LT(delta_size, V2().size() / 20);
  EXPECT_EQ(Partial(), std::vector<std::string>{});
  // The patched object is in the cache: a second DEST links it.
  SyncOptions o;
  o.remote = dir_.Join("bucket");
  o.dest = dir_.Join("nodes/other");
  o.cache_dir = dir_.Join("cache");
  auto again = ferry::Sync(o, env_);
  ASSERT_OK(again.status());
  EXPECT_EQ(again->files_cached, 2u);
  EXPECT_EQ(again->bytes_cached, V2().size() + 2);
  EXPECT_EQ(again->bytes_fetched, 0u);
}

// Publish refines v2's delta with v1's blocks read from the bucket. There
// v1's object was altered to hold v2's bytes around the first edit: were
// those blocks used, the delta would copy them from v1 and sync, patching
// its true v1, would make other bytes (caught by the hash: a fallback).
// They do not match v1's signature, so they are not used: the delta stays
// as librsync made it there and patches the cached v1 into v2.
TEST_F(SyncDeltaTest, ARefinementIsNotMisledByATamperedParentObject) {
  Write("big.tfrecord", V1());
  Write("small.txt", "v1");
  Publish();
  Sync();
  const std::string v1_key = Bucket(sync::ObjectKey(HashBytes(V1())));
  std::string tampered = test::ReadFile(env_, v1_key);
  tampered.replace(100000, 500, RandomBytes(500, 32));
  ASSERT_OK(env_->RemoveFile(v1_key));  // objects are read-only
  test::WriteFile(env_, v1_key, tampered);
  Write("big.tfrecord", V2());
  Write("small.txt", "v2");
  PublishReport v2 = Publish();
  ASSERT_EQ(v2.deltas_uploaded, 1u);
  EXPECT_EQ(v2.deltas_refined, 1u);  // at the other two edits
  SyncReport r = Sync();
  EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
  EXPECT_EQ(r.objects_patched, 1u);
  EXPECT_EQ(r.delta_fallbacks, 0u);
  EXPECT_EQ(Partial(), std::vector<std::string>{});
}

TEST_F(SyncDeltaTest, AMissingDeltaFallsBackToTheNextPath) {
  SyncV1PublishV2();
  ASSERT_OK(env_->RemoveFile(DeltaPath()));
  ExpectFellBackCleanly(Sync(), "NotFound");
}

TEST_F(SyncDeltaTest, AFlippedByteFallsBackToTheNextPath) {
  SyncV1PublishV2();
  std::string d = test::ReadFile(env_, DeltaPath());
  d[d.size() / 2] ^= 0x20;
  test::WriteFile(env_, DeltaPath(), d);
  ExpectFellBackCleanly(Sync(), "delta");
}

TEST_F(SyncDeltaTest, ATruncatedDeltaFallsBackToTheNextPath) {
  SyncV1PublishV2();
  std::string d = test::ReadFile(env_, DeltaPath());
  test::WriteFile(env_, DeltaPath(), d.substr(0, d.size() - 100));
  ExpectFellBackCleanly(Sync(), std::to_string(d.size() - 100) +
                                    " bytes, the manifest lists " +
                                    std::to_string(d.size()));
}

TEST_F(SyncDeltaTest, ABiggerObjectAtTheDeltasKeyIsReportedAndNotUsed) {
  // The delta followed by a (sparse) gigabyte: not the object the manifest
  // lists. A warning names its key; the object comes by the next path; the
  // read stops at the first piece past the listed size.
  SyncV1PublishV2();
  const uint64_t listed = env_->Stat(DeltaPath())->size;
  ASSERT_EQ(::truncate(DeltaPath().c_str(), off_t{1} << 30), 0);
  SyncReport r = Sync();
  ExpectFellBackCleanly(r, sync::DeltaKey(HashBytes(V1()), HashBytes(V2())) +
                               ": the object is longer than the " +
                               std::to_string(listed) +
                               " bytes the manifest lists");
  EXPECT_GT(r.delta_bytes_fetched, listed);
  EXPECT_LE(r.delta_bytes_fetched, listed + (1 << 20));
}

TEST_F(SyncDeltaTest, ADeltaPaddedByOneByteIsReportedAndNotUsed) {
  SyncV1PublishV2();
  const std::string d = test::ReadFile(env_, DeltaPath());
  test::WriteFile(env_, DeltaPath(), d + "x");
  SyncReport r = Sync();
  ExpectFellBackCleanly(r, sync::DeltaKey(HashBytes(V1()), HashBytes(V2())) +
                               ": the object is longer than the " +
                               std::to_string(d.size()) +
                               " bytes the manifest lists");
  EXPECT_EQ(r.delta_bytes_fetched, d.size() + 1);
}

// Replaces the stored delta by a zstd frame of exactly the listed size
// holding body(n) for some n (random literal bytes of length n make the
// frame's size n plus a near-constant overhead).
void ReplaceDelta(const std::string& path, uint64_t listed,
                  const std::function<std::string(size_t)>& body) {
  const size_t overhead = Zstd(body(listed)).size() - listed;
  for (size_t n = listed - overhead - 16; n < listed - overhead + 16; ++n) {
    std::string frame = Zstd(body(n));
    if (frame.size() == listed) {
      test::WriteFile(Env::Default(), path, frame);
      return;
    }
  }
  FAIL() << "no frame of " << listed << " bytes";
}

TEST_F(SyncDeltaTest, ACopyPastTheBasisFallsBackToTheNextPath) {
  SyncV1PublishV2();
  const uint64_t listed = env_->Stat(DeltaPath())->size;
  ReplaceDelta(DeltaPath(), listed, [](size_t n) {
    return test::kDeltaMagic + test::Literal4(RandomBytes(n, 40)) +
           test::Copy8(V1().size() - 10, 100) + test::kDeltaEnd;
  });
  ExpectFellBackCleanly(Sync(), "past the end of the basis");
}

TEST_F(SyncDeltaTest, ADeltaMakingOtherBytesFallsBackToTheNextPath) {
  // A well-formed delta of the right size whose result is not v2 (as a
  // delta made for another basis gives): the hash refuses it.
  SyncV1PublishV2();
  const uint64_t listed = env_->Stat(DeltaPath())->size;
  ReplaceDelta(DeltaPath(), listed, [](size_t n) {
    return test::kDeltaMagic + test::Literal4(RandomBytes(n, 41)) +
           test::Copy8(0, V2().size() - n) + test::kDeltaEnd;
  });
  ExpectFellBackCleanly(Sync(), "XXH3-128");
}

TEST_F(SyncDeltaTest, ADeltaMakingFewerBytesFallsBackToTheNextPath) {
  SyncV1PublishV2();
  const uint64_t listed = env_->Stat(DeltaPath())->size;
  ReplaceDelta(DeltaPath(), listed, [](size_t n) {
    return test::kDeltaMagic + test::Literal4(RandomBytes(n, 43)) +
           test::Copy8(0, V2().size() - n - 1000) + test::kDeltaEnd;
  });
  ExpectFellBackCleanly(Sync(), "bytes, the manifest says");
}

TEST_F(SyncDeltaTest, ADeltaMakingMoreThanTheObjectFallsBackToTheNextPath) {
  SyncV1PublishV2();
  const uint64_t listed = env_->Stat(DeltaPath())->size;
  ReplaceDelta(DeltaPath(), listed, [](size_t n) {
    return test::kDeltaMagic + test::Literal4(RandomBytes(n, 42)) +
           test::Copy8(0, V1().size()) + test::kDeltaEnd;
  });
  ExpectFellBackCleanly(Sync(), "more than the expected");
}

TEST_F(SyncDeltaTest, AKilledPatchIsDiscardedByTheNextRun) {
  SyncV1PublishV2();
  // What a run killed mid-patch leaves: a part of the patch.
  const std::string partial = dir_.Join("cache/partial");
  auto rks = env_->GetChildren(partial);
  ASSERT_OK(rks.status());
  ASSERT_EQ(rks->size(), 1u);
  const std::string rk = (*rks)[0].name;
  const std::string patch =
      JoinPath(partial, rk + "/" + HashBytes(V2()).ToHex() + ".patch");
  test::WriteFile(env_, patch, V2().substr(0, 5000) + "garbage");
  // The next run patches into it afresh.
  SyncReport r = Sync();
  EXPECT_EQ(r.objects_patched, 1u);
  EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
  EXPECT_EQ(Partial(), std::vector<std::string>{});
  // With the basis gone from the cache meanwhile, the next run fetches the
  // object whole: the killed patch is removed all the same.
  Write("big.tfrecord", V2() + "3");
  Publish();
  for (const char* ext : {".patch", ".blocks"})
    test::WriteFile(
        env_, JoinPath(partial, rk + "/" + HashBytes(V2() + "3").ToHex() + ext),
        "garbage");
  // (and v1's object, at that path in the cached v1 manifest, and the
  // view's file there: bases for block reuse, too)
  for (const std::string& v : {V2(), V1()}) {
    const std::string hex = HashBytes(v).ToHex();
    ASSERT_OK(env_->RemoveFile(
        dir_.Join("cache/objects/" + rk + "/" + hex.substr(0, 2) + "/" + hex)));
  }
  ASSERT_OK(env_->RemoveFile(dir_.Join("nodes/dest/big.tfrecord")));
  r = Sync();
  EXPECT_EQ(r.objects_patched, 0u);
  EXPECT_EQ(r.objects_reused, 0u);
  EXPECT_EQ(r.objects_whole, 1u);
  EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
  EXPECT_EQ(Partial(), std::vector<std::string>{});
}

// Path 3: blocks of local files and ranges of the object.
TEST_F(SyncDeltaTest, BlocksOfABasisTreeAndRangesMakeTheObject) {
  SyncV1PublishV2();
  // A fresh cache (no delta source in it) and a --basis tree holding v1.
  test::WriteFile(env_, dir_.Join("old/big.tfrecord"), V1());
  ASSERT_OK(env_->RemoveFile(dir_.Join("nodes/dest")));
  const uint64_t blocks = (V2().size() + 1407) / 1408;
  const uint64_t sig = 12 + 11 * blocks;  // strong sums of 7 bytes
  // The plan: the shard by block reuse (its signature, then ranges of at
  // most the object: the scan decides), small.txt whole.
  SyncReport plan = Sync(true, dir_.Join("old"), "cache2");
  EXPECT_EQ(plan.objects_reused, 1u);
  EXPECT_EQ(plan.block_bytes_fetched, sig);
  EXPECT_EQ(plan.block_range_bytes_max, V2().size());
  EXPECT_EQ(plan.bytes_reused, V2().size());
  EXPECT_EQ(plan.objects_whole, 1u);
  EXPECT_EQ(plan.objects_fetched, 2u);
  EXPECT_EQ(plan.bytes_fetched, sig + V2().size() + 2);
  SyncReport r = Sync(false, dir_.Join("old"), "cache2");
  EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
  EXPECT_EQ(r.objects_patched, 0u);
  EXPECT_EQ(r.objects_reused, 1u);
  EXPECT_EQ(r.bytes_reused, V2().size());
  EXPECT_EQ(r.block_fallbacks, 0u);
  EXPECT_EQ(r.objects_whole, 1u);  // small.txt: no signature
  // The signature (12 + 11 bytes a block) and ranges around the 3 edits
  // (12.5 KB novel; a gap below 256 KiB is fetched, not copied).
  EXPECT_LT(r.block_bytes_fetched - sig, 3 * (300u << 10));
  EXPECT_EQ(r.bytes_copied + (r.block_bytes_fetched - sig), V2().size());
  EXPECT_EQ(r.bytes_fetched, r.block_bytes_fetched + 2);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(Partial(), std::vector<std::string>{});
}

// A clock 100 s further on at each reading: a --bwlimit bucket is always
// full, so nothing sleeps, and the readings count how often it was asked.
class CountingClockEnv : public EnvWrapper {
 public:
  CountingClockEnv() : EnvWrapper(Env::Default()) {}
  uint64_t NowMicros() override { return (++reads_) * 100000000; }
  uint64_t reads() const { return reads_; }

 private:
  uint64_t reads_ = 0;
};

TEST_F(SyncDeltaTest, BlockReuseRangesAreMeteredByTheBandwidthLimit) {
  // The same v1 -> v2 sync by block reuse (fresh caches and DESTs, --basis
  // holding v1) without a limit and at 1 kB/s. At that rate the run's bucket
  // hands out at most 1 kB (a second's worth) at a time, so the ranges ask
  // it at least once per kB: the limited run reads the clock that many more
  // times. (Before the ranges went through the transfer engine, they passed
  // no bucket: only small.txt's 2 bytes did.)
  SyncV1PublishV2();
  test::WriteFile(env_, dir_.Join("old/big.tfrecord"), V1());
  const uint64_t sig = 12 + 11 * ((V2().size() + 1407) / 1408);
  auto run = [&](uint64_t bwlimit, const std::string& name,
                 uint64_t* range_bytes) {
    CountingClockEnv env;
    SyncOptions o;
    o.remote = dir_.Join("bucket");
    o.dest = dir_.Join("nodes/" + name);
    o.cache_dir = dir_.Join("cache-" + name);
    o.basis_dir = dir_.Join("old");
    o.transfer.bwlimit = bwlimit;
    auto r = ferry::Sync(o, &env);
    EXPECT_OK(r.status());
    if (!r.ok()) return uint64_t{0};
    EXPECT_EQ(r->objects_reused, 1u);
    EXPECT_TRUE(r->warnings.empty());
    EXPECT_EQ(Tree(o.dest), Tree(dir_.Join("src")));
    *range_bytes = r->block_bytes_fetched - sig;
    return env.reads();
  };
  uint64_t free_bytes = 0, limited_bytes = 0;
  const uint64_t free_reads = run(0, "free", &free_bytes);
  const uint64_t limited_reads = run(1000, "limited", &limited_bytes);
  EXPECT_EQ(free_bytes, limited_bytes);
  EXPECT_GT(limited_bytes, 5000u);  // the blocks around 3.5 KB of novel bytes
  EXPECT_GE(limited_reads, free_reads + limited_bytes / 1000);
}

// The clock readings of a v1 -> v2 sync by block reuse from the --basis
// folder "old" (a fresh cache and DEST named `name`) at `bwlimit` bytes/s
// (0: none), as in the test above; *report gets its report.
uint64_t ClockReadsOfABlockReuseSync(const std::string& root, uint64_t bwlimit,
                                     const std::string& name,
                                     SyncReport* report) {
  CountingClockEnv env;
  SyncOptions o;
  o.remote = JoinPath(root, "bucket");
  o.dest = JoinPath(root, "nodes/" + name);
  o.cache_dir = JoinPath(root, "cache-" + name);
  o.basis_dir = JoinPath(root, "old");
  o.transfer.bwlimit = bwlimit;
  auto r = ferry::Sync(o, &env);
  EXPECT_OK(r.status());
  if (r.ok()) *report = *r;
  return env.reads();
}

TEST_F(SyncDeltaTest, BlockReuseSignaturesAreMeteredByTheBandwidthLimit) {
  // --basis holds v2 itself: every block is found, no range is fetched, and
  // of the shard only its signature (16,358 bytes) crosses. At 100 B/s the
  // bucket hands out at most 100 bytes at a time: the limited run reads the
  // clock at least once per 100 bytes more. (Before the signatures went
  // through the transfer engine, Backend::Read passed no bucket: 2 bytes
  // were metered, small.txt's.)
  SyncV1PublishV2();
  test::WriteFile(env_, dir_.Join("old/big.tfrecord"), V2());
  const uint64_t sig = 12 + 11 * ((V2().size() + 1407) / 1408);
  SyncReport free, limited;
  const uint64_t free_reads =
      ClockReadsOfABlockReuseSync(dir_.path(), 0, "free", &free);
  const uint64_t limited_reads =
      ClockReadsOfABlockReuseSync(dir_.path(), 100, "limited", &limited);
  for (const SyncReport* r : {&free, &limited}) {
    EXPECT_EQ(r->objects_reused, 1u);
    EXPECT_EQ(r->block_bytes_fetched, sig);
    EXPECT_TRUE(r->warnings.empty());
  }
  EXPECT_EQ(Tree(dir_.Join("nodes/limited")), Tree(dir_.Join("src")));
  EXPECT_GE(limited_reads, free_reads + sig / 100);
}

TEST_F(SyncDeltaTest, ABadPartsRefetchIsMeteredByTheBandwidthLimit) {
  // The stored signature describes other bytes (v1's, cut to v2's size):
  // every block is "found" in --basis (v1), the object's one part fails its
  // XXH3-64 and is fetched again, 2 MiB. At 10 kB/s the limited run reads
  // the clock at least once per 10 kB of the signature and the part more.
  // (Before, the part came by Backend::Read, unmetered.)
  SyncV1PublishV2();
  ASSERT_OK(env_->RemoveFile(DeltaPath()));
  const std::string other = V1().substr(0, V2().size());
  std::string sig;
  auto b =
      delta::SignatureBuilder::Create(other.size(), [&](std::string_view d) {
        sig.append(d);
        return Status::OK();
      });
  ASSERT_OK(b.status());
  ASSERT_OK((*b)->Update(other));
  ASSERT_OK((*b)->Finish());
  test::WriteFile(env_, Bucket(sync::SigKey(HashBytes(V2()))), sig);
  test::WriteFile(env_, dir_.Join("old/big.tfrecord"), V1());
  SyncReport free, limited;
  const uint64_t free_reads =
      ClockReadsOfABlockReuseSync(dir_.path(), 0, "free", &free);
  const uint64_t limited_reads =
      ClockReadsOfABlockReuseSync(dir_.path(), 10000, "limited", &limited);
  for (const SyncReport* r : {&free, &limited}) {
    EXPECT_EQ(r->objects_reused, 1u);
    EXPECT_EQ(r->retries.count("part-hash") ? r->retries.at("part-hash") : 0,
              1u);
    EXPECT_EQ(r->block_bytes_fetched, sig.size() + V2().size());
  }
  EXPECT_EQ(Tree(dir_.Join("nodes/limited")), Tree(dir_.Join("src")));
  auto left = ListFilesRecursive(env_, dir_.Join("cache-limited/partial"));
  EXPECT_TRUE(!left.ok() || left->empty());
  EXPECT_GE(limited_reads, free_reads + (sig.size() + V2().size()) / 10000);
}

TEST_F(SyncDeltaTest, ThePreviousVersionInDestIsABasis) {
  SyncV1PublishV2();
  DropCachedV1();
  SyncReport r = Sync();
  EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
  EXPECT_EQ(r.objects_patched, 0u);
  EXPECT_EQ(r.objects_reused, 1u);
  EXPECT_GT(r.bytes_copied, V2().size() / 2);
  EXPECT_TRUE(r.warnings.empty());
}

TEST_F(SyncDeltaTest, RangesAFewBlocksApartAreFetchedApart) {
  // Two 500-byte edits 64 KiB apart: block reuse fetches the blocks around
  // each (two ranges of at most 2 blocks of 1,408 bytes), not the 64 KiB
  // between them. Ranges are merged only across holes below kRangeGap
  // (4 KiB): they go in parallel, so another range costs its headers, not a
  // round trip (at 256 KiB the two made one range of 66 KB).
  Write("big.tfrecord", V1());
  Write("small.txt", "v1");
  Publish();
  Sync();
  std::string v2 = V1();
  v2.replace(300000, 500, RandomBytes(500, 41));
  v2.replace(300000 + 65536, 500, RandomBytes(500, 42));
  Write("big.tfrecord", v2);
  Write("small.txt", "v2");
  Publish();
  DropCachedV1();
  SyncReport r = Sync();
  EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
  EXPECT_EQ(r.objects_reused, 1u);
  const uint64_t sig = 12 + 11 * ((v2.size() + 1407) / 1408);
  EXPECT_LE(r.block_bytes_fetched - sig, 4u * 1408);
  EXPECT_EQ(r.bytes_copied + (r.block_bytes_fetched - sig), v2.size());
  EXPECT_TRUE(r.warnings.empty());
}

TEST_F(SyncDeltaTest, UnchangedPartsAreMatchedByTheManifestsPartHashes) {
  // Parts of 256 KiB: the edits at 100,000 (in place), 700,000 (insert)
  // and 1,500,000 (removal) leave part 1 unchanged at its offset and the
  // parts between the insert and the removal unchanged at a shift; the
  // scan takes them by their XXH3-64s without summing their blocks.
  part_size_ = 256 << 10;
  SyncV1PublishV2();
  DropCachedV1();
  SyncReport r = Sync();
  EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
  EXPECT_EQ(r.objects_reused, 1u);
  EXPECT_GE(r.bytes_part_matched, uint64_t{256} << 10);
  EXPECT_LE(r.bytes_part_matched, r.bytes_copied);
  EXPECT_TRUE(r.warnings.empty());
}

TEST_F(SyncDeltaTest, AKilledBlockReuseGoesOnFromItsCheckedParts) {
  // Parts of 256 KiB; what a killed block reuse left: 3 good parts, a
  // damaged one, a good one. The next run keeps the 3 and goes on from
  // there (the edit at 700,000 lies in them: not fetched again).
  part_size_ = 256 << 10;
  SyncV1PublishV2();
  DropCachedV1();
  const std::string v2 = V2();
  const uint64_t part = part_size_;
  test::WriteFile(env_,
                  JoinPath(PartialDir(), HashBytes(v2).ToHex() + ".blocks"),
                  v2.substr(0, 3 * part) + std::string(part, 'x') +
                      v2.substr(4 * part, part));
  SyncReport r = Sync();
  EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
  EXPECT_EQ(r.objects_reused, 1u);
  EXPECT_EQ(r.bytes_resumed, 3 * part);
  const uint64_t sig = 12 + 11 * ((v2.size() + 1407) / 1408);
  EXPECT_EQ(r.bytes_resumed + r.bytes_copied + (r.block_bytes_fetched - sig),
            v2.size());
  EXPECT_LT(r.block_bytes_fetched - sig, 300u << 10);  // the edit at 1.5 MB
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(Partial(), std::vector<std::string>{});
}

TEST_F(SyncDeltaTest, FifosLeftInPartialAreRemovedNotOpened) {
  // A FIFO where a killed run's .blocks, .blocks.prev, signature, part
  // fetched again or finished download would be: opening it would block
  // forever; it is removed and the object
  // made as if nothing were there.
  SyncV1PublishV2();
  DropCachedV1();
  const std::string base = JoinPath(PartialDir(), HashBytes(V2()).ToHex());
  ASSERT_OK(env_->CreateDirs(PartialDir()));
  for (const std::string& p :
       {base, base + ".blocks", base + ".blocks.prev", base + ".sig",
        base + ".sig.ferry-part", base + ".blocks.again",
        base + ".blocks.again.ferry-part"})
    ASSERT_EQ(mkfifo(p.c_str(), 0600), 0) << p;
  alarm(120);  // a hang fails the test instead of stalling the suite
  SyncReport r = Sync();
  alarm(0);
  EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
  EXPECT_EQ(r.objects_reused, 1u);
  EXPECT_EQ(r.bytes_resumed, 0u);
  EXPECT_EQ(Partial(), std::vector<std::string>{});
}

TEST_F(SyncDeltaTest, AKilledResumeKeepsTheLongerStart) {
  // A resume killed while copying the kept parts leaves a short .blocks
  // beside the longer .blocks.prev: the longer one is resumed.
  part_size_ = 256 << 10;
  SyncV1PublishV2();
  DropCachedV1();
  const std::string v2 = V2();
  const std::string blocks =
      JoinPath(PartialDir(), HashBytes(v2).ToHex() + ".blocks");
  test::WriteFile(env_, blocks + ".prev", v2.substr(0, 5 * part_size_));
  test::WriteFile(env_, blocks, v2.substr(0, part_size_));
  SyncReport r = Sync();
  EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
  EXPECT_EQ(r.bytes_resumed, 5 * part_size_);
  EXPECT_EQ(Partial(), std::vector<std::string>{});
}

TEST_F(SyncDeltaTest, AMissingDeltaThenBlocksFromItsSource) {
  // Path 2 fails; path 3 takes the delta's cached source as a basis.
  SyncV1PublishV2();
  ASSERT_OK(env_->RemoveFile(DeltaPath()));
  ASSERT_OK(env_->RemoveFile(dir_.Join("nodes/dest/big.tfrecord")));
  SyncReport r = Sync();
  EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
  EXPECT_EQ(r.delta_fallbacks, 1u);
  EXPECT_EQ(r.objects_reused, 1u);
  EXPECT_EQ(r.objects_whole, 1u);
}

TEST_F(SyncDeltaTest, ADamagedSignatureFallsBackToTheWholeObject) {
  SyncV1PublishV2();
  ASSERT_OK(env_->RemoveFile(DeltaPath()));
  const std::string sig = Bucket(sync::SigKey(HashBytes(V2())));
  std::string bytes = test::ReadFile(env_, sig);
  test::WriteFile(env_, sig, bytes.substr(0, bytes.size() - 12));
  SyncReport r = Sync();
  ExpectSignatureRefused(r, "block reuse failed");
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings[0].find("): falling back to the whole object"),
            std::string::npos)
      << r.warnings[0];
}

TEST_F(SyncDeltaTest, AMissingSignatureFallsBackToTheWholeObject) {
  SyncV1PublishV2();
  ASSERT_OK(env_->RemoveFile(DeltaPath()));
  ASSERT_OK(env_->RemoveFile(Bucket(sync::SigKey(HashBytes(V2())))));
  ExpectSignatureRefused(Sync(), "block reuse failed");
}

// A manifest's File.sig_strong_len 0 (written before the field) means the
// 32-byte strong sums ferry published then: such a signature is fetched
// (exactly its 36 bytes a block) and loaded; listed as 8, it is refused.
TEST_F(SyncDeltaTest, SignaturesWith32ByteStrongSumsStayReadable) {
  const std::string v2 = V2();
  const std::string sig = Sign32(v2);
  const uint64_t blocks = (v2.size() + 1407) / 1408;
  ASSERT_EQ(sig.size(), 12 + 36 * blocks);
  test::WriteFile(env_, Bucket(sync::SigKey(HashBytes(v2))), sig);
  uint64_t bytes = 0;
  auto loaded = sync::FetchSignature(backend_.get(), HashBytes(v2), v2.size(),
                                     1408, 0, &bytes);
  ASSERT_OK(loaded.status());
  EXPECT_EQ((*loaded)->params().strong_len, 32u);
  EXPECT_EQ((*loaded)->blocks(), blocks);
  EXPECT_EQ(bytes, sig.size());
  EXPECT_EQ(sync::SignatureBytes(v2.size(), 1408, 0), sig.size());
  EXPECT_EQ(sync::SignatureBytes(v2.size(), 1408, 8), 12 + 12 * blocks);
  auto listed8 = sync::FetchSignature(backend_.get(), HashBytes(v2), v2.size(),
                                      1408, 8, &bytes);
  ASSERT_FALSE(listed8.ok());
  EXPECT_NE(listed8.status().message().find(
                "strong sum length 32 where its manifest says 8"),
            std::string_view::npos)
      << listed8.status().ToString();
}

// The manifest lists v2's signature with 7-byte strong sums; the stored one
// has 32 (the right blocks otherwise): refused, the object comes whole.
TEST_F(SyncDeltaTest, ASignatureOfAnotherStrongLenThanListedFallsBack) {
  SyncV1PublishV2();
  ASSERT_OK(env_->RemoveFile(DeltaPath()));
  test::WriteFile(env_, Bucket(sync::SigKey(HashBytes(V2()))), Sign32(V2()));
  ExpectSignatureRefused(Sync(),
                         "strong sum length 32 where its manifest says 7");
}

TEST_F(SyncDeltaTest, ALyingSignatureCostsTheRefetchOfItsBadParts) {
  // The stored signature describes other bytes of the right size (v1's,
  // cut): every block is found in the basis, and the object's one part
  // fails its XXH3-64: fetched again from the remote, it is right.
  SyncV1PublishV2();
  ASSERT_OK(env_->RemoveFile(DeltaPath()));
  const std::string other = V1().substr(0, V2().size());
  std::string sig;
  auto b =
      delta::SignatureBuilder::Create(other.size(), [&](std::string_view d) {
        sig.append(d);
        return Status::OK();
      });
  ASSERT_OK(b.status());
  ASSERT_OK((*b)->Update(other));
  ASSERT_OK((*b)->Finish());
  test::WriteFile(env_, Bucket(sync::SigKey(HashBytes(V2()))), sig);
  SyncReport r = Sync();
  EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
  EXPECT_EQ(r.objects_reused, 1u);
  EXPECT_EQ(r.block_fallbacks, 0u);
  EXPECT_EQ(r.retries["part-hash"], 1u);
  EXPECT_EQ(r.block_bytes_fetched, sig.size() + V2().size());
  EXPECT_EQ(r.objects_whole, 1u);
  ASSERT_EQ(r.warnings.size(), 1u);  // the delta's
  EXPECT_EQ(Partial(), std::vector<std::string>{});
}

TEST_F(SyncDeltaTest, AHugeBasisIsSearchedOnlyAroundTheObjectsSize) {
  // v1 followed by a sparse gigabyte: only the first 4 x 2 MiB + 16 MiB are
  // read (the whole of it took 25 s a 4 GiB), v1's blocks found there.
  SyncV1PublishV2();
  const std::string huge = dir_.Join("old/big.tfrecord");
  test::WriteFile(env_, huge, V1());
  ASSERT_EQ(::truncate(huge.c_str(), off_t{1} << 30), 0);
  ASSERT_OK(env_->RemoveFile(dir_.Join("nodes/dest")));
  SyncReport r = Sync(false, dir_.Join("old"), "cache2");
  EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
  EXPECT_EQ(r.objects_reused, 1u);
  EXPECT_GT(r.bytes_copied, V2().size() / 2);
  EXPECT_EQ(r.block_fallbacks, 0u);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("only the first " +
                               std::to_string(sync::BasisWindow(V2().size())) +
                               " bytes"),
            std::string::npos)
      << r.warnings[0];
  EXPECT_EQ(sync::BasisWindow(V2().size()), 4 * V2().size() + (16 << 20));
}

TEST_F(SyncDeltaTest, ABasisWithNoBlockOfTheObjectIsQuietlyPassedOver) {
  SyncV1PublishV2();
  test::WriteFile(env_, dir_.Join("old/big.tfrecord"),
                  RandomBytes(1 << 20, 77));
  ASSERT_OK(env_->RemoveFile(dir_.Join("nodes/dest")));
  SyncReport r = Sync(false, dir_.Join("old"), "cache2");
  EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
  EXPECT_EQ(r.objects_reused, 0u);
  EXPECT_EQ(r.block_fallbacks, 0u);
  EXPECT_EQ(r.objects_whole, 2u);
  EXPECT_TRUE(r.warnings.empty());
}

// Other cached objects as bases (docs/delta.md "Sync side", path 3).

// V1 with a 5,000-byte record inserted at 1.5 MB: its parts of 256 KiB
// before the insert are V1's.
std::string V1WithARecord() {
  std::string s = V1();
  s.insert(1500000, RandomBytes(5000, 34));
  return s;
}

TEST_F(SyncDeltaTest, ARenamedFileReusesTheBlocksOfTheCachedOldObject) {
  // v2 renames a.tfrecord to b.tfrecord and inserts a record: no delta
  // (a new path), no file at b's path in DEST; the cached object of v1's
  // a.tfrecord shares b's first 5 part hashes and is the basis.
  part_size_ = 256 << 10;
  Write("a.tfrecord", V1());
  Write("small.txt", "v1");
  Publish();
  Sync();
  ASSERT_OK(env_->RemoveFile(dir_.Join("src/a.tfrecord")));
  const std::string b = V1WithARecord();
  Write("b.tfrecord", b);
  Publish();
  SyncReport plan = Sync(/*dry_run=*/true);
  EXPECT_EQ(plan.objects_reused, 1u);
  EXPECT_EQ(plan.objects_whole, 0u);
  SyncReport r = Sync();
  EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
  EXPECT_EQ(r.objects_reused, 1u);
  EXPECT_EQ(r.objects_whole, 0u);
  EXPECT_EQ(r.block_fallbacks, 0u);
  // --json paths.blocks: most of b copied from the cached a, the insert's
  // part (and its neighbour within the gap) fetched.
  const uint64_t sig = 12 + 11 * ((b.size() + 1407) / 1408);
  EXPECT_GT(r.bytes_copied, b.size() / 2);
  EXPECT_EQ(r.bytes_copied + (r.block_bytes_fetched - sig), b.size());
  EXPECT_LT(r.block_bytes_fetched, b.size() / 2);
  EXPECT_EQ(r.bytes_fetched, r.block_bytes_fetched);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(Partial(), std::vector<std::string>{});
}

TEST_F(SyncDeltaTest, AnUnrelatedCachedObjectIsNotChosen) {
  // v2 adds b.tfrecord, of the size of v1's a.tfrecord but sharing no
  // part and no path with it: no basis, no signature fetched.
  part_size_ = 256 << 10;
  Write("a.tfrecord", RandomBytes(2 << 20, 50));
  Publish();
  Sync();
  Write("b.tfrecord", RandomBytes(2 << 20, 51));
  Publish();
  EXPECT_EQ(Sync(/*dry_run=*/true).objects_reused, 0u);
  SyncReport r = Sync();
  EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
  EXPECT_EQ(r.objects_whole, 1u);
  EXPECT_EQ(r.objects_reused, 0u);
  EXPECT_EQ(r.block_bytes_fetched, 0u);
  EXPECT_EQ(r.bytes_fetched, uint64_t{2} << 20);
}

TEST_F(SyncDeltaTest, ACachedObjectOfAnotherRemoteIsNeverABasis) {
  // The cache holds a.tfrecord of remote `bucket` (and its manifest); a
  // sync of `bucket2`, whose b.tfrecord shares its parts, into another DEST
  // does not use it (docs/sync.md "Cross-remote safety"): b comes whole.
  part_size_ = 256 << 10;
  Write("a.tfrecord", V1());
  Publish();
  Sync();
  test::WriteFile(env_, dir_.Join("src2/b.tfrecord"), V1WithARecord());
  auto backend2 = remote::NewFileBackend(dir_.Join("bucket2"), "bucket2", env_);
  PublishOptions po;
  po.cache_dir = dir_.Join("pubcache2");
  po.use_stat_cache = false;
  po.part_size = part_size_;
  ASSERT_OK(
      ferry::Publish(dir_.Join("src2"), backend2.get(), po, env_).status());
  SyncOptions o;
  o.remote = dir_.Join("bucket2");
  o.dest = dir_.Join("nodes/dest2");
  o.cache_dir = dir_.Join("cache");
  o.dry_run = true;
  auto plan = ferry::Sync(o, env_);
  ASSERT_OK(plan.status());
  EXPECT_EQ(plan->objects_reused, 0u);
  o.dry_run = false;
  auto r = ferry::Sync(o, env_);
  ASSERT_OK(r.status());
  EXPECT_EQ(Tree(dir_.Join("nodes/dest2")), Tree(dir_.Join("src2")));
  EXPECT_EQ(r->objects_whole, 1u);
  EXPECT_EQ(r->objects_reused, 0u);
  EXPECT_EQ(r->block_bytes_fetched, 0u);
  // The same file published to `bucket` is made from the cached a.
  ASSERT_OK(env_->RemoveFile(dir_.Join("src/a.tfrecord")));
  Write("b.tfrecord", V1WithARecord());
  Publish();
  EXPECT_EQ(Sync().objects_reused, 1u);
}

// Renames (cached_bases.h): a path DEST's current version listed and the
// new one does not, when nothing shares a part or the path.

// V1 with 300 bytes inserted at offset 100: every part shifted, none of
// V1's part hashes shared.
std::string V1EditedAtItsStart() {
  std::string s = V1();
  s.insert(100, RandomBytes(300, 35));
  return s;
}

TEST_F(SyncDeltaTest, ARenamedShardEditedNearItsStartReusesTheDeletedPaths) {
  // v2 renames a/shard-0001.tar to a/shard-0001-v2.tar and inserts 300
  // bytes at offset 100: no delta (a new path), no file at its path in
  // DEST, no part hash shared with any cached object; the cached object of
  // the deleted a/shard-0001.tar (same directory, a similar name, a size
  // within 1.25x) is the basis, as rsync --fuzzy would take it.
  part_size_ = 256 << 10;
  Write("a/shard-0001.tar", V1());
  Write("a/small.txt", "v1");
  Publish();
  Sync();
  ASSERT_OK(env_->RemoveFile(dir_.Join("src/a/shard-0001.tar")));
  const std::string b = V1EditedAtItsStart();
  Write("a/shard-0001-v2.tar", b);
  Publish();
  SyncReport plan = Sync(/*dry_run=*/true);
  EXPECT_EQ(plan.objects_reused, 1u);
  EXPECT_EQ(plan.objects_whole, 0u);
  SyncReport r = Sync();
  EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
  EXPECT_EQ(r.objects_reused, 1u);
  EXPECT_EQ(r.objects_whole, 0u);
  EXPECT_EQ(r.block_fallbacks, 0u);
  // --json paths.blocks: all but the insert's neighbourhood copied.
  const uint64_t sig = 12 + 11 * ((b.size() + 1407) / 1408);
  EXPECT_EQ(r.bytes_copied + (r.block_bytes_fetched - sig), b.size());
  EXPECT_GT(r.bytes_copied, b.size() - (16 << 10));
  EXPECT_LT(r.block_bytes_fetched, sig + (16 << 10));
  EXPECT_EQ(r.bytes_fetched, r.block_bytes_fetched);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(Partial(), std::vector<std::string>{});
}

TEST_F(SyncDeltaTest,
       ADeletedPathOfAnotherSizeOrAnUnlikeNameIsNotARenamesBasis) {
  // v2 deletes a/shard-0001.tar (8 MiB) and a/labels.bin (2 MiB) and adds
  // a/shard-0001-v2.tar of 2 MiB (a similar name, 4x smaller) and
  // a/images.tar of 2 MiB (the size of one, a name like neither), all
  // unrelated bytes: neither deleted object is a basis, no signature is
  // fetched.
  part_size_ = 256 << 10;
  Write("a/shard-0001.tar", RandomBytes(8 << 20, 63));
  Write("a/labels.bin", RandomBytes(2 << 20, 60));
  Publish();
  Sync();
  ASSERT_OK(env_->RemoveFile(dir_.Join("src/a/shard-0001.tar")));
  ASSERT_OK(env_->RemoveFile(dir_.Join("src/a/labels.bin")));
  Write("a/shard-0001-v2.tar", RandomBytes(2 << 20, 61));
  Write("a/images.tar", RandomBytes(2 << 20, 62));
  Publish();
  EXPECT_EQ(Sync(/*dry_run=*/true).objects_reused, 0u);
  SyncReport r = Sync();
  EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
  EXPECT_EQ(r.objects_whole, 2u);
  EXPECT_EQ(r.objects_reused, 0u);
  EXPECT_EQ(r.block_bytes_fetched, 0u);
  EXPECT_EQ(r.bytes_fetched, uint64_t{4} << 20);
}

TEST_F(SyncDeltaTest, ADeletedPathOfAnotherRemoteIsNeverARenamesBasis) {
  // DEST holds v1 of `bucket` (a/shard-0001.tar); a sync of `bucket2`, which
  // lists a/shard-0001-v2.tar (V1 edited at its start) and not the other,
  // into that DEST does not use `bucket`'s cached object (docs/sync.md
  // "Cross-remote safety"): it comes whole.
  part_size_ = 256 << 10;
  Write("a/shard-0001.tar", V1());
  Publish();
  Sync();
  test::WriteFile(env_, dir_.Join("src2/a/shard-0001-v2.tar"),
                  V1EditedAtItsStart());
  auto backend2 = remote::NewFileBackend(dir_.Join("bucket2"), "bucket2", env_);
  PublishOptions po;
  po.cache_dir = dir_.Join("pubcache2");
  po.use_stat_cache = false;
  po.part_size = part_size_;
  ASSERT_OK(
      ferry::Publish(dir_.Join("src2"), backend2.get(), po, env_).status());
  SyncOptions o;
  o.remote = dir_.Join("bucket2");
  o.dest = dir_.Join("nodes/dest");
  o.cache_dir = dir_.Join("cache");
  o.dry_run = true;
  auto plan = ferry::Sync(o, env_);
  ASSERT_OK(plan.status());
  EXPECT_EQ(plan->objects_reused, 0u);
  o.dry_run = false;
  auto r = ferry::Sync(o, env_);
  ASSERT_OK(r.status());
  EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src2")));
  EXPECT_EQ(r->objects_whole, 1u);
  EXPECT_EQ(r->objects_reused, 0u);
  EXPECT_EQ(r->block_bytes_fetched, 0u);
}

}  // namespace
}  // namespace ferry
