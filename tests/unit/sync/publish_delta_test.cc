// Publish's signatures and deltas (docs/delta.md) on the file backend: each
// object of 1 MiB or more gets its rdiff signature, a changed path a zstd
// delta from the parent's object that patches back to the new bytes, a
// fully changed one none; a missing parent signature costs only the delta;
// gc keeps signatures and deltas exactly while their objects are kept.
#include <gtest/gtest.h>
#include <zstd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include "ferry/backend_wrapper.h"
#include "ferry/delta.h"
#include "ferry/publish.h"
#include "formats/delta/rdiff_delta.h"
#include "formats/delta/rdiff_format.h"
#include "remote/file_backend.h"
#include "sync/deltas.h"
#include "sync/layout.h"
#include "sync/versions.h"
#include "testutil/test_util.h"

namespace ferry {
namespace {

// CollectGarbage's report, or its error.
Result<GcReport> Gc(Backend* backend, const GcOptions& options) {
  GcReport report;
  FERRY_RETURN_IF_ERROR(
      CollectGarbage(backend, options, Env::Default(), &report));
  return report;
}

using test::RandomBytes;

std::string Unzstd(const std::string& in) {
  ZSTD_DStream* d = ZSTD_createDStream();
  std::string out;
  std::vector<char> buf(1 << 16);
  ZSTD_inBuffer ib{in.data(), in.size(), 0};
  while (ib.pos < ib.size) {
    ZSTD_outBuffer ob{buf.data(), buf.size(), 0};
    size_t r = ZSTD_decompressStream(d, &ob, &ib);
    if (ZSTD_isError(r)) {
      out = "<zstd error>";
      break;
    }
    out.append(buf.data(), ob.pos);
  }
  ZSTD_freeDStream(d);
  return out;
}

// Counts the times one file is opened for reading.
class OpensOf : public EnvWrapper {
 public:
  OpensOf(Env* target, std::string path)
      : EnvWrapper(target), path_(std::move(path)) {}
  Result<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& path) override {
    if (path == path_) ++opens;
    return EnvWrapper::NewSequentialFile(path);
  }
  std::atomic<int> opens{0};

 private:
  std::string path_;
};

class PublishDeltaTest : public ::testing::Test {
 protected:
  PublishDeltaTest()
      : backend_(remote::NewFileBackend(dir_.Join("bucket"), "bucket",
                                        Env::Default())) {
    opt_.cache_dir = dir_.Join("cache");
    opt_.note = [this](std::string_view n) { notes_.emplace_back(n); };
  }
  std::string Src(const std::string& rel) { return dir_.Join("src/" + rel); }
  void Write(const std::string& rel, const std::string& data) {
    ASSERT_OK(Env::Default()->CreateDirs(DirName(Src(rel))));
    test::WriteFile(Env::Default(), Src(rel), data);
  }
  PublishReport Publish(Env* env = Env::Default()) {
    auto r = ferry::Publish(dir_.Join("src"), backend_.get(), opt_, env);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : PublishReport{};
  }
  std::map<std::string, manifest::File> Files(const Hash128& id) {
    std::map<std::string, manifest::File> files;
    auto bytes = sync::FetchManifest(backend_.get(), id);
    EXPECT_TRUE(bytes.ok());
    VersionInfo info;
    EXPECT_OK(sync::ReadManifest(*bytes, id, "m", &info,
                                 [&](const manifest::File& f) {
                                   files[f.path()] = f;
                                   return Status::OK();
                                 }));
    return files;
  }
  std::string Get(const std::string& key) {
    return test::ReadFile(Env::Default(), dir_.Join("bucket/" + key));
  }
  bool Has(const std::string& key) {
    return Env::Default()->FileExists(dir_.Join("bucket/" + key));
  }

  test::ScratchDir dir_;
  std::unique_ptr<Backend> backend_;
  PublishOptions opt_;
  std::vector<std::string> notes_;
};

// v1 and an edited v2 of a 2 MiB shard: most bytes shared, shifted.
std::string V1() { return RandomBytes(2 << 20, 21); }
std::string V2() {
  std::string s = V1();
  s.replace(100000, 500, RandomBytes(500, 22));
  s.insert(700000, RandomBytes(3000, 23));
  s.erase(1500000, 9000);
  return s;
}

TEST_F(PublishDeltaTest, LargeObjectsGetTheirRdiffSignature) {
  Write("big.tfrecord", V1());
  Write("small.txt", "small");
  PublishReport r = Publish();
  EXPECT_EQ(r.signatures_uploaded, 1u);
  auto files = Files(r.id);
  const Hash128 big = HashBytes(V1());
  EXPECT_EQ(files["big.tfrecord"].sig_block_len(),
            delta::format::RecommendedBlockLen(2 << 20));
  EXPECT_EQ(files["small.txt"].sig_block_len(), 0u);
  // librsync's minimum strong sum for 2 MiB (`rdiff -S -1`: 7).
  EXPECT_EQ(files["big.tfrecord"].sig_strong_len(), 7u);
  EXPECT_EQ(files["small.txt"].sig_strong_len(), 0u);
  std::string want;
  ASSERT_OK(delta::SignFile(Env::Default(), Src("big.tfrecord"),
                            [&](std::string_view d) {
                              want.append(d);
                              return Status::OK();
                            }));
  EXPECT_TRUE(Get(sync::SigKey(big)) == want);
  EXPECT_EQ(want.size(), 12u + 1490 * 11);  // ceil(2 MiB / 1408) blocks
  EXPECT_FALSE(Has(sync::SigKey(HashBytes("small"))));
  // Republishing the same tree is no new version and makes nothing.
  PublishReport again = Publish();
  EXPECT_TRUE(again.unchanged);
  EXPECT_EQ(again.signatures_uploaded, 0u);
  // No temporaries left in the cache.
  auto left = ListFilesRecursive(Env::Default(), dir_.Join("cache/publish"));
  ASSERT_TRUE(left.ok());
  for (const std::string& f : *left)
    EXPECT_EQ(f.find("tmp-"), std::string::npos) << f;
}

std::string SignatureOf(const std::string& path) {
  std::string sig;
  EXPECT_OK(delta::SignFile(Env::Default(), path, [&](std::string_view d) {
    sig.append(d);
    return Status::OK();
  }));
  return sig;
}

TEST_F(PublishDeltaTest, ANewObjectIsReadOnceForItsHashAndItsSignature) {
  Write("big.tfrecord", V1());
  OpensOf env(Env::Default(), Src("big.tfrecord"));
  PublishReport v1 = Publish(&env);
  EXPECT_EQ(v1.signatures_uploaded, 1u);
  EXPECT_EQ(env.opens.load(), 1);
  EXPECT_TRUE(Get(sync::SigKey(HashBytes(V1()))) ==
              SignatureOf(Src("big.tfrecord")));
  // A changed path: one read for its hash and signature, one for its delta.
  Write("big.tfrecord", V2());
  env.opens = 0;
  PublishReport v2 = Publish(&env);
  EXPECT_EQ(v2.signatures_uploaded, 1u);
  EXPECT_EQ(v2.deltas_uploaded, 1u);
  EXPECT_EQ(env.opens.load(), 2);
  EXPECT_TRUE(Get(sync::SigKey(HashBytes(V2()))) ==
              SignatureOf(Src("big.tfrecord")));
}

TEST_F(PublishDeltaTest, AFileReadAgainWithItsParentsSizeIsSignedOnlyIfNew) {
  Write("big.tfrecord", V1());
  Publish();
  // A cold stat cache: the file is read for its hash, but the parent's
  // signature of the same path and size is not made again.
  opt_.cache_dir = dir_.Join("cache2");
  OpensOf env(Env::Default(), Src("big.tfrecord"));
  PublishReport again = Publish(&env);
  EXPECT_TRUE(again.unchanged);
  EXPECT_EQ(again.files_read, 1u);
  EXPECT_EQ(env.opens.load(), 1);
  auto left = Env::Default()->GetChildren(dir_.Join("cache2/publish"));
  ASSERT_TRUE(left.ok());
  for (const DirEntry& e : *left)
    EXPECT_EQ(e.name.find("tmp-"), std::string::npos) << e.name;
  // Other bytes of the same size: read again for the signature, then for
  // the delta.
  std::string v2 = V1();
  v2.replace(1000, 4000, RandomBytes(4000, 25));
  Write("big.tfrecord", v2);
  env.opens = 0;
  PublishReport changed = Publish(&env);
  EXPECT_EQ(changed.signatures_uploaded, 1u);
  EXPECT_EQ(changed.deltas_uploaded, 1u);
  EXPECT_EQ(env.opens.load(), 3);
  EXPECT_TRUE(Get(sync::SigKey(HashBytes(v2))) ==
              SignatureOf(Src("big.tfrecord")));
}

TEST_F(PublishDeltaTest, AFileTheStatCacheKnowsIsReadForItsSignature) {
  Write("big.tfrecord", V1());
  Write("small.txt", "small");
  std::this_thread::sleep_for(std::chrono::milliseconds(250));  // cacheable
  Publish();
  // v2 leaves big.tfrecord out (with a stat cache of its own); v3 takes it
  // back: its hash comes from the first stat cache, but v3's parent lists
  // no signature of it.
  opt_.take = [](std::string_view path) { return path != "big.tfrecord"; };
  opt_.cache_dir = dir_.Join("cache2");
  Publish();
  opt_.take = nullptr;
  opt_.cache_dir = dir_.Join("cache");
  ASSERT_OK(Env::Default()->RemoveFile(
      dir_.Join("bucket/" + sync::SigKey(HashBytes(V1())))));
  OpensOf env(Env::Default(), Src("big.tfrecord"));
  PublishReport v3 = Publish(&env);
  EXPECT_EQ(v3.files_read, 0u);
  EXPECT_EQ(v3.signatures_uploaded, 1u);
  EXPECT_EQ(env.opens.load(), 1);
  EXPECT_TRUE(Get(sync::SigKey(HashBytes(V1()))) ==
              SignatureOf(Src("big.tfrecord")));
}

TEST_F(PublishDeltaTest, AChangedPathGetsADeltaThatPatchesToTheNewBytes) {
  Write("big.tfrecord", V1());
  PublishReport v1 = Publish();
  Write("big.tfrecord", V2());
  PublishReport v2 = Publish();
  EXPECT_EQ(v2.deltas_uploaded, 1u);
  EXPECT_EQ(v2.signatures_uploaded, 1u);
  const Hash128 a = HashBytes(V1()), b = HashBytes(V2());
  std::string stored = Get(sync::DeltaKey(a, b));
  EXPECT_EQ(stored.size(), v2.delta_bytes);
  EXPECT_LT(stored.size(), 60000u);  // ~3.5 KB novel + the blocks touched
  auto f = Files(v2.id)["big.tfrecord"];
  ASSERT_EQ(f.deltas_size(), 1);
  EXPECT_EQ(f.deltas(0).from_xxh3_128(), manifest::HashToBytes(a));
  EXPECT_EQ(f.deltas(0).size(), stored.size());
  // Applied to v1's object, it gives v2's bytes.
  auto basis = Env::Default()->NewRandomAccessFile(
      dir_.Join("bucket/" + sync::ObjectKey(a)));
  ASSERT_OK(basis.status());
  std::string out;
  auto p = delta::Patcher::Create(basis->get(), V2().size(),
                                  [&](std::string_view d) {
                                    out.append(d);
                                    return Status::OK();
                                  });
  ASSERT_OK(p.status());
  ASSERT_OK((*p)->Update(Unzstd(stored)));
  ASSERT_OK((*p)->Finish().status());
  EXPECT_TRUE(out == V2());
  // Unchanged paths keep the deltas that made them in later versions.
  Write("other.txt", "more");
  PublishReport v3 = Publish();
  EXPECT_EQ(v3.deltas_uploaded, 0u);
  EXPECT_EQ(Files(v3.id)["big.tfrecord"].deltas_size(), 1);
  (void)v1;
}

// v1 with one 300-byte record inserted inside a block (2 MiB: 1408-byte
// blocks; the insert at 1,000,000 lies in block 710).
std::string Record() { return RandomBytes(300, 41); }
std::string V1WithRecord() {
  std::string s = V1();
  s.insert(1000000, Record());
  return s;
}

// The stored delta's commands (after zstd -d); it must patch v1 into `want`.
delta::format::DeltaReader StoredDelta(const std::string& stored,
                                       const std::string& basis_path,
                                       const std::string& want) {
  delta::format::DeltaReader reader;
  const std::string raw = Unzstd(stored);
  EXPECT_OK(reader.Update(raw));
  EXPECT_OK(reader.Finish());
  auto basis = Env::Default()->NewRandomAccessFile(basis_path);
  EXPECT_OK(basis.status());
  std::string out;
  auto p = delta::Patcher::Create(basis->get(), want.size(),
                                  [&](std::string_view d) {
                                    out.append(d);
                                    return Status::OK();
                                  });
  EXPECT_OK(p.status());
  EXPECT_OK((*p)->Update(raw));
  EXPECT_OK((*p)->Finish().status());
  EXPECT_TRUE(out == want);
  return reader;
}

TEST_F(PublishDeltaTest, AOneRecordInsertCostsItsBytesNotWholeBlocks) {
  Write("big.tfrecord", V1());
  Publish();
  Write("big.tfrecord", V1WithRecord());
  PublishReport r = Publish();
  ASSERT_EQ(r.deltas_uploaded, 1u);
  EXPECT_EQ(r.deltas_refined, 1u);
  const Hash128 a = HashBytes(V1());
  auto delta =
      StoredDelta(Get(sync::DeltaKey(a, HashBytes(V1WithRecord()))),
                  dir_.Join("bucket/" + sync::ObjectKey(a)), V1WithRecord());
  // librsync alone sends the block around the insert too (1,708 bytes).
  EXPECT_EQ(delta.literal_bytes(), Record().size());
  EXPECT_EQ(r.delta_literal_bytes_saved, 1408u);
  // The one block next to the literal on both sides, in one ranged GET.
  EXPECT_EQ(r.delta_refine_requests, 1u);
  EXPECT_EQ(r.delta_refine_bytes_read, 1408u);
  EXPECT_TRUE(notes_.empty());
}

// Fails every read of an object (signatures and the rest pass).
class ObjectReadsFail : public BackendWrapper {
 public:
  using BackendWrapper::BackendWrapper;
  Status Read(std::string_view key, const ByteRange& range,
              const ReadOptions& options, ByteSink* sink) override {
    if (key.substr(0, sync::kObjectsDir.size()) == sync::kObjectsDir)
      return Status::IOError(std::string(key), "injected");
    return BackendWrapper::Read(key, range, options, sink);
  }
};

TEST_F(PublishDeltaTest, AFailedReadOfTheParentObjectKeepsTheDeltaUnrefined) {
  Write("big.tfrecord", V1());
  Publish();
  Write("big.tfrecord", V1WithRecord());
  ObjectReadsFail failing(backend_.get());
  auto r = ferry::Publish(dir_.Join("src"), &failing, opt_, Env::Default());
  ASSERT_OK(r.status());
  ASSERT_EQ(r->deltas_uploaded, 1u);
  EXPECT_EQ(r->deltas_refined, 0u);
  const Hash128 a = HashBytes(V1());
  auto delta =
      StoredDelta(Get(sync::DeltaKey(a, HashBytes(V1WithRecord()))),
                  dir_.Join("bucket/" + sync::ObjectKey(a)), V1WithRecord());
  EXPECT_EQ(delta.literal_bytes(), Record().size() + 1408);
  ASSERT_EQ(notes_.size(), 1u);
  EXPECT_NE(notes_[0].find("not refined"), std::string::npos) << notes_[0];
  EXPECT_NE(notes_[0].find("injected"), std::string::npos) << notes_[0];
}

TEST_F(PublishDeltaTest, AFullyChangedFileGetsNoDelta) {
  Write("big.tfrecord", V1());
  Publish();
  Write("big.tfrecord", RandomBytes(2 << 20, 99));
  PublishReport v2 = Publish();
  EXPECT_EQ(v2.deltas_uploaded, 0u);
  EXPECT_EQ(v2.deltas_dropped, 1u);
  EXPECT_EQ(Files(v2.id)["big.tfrecord"].deltas_size(), 0);
  EXPECT_FALSE(Has(
      sync::DeltaKey(HashBytes(V1()), HashBytes(RandomBytes(2 << 20, 99)))));
}

TEST_F(PublishDeltaTest, AMissingOrDamagedParentSignatureCostsOnlyTheDelta) {
  Write("big.tfrecord", V1());
  Publish();
  const std::string sig = dir_.Join("bucket/" + sync::SigKey(HashBytes(V1())));
  test::WriteFile(Env::Default(), sig,
                  std::string("rs\x01\x36\0\0\x01\0\0\0\0\x10", 12));
  Write("big.tfrecord", V2());
  PublishReport v2 = Publish();
  EXPECT_EQ(v2.deltas_uploaded, 0u);
  ASSERT_EQ(notes_.size(), 1u);
  EXPECT_NE(notes_[0].find("MD4"), std::string::npos) << notes_[0];
  ASSERT_OK(Env::Default()->RemoveFile(sig));
  Write("big.tfrecord", V1() + "x");
  notes_.clear();
  PublishReport v3 = Publish();
  EXPECT_EQ(v3.deltas_uploaded, 1u);  // from v2, whose signature is there
  Write("big.tfrecord", V2());
  ASSERT_OK(Env::Default()->RemoveFile(
      dir_.Join("bucket/" + sync::SigKey(HashBytes(V1() + "x")))));
  PublishReport v4 = Publish();
  EXPECT_EQ(v4.deltas_uploaded, 0u);
  EXPECT_EQ(notes_.size(), 1u);
}

TEST_F(PublishDeltaTest, GcKeepsSignaturesAndDeltasWhileTheirObjectsAreKept) {
  const std::string v3 = V2() + RandomBytes(1000, 24);
  Write("big.tfrecord", V1());
  Publish();
  Write("big.tfrecord", V2());
  Publish();
  Write("big.tfrecord", v3);
  Publish();
  const Hash128 a = HashBytes(V1()), b = HashBytes(V2()), c = HashBytes(v3);
  ASSERT_TRUE(Has(sync::DeltaKey(a, b)) && Has(sync::DeltaKey(b, c)));
  GcOptions g;
  g.grace_s = 0;
  g.keep = 2;  // v2 and v3: a's signature and the a->b delta go
  auto r = Gc(backend_.get(), g);
  ASSERT_OK(r.status());
  EXPECT_EQ(r->sigs_deleted, 1u);
  EXPECT_EQ(r->deltas_deleted, 1u);
  EXPECT_FALSE(Has(sync::SigKey(a)));
  EXPECT_FALSE(Has(sync::DeltaKey(a, b)));
  EXPECT_TRUE(Has(sync::SigKey(b)) && Has(sync::SigKey(c)));
  EXPECT_TRUE(Has(sync::DeltaKey(b, c)));
  g.keep = 1;
  r = Gc(backend_.get(), g);
  ASSERT_OK(r.status());
  EXPECT_FALSE(Has(sync::SigKey(b)) || Has(sync::DeltaKey(b, c)));
  EXPECT_TRUE(Has(sync::SigKey(c)));
  // Keys that only look like ferry's are never touched.
  test::WriteFile(Env::Default(), dir_.Join("bucket/.ferry/deltas/notes.txt"),
                  "x");
  r = Gc(backend_.get(), g);
  ASSERT_OK(r.status());
  EXPECT_TRUE(Has(".ferry/deltas/notes.txt"));
}

// An object the parent already signed keeps the parent's signature (named by
// the object's hash, not made again), so its entry keeps the parent's
// sig_strong_len: 0 (32-byte strong sums) for a signature published before
// the field, whatever path the object is at now.
TEST(SignatureStrongLenTest, AnObjectTheParentSignedKeepsItsStrongLen) {
  const std::string bytes = RandomBytes(2 << 20, 24);
  manifest::File old;
  old.set_path("old.tfrecord");
  old.set_size(bytes.size());
  old.set_xxh3_128(manifest::HashToBytes(HashBytes(bytes)));
  old.set_sig_block_len(sync::SigBlockLen(bytes.size()));  // strong_len 0
  sync::LocalFile moved;
  moved.path = "moved.tfrecord";
  moved.info.size = bytes.size();
  moved.entry.set_path(moved.path);
  moved.entry.set_size(bytes.size());
  moved.entry.set_xxh3_128(old.xxh3_128());
  std::vector<sync::LocalFile> files = {moved};
  sync::CarryDeltaFields(&files, {old});
  EXPECT_EQ(files[0].entry.sig_strong_len(), 7u);  // as if signed now
  sync::DeltaWork work;
  ASSERT_OK(sync::MakeSignaturesAndDeltas(nullptr, Env::Default(), "/nowhere",
                                          &files, {old}, nullptr, &work));
  EXPECT_EQ(work.signatures, 0u);
  EXPECT_EQ(files[0].entry.sig_strong_len(), 0u);
}

TEST(DeltaKeysTest, ParseWhatTheyMake) {
  Hash128 a = HashBytes("a"), b = HashBytes("b"), x, y;
  EXPECT_TRUE(sync::ParseSigKey(sync::SigKey(a), &x));
  EXPECT_EQ(x, a);
  EXPECT_TRUE(sync::ParseDeltaKey(sync::DeltaKey(a, b), &x, &y));
  EXPECT_EQ(x, a);
  EXPECT_EQ(y, b);
  EXPECT_FALSE(sync::ParseSigKey(".ferry/sigs/" + a.ToHex() + "x", &x));
  EXPECT_FALSE(sync::ParseDeltaKey(".ferry/deltas/" + a.ToHex(), &x, &y));
  EXPECT_FALSE(sync::ParseSigKey(sync::ObjectKey(a), &x));
}

}  // namespace
}  // namespace ferry
