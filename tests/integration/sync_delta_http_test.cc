// sync's delta and block-reuse paths (docs/delta.md "Sync side") over HTTP,
// through the fault proxy in front of nginx: a server that ignores Range,
// and objects at a delta's or signature's key bigger than listed. The proxy
// counts the requests and body bytes of each path.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <string>

#include "ferry/publish.h"
#include "ferry/sync.h"
#include "remote/file_backend.h"
#include "sync/deltas.h"
#include "sync/layout.h"
#include "testutil/fault_proxy.h"
#include "testutil/test_servers.h"
#include "testutil/test_util.h"

namespace ferry {
namespace {

using test::FaultRule;
using test::RandomBytes;

// A 2 MiB shard and its next version: most bytes shared, shifted.
std::string V1() { return RandomBytes(2 << 20, 31); }
std::string V2() {
  std::string s = V1();
  s.replace(100000, 500, RandomBytes(500, 32));
  s.insert(700000, RandomBytes(3000, 33));
  s.erase(1500000, 9000);
  return s;
}

class SyncDeltaHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = test::TestServers::FromEnv();
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    servers_ = *s;
    auto p = test::FaultProxy::FromEnv(test::FaultProxy::kHttp);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    proxy_ = std::make_unique<test::FaultProxy>(*p);
    ASSERT_OK(proxy_->Reset());
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    prefix_ = "sync-delta-" + std::to_string(::getpid()) + "-" + info->name();
    bucket_ = servers_.http_root + "/" + prefix_;
    backend_ = remote::NewFileBackend(bucket_, "bucket", env_);
  }
  void TearDown() override {
    if (proxy_) (void)proxy_->Reset();
  }

  // Publishes the tree; later syncs ask for this version by its id (nginx's
  // ETag of the ref, mtime in seconds and size, may not change within a
  // second).
  void Publish(const std::string& big) {
    test::WriteFile(env_, dir_.Join("src/big.tfrecord"), big);
    test::WriteFile(env_, dir_.Join("src/small.txt"), big.substr(0, 10));
    PublishOptions po;
    po.cache_dir = dir_.Join("pubcache");
    po.use_stat_cache = false;
    auto r = ferry::Publish(dir_.Join("src"), backend_.get(), po, env_);
    ASSERT_OK(r.status());
    id_ = r->id.ToHex();
  }
  SyncReport Sync(const std::string& cache, const std::string& basis = "") {
    SyncOptions o;
    o.remote = proxy_->url() + "/" + prefix_;
    o.ref = id_;
    o.dest = dir_.Join("dest");
    o.cache_dir = dir_.Join(cache);
    o.basis_dir = basis;
    auto r = ferry::Sync(o, env_);
    EXPECT_OK(r.status());
    return r.ok() ? *r : SyncReport{};
  }
  // What the proxy saw for one key of the bucket.
  test::FaultStats::Path Seen(const std::string& key) {
    auto st = proxy_->Stats();
    EXPECT_TRUE(st.ok()) << st.status().ToString();
    if (!st.ok()) return {};
    return st->paths["/" + prefix_ + "/" + key];
  }
  std::string DeltaKey() {
    return sync::DeltaKey(HashBytes(V1()), HashBytes(V2()));
  }
  void ExpectDestIsV2() {
    EXPECT_TRUE(test::ReadFile(env_, dir_.Join("dest/big.tfrecord")) == V2());
  }

  Env* env_ = Env::Default();
  test::TestServers servers_;
  std::unique_ptr<test::FaultProxy> proxy_;
  std::string prefix_, bucket_, id_;
  std::unique_ptr<Backend> backend_;
  test::ScratchDir dir_;
};

TEST_F(SyncDeltaHttpTest, RangeIgnoredSendsBlockReuseWholeAtOnce) {
  // A fresh cache and --basis holding v1: path 3. Every ranged GET is
  // answered 200 with the whole object: the signature (asked whole, as a
  // range of its exact length) is taken, the first range of the object is
  // refused at once (not retried), and the object comes whole.
  Publish(V1());
  Publish(V2());
  test::WriteFile(env_, dir_.Join("old/big.tfrecord"), V1());
  ASSERT_TRUE(proxy_->Add(FaultRule::IgnoreRange().RangeOnly().Times(0)).ok());
  SyncReport r = Sync("cache", dir_.Join("old"));
  ExpectDestIsV2();
  EXPECT_EQ(r.objects_reused, 0u);
  EXPECT_EQ(r.block_fallbacks, 1u);
  EXPECT_EQ(r.objects_whole, 2u);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("the server ignores Range"), std::string::npos)
      << r.warnings[0];
  // One refused range, then the whole object in one stream.
  EXPECT_LE(Seen(sync::ObjectKey(HashBytes(V2()))).requests, 2);
}

TEST_F(SyncDeltaHttpTest, RangeIgnoredStillPatchesFromADelta) {
  // The delta is asked whole (no Range): a server that ignores Range makes
  // no difference to it.
  Publish(V1());
  Sync("cache");
  Publish(V2());
  ASSERT_TRUE(proxy_->Add(FaultRule::IgnoreRange().RangeOnly().Times(0)).ok());
  SyncReport r = Sync("cache");
  ExpectDestIsV2();
  EXPECT_EQ(r.objects_patched, 1u);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(Seen(DeltaKey()).requests, 1);
}

TEST_F(SyncDeltaHttpTest, ABiggerObjectAtTheDeltasKeyIsReportedAndCut) {
  // The delta followed by a (sparse) gigabyte: not the delta listed. The
  // GET is ended at the first piece past the listed size (what was in
  // flight is all that crossed), a warning names the key, and the object
  // comes by block reuse from DEST's v1.
  Publish(V1());
  Sync("cache");
  Publish(V2());
  const std::string delta = bucket_ + "/" + DeltaKey();
  const uint64_t listed = env_->Stat(delta)->size;
  ASSERT_EQ(::truncate(delta.c_str(), off_t{1} << 30), 0);
  ASSERT_OK(proxy_->Reset());
  SyncReport r = Sync("cache");
  ExpectDestIsV2();
  EXPECT_EQ(r.objects_patched, 0u);
  EXPECT_EQ(r.delta_fallbacks, 1u);
  EXPECT_EQ(r.objects_reused, 1u);
  EXPECT_GT(r.delta_bytes_fetched, listed);
  EXPECT_LE(r.delta_bytes_fetched, listed + (1 << 20));
  EXPECT_LT(Seen(DeltaKey()).bytes_sent, int64_t{64} << 20);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(
      r.warnings[0].find(DeltaKey() + ": the object is longer than the " +
                         std::to_string(listed) + " bytes the manifest lists"),
      std::string::npos)
      << r.warnings[0];
}

TEST_F(SyncDeltaHttpTest, ABiggerObjectAtTheSignaturesKeySendsOnlyItsLength) {
  // Block reuse from --basis; the signature followed by a (sparse)
  // gigabyte: nginx sends the signature's length and no more.
  Publish(V1());
  Publish(V2());
  test::WriteFile(env_, dir_.Join("old/big.tfrecord"), V1());
  const std::string sig = bucket_ + "/" + sync::SigKey(HashBytes(V2()));
  const uint64_t length = env_->Stat(sig)->size;
  ASSERT_EQ(::truncate(sig.c_str(), off_t{1} << 30), 0);
  SyncReport r = Sync("cache", dir_.Join("old"));
  ExpectDestIsV2();
  EXPECT_EQ(r.objects_reused, 1u);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(Seen(sync::SigKey(HashBytes(V2()))).bytes_sent,
            static_cast<int64_t>(length));
}

}  // namespace
}  // namespace ferry
