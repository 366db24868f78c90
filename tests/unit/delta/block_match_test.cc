// lib/delta block reuse: MatchBlocks against a brute-force search of the
// basis, the aligned fast path and any thread count against the plain
// rolling scan, the part hashes' shortcut against the scan without it, equal
// blocks, lying signatures, and PlanRanges' cover.
#include <blake2.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "delta/blake2b_x4.h"
#include "delta/rabin_karp.h"
#include "ferry/delta.h"
#include "formats/manifest/manifest.h"
#include "testutil/test_util.h"

namespace ferry::delta {
namespace {

using test::RandomBytes;

std::unique_ptr<Signature> SignatureOf(std::string_view data) {
  std::string sig;
  auto b = SignatureBuilder::Create(data.size(), [&](std::string_view d) {
    sig.append(d);
    return Status::OK();
  });
  EXPECT_TRUE(b.ok());
  EXPECT_TRUE((*b)->Update(data).ok());
  EXPECT_TRUE((*b)->Finish().ok());
  SignatureLoader loader({});
  EXPECT_TRUE(loader.Update(sig).ok());
  auto loaded = loader.Finish();
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  return loaded.ok() ? std::move(*loaded) : nullptr;
}

// The reference: block i is held by basis b at the lowest offset where its
// bytes occur (the first basis that has them).
BlockMap BruteForce(const std::string& neu, uint32_t block_len,
                    const std::vector<std::string>& bases) {
  BlockMap map;
  map.block_len = block_len;
  map.size = neu.size();
  map.blocks.resize((neu.size() + block_len - 1) / block_len);
  for (uint64_t i = 0; i < map.blocks.size(); ++i) {
    std::string block = neu.substr(i * block_len, block_len);
    for (size_t b = 0; b < bases.size(); ++b) {
      size_t at = bases[b].find(block);
      if (at == std::string::npos) continue;
      map.blocks[i] = {static_cast<int32_t>(b), at};
      break;
    }
  }
  return map;
}

// Edits like a new dataset version's: bytes replaced, inserted (shifting
// all that follows), removed, blocks duplicated.
std::string Edit(std::string s, std::mt19937* rng, int edits) {
  for (int e = 0; e < edits; ++e) {
    size_t at = (*rng)() % s.size();
    size_t len = 1 + (*rng)() % 3000;
    switch ((*rng)() % 4) {
      case 0:
        s.replace(at, std::min(len, s.size() - at), RandomBytes(len, (*rng)()));
        break;
      case 1:
        s.insert(at, RandomBytes(len, (*rng)()));
        break;
      case 2:
        s.erase(at, std::min(len, s.size() - at - 1));
        break;
      case 3: {  // a copy of another stretch (equal blocks, often aligned)
        size_t from = (*rng)() % s.size();
        s.insert(at, s.substr(from, len * 3));
        break;
      }
    }
  }
  return s;
}

// Bytes overwritten in place (nothing shifts).
std::string Overwrite(std::string s, std::mt19937* rng, int edits) {
  for (int e = 0; e < edits; ++e) {
    size_t at = (*rng)() % s.size();
    size_t len = std::min<size_t>(1 + (*rng)() % 3000, s.size() - at);
    s.replace(at, len, RandomBytes(len, (*rng)()));
  }
  return s;
}

// XXH3-64 per part, as publish puts them in a manifest.
std::vector<uint64_t> PartHashes(const std::string& data, uint64_t part_size) {
  manifest::FileHasher hasher(part_size);
  hasher.Update(data);
  manifest::File entry;
  hasher.Finish(&entry);
  return {entry.part_xxh3_64().begin(), entry.part_xxh3_64().end()};
}

class BlockMatchTest : public ::testing::Test {
 protected:
  Result<BlockMap> Match(const Signature& sig, uint64_t size,
                         const std::vector<std::string>& bases,
                         BlockMatchOptions options = {},
                         BlockMatchStats* stats = nullptr) {
    std::vector<std::string> paths;
    for (size_t i = 0; i < bases.size(); ++i) {
      paths.push_back("/basis" + std::to_string(i));
      test::WriteFile(env_.get(), paths.back(), bases[i]);
    }
    return MatchBlocks(sig, size, env_.get(), paths, options, stats);
  }
  std::unique_ptr<Env> env_ = NewMemEnv();
};

void ExpectSameMap(const BlockMap& got, const BlockMap& want) {
  ASSERT_EQ(got.blocks.size(), want.blocks.size());
  for (size_t i = 0; i < got.blocks.size(); ++i) {
    EXPECT_EQ(got.blocks[i].basis, want.blocks[i].basis) << "block " << i;
    EXPECT_EQ(got.blocks[i].offset, want.blocks[i].offset) << "block " << i;
  }
}

// The same blocks found, each where its bytes are (of several places, the
// scan may report another than the lowest).
void ExpectSameBlocksFound(const BlockMap& got, const BlockMap& want,
                           const std::string& neu,
                           const std::vector<std::string>& bases) {
  ASSERT_EQ(got.blocks.size(), want.blocks.size());
  for (size_t i = 0; i < got.blocks.size(); ++i) {
    ASSERT_EQ(got.blocks[i].found(), want.blocks[i].found()) << "block " << i;
    if (!got.blocks[i].found()) continue;
    uint64_t len = got.BlockLength(i);
    ASSERT_EQ(bases[got.blocks[i].basis].substr(got.blocks[i].offset, len),
              neu.substr(got.BlockOffset(i), len))
        << "block " << i;
  }
}

TEST_F(BlockMatchTest, WeakSumIsLibrsyncsRabinKarp) {
  // librsync's rabinkarp_update, byte by byte from its seed.
  for (size_t n : {0, 1, 31, 32, 33, 256, 1000, 16384}) {
    std::string d = RandomBytes(n, 3);
    uint32_t h = 1;
    for (unsigned char c : d) h = h * rk::kMult + c;
    EXPECT_EQ(rk::Sum(reinterpret_cast<const uint8_t*>(d.data()), n), h) << n;
  }
  // Rolling one byte on gives the sum of the next window.
  std::string d = RandomBytes(1000, 4);
  const auto* p = reinterpret_cast<const uint8_t*>(d.data());
  uint32_t h = rk::Sum(p, 300);
  for (int i = 1; i < 700; ++i) {
    h = rk::Roll(h, rk::Pow(300), p[i - 1], p[i + 299]);
    ASSERT_EQ(h, rk::Sum(p + i, 300)) << i;
  }
}

TEST_F(BlockMatchTest, FourWayBlake2bIsLibb2s) {
  for (size_t n : {0, 1, 127, 128, 129, 255, 256, 1000, 16384, 16385}) {
    std::string d[4];
    const uint8_t* in[4];
    for (int i = 0; i < 4; ++i) {
      d[i] = RandomBytes(n, 10 * n + i);
      in[i] = reinterpret_cast<const uint8_t*>(d[i].data());
    }
    uint8_t got[4][32], want[32];
    Blake2b256x4(in, n, got);
    for (int i = 0; i < 4; ++i) {
      blake2b(want, in[i], nullptr, 32, n, 0);
      EXPECT_EQ(std::memcmp(got[i], want, 32), 0) << n << " lane " << i;
    }
  }
}

TEST_F(BlockMatchTest, FindsWhatABruteForceSearchFinds) {
  std::mt19937 rng(7);
  for (int round = 0; round < 12; ++round) {
    SCOPED_TRACE(round);
    // Sizes around a few hundred blocks of 256 bytes (files up to 64 KiB)
    // or of 384 (larger), the last block mostly short.
    size_t size = 20000 + rng() % 300000;
    std::string old = RandomBytes(size, rng());
    std::string neu = Edit(old, &rng, 1 + round % 8);
    if (round % 3 == 0) std::swap(old, neu);
    auto sig = SignatureOf(neu);
    ASSERT_TRUE(sig);
    BlockMatchOptions opt;
    opt.chunk_bytes = round % 2 ? 1 << 30 : 50000;  // one chunk, or several
    opt.exhaustive = true;
    auto map = Match(*sig, neu.size(), {old}, opt);
    ASSERT_OK(map.status());
    BlockMap want = BruteForce(neu, sig->params().block_len, {old});
    ExpectSameBlocksFound(*map, want, neu, {old});
    // The greedy scan alone finds a subset, each where its bytes are.
    opt.exhaustive = false;
    auto greedy = Match(*sig, neu.size(), {old}, opt);
    ASSERT_OK(greedy.status());
    BlockMap greedy_want = want;
    for (size_t i = 0; i < greedy_want.blocks.size(); ++i) {
      if (!greedy->blocks[i].found()) greedy_want.blocks[i] = {};
      EXPECT_TRUE(!greedy->blocks[i].found() || want.blocks[i].found());
    }
    ExpectSameBlocksFound(*greedy, greedy_want, neu, {old});
    EXPECT_GT(map->found_bytes(), neu.size() / 2);
  }
}

TEST_F(BlockMatchTest, AStretchInsideMatchedBlocksNeedsTheExhaustiveScan) {
  // new: old's first 20 blocks, then 10 blocks of old's bytes from offset
  // 1000 (inside the windows the first 20 matched, at another phase).
  std::string old = RandomBytes(256 * 100, 12);
  std::string neu = old.substr(0, 256 * 20) + old.substr(1000, 256 * 10);
  auto sig = SignatureOf(neu);
  ASSERT_EQ(sig->params().block_len, 256u);
  auto greedy = Match(*sig, neu.size(), {old});
  ASSERT_OK(greedy.status());
  EXPECT_EQ(greedy->found_bytes(), 256u * 20);
  BlockMatchOptions opt;
  opt.exhaustive = true;
  auto all = Match(*sig, neu.size(), {old}, opt);
  ASSERT_OK(all.status());
  EXPECT_EQ(all->found_bytes(), neu.size());
  EXPECT_EQ(all->blocks[25], (BlockLocation{0, 1000 + 5 * 256}));
}

TEST_F(BlockMatchTest, TheLastShortBlockIsFoundAnywhere) {
  std::string old = RandomBytes(100000, 11);
  // new: a few blocks of old, then a short block that old holds at an odd
  // offset in its middle (not at its end, where librsync would look).
  std::string neu = old.substr(0, 256 * 10) + old.substr(50001, 100);
  auto sig = SignatureOf(neu);
  ASSERT_EQ(sig->params().block_len, 256u);
  auto map = Match(*sig, neu.size(), {old});
  ASSERT_OK(map.status());
  ASSERT_EQ(map->blocks.size(), 11u);
  EXPECT_EQ(map->blocks[10], (BlockLocation{0, 50001}));
  EXPECT_EQ(map->BlockLength(10), 100u);
  EXPECT_EQ(map->found_bytes(), neu.size());
  // The whole new object shorter than a block: one short block.
  std::string tiny = old.substr(777, 200);
  auto tiny_sig = SignatureOf(tiny);
  auto tiny_map = Match(*tiny_sig, tiny.size(), {old});
  ASSERT_OK(tiny_map.status());
  ASSERT_EQ(tiny_map->blocks.size(), 1u);
  EXPECT_EQ(tiny_map->blocks[0], (BlockLocation{0, 777}));
}

TEST_F(BlockMatchTest, AlignedFastPathAndThreadsGiveThePlainScansMap) {
  std::mt19937 rng(21);
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE(round);
    std::string old = RandomBytes(200000 + rng() % 200000, rng());
    std::string neu = Edit(old, &rng, 2 + round);
    auto sig = SignatureOf(neu);
    BlockMatchOptions plain;
    plain.aligned_fast_path = false;
    plain.threads = 1;
    plain.chunk_bytes = 64 << 10;
    plain.exhaustive = round % 2;
    BlockMatchStats plain_stats, fast_stats;
    auto want =
        Match(*sig, neu.size(), {old, neu.substr(1000)}, plain, &plain_stats);
    ASSERT_OK(want.status());
    for (int threads : {1, 3}) {
      BlockMatchOptions fast = plain;
      fast.aligned_fast_path = true;
      fast.threads = threads;
      auto got =
          Match(*sig, neu.size(), {old, neu.substr(1000)}, fast, &fast_stats);
      ASSERT_OK(got.status());
      ExpectSameMap(*got, *want);
      EXPECT_EQ(fast_stats.rolled_bytes, plain_stats.rolled_bytes);
    }
  }
}

TEST_F(BlockMatchTest, UnchangedDataIsMatchedWithoutRolling) {
  std::string old = RandomBytes(1 << 20, 5);
  auto sig = SignatureOf(old);
  BlockMatchStats stats;
  auto map = Match(*sig, old.size(), {old}, {}, &stats);
  ASSERT_OK(map.status());
  EXPECT_EQ(map->found_bytes(), old.size());
  EXPECT_EQ(stats.rolled_bytes, 0u);
  EXPECT_EQ(stats.strong_sums, sig->blocks());  // one per block, no more
  for (size_t i = 0; i < map->blocks.size(); ++i)
    ASSERT_EQ(map->blocks[i], (BlockLocation{0, i * 1024})) << i;
}

TEST_F(BlockMatchTest, PartHashesGiveTheMapOfTheScanWithoutThem) {
  std::mt19937 rng(33);
  for (int round = 0; round < 8; ++round) {
    SCOPED_TRACE(round);
    std::string old = RandomBytes(200000 + rng() % 200000, rng());
    // Mostly edits in place (parts stay aligned), some shifting ones.
    std::string neu =
        round % 4 == 3 ? Edit(old, &rng, 3) : Overwrite(old, &rng, round % 4);
    auto sig = SignatureOf(neu);
    // A first basis holding the new object's first part only partly, so
    // later parts lie past its end; the second the old version.
    std::vector<std::string> bases = {neu.substr(0, neu.size() / 3 + 777), old};
    BlockMatchOptions plain;
    plain.chunk_bytes = 64 << 10;
    plain.exhaustive = round % 2;
    plain.threads = 1;
    BlockMatchStats plain_stats;
    auto want = Match(*sig, neu.size(), bases, plain, &plain_stats);
    ASSERT_OK(want.status());
    // Parts of whole blocks, across blocks, inside one block, one part.
    for (uint64_t part_size : {uint64_t{16} << 10, uint64_t{10007},
                               uint64_t{100}, uint64_t{1} << 30}) {
      for (int threads : {1, 3}) {
        SCOPED_TRACE(std::to_string(part_size) + " " + std::to_string(threads));
        std::vector<uint64_t> hashes = PartHashes(neu, part_size);
        BlockMatchOptions opt = plain;
        opt.threads = threads;
        opt.part_hashes = hashes;
        opt.part_size = part_size;
        BlockMatchStats stats;
        auto got = Match(*sig, neu.size(), bases, opt, &stats);
        ASSERT_OK(got.status());
        ExpectSameMap(*got, *want);
        EXPECT_EQ(stats.rolled_bytes, plain_stats.rolled_bytes);
        EXPECT_LE(stats.strong_sums, plain_stats.strong_sums);
        if (part_size == 16 << 10) EXPECT_GT(stats.part_bytes, 0u);
      }
    }
  }
}

TEST_F(BlockMatchTest, UnchangedPartsAreTakenByTheirHashes) {
  std::string old = RandomBytes(1 << 20, 5);
  auto sig = SignatureOf(old);
  ASSERT_EQ(sig->params().block_len, 1024u);
  std::vector<uint64_t> hashes = PartHashes(old, 64 << 10);
  BlockMatchOptions opt;
  opt.part_hashes = hashes;
  opt.part_size = 64 << 10;
  BlockMatchStats stats;
  auto map = Match(*sig, old.size(), {old}, opt, &stats);
  ASSERT_OK(map.status());
  for (size_t i = 0; i < map->blocks.size(); ++i)
    ASSERT_EQ(map->blocks[i], (BlockLocation{0, i * 1024})) << i;
  // Four blocks summed (the fast path's first try), then parts: each hashed
  // once, all blocks after the first four taken by them.
  EXPECT_EQ(stats.strong_sums, 4u);
  EXPECT_EQ(stats.parts_hashed, 16u);
  EXPECT_EQ(stats.part_bytes, old.size() - 4 * 1024);
  EXPECT_EQ(stats.rolled_bytes, 0u);

  // One byte changed in part 5: its 64 blocks are summed, the map the same
  // as the scan's without hashes (block 5 * 64 + 3 missing).
  std::string neu = old;
  neu[5 * (64 << 10) + 3 * 1024 + 10] ^= 1;
  auto neu_sig = SignatureOf(neu);
  std::vector<uint64_t> neu_hashes = PartHashes(neu, 64 << 10);
  opt.part_hashes = neu_hashes;
  auto edited = Match(*neu_sig, neu.size(), {old}, opt, &stats);
  ASSERT_OK(edited.status());
  auto without = Match(*neu_sig, neu.size(), {old});
  ASSERT_OK(without.status());
  ExpectSameMap(*edited, *without);
  EXPECT_FALSE(edited->blocks[5 * 64 + 3].found());
  EXPECT_EQ(edited->found_bytes(), neu.size() - 1024);
  EXPECT_EQ(stats.parts_hashed, 16u);
  // The other 15 parts' blocks but the first four and those the fast path
  // summed (four at a time) into part 6 before trying it.
  EXPECT_LE(stats.part_bytes, 15 * (64 << 10) - 4 * 1024);
  EXPECT_GE(stats.part_bytes, 15 * (64 << 10) - 8 * 1024);

  // Hashes that match nothing: the blocks are summed as without them.
  std::vector<uint64_t> wrong(16, 12345);
  opt.part_hashes = wrong;
  auto lied = Match(*sig, old.size(), {old}, opt, &stats);
  ASSERT_OK(lied.status());
  EXPECT_EQ(lied->found_bytes(), old.size());
  EXPECT_EQ(stats.part_bytes, 0u);
  EXPECT_EQ(stats.strong_sums, sig->blocks());

  // A count that does not fit the size and part size is refused.
  std::vector<uint64_t> fifteen(15, 1);
  opt.part_hashes = fifteen;
  EXPECT_TRUE(Match(*sig, old.size(), {old}, opt).status().IsInvalidArgument());
  opt.part_hashes = hashes;
  opt.part_size = 0;
  EXPECT_TRUE(Match(*sig, old.size(), {old}, opt).status().IsInvalidArgument());
}

TEST_F(BlockMatchTest, ShiftedPartsAreTakenAndPartsWithAnInsertNotHashed) {
  // new: old with 100 bytes inserted at 300000, inside part 4 (64 KiB
  // parts): parts 0-3 held at their own offsets, 5-15 100 bytes earlier in
  // the basis; part 4 fails its probes at either shift (its last block is
  // not at shift 0, its first not at -100), so it is never hashed.
  std::string old = RandomBytes(1 << 20, 6);
  std::string neu =
      old.substr(0, 300000) + RandomBytes(100, 7) + old.substr(300000);
  auto sig = SignatureOf(neu);
  ASSERT_EQ(sig->params().block_len, 1024u);
  std::vector<uint64_t> hashes = PartHashes(neu, 64 << 10);
  ASSERT_EQ(hashes.size(), 17u);  // the last part: 100 bytes
  BlockMatchOptions opt;
  opt.part_hashes = hashes;
  opt.part_size = 64 << 10;
  BlockMatchStats stats, plain_stats;
  auto map = Match(*sig, neu.size(), {old}, opt, &stats);
  ASSERT_OK(map.status());
  auto plain = Match(*sig, neu.size(), {old}, {}, &plain_stats);
  ASSERT_OK(plain.status());
  ExpectSameMap(*map, *plain);
  EXPECT_EQ(stats.rolled_bytes, plain_stats.rolled_bytes);
  EXPECT_EQ(map->blocks[400], (BlockLocation{0, 400 * 1024 - 100}));
  EXPECT_EQ(stats.parts_hashed, 15u);  // not part 4, nor the short part 16
  EXPECT_GE(stats.part_bytes, 14u * (64 << 10));
  EXPECT_LT(stats.strong_sums, plain_stats.strong_sums / 4);
}

TEST_F(BlockMatchTest, EqualBlocksAreAllSatisfiedByOneMatch) {
  // new: block A, 20 other blocks, A again 30 times, then B; the basis holds
  // A once (and B). librsync's table keeps only the first of equal blocks:
  // without the grouping the 30 copies would be 1 more range to fetch.
  const uint32_t kB = 256;
  std::string a = RandomBytes(kB, 1), b = RandomBytes(kB, 2);
  std::string other = RandomBytes(20 * kB, 3);
  std::string neu = a + other;
  for (int i = 0; i < 30; ++i) neu += a;
  neu += b;
  std::string basis = RandomBytes(999, 4) + a + RandomBytes(5000, 5) + b;
  auto sig = SignatureOf(neu);
  ASSERT_EQ(sig->params().block_len, kB);
  auto map = Match(*sig, neu.size(), {basis});
  ASSERT_OK(map.status());
  for (int i : {0, 21, 35, 50})
    EXPECT_EQ(map->blocks[i], (BlockLocation{0, 999}));
  EXPECT_EQ(map->blocks[51], (BlockLocation{0, 999 + kB + 5000}));
  BlockPlan plan = PlanRanges(*map, 0);
  ASSERT_EQ(plan.fetches.size(), 1u);
  EXPECT_EQ(plan.fetches[0], (BlockPlan::Range{kB, 20 * kB}));
  EXPECT_EQ(plan.fetch_bytes, 20 * kB);
}

TEST_F(BlockMatchTest, ALyingSignatureFindsNothingOrIsRefused) {
  std::string data = RandomBytes(10000, 8);
  auto sig = SignatureOf(data);
  // Block count against the size: one block more or fewer.
  for (uint64_t size : {data.size() + 256, data.size() - 256, uint64_t{0}}) {
    auto map = Match(*sig, size, {data});
    EXPECT_TRUE(map.status().IsCorruption()) << size;
  }
  // Sizes with the same block count are the signature's word: a last block
  // of another length matches nothing.
  auto shorter = Match(*sig, data.size() - 1, {data});
  ASSERT_OK(shorter.status());
  EXPECT_FALSE(shorter->blocks.back().found());
  // Strong sums that match nothing (weak sums right): nothing found.
  std::string bytes;
  auto b = SignatureBuilder::Create(data.size(), [&](std::string_view d) {
    bytes.append(d);
    return Status::OK();
  });
  ASSERT_OK((*b)->Update(data));
  ASSERT_OK((*b)->Finish());
  const size_t per_block = 4 + (*b)->params().strong_len;
  for (size_t at = 12 + 4; at < bytes.size(); at += per_block)
    bytes[at + 5] ^= 1;
  SignatureLoader loader({});
  ASSERT_OK(loader.Update(bytes));
  auto lying = loader.Finish();
  ASSERT_OK(lying.status());
  auto map = Match(**lying, data.size(), {data});
  ASSERT_OK(map.status());
  EXPECT_EQ(map->found_bytes(), 0u);
}

TEST_F(BlockMatchTest, BasisErrorsAndEmptyCases) {
  auto sig = SignatureOf(RandomBytes(5000, 9));
  auto missing = MatchBlocks(*sig, 5000, env_.get(), {"/nope"});
  EXPECT_TRUE(missing.status().IsNotFound()) << missing.status().ToString();
  auto none = Match(*sig, 5000, {});
  ASSERT_OK(none.status());
  EXPECT_EQ(none->found_bytes(), 0u);
  auto empty_basis = Match(*sig, 5000, {""});
  ASSERT_OK(empty_basis.status());
  EXPECT_EQ(empty_basis->found_bytes(), 0u);
  auto empty_sig = SignatureOf("");
  auto empty = Match(*empty_sig, 0, {"abc"});
  ASSERT_OK(empty.status());
  EXPECT_TRUE(empty->blocks.empty());
  EXPECT_TRUE(PlanRanges(*empty, 100).fetches.empty());
}

// Basis files whose reads at or past `fail_at` fail (or, with `shrink`,
// find the end of the file there, as if it had been cut meanwhile).
class FailingReadEnv : public EnvWrapper {
 public:
  FailingReadEnv(Env* target, uint64_t fail_at, bool shrink)
      : EnvWrapper(target), fail_at_(fail_at), shrink_(shrink) {}
  Result<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& path) override {
    FERRY_ASSIGN_OR_RETURN(auto f, target()->NewRandomAccessFile(path));
    return std::unique_ptr<RandomAccessFile>(
        new File(std::move(f), fail_at_, shrink_));
  }

 private:
  class File : public RandomAccessFile {
   public:
    File(std::unique_ptr<RandomAccessFile> f, uint64_t at, bool shrink)
        : f_(std::move(f)), at_(at), shrink_(shrink) {}
    Status Read(uint64_t offset, size_t n, std::string_view* result,
                char* scratch) const override {
      if (offset + n > at_) {
        if (!shrink_) return Status::IOError("injected read error");
        if (offset >= at_) {
          *result = {};
          return Status::OK();
        }
        n = at_ - offset;
      }
      return f_->Read(offset, n, result, scratch);
    }
    Result<uint64_t> Size() const override { return f_->Size(); }

   private:
    std::unique_ptr<RandomAccessFile> f_;
    uint64_t at_;
    bool shrink_;
  };
  uint64_t fail_at_;
  bool shrink_;
};

TEST_F(BlockMatchTest, ABasisThatCannotBeReadIsAnIOErrorNamingIt) {
  std::string old = RandomBytes(400000, 14);
  auto sig = SignatureOf(old);
  test::WriteFile(env_.get(), "/basis", old);
  // With part hashes, the failing read is the part's (the blocks after the
  // first four are not read by the scan itself).
  std::vector<uint64_t> hashes = PartHashes(old, 64 << 10);
  for (bool shrink : {false, true}) {
    for (int threads : {1, 3}) {
      for (bool parts : {false, true}) {
        SCOPED_TRACE(std::to_string(shrink) + " " + std::to_string(threads) +
                     " " + std::to_string(parts));
        FailingReadEnv env(env_.get(), 300000, shrink);
        BlockMatchOptions opt;
        opt.threads = threads;
        opt.chunk_bytes = parts ? 1 << 20 : 50000;
        if (parts) {
          opt.part_hashes = hashes;
          opt.part_size = 64 << 10;
        }
        auto map = MatchBlocks(*sig, old.size(), &env, {"/basis"}, opt);
        ASSERT_TRUE(map.status().IsIOError()) << map.status().ToString();
        EXPECT_NE(map.status().ToString().find("/basis"), std::string::npos)
            << map.status().ToString();
      }
    }
  }
}

// Every byte of the new object in exactly one copy or fetch, in order.
void ExpectCover(const BlockMap& map, const BlockPlan& plan) {
  std::vector<int> seen(map.size, 0);
  uint64_t copy = 0, fetch = 0;
  for (const auto& c : plan.copies) {
    for (uint64_t i = 0; i < c.length; ++i) ++seen[c.new_offset + i];
    copy += c.length;
  }
  for (const auto& f : plan.fetches) {
    for (uint64_t i = 0; i < f.length; ++i) ++seen[f.offset + i];
    fetch += f.length;
  }
  for (uint64_t i = 0; i < map.size; ++i) ASSERT_EQ(seen[i], 1) << i;
  EXPECT_EQ(plan.copy_bytes, copy);
  EXPECT_EQ(plan.fetch_bytes, fetch);
  EXPECT_EQ(copy + fetch, map.size);
}

BlockMap MapOf(const std::string& pattern, uint32_t block_len, uint64_t size) {
  // pattern: one char per block, '.' missing, a digit: found in that basis
  // at the block's own offset.
  BlockMap m;
  m.block_len = block_len;
  m.size = size;
  for (size_t i = 0; i < pattern.size(); ++i)
    m.blocks.push_back(pattern[i] == '.'
                           ? BlockLocation{}
                           : BlockLocation{pattern[i] - '0', i * block_len});
  return m;
}

TEST_F(BlockMatchTest, PlanCoversEveryByteOnceAndMergesCloseRanges) {
  // 10 blocks of 100 bytes, the last of 50.
  BlockMap m = MapOf("..00.0..1.", 100, 950);
  BlockPlan p0 = PlanRanges(m, 0);
  ExpectCover(m, p0);
  EXPECT_EQ(p0.fetches, (std::vector<BlockPlan::Range>{
                            {0, 200}, {400, 100}, {600, 200}, {900, 50}}));
  // Blocks 2-3 (basis 0, adjacent): one copy; 5 alone; 8 another basis.
  EXPECT_EQ(p0.copies,
            (std::vector<BlockPlan::Copy>{
                {0, 200, 200, 200}, {0, 500, 500, 100}, {1, 800, 800, 100}}));
  // Holes of 200, 100, 100 bytes. gap 100: a hole of exactly 100 stays.
  BlockPlan p100 = PlanRanges(m, 100);
  ExpectCover(m, p100);
  EXPECT_EQ(p100.fetches, p0.fetches);
  // gap 101: the 100-byte holes merge, the 200-byte one does not.
  BlockPlan p101 = PlanRanges(m, 101);
  ExpectCover(m, p101);
  EXPECT_EQ(p101.fetches,
            (std::vector<BlockPlan::Range>{{0, 200}, {400, 550}}));
  EXPECT_EQ(p101.copies, (std::vector<BlockPlan::Copy>{{0, 200, 200, 200}}));
  // gap 201: all one range; no copies.
  BlockPlan all = PlanRanges(m, 201);
  ExpectCover(m, all);
  EXPECT_EQ(all.fetches, (std::vector<BlockPlan::Range>{{0, 950}}));
  EXPECT_TRUE(all.copies.empty());
  // Found at both ends, nothing missing, everything missing.
  for (const char* pat :
       {"0........0", "0000000000", "..........", "1.1.1.1.1."}) {
    BlockMap e = MapOf(pat, 100, 950);
    for (uint64_t gap : {0, 1, 99, 100, 101, 1000}) {
      SCOPED_TRACE(std::string(pat) + " gap " + std::to_string(gap));
      ExpectCover(e, PlanRanges(e, gap));
    }
  }
  // Copies join only when adjacent in the basis too.
  BlockMap shifted = MapOf("000", 100, 300);
  shifted.blocks[1].offset = 150;
  EXPECT_EQ(PlanRanges(shifted, 0).copies.size(), 3u);
}

TEST_F(BlockMatchTest, PlanOfRealMatchesCoversTheObject) {
  std::mt19937 rng(3);
  std::string old = RandomBytes(300000, 1);
  std::string neu = Edit(old, &rng, 6);
  auto sig = SignatureOf(neu);
  auto map = Match(*sig, neu.size(), {old});
  ASSERT_OK(map.status());
  for (uint64_t gap : {0, 1000, 1 << 20}) {
    BlockPlan plan = PlanRanges(*map, gap);
    ExpectCover(*map, plan);
    // The copies' bytes are the new object's.
    for (const auto& c : plan.copies)
      ASSERT_EQ(old.substr(c.basis_offset, c.length),
                neu.substr(c.new_offset, c.length));
  }
}

}  // namespace
}  // namespace ferry::delta
