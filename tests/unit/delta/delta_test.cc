// lib/delta: signature -> delta -> patch round trips, streaming in pieces,
// and every kind of damaged or malicious signature and delta refused cleanly.
#include "ferry/delta.h"

#include <gtest/gtest.h>

#include <string>

#include "formats/delta/rdiff_format.h"
#include "testutil/delta_bytes.h"
#include "testutil/test_util.h"

namespace ferry::delta {
namespace {

using test::RandomBytes;

// Feeds `data` to `update` in pieces of `piece` bytes (0: whole).
template <typename F>
Status FeedPieces(std::string_view data, size_t piece, F update) {
  if (piece == 0) return update(data);
  for (size_t i = 0; i < data.size(); i += piece)
    FERRY_RETURN_IF_ERROR(update(data.substr(i, piece)));
  return Status::OK();
}

ByteSink AppendTo(std::string* out) {
  return [out](std::string_view d) {
    out->append(d);
    return Status::OK();
  };
}

Result<std::string> Sign(std::string_view data, size_t piece = 0) {
  std::string out;
  FERRY_ASSIGN_OR_RETURN(auto b,
                         SignatureBuilder::Create(data.size(), AppendTo(&out)));
  FERRY_RETURN_IF_ERROR(
      FeedPieces(data, piece, [&](auto d) { return b->Update(d); }));
  FERRY_RETURN_IF_ERROR(b->Finish());
  return out;
}

Result<std::unique_ptr<Signature>> Load(std::string_view sig,
                                        int64_t file_size = -1,
                                        size_t piece = 0) {
  SignatureLimits limits;
  limits.file_size = file_size;
  SignatureLoader loader(limits);
  FERRY_RETURN_IF_ERROR(
      FeedPieces(sig, piece, [&](auto d) { return loader.Update(d); }));
  return loader.Finish();
}

Result<std::string> MakeDelta(std::string_view sig_bytes,
                              std::string_view new_bytes, size_t piece = 0) {
  FERRY_ASSIGN_OR_RETURN(auto sig, Load(sig_bytes));
  std::string out;
  FERRY_ASSIGN_OR_RETURN(auto b,
                         DeltaBuilder::Create(sig.get(), AppendTo(&out)));
  FERRY_RETURN_IF_ERROR(
      FeedPieces(new_bytes, piece, [&](auto d) { return b->Update(d); }));
  FERRY_RETURN_IF_ERROR(b->Finish());
  return out;
}

class DeltaTest : public ::testing::Test {
 protected:
  // Applies delta to basis (kept as a file of an in-memory Env).
  Result<std::string> Patch(const std::string& basis, std::string_view delta,
                            uint64_t max_output = 1 << 30, size_t piece = 0) {
    test::WriteFile(env_.get(), "/basis", basis);
    FERRY_ASSIGN_OR_RETURN(auto file, env_->NewRandomAccessFile("/basis"));
    std::string out;
    FERRY_ASSIGN_OR_RETURN(
        auto p, Patcher::Create(file.get(), max_output, AppendTo(&out)));
    FERRY_RETURN_IF_ERROR(
        FeedPieces(delta, piece, [&](auto d) { return p->Update(d); }));
    FERRY_ASSIGN_OR_RETURN(uint64_t n, p->Finish());
    if (n != out.size()) return Status::InvalidArgument("count differs");
    return out;
  }
  std::unique_ptr<Env> env_ = NewMemEnv();
};

// An old file and a new one that shares most of its bytes at shifted
// offsets: some bytes replaced, some inserted, some removed.
std::string Edited(const std::string& old) {
  std::string s = old;
  s.replace(1000, 300, RandomBytes(300, 7));
  s.insert(200000, RandomBytes(5000, 8));
  s.erase(600000, 12345);
  s += RandomBytes(777, 9);
  return s;
}

using test::Be;
using test::Copy8;
using test::kDeltaMagic;
using test::Literal;
const std::string& kEnd = test::kDeltaEnd;

TEST_F(DeltaTest, RoundTripReproducesTheNewFileWithASmallDelta) {
  std::string old = RandomBytes(1 << 20, 1);
  std::string neu = Edited(old);
  auto sig = Sign(old);
  ASSERT_OK(sig.status());
  auto d = MakeDelta(*sig, neu);
  ASSERT_OK(d.status());
  EXPECT_LT(d->size(), 40000u);  // ~18 KB novel bytes + the blocks they touch
  auto out = Patch(old, *d);
  ASSERT_OK(out.status());
  EXPECT_TRUE(*out == neu);
}

TEST_F(DeltaTest, PiecesOfAnySizeGiveTheSameBytes) {
  std::string old = RandomBytes(300000, 2);
  std::string neu = Edited(old + RandomBytes(400000, 3));
  auto sig = Sign(old);
  ASSERT_OK(sig.status());
  auto d = MakeDelta(*sig, neu);
  ASSERT_OK(d.status());
  for (size_t piece : {1, 7, 4096, 100003}) {
    SCOPED_TRACE(piece);
    auto sig2 = Sign(old, piece);
    ASSERT_OK(sig2.status());
    EXPECT_TRUE(*sig2 == *sig);
    auto d2 = MakeDelta(*sig, neu, piece);
    ASSERT_OK(d2.status());
    EXPECT_TRUE(*d2 == *d);
    auto out = Patch(old, *d, 1 << 30, piece);
    ASSERT_OK(out.status());
    EXPECT_TRUE(*out == neu);
    ASSERT_OK(Load(*sig, old.size(), piece).status());
  }
}

TEST_F(DeltaTest, EmptyFilesBothWays) {
  std::string some = RandomBytes(5000, 4);
  auto empty_sig = Sign("");
  ASSERT_OK(empty_sig.status());
  EXPECT_EQ(empty_sig->size(), 12u);  // header only, no blocks
  auto d = MakeDelta(*empty_sig, some);
  ASSERT_OK(d.status());
  auto out = Patch("", *d);
  ASSERT_OK(out.status());
  EXPECT_TRUE(*out == some);
  auto d2 = MakeDelta(*Sign(some), "");
  ASSERT_OK(d2.status());
  auto out2 = Patch(some, *d2);
  ASSERT_OK(out2.status());
  EXPECT_EQ(*out2, "");
}

TEST_F(DeltaTest, ParamsFollowLibrsyncsRuleForTheSize) {
  EXPECT_EQ(SignatureParamsFor(0).block_len, 256u);
  EXPECT_EQ(SignatureParamsFor(65536).block_len, 256u);
  EXPECT_EQ(SignatureParamsFor(uint64_t{256} << 20).block_len, 16384u);
  EXPECT_EQ(SignatureParamsFor(uint64_t{10} << 30).block_len, 103552u);
  EXPECT_EQ(SignatureParamsFor(uint64_t{1} << 50).block_len, 1u << 25);
  // Strong sums: librsync's minimum for the size (`rdiff -S -1`: 5 for an
  // empty file, 6 for 1000 bytes, 7 for 1 to 128 MiB, 8 for 256 MiB, 12 at
  // 2^50).
  EXPECT_EQ(SignatureParamsFor(0).strong_len, 5u);
  EXPECT_EQ(SignatureParamsFor(1000).strong_len, 6u);
  EXPECT_EQ(SignatureParamsFor(uint64_t{1} << 20).strong_len, 7u);
  EXPECT_EQ(SignatureParamsFor(uint64_t{16} << 20).strong_len, 7u);
  EXPECT_EQ(SignatureParamsFor(uint64_t{128} << 20).strong_len, 7u);
  EXPECT_EQ(SignatureParamsFor(uint64_t{256} << 20).strong_len, 8u);
  EXPECT_EQ(SignatureParamsFor(uint64_t{1} << 50).strong_len, 12u);
  EXPECT_EQ(SignatureParamsFor(1000).magic, 0x72730147u);
  auto sig = Sign(RandomBytes(100000, 5));
  ASSERT_OK(sig.status());
  auto loaded = Load(*sig, 100000);
  ASSERT_OK(loaded.status());
  EXPECT_EQ((*loaded)->params().block_len, 256u);
  EXPECT_EQ((*loaded)->blocks(), 391u);  // ceil(100000 / 256)
  EXPECT_EQ((*loaded)->params().strong_len, 6u);
  EXPECT_EQ(sig->size(), 12u + 391 * 10);
}

// The manifest checks File.sig_block_len with ferry's own copy of the rule;
// it must agree with librsync's.
TEST_F(DeltaTest, FormatsBlockLengthRuleMatchesLibrsyncs) {
  std::vector<uint64_t> sizes = {0,
                                 1,
                                 65535,
                                 65536,
                                 65537,
                                 1 << 20,
                                 (uint64_t{1} << 50) - 1,
                                 uint64_t{1} << 50};
  for (uint64_t r = 16383; r <= 16385; ++r)
    for (int64_t d : {-1, 0, 1}) sizes.push_back(r * r + d);
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 2000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    sizes.push_back(x >> (14 + i % 40));
  }
  for (uint64_t size : sizes)
    ASSERT_EQ(format::RecommendedBlockLen(size),
              SignatureParamsFor(size).block_len)
        << size;
}

TEST_F(DeltaTest, BuilderRefusesBytesOtherThanTheDeclaredSize) {
  std::string out;
  auto b = SignatureBuilder::Create(10, AppendTo(&out));
  ASSERT_OK(b.status());
  ASSERT_OK((*b)->Update("123456789"));
  Status s = (*b)->Finish();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
}

// --- signatures: each refusal is Corruption, with a message that says why.

struct BadSig {
  const char* name;
  std::string bytes;
  int64_t file_size;
  const char* why;
};

std::string Header(uint32_t magic, uint32_t block, uint32_t strong) {
  return Be(magic, 4) + Be(block, 4) + Be(strong, 4);
}

TEST_F(DeltaTest, DamagedSignaturesAreRefused) {
  std::string good = *Sign(RandomBytes(10000, 6));  // 40 blocks of 256
  std::string block(36, 'x');
  // One block of the 6-byte strong sums librsync's minimum gives 10000 bytes.
  std::string block6(10, 'x');
  std::vector<BadSig> cases = {
      {"md4", Header(0x72730136, 256, 16) + block, -1, "MD4"},
      {"rk_md4", Header(0x72730146, 256, 16) + block, -1, "MD4"},
      {"rollsum_blake2", Header(0x72730137, 256, 32) + block, -1, "rollsum"},
      {"delta_magic", kDeltaMagic + Be(256, 4) + Be(32, 4), -1, "delta"},
      {"wrong_magic", Header(0x12345678, 256, 32), -1, "bad magic"},
      {"empty", "", -1, "truncated"},
      {"half_header", good.substr(0, 7), -1, "truncated"},
      {"block_len_0", Header(0x72730147, 0, 32), -1, "block length"},
      {"block_len_huge", Header(0x72730147, 0x7fffffff, 32), -1,
       "block length"},
      {"strong_len_0", Header(0x72730147, 256, 0), -1, "strong sum"},
      {"strong_len_33", Header(0x72730147, 256, 33), -1, "strong sum"},
      {"strong_len_4", Header(0x72730147, 256, 4), -1, "strong sum"},
      {"mid_block", good.substr(0, good.size() - 5), -1, "truncated"},
      {"block_boundary", good.substr(0, good.size() - 10), 10000, "blocks"},
      {"extra_block", good + block6, 10000, "blocks"},
  };
  for (const BadSig& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = Load(c.bytes, c.file_size);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();
    EXPECT_NE(r.status().message().find(c.why), std::string_view::npos)
        << r.status().ToString();
  }
  ASSERT_OK(Load(good, 10000).status());
  // Without the file size a signature cut at a block boundary is a valid
  // signature of a shorter file: the size check is what catches it.
  ASSERT_OK(Load(good.substr(0, good.size() - 10)).status());
}

// Sync knows the strong sum length from the manifest (File.sig_strong_len):
// a signature whose header says another is refused before its blocks.
TEST_F(DeltaTest, SignatureWithAnotherStrongLengthThanExpectedIsRefused) {
  std::string good = *Sign(RandomBytes(10000, 6));  // strong sums of 6
  SignatureLimits limits;
  limits.file_size = 10000;
  limits.strong_len = 32;
  SignatureLoader loader(limits);
  Status s = loader.Update(good);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("strong sum length 6 where its manifest says 32"),
            std::string_view::npos)
      << s.ToString();
  EXPECT_FALSE(loader.Finish().ok());
  limits.strong_len = 6;
  SignatureLoader right(limits);
  ASSERT_OK(right.Update(good));
  ASSERT_OK(right.Finish().status());
}

TEST_F(DeltaTest, SignatureAboveItsLimitIsRefusedAsItArrives) {
  std::string good = *Sign(RandomBytes(100000, 6));
  SignatureLimits limits;
  limits.max_bytes = 1000;
  SignatureLoader loader(limits);
  Status s = loader.Update(good);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_FALSE(loader.Finish().ok());
}

// --- deltas: malicious command streams.

struct BadDelta {
  const char* name;
  std::string bytes;
  const char* why;
};

TEST_F(DeltaTest, MaliciousDeltasAreRefused) {
  const std::string basis = RandomBytes(1000, 10);
  std::vector<BadDelta> cases = {
      {"copy_past_end", kDeltaMagic + Copy8(900, 200) + kEnd, "past the end"},
      {"copy_starts_past_end", kDeltaMagic + Copy8(5000, 10) + kEnd,
       "past the end"},
      {"copy_huge_len", kDeltaMagic + Copy8(0, uint64_t{1} << 62) + kEnd,
       "past the end"},
      {"copy_len_wraps", kDeltaMagic + Copy8(10, ~uint64_t{0} - 5) + kEnd,
       "invalid"},  // a negative length to librsync
      {"copy_negative_pos", kDeltaMagic + Copy8(~uint64_t{0}, 10) + kEnd,
       "invalid"},
      {"copy_zero_len", kDeltaMagic + Copy8(10, 0) + kEnd, "invalid"},
      {"literal_overrun", kDeltaMagic + "\x41" + Be(100, 1) + "short",
       "truncated"},
      {"literal_huge", kDeltaMagic + "\x44" + Be(0x7fffffffffffffff, 8) + "x",
       "truncated"},
      {"literal_zero", kDeltaMagic + "\x41" + Be(0, 1) + kEnd, "invalid"},
      {"reserved_command", kDeltaMagic + "\x55" + kEnd, "invalid"},
      {"wrong_magic", "rs\x01\x47" + kEnd, "magic"},
      {"signature_as_delta", *Sign(basis), "magic"},
      {"no_end", kDeltaMagic + Literal("abc"), "truncated"},
      {"cut_in_copy_args", kDeltaMagic + Copy8(0, 10).substr(0, 9),
       "truncated"},
      {"bytes_after_end", kDeltaMagic + Literal("abc") + kEnd + "junk",
       "after its end"},
      {"empty", "", "truncated"},
      {"magic_only", kDeltaMagic, "truncated"},
      {"output_over_cap",
       kDeltaMagic + Copy8(0, 1000) + Copy8(0, 1000) + Copy8(0, 1000) + kEnd,
       "more than"},
  };
  for (const BadDelta& c : cases) {
    SCOPED_TRACE(c.name);
    for (size_t piece : {0, 1}) {
      auto r = Patch(basis, c.bytes, 2500, piece);
      ASSERT_FALSE(r.ok());
      EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();
      EXPECT_NE(r.status().message().find(c.why), std::string_view::npos)
          << r.status().ToString();
    }
  }
  // The good neighbours of those cases pass.
  auto ok =
      Patch(basis, kDeltaMagic + Copy8(900, 100) + Literal("abc") + kEnd, 103);
  ASSERT_OK(ok.status());
  EXPECT_TRUE(*ok == basis.substr(900) + "abc");
}

TEST_F(DeltaTest, ADeltaForAnotherBasisGivesOtherBytesNotACrash) {
  std::string old = RandomBytes(200000, 11);
  std::string neu = Edited(old + RandomBytes(600000, 12));
  std::string other = RandomBytes(200000, 13);
  auto d = MakeDelta(*Sign(old), neu);
  ASSERT_OK(d.status());
  auto out = Patch(other, *d);
  ASSERT_OK(out.status());  // the delta cannot tell: the caller's hash does
  EXPECT_EQ(out->size(), neu.size());
  EXPECT_FALSE(*out == neu);
  // A shorter basis: the COPYs reaching past its end are refused.
  auto short_out = Patch(other.substr(0, 1000), *d);
  EXPECT_TRUE(short_out.status().IsCorruption());
}

TEST_F(DeltaTest, ASinkErrorStopsTheJob) {
  std::string old = RandomBytes(100000, 14);
  auto sig = Load(*Sign(old));
  ASSERT_OK(sig.status());
  int calls = 0;
  auto b = DeltaBuilder::Create(sig->get(), [&](std::string_view) {
    ++calls;
    return Status::IOError("disk full");
  });
  ASSERT_OK(b.status());
  Status s = (*b)->Update(RandomBytes(1 << 20, 15));
  if (s.ok()) s = (*b)->Finish();
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE((*b)->Finish().IsIOError());  // sticky
}

TEST_F(DeltaTest, FilesThroughEnv) {
  std::string old = RandomBytes(500000, 16);
  std::string neu = Edited(old + RandomBytes(300000, 17));
  Env* env = env_.get();
  test::WriteFile(env, "/old", old);
  test::WriteFile(env, "/new", neu);
  std::string sig, d, out;
  ASSERT_OK(SignFile(env, "/old", AppendTo(&sig)));
  test::WriteFile(env, "/sig", sig);
  auto loaded = LoadSignatureFile(env, "/sig", {});
  ASSERT_OK(loaded.status());
  ASSERT_OK(DeltaFile(**loaded, env, "/new", AppendTo(&d)));
  test::WriteFile(env, "/delta", d);
  auto n = PatchFile(env, "/old", "/delta", neu.size(), AppendTo(&out));
  ASSERT_OK(n.status());
  EXPECT_EQ(*n, neu.size());
  EXPECT_TRUE(out == neu);
  // One byte less allowed: refused, naming the delta file.
  out.clear();
  auto capped =
      PatchFile(env, "/old", "/delta", neu.size() - 1, AppendTo(&out));
  EXPECT_TRUE(capped.status().IsCorruption());
  EXPECT_NE(capped.status().message().find("/delta"), std::string_view::npos);
  test::WriteFile(env, "/md4", Header(0x72730136, 256, 16));
  auto md4 = LoadSignatureFile(env, "/md4", {});
  EXPECT_TRUE(md4.status().IsCorruption());
  EXPECT_NE(md4.status().message().find("/md4"), std::string_view::npos);
}

}  // namespace
}  // namespace ferry::delta
