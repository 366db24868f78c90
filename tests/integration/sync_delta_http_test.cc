// sync's delta and block-reuse paths (docs/delta.md "Sync side") over HTTP,
// through the fault proxy in front of nginx: a server that ignores Range,
// and objects at a delta's or signature's key bigger than listed. The proxy
// counts the requests and body bytes of each path.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>

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
// Another next version: 100 one-byte edits 20,000 bytes apart, in place
// (nothing shifts): 100 ranges of one block each, which go as two
// multi-range GETs over http (64 ranges at most to a GET).
std::string V2Spread() {
  std::string s = V1();
  for (int i = 0; i < 100; ++i) s[20000 * i + 700] ^= 0x5a;
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
  SyncReport Sync(const std::string& cache, const std::string& basis = "",
                  int low_speed_time = 0, uint64_t part_size = 0) {
    SyncOptions o;
    if (part_size > 0) o.transfer.part_size = part_size;
    if (low_speed_time > 0) {  // a stall this long is not retried
      o.remote_options.low_speed_time = low_speed_time;
      o.transfer.low_speed_time = low_speed_time;
    }
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
  // The bucket's v2 object and the path the proxy names it by.
  std::string V2Key() { return sync::ObjectKey(HashBytes(v2_)); }
  std::string V2Path() { return "/" + prefix_ + "/" + V2Key(); }
  // v1 and v2 published; a fresh cache has no source for v2's delta, so
  // v2's shard comes by block reuse from the basis folder "old" (v1).
  void PublishForBlockReuse(std::string v2 = V2()) {
    v2_ = std::move(v2);
    Publish(V1());
    Publish(v2_);
    test::WriteFile(env_, dir_.Join("old/big.tfrecord"), V1());
  }
  // Block reuse of the shard went through, with no fallback.
  void ExpectReused(const SyncReport& r) {
    ExpectDestIsV2();
    EXPECT_EQ(r.objects_reused, 1u);
    EXPECT_EQ(r.block_fallbacks, 0u);
    EXPECT_TRUE(r.warnings.empty()) << r.warnings[0];
  }
  // Files left in the cache's partial/ folder (none after a sync).
  std::vector<std::string> Partial() {
    auto files = ListFilesRecursive(env_, dir_.Join("cache/partial"));
    return files.ok() ? *files : std::vector<std::string>{};
  }
  void ExpectDestIsV2() {
    EXPECT_TRUE(test::ReadFile(env_, dir_.Join("dest/big.tfrecord")) == v2_);
  }

  Env* env_ = Env::Default();
  test::TestServers servers_;
  std::unique_ptr<test::FaultProxy> proxy_;
  std::string prefix_, bucket_, id_;
  std::string v2_ = V2();  // the shard's version that DEST must end with
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
  // One refused GET of several ranges, one of a single range (a server
  // that cannot serve several at once may serve one), then the whole
  // object in one stream.
  EXPECT_LE(Seen(sync::ObjectKey(HashBytes(V2()))).requests, 3);
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

// Block reuse's signatures go through the transfer engine (one run for all
// objects): one ranged GET of the signature's length each, retried and
// counted as the engine's parts are; a 404 sends the object whole.
TEST_F(SyncDeltaHttpTest, ASignatureIsOneGetOfItsLength) {
  PublishForBlockReuse();
  const std::string sig = sync::SigKey(HashBytes(V2()));
  const int64_t length = env_->Stat(bucket_ + "/" + sig)->size;
  SyncReport r = Sync("cache", dir_.Join("old"));
  ExpectReused(r);
  EXPECT_EQ(Seen(sig).requests, 1);
  EXPECT_EQ(Seen(sig).bytes_sent, length);
  EXPECT_EQ(Partial(), std::vector<std::string>{});
}

TEST_F(SyncDeltaHttpTest, ASignatureCutByAResetIsRetriedAndCounted) {
  // (Backend::Read, which fetched signatures before, retried without a
  // count in the report.)
  PublishForBlockReuse();
  const std::string sig = sync::SigKey(HashBytes(V2()));
  ASSERT_TRUE(
      proxy_->Add(FaultRule::Reset(100).Path("/" + prefix_ + "/" + sig).Nth(1))
          .ok());
  SyncReport r = Sync("cache", dir_.Join("old"));
  ExpectReused(r);
  EXPECT_GE(r.retries["reset"], 1u);
  EXPECT_EQ(Seen(sig).requests, 2);
  EXPECT_EQ(Partial(), std::vector<std::string>{});
}

TEST_F(SyncDeltaHttpTest, AMissingSignatureSendsTheObjectWhole) {
  PublishForBlockReuse();
  const std::string sig = sync::SigKey(HashBytes(V2()));
  ASSERT_OK(env_->RemoveFile(bucket_ + "/" + sig));
  SyncReport r = Sync("cache", dir_.Join("old"));
  ExpectDestIsV2();
  EXPECT_EQ(r.objects_reused, 0u);
  EXPECT_EQ(r.block_fallbacks, 1u);
  EXPECT_EQ(r.objects_whole, 2u);
  EXPECT_EQ(Seen(sig).requests, 1);  // a 404 is not asked again
  EXPECT_EQ(Partial(), std::vector<std::string>{});
}

// Block reuse's ranges go through the transfer engine: each answer is checked
// and retried as a part of a whole download is, and the retries are counted
// by cause (Backend::Read, which fetched them before, retried without a
// count in the report and sent no If-Range at all).
// Faults at the second GET of V2Spread's shard: a multi-range GET with
// If-Range after the first (which learnt the ETag).
TEST_F(SyncDeltaHttpTest, ABlockReuseRangeWithAWrongContentRangeIsRetried) {
  PublishForBlockReuse(V2Spread());
  ASSERT_TRUE(
      proxy_
          ->Add(
              FaultRule::WrongContentRange().Path(V2Path()).RangeOnly().Nth(2))
          .ok());
  SyncReport r = Sync("cache", dir_.Join("old"));
  ExpectReused(r);
  EXPECT_GE(r.retries["content"], 1u);
}

TEST_F(SyncDeltaHttpTest, ABlockReuseRangeCutByAResetIsRetried) {
  PublishForBlockReuse(V2Spread());
  ASSERT_TRUE(
      proxy_->Add(FaultRule::Reset(100).Path(V2Path()).RangeOnly().Nth(2))
          .ok());
  SyncReport r = Sync("cache", dir_.Join("old"));
  ExpectReused(r);
  EXPECT_GE(r.retries["reset"], 1u);
}

TEST_F(SyncDeltaHttpTest, A200ToABlockReuseRangeAfterA206IsRetried) {
  // After the object's first 206, a 200 with the whole object to a GET of
  // one range is a glitch: asked again, never written. (A part size of
  // 1 KiB: each GET asks for one range.)
  PublishForBlockReuse(V2Spread());
  ASSERT_TRUE(
      proxy_->Add(FaultRule::IgnoreRange().Path(V2Path()).RangeOnly().Nth(2))
          .ok());
  SyncReport r = Sync("cache", dir_.Join("old"), 0, 1024);
  ExpectReused(r);
  EXPECT_GE(r.retries["content"], 1u);
}

TEST_F(SyncDeltaHttpTest,
       AnObjectWhoseETagChangesUnderBlockReuseIsStartedOver) {
  // After the first range's answer the object's mtime moves on (same bytes,
  // another nginx ETag): the next ranges carry If-Range with the old ETag,
  // get 200s, and the object's ranges are fetched again from the start.
  PublishForBlockReuse(V2Spread());
  const std::string file = bucket_ + "/" + V2Key();
  ASSERT_TRUE(
      proxy_
          ->Add(FaultRule::MutateCommand("touch -d @$(( $(stat -c %Y '" + file +
                                         "') + 100 )) '" + file + "'")
                    .Path(V2Path())
                    .RangeOnly())
          .ok());
  SyncReport r = Sync("cache", dir_.Join("old"));
  ExpectReused(r);
  EXPECT_GE(r.retries["changed"], 1u);
}

TEST_F(SyncDeltaHttpTest, ABlockReuseObjectsRangesAreInFlightTogether) {
  // The object's second ranged GET stalls for 60 s (no stall is retried
  // before 600 s); its third must reach the proxy meanwhile. One range after
  // another, it would come only after the stall, and the test fails (after
  // 50 s of waiting). The ranges do not start at the same time: the first
  // learns the object's ETag for the others. A part size of 1 KiB makes
  // the ranges more than one multi-range GET holds (at most a part's bytes
  // each), so that they are several GETs.
  PublishForBlockReuse();
  ASSERT_TRUE(
      proxy_->Add(FaultRule::Stall(0, 60).Path(V2Path()).RangeOnly().Nth(2))
          .ok());
  SyncReport r;
  std::thread sync([&] { r = Sync("cache", dir_.Join("old"), 600, 1024); });
  int64_t seen = 0;
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(50);
  while (seen < 3 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    seen = Seen(V2Key()).requests;
  }
  EXPECT_GE(seen, 3) << "the object's ranges went one after another";
  ASSERT_OK(proxy_->Reset());  // wakes the stalled answer
  sync.join();
  ExpectReused(r);
}

// Over http(s) an object's ranges go several to a GET ("Range: bytes=A-B,
// C-D", a multipart/byteranges answer), as zsync asks: v2's three edits far
// apart are at least three ranges, and the object takes one GET (the first,
// which learns the object's size and ETag, asks for them all). One GET per
// range, it takes three or more.
TEST_F(SyncDeltaHttpTest, ABlockReuseObjectsRangesGoSeveralToAGet) {
  PublishForBlockReuse();
  SyncReport r = Sync("cache", dir_.Join("old"));
  ExpectReused(r);
  EXPECT_EQ(Seen(V2Key()).requests, 1);
  EXPECT_TRUE(r.retries.empty()) << r.retries.begin()->first;
  EXPECT_EQ(Partial(), std::vector<std::string>{});
}

TEST_F(SyncDeltaHttpTest, AMultiRangeGetAsksForAtMost64Ranges) {
  // V2Spread's 100 ranges go as 64 and 36: two GETs. Without the cap, one;
  // without grouping, 100.
  PublishForBlockReuse(V2Spread());
  SyncReport r = Sync("cache", dir_.Join("old"));
  ExpectReused(r);
  EXPECT_EQ(Seen(V2Key()).requests, 2);
}

TEST_F(SyncDeltaHttpTest, AFirstMultiRangeGetCutByAResetIsRetriedOneByOne) {
  // The object's first GET (no If-Range yet: it learns size and ETag) is
  // cut: it is asked again alone, then the other ranges one per GET.
  PublishForBlockReuse();
  ASSERT_TRUE(
      proxy_->Add(FaultRule::Reset(100).Path(V2Path()).RangeOnly()).ok());
  SyncReport r = Sync("cache", dir_.Join("old"));
  ExpectReused(r);
  EXPECT_GE(r.retries["reset"], 1u);
  EXPECT_GE(Seen(V2Key()).requests, 4);
}

TEST_F(SyncDeltaHttpTest, AServerThatServesOneOfSeveralRangesGetsTheRestAlone) {
  // The object's first GET, of several ranges, is answered with its first
  // range only (a 206 with that one Content-Range, the object's size and
  // ETag): it is kept, and the other ranges are asked one per GET. No
  // retry: the answer was good, only smaller.
  PublishForBlockReuse();
  ASSERT_TRUE(
      proxy_->Add(FaultRule::FirstRangeOnly().Path(V2Path()).RangeOnly()).ok());
  SyncReport r = Sync("cache", dir_.Join("old"));
  ExpectReused(r);
  EXPECT_GE(Seen(V2Key()).requests, 3);
  EXPECT_TRUE(r.retries.empty()) << r.retries.begin()->first;
}

TEST_F(SyncDeltaHttpTest, AServerThatServesRangesOnlyOneAtATimeGetsThemSo) {
  // Every GET of several ranges is answered 200 with the whole object, as
  // nginx with max_ranges 1 does; a GET of one range gets its 206. The
  // ranges go one per GET, nothing of the 200s is kept, and the object is
  // not fetched whole (before: "the server ignores Range", fallback).
  PublishForBlockReuse();
  ASSERT_TRUE(
      proxy_->Add(FaultRule::IgnoreRange().MultiRangeOnly().Times(0)).ok());
  SyncReport r = Sync("cache", dir_.Join("old"));
  ExpectReused(r);
  EXPECT_TRUE(r.retries.empty()) << r.retries.begin()->first;
  EXPECT_GE(Seen(V2Key()).requests, 4);
}

TEST_F(SyncDeltaHttpTest, APartAByteShortOfItsContentRangeIsNeverKept) {
  // The first part of the answer lacks a byte (the answer's length kept):
  // its count of bytes ends on the "\r" before the boundary, which is not
  // there. The part is asked again alone; nothing else is fetched again
  // (before: kept, and the object's 2 MiB part hash then failed and all of
  // it came again).
  PublishForBlockReuse();
  ASSERT_TRUE(
      proxy_->Add(FaultRule::ShortPart().Path(V2Path()).MultiRangeOnly()).ok());
  SyncReport r = Sync("cache", dir_.Join("old"));
  ExpectReused(r);
  EXPECT_EQ(r.retries["content"], 1u);
  EXPECT_EQ(r.retries.count("part-hash"), 0u);
  EXPECT_LT(r.block_bytes_fetched, 100000u);
}

TEST_F(SyncDeltaHttpTest, AOneRangeAnswerOfAnotherSizeStartsTheObjectOver) {
  // A later GET of several ranges is answered with one of them, but the
  // total its Content-Range tells is the object's size + 1: the object
  // changed, never data.
  PublishForBlockReuse(V2Spread());
  ASSERT_TRUE(
      proxy_
          ->Add(
              FaultRule::FirstRangeOnly(1).Path(V2Path()).MultiRangeOnly().Nth(
                  2))
          .ok());
  SyncReport r = Sync("cache", dir_.Join("old"));
  ExpectReused(r);
  EXPECT_GE(r.retries["changed"], 1u);
}

TEST_F(SyncDeltaHttpTest, APartThatDoesNotTellTheObjectsSizeIsNeverKept) {
  // "Content-Range: bytes A-B/*" in a later multi-range answer: a server
  // that does not know the size of what it serves is not to be trusted
  // with ranges of it; the ranges go one per GET.
  PublishForBlockReuse(V2Spread());
  FaultRule rule =
      FaultRule::WrongContentRange().Path(V2Path()).MultiRangeOnly().Nth(2);
  rule.star_total = true;
  ASSERT_TRUE(proxy_->Add(rule).ok());
  SyncReport r = Sync("cache", dir_.Join("old"));
  ExpectReused(r);
  EXPECT_GE(r.retries["content"], 1u);
}

}  // namespace
}  // namespace ferry

namespace ferry {
namespace {

using test::FaultRule;
using test::RandomBytes;

// Packs (formats/manifest "Packs") over HTTP: a node that needs some of a
// pack's files asks for their ranges only; a server that ignores Range
// answers with the whole pack, which is refused as data and fetched whole.
class SyncPackHttpTest : public SyncDeltaHttpTest {
 protected:
  // p0..p7 of 100,000 bytes (one pack with small.txt) and big.tfrecord.
  void PublishPacked() {
    for (int i = 0; i < 8; ++i)
      test::WriteFile(env_, dir_.Join("src/p" + std::to_string(i)),
                      RandomBytes(100000, 40 + i));
    Publish(V1());
  }
  // A sync of p3 and p6 only.
  Result<SyncReport> TrySyncSome() {
    SyncOptions o;
    o.remote = proxy_->url() + "/" + prefix_;
    o.ref = id_;
    o.dest = dir_.Join("dest");
    o.cache_dir = dir_.Join("cache");
    o.selection.filters = {{false, "*"}, {true, "p3"}, {true, "p6"}};
    return ferry::Sync(o, env_);
  }
  SyncReport SyncSome() {
    auto r = TrySyncSome();
    EXPECT_OK(r.status());
    return r.ok() ? *r : SyncReport{};
  }
  std::string PackPath() {
    auto files = ListFilesRecursive(env_, bucket_ + "/.ferry/packs");
    EXPECT_TRUE(files.ok() && files->size() == 1u);
    return files.ok() && !files->empty() ? ".ferry/packs/" + (*files)[0] : "";
  }
  void ExpectSome(const SyncReport& r) {
    EXPECT_EQ(r.objects_fetched, 2u);
    EXPECT_TRUE(r.failures.empty());
    for (const char* p : {"p3", "p6"})
      EXPECT_TRUE(test::ReadFile(env_, dir_.Join(std::string("dest/") + p)) ==
                  test::ReadFile(env_, dir_.Join(std::string("src/") + p)))
          << p;
    EXPECT_FALSE(env_->FileExists(dir_.Join("dest/p2")));
    EXPECT_TRUE(Partial().empty()) << Partial()[0];
  }
};

TEST_F(SyncPackHttpTest, SomeFilesOfAPackComeAsTheirRangesOnly) {
  PublishPacked();
  SyncReport r = SyncSome();
  ExpectSome(r);
  auto seen = Seen(PackPath());
  EXPECT_EQ(seen.requests, 1);                // both ranges in one GET
  EXPECT_LT(seen.bytes_sent, 200000 + 1000);  // with multipart framing
  EXPECT_EQ(r.bytes_fetched, 200000u);
}

TEST_F(SyncPackHttpTest, RangeIgnoredSendsThePackWhole) {
  PublishPacked();
  ASSERT_TRUE(proxy_->Add(FaultRule::IgnoreRange().RangeOnly().Times(0)).ok());
  SyncReport r = SyncSome();
  ExpectSome(r);
  EXPECT_LE(Seen(PackPath()).requests, 3);
}

// A pack shorter than the manifest's pack_size (here cut short in the
// bucket): the ranges asked are past its end, and nginx's 416 gives its
// size; that is not the pack the manifest names, so the files fail as
// corrupt (exit 3) at once. It was taken for a pack that changed meanwhile:
// restarted until the retries ran out, then failed as unavailable (exit 4).
TEST_F(SyncPackHttpTest, APackShorterThanTheManifestSaysIsCorrupt) {
  PublishPacked();
  ASSERT_EQ(::truncate((bucket_ + "/" + PackPath()).c_str(), 250000), 0);
  auto r = TrySyncSome();
  ASSERT_OK(r.status());
  ASSERT_EQ(r->failures.size(), 2u);
  for (const auto& [path, status] : r->failures) {
    EXPECT_TRUE(status.IsCorruption()) << path << ": " << status.ToString();
    EXPECT_NE(status.ToString().find("the manifest says"), std::string::npos)
        << status.ToString();
  }
  EXPECT_LE(Seen(PackPath()).requests, 2);
  EXPECT_FALSE(env_->FileExists(dir_.Join("dest/p3")));
}

}  // namespace
}  // namespace ferry
