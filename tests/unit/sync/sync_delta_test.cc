// ferry sync's delta path (docs/delta.md "Sync side"): v1 published and
// synced, v2 published by lib publish (with its deltas); the v2 sync patches
// the cached v1 objects instead of fetching v2's (which are removed from the
// bucket to prove it), and any damaged, missing or wrong delta falls back to
// the whole object with nothing wrong installed.
#include <gtest/gtest.h>
#include <zstd.h>

#include <map>
#include <string>

#include "ferry/publish.h"
#include "ferry/sync.h"
#include "remote/file_backend.h"
#include "sync/deltas.h"
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
    auto r = ferry::Publish(dir_.Join("src"), backend_.get(), po, env_);
    EXPECT_OK(r.status());
    return r.ok() ? *r : PublishReport{};
  }
  SyncReport Sync(bool dry_run = false) {
    SyncOptions o;
    o.remote = dir_.Join("bucket");
    o.dest = dir_.Join("nodes/dest");
    o.cache_dir = dir_.Join("cache");
    o.dry_run = dry_run;
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
  void ExpectFellBackCleanly(const SyncReport& r, const std::string& why) {
    EXPECT_EQ(r.objects_patched, 0u);
    EXPECT_EQ(r.delta_fallbacks, 1u);
    EXPECT_EQ(r.objects_whole, 2u);  // the shard and small.txt
    EXPECT_EQ(r.bytes_whole, V2().size() + 2);
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_NE(r.warnings[0].find(why), std::string::npos) << r.warnings[0];
    EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
    EXPECT_EQ(Partial(), std::vector<std::string>{});
  }

  Env* env_ = Env::Default();
  test::ScratchDir dir_;
  std::unique_ptr<Backend> backend_;
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

TEST_F(SyncDeltaTest, AMissingDeltaFallsBackToTheWholeObject) {
  SyncV1PublishV2();
  ASSERT_OK(env_->RemoveFile(DeltaPath()));
  ExpectFellBackCleanly(Sync(), "NotFound");
}

TEST_F(SyncDeltaTest, AFlippedByteFallsBackToTheWholeObject) {
  SyncV1PublishV2();
  std::string d = test::ReadFile(env_, DeltaPath());
  d[d.size() / 2] ^= 0x20;
  test::WriteFile(env_, DeltaPath(), d);
  ExpectFellBackCleanly(Sync(), "delta");
}

TEST_F(SyncDeltaTest, ATruncatedDeltaFallsBackToTheWholeObject) {
  SyncV1PublishV2();
  std::string d = test::ReadFile(env_, DeltaPath());
  test::WriteFile(env_, DeltaPath(), d.substr(0, d.size() - 100));
  ExpectFellBackCleanly(Sync(), "the manifest lists");
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

TEST_F(SyncDeltaTest, ACopyPastTheBasisFallsBackToTheWholeObject) {
  SyncV1PublishV2();
  const uint64_t listed = env_->Stat(DeltaPath())->size;
  ReplaceDelta(DeltaPath(), listed, [](size_t n) {
    return test::kDeltaMagic + test::Literal4(RandomBytes(n, 40)) +
           test::Copy8(V1().size() - 10, 100) + test::kDeltaEnd;
  });
  ExpectFellBackCleanly(Sync(), "past the end of the basis");
}

TEST_F(SyncDeltaTest, ADeltaMakingOtherBytesFallsBackToTheWholeObject) {
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

TEST_F(SyncDeltaTest, ADeltaMakingFewerBytesFallsBackToTheWholeObject) {
  SyncV1PublishV2();
  const uint64_t listed = env_->Stat(DeltaPath())->size;
  ReplaceDelta(DeltaPath(), listed, [](size_t n) {
    return test::kDeltaMagic + test::Literal4(RandomBytes(n, 43)) +
           test::Copy8(0, V2().size() - n - 1000) + test::kDeltaEnd;
  });
  ExpectFellBackCleanly(Sync(), "bytes, the manifest says");
}

TEST_F(SyncDeltaTest, ADeltaMakingMoreThanTheObjectFallsBackToTheWholeObject) {
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
  test::WriteFile(
      env_,
      JoinPath(partial, rk + "/" + HashBytes(V2() + "3").ToHex() + ".patch"),
      "garbage");
  const std::string hex = HashBytes(V2()).ToHex();
  ASSERT_OK(env_->RemoveFile(
      dir_.Join("cache/objects/" + rk + "/" + hex.substr(0, 2) + "/" + hex)));
  r = Sync();
  EXPECT_EQ(r.objects_patched, 0u);
  EXPECT_EQ(r.objects_whole, 1u);
  EXPECT_EQ(Tree(dir_.Join("nodes/dest")), Tree(dir_.Join("src")));
  EXPECT_EQ(Partial(), std::vector<std::string>{});
}

}  // namespace
}  // namespace ferry
