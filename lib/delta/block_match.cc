// lib/delta: block reuse. Scans local basis files for the blocks of a new
// object described by its signature (docs/delta.md, sync path 3).
//
// Each basis is cut into fixed chunks scanned in parallel, each by rsync's
// greedy scan: at an offset, the window of one block is looked up (weak sum,
// then strong sum on a weak match); a match moves the scan one block on, a
// miss one byte on (the weak sum rolled). The aligned fast path first tries
// the block expected at the offset (the block of that offset at a chunk's
// start, the successor of the last match after it), so unchanged data costs
// one weak sum (vectorised) and one BLAKE2b per block and no rolling; a
// successful try is exactly what the table would have found there, so the
// map is the same with or without it. Given the new object's part hashes,
// the fast path, once it runs (four blocks matched one after another, at any
// shift), takes every block lying in new parts whose bytes the basis holds at
// that shift (weak sums of the part's first and last blocks there, then its
// XXH3-64) without summing them; fully changed data hashes no part. With
// options.exhaustive a second pass rolls through the matched windows for the
// groups still missing. Each group of equal blocks keeps its first place
// (basis, offset) by an atomic minimum: deterministic whatever the threads do.
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#if defined(__x86_64__)
#include <xxh_x86dispatch.h>  // XXH3 on the AVX2 kernel when there is one
#endif

#include "delta/blake2b_x4.h"
#include "delta/block_index.h"
#include "delta/rabin_karp.h"
#include "ferry/delta.h"
#include "formats/delta/rdiff_format.h"

namespace ferry::delta {
namespace {

constexpr int kOffsetBits = 51;  // a match's key: basis << 51 | offset
constexpr uint64_t kMaxBases = uint64_t{1} << (63 - kOffsetBits);
constexpr uint64_t kNotFound = ~uint64_t{0};
constexpr size_t kWindowBytes = 4 << 20;
constexpr size_t kPartReadBytes = 256 << 10;  // stays in L2 while hashed

struct Chunk {
  int basis;
  uint64_t begin, end;  // offsets at which the scan starts windows
};

struct Shared {
  const BlockIndex& index;
  const BlockMatchOptions& options;
  Env* env;
  const std::vector<std::string>& paths;
  const std::vector<uint64_t>& sizes;
  uint64_t new_size;
  std::vector<std::atomic<uint64_t>> best;  // per group: lowest match key
  std::atomic<bool> failed{false};
};

// One thread's scanner: a window of the basis in memory.
class Scanner {
 public:
  explicit Scanner(Shared* s)
      : s_(*s),
        ix_(s->index),
        files_(s->paths.size()),
        buf_(std::max<size_t>(kWindowBytes, 2 * size_t{ix_.block_len()} + 2)) {}

  // The greedy scan of a chunk; the offsets of its matches go to *matches.
  Status Scan(const Chunk& c, std::vector<uint64_t>* matches);
  // Looks inside the chunk's matched windows (offsets the greedy scan
  // skipped) for the groups no scan found: `missing` indexes only those,
  // find_short: the short block is one of them.
  Status Rescan(const Chunk& c, const std::vector<uint64_t>& matches,
                const BlockIndex& missing, bool find_short);
  BlockMatchStats stats;

 private:
  // The basis being scanned, opened on first use.
  Result<RandomAccessFile*> File();
  // Makes the basis bytes [p, min(end, limit)) readable at At(p).
  Status Ensure(uint64_t p, uint64_t end, uint64_t limit);
  // Basis bytes [at, at + n) (n <= part_buf_.size()) read into part_buf_;
  // the basis ending before them is an IOError.
  Result<const uint8_t*> ReadPiece(uint64_t at, size_t n);
  // Whether the basis bytes at the new object's part `part`'s offsets plus
  // `shift` have its hash in options.part_hashes: first the weak sums of the
  // part's first and last whole blocks there (an insert or a removal inside
  // the part fails them), then the hash. Once per part and shift per scanner.
  Result<bool> PartHolds(uint64_t part, int64_t shift);
  // From (p, j), block j expected at p: records blocks j, j + 1, ... at p,
  // p + L, ... (offsets below full_stop) while every part under the block
  // PartHolds at that shift; returns how many (what the fast path would
  // find there, unsummed).
  Result<uint64_t> ByParts(uint64_t p, uint64_t j, uint64_t full_stop,
                           std::vector<uint64_t>* matches);
  const uint8_t* At(uint64_t p) const { return buf_.data() + (p - buf_off_); }
  uint64_t buf_end() const { return buf_off_ + buf_len_; }
  void Record(uint32_t group, uint64_t p);
  // The aligned fast path four blocks at a time: when the windows at p, p +
  // L, p + 2L, p + 3L hold the expected blocks j .. j + 3 (weak sums first,
  // then one four-way BLAKE2b), records them and returns 4; else 0 (the
  // caller goes on one block at a time).
  Result<int> PredictedFour(uint64_t p, uint64_t j, uint64_t full_stop,
                            uint64_t limit, std::vector<uint64_t>* matches);
  // Calls check(q, h, hs) for the windows of n bytes (weak sum h) and of m
  // <= n bytes (hs; m 0: none) at each offset q in [a, stop) (stop <= basis
  // size - n + 1) until it returns true. One pass for both windows.
  template <typename Check>
  Status RollOver(uint64_t a, uint64_t stop, uint32_t n, uint32_t m,
                  uint64_t limit, Check check);
  // Looks for the short last block at offsets [p, stop); stops once found.
  Status ShortTail(uint64_t p, uint64_t stop, uint64_t limit) {
    return RollOver(p, stop, ix_.short_len(), 0, limit,
                    [&](uint64_t q, uint32_t h, uint32_t) {
                      if (h == ix_.short_weak()) CheckShort(q, h);
                      return !short_open_;
                    });
  }
  void CheckShort(uint64_t p, uint32_t hs) {
    StrongSum strong(At(p), ix_.short_len(), &stats.strong_sums);
    if (ix_.IsShort(hs, &strong)) {
      Record(ix_.groups(), p);
      short_open_ = false;
    }
  }

  Shared& s_;
  const BlockIndex& ix_;
  std::vector<std::unique_ptr<RandomAccessFile>> files_;
  std::vector<uint8_t> buf_;
  int basis_ = 0;
  uint64_t buf_off_ = 0;
  size_t buf_len_ = 0;
  bool short_open_ = false;  // the short block not yet found in this chunk
  // PartHolds' last answer per basis and part: state 0 none, 1 yes, 2 no.
  struct PartState {
    int64_t shift = 0;
    uint8_t state = 0;
  };
  std::vector<std::vector<PartState>> part_state_;
  std::vector<uint8_t> part_buf_;
  struct FreeXxh3 {
    void operator()(XXH3_state_t* st) const { XXH3_freeState(st); }
  };
  std::unique_ptr<XXH3_state_t, FreeXxh3> part_hasher_;
};

Result<RandomAccessFile*> Scanner::File() {
  auto& file = files_[basis_];
  if (!file) {
    FERRY_ASSIGN_OR_RETURN(file, s_.env->NewRandomAccessFile(s_.paths[basis_]));
  }
  return file.get();
}

Result<const uint8_t*> Scanner::ReadPiece(uint64_t at, size_t n) {
  FERRY_ASSIGN_OR_RETURN(RandomAccessFile * file, File());
  char* dst = reinterpret_cast<char*>(part_buf_.data());
  for (size_t have = 0; have < n;) {
    std::string_view got;
    Status st = file->Read(at + have, n - have, &got, dst + have);
    if (!st.ok()) return st.WithContext(s_.paths[basis_]);
    if (got.empty())
      return Status::IOError(s_.paths[basis_], "basis shorter than it was");
    if (got.data() != dst + have)
      std::memmove(dst + have, got.data(), got.size());
    have += got.size();
  }
  return part_buf_.data();
}

Result<bool> Scanner::PartHolds(uint64_t part, int64_t shift) {
  if (part_state_.empty()) part_state_.resize(s_.paths.size());
  std::vector<PartState>& states = part_state_[basis_];
  if (states.empty()) states.resize(s_.options.part_hashes.size());
  PartState& ps = states[part];
  if (ps.state != 0 && ps.shift == shift) return ps.state == 1;
  ps = {shift, 2};
  const uint64_t size = s_.options.part_size, L = ix_.block_len();
  const uint64_t new_begin = part * size;
  const uint64_t len = std::min(size, s_.new_size - new_begin);
  if (shift < 0 && new_begin < static_cast<uint64_t>(-shift)) return false;
  const uint64_t begin = new_begin + static_cast<uint64_t>(shift);
  if (begin + len > s_.sizes[basis_]) return false;
  part_buf_.resize(std::max<size_t>(kPartReadBytes, L));
  // Blocks [first, last) lie wholly inside the part.
  const uint64_t first = (new_begin + L - 1) / L;
  const uint64_t last = std::min((new_begin + len) / L, ix_.full_blocks());
  if (first < last) {
    for (uint64_t k : {first, last - 1}) {
      FERRY_ASSIGN_OR_RETURN(const uint8_t* at, ReadPiece(k * L + shift, L));
      if (rk::Sum(at, L) != ix_.Weak(k)) return false;
    }
  }
  if (!part_hasher_) part_hasher_.reset(XXH3_createState());
  XXH3_64bits_reset(part_hasher_.get());
  for (uint64_t at = begin; at < begin + len;) {
    const size_t n = std::min<uint64_t>(part_buf_.size(), begin + len - at);
    FERRY_ASSIGN_OR_RETURN(const uint8_t* piece, ReadPiece(at, n));
    XXH3_64bits_update(part_hasher_.get(), piece, n);
    at += n;
  }
  ++stats.parts_hashed;
  if (XXH3_64bits_digest(part_hasher_.get()) == s_.options.part_hashes[part])
    ps.state = 1;
  return ps.state == 1;
}

Result<uint64_t> Scanner::ByParts(uint64_t p, uint64_t j, uint64_t full_stop,
                                  std::vector<uint64_t>* matches) {
  const uint64_t L = ix_.block_len(), size = s_.options.part_size;
  const int64_t shift = static_cast<int64_t>(p) - static_cast<int64_t>(j * L);
  uint64_t k = j;
  for (uint64_t q = p; k < ix_.full_blocks() && q < full_stop; ++k, q += L) {
    bool holds = true;
    const uint64_t n = k * L;  // the block's offset in the new object
    for (uint64_t i = n / size; holds && i <= (n + L - 1) / size; ++i) {
      FERRY_ASSIGN_OR_RETURN(holds, PartHolds(i, shift));
    }
    if (!holds) break;
    Record(ix_.GroupOf(k), q);
    matches->push_back(q);
  }
  stats.part_bytes += (k - j) * L;
  return k - j;
}

Status Scanner::Ensure(uint64_t p, uint64_t end, uint64_t limit) {
  end = std::min(end, limit);
  if (p >= buf_off_ && end <= buf_end()) return Status::OK();
  if (p >= buf_off_ && p < buf_end()) {
    std::memmove(buf_.data(), At(p), buf_end() - p);
    buf_len_ = buf_end() - p;
  } else {
    buf_len_ = 0;
  }
  buf_off_ = p;
  FERRY_ASSIGN_OR_RETURN(RandomAccessFile * file, File());
  while (buf_len_ < buf_.size() && buf_end() < limit) {
    size_t want = std::min<uint64_t>(buf_.size() - buf_len_, limit - buf_end());
    char* dst = reinterpret_cast<char*>(buf_.data()) + buf_len_;
    std::string_view got;
    Status st = file->Read(buf_end(), want, &got, dst);
    if (!st.ok()) return st.WithContext(s_.paths[basis_]);
    if (got.empty())
      return Status::IOError(s_.paths[basis_], "basis shorter than it was");
    if (got.data() != dst) std::memmove(dst, got.data(), got.size());
    buf_len_ += got.size();
  }
  return Status::OK();
}

void Scanner::Record(uint32_t group, uint64_t p) {
  uint64_t key = uint64_t(basis_) << kOffsetBits | p;
  std::atomic<uint64_t>& b = s_.best[group];
  uint64_t cur = b.load(std::memory_order_relaxed);
  while (key < cur && !b.compare_exchange_weak(cur, key)) {
  }
}

template <typename Check>
Status Scanner::RollOver(uint64_t a, uint64_t stop, uint32_t n, uint32_t m,
                         uint64_t limit, Check check) {
  if (a >= stop) return Status::OK();
  uint32_t out_n[256], out_m[256];
  rk::OutTable(rk::Pow(n), out_n);
  rk::OutTable(rk::Pow(m), out_m);
  FERRY_RETURN_IF_ERROR(Ensure(a, a + n, limit));
  uint32_t h = rk::Sum(At(a), n), hs = m ? rk::Sum(At(a), m) : 0;
  if (check(a, h, hs)) return Status::OK();
  for (uint64_t q = a + 1; q < stop;) {
    FERRY_RETURN_IF_ERROR(Ensure(q - 1, q + n, limit));
    const uint64_t run_end = std::min(stop, buf_end() - n + 1);
    const uint8_t* b = buf_.data();
    const uint64_t o = buf_off_;
    for (; q < run_end; ++q) {
      const uint8_t* out = b + (q - 1 - o);
      h = rk::RollT(h, out_n, out[0], out[n]);
      if (m) hs = rk::RollT(hs, out_m, out[0], out[m]);
      if (check(q, h, hs)) {
        stats.rolled_bytes += q - a;
        return Status::OK();
      }
    }
  }
  stats.rolled_bytes += stop - 1 - a;
  return Status::OK();
}

Status Scanner::Rescan(const Chunk& c, const std::vector<uint64_t>& matches,
                       const BlockIndex& missing, bool find_short) {
  basis_ = c.basis;
  buf_len_ = 0;
  const uint64_t size = s_.sizes[c.basis];
  const uint32_t L = ix_.block_len(), ls = ix_.short_len();
  const uint64_t limit = std::min(size, c.end + L);
  const uint64_t full_stop = size >= L ? size - L + 1 : 0;
  const uint64_t short_stop = ls && size >= ls ? size - ls + 1 : 0;
  bool short_left = find_short;  // in this chunk: the first find is enough
  const uint32_t short_weak = ix_.short_weak();
  // A weak match (rare: the table holds only the missing groups) is checked
  // out of line, so the per-byte part stays small enough to inline.
  auto slow = [&](uint64_t q, uint32_t h, uint32_t hs) {
    if (missing.MayHold(h)) {
      StrongSum strong(At(q), L, &stats.strong_sums);
      int64_t g = missing.Find(h, &strong);
      if (g != BlockIndex::kNone) Record(static_cast<uint32_t>(g), q);
    }
    if (short_left && hs == short_weak) {
      StrongSum strong(At(q), ls, &stats.strong_sums);
      if (ix_.IsShort(hs, &strong)) {
        Record(ix_.groups(), q);
        short_left = false;
      }
    }
  };
  auto check = [&](uint64_t q, uint32_t h, uint32_t hs)
      __attribute__((always_inline)) {
    if (missing.MayHold(h) || (short_left && hs == short_weak)) [[unlikely]]
      slow(q, h, hs);
    return false;
  };
  for (size_t i = 0; i < matches.size();) {
    // Matched windows that touch make one stretch, cut at the chunk's end.
    uint64_t a = matches[i], b = std::min(c.end, a + L);
    for (++i; i < matches.size() && matches[i] <= b; ++i)
      b = std::min(c.end, matches[i] + L);
    if (s_.failed.load(std::memory_order_relaxed)) return Status::OK();
    const uint64_t both_end = std::min(b, full_stop);
    FERRY_RETURN_IF_ERROR(
        RollOver(a, both_end, L, short_left ? ls : 0, limit, check));
    // Offsets too near the basis's end for a full block: the short alone.
    short_open_ = short_left;
    FERRY_RETURN_IF_ERROR(
        ShortTail(std::max(a, both_end), std::min(b, short_stop), limit));
    short_left = short_open_;
  }
  return Status::OK();
}

Result<int> Scanner::PredictedFour(uint64_t p, uint64_t j, uint64_t full_stop,
                                   uint64_t limit,
                                   std::vector<uint64_t>* matches) {
  const uint64_t L = ix_.block_len();
  if (j + 4 > ix_.full_blocks() || p + 3 * L >= full_stop ||
      4 * L + 1 > buf_.size())
    return 0;
  FERRY_RETURN_IF_ERROR(Ensure(p, p + 4 * L + 1, limit));
  const uint8_t* in[4];
  for (int k = 0; k < 4; ++k) {
    in[k] = At(p + k * L);
    if (rk::Sum(in[k], L) != ix_.Weak(j + k)) return 0;
  }
  uint8_t sums[4][32];
  Blake2b256x4(in, L, sums);
  stats.strong_sums += 4;
  for (int k = 0; k < 4; ++k)
    if (std::memcmp(sums[k], ix_.Strong(j + k), ix_.strong_len()) != 0)
      return 0;
  for (uint64_t k = 0; k < 4; ++k) {
    Record(ix_.GroupOf(j + k), p + k * L);
    matches->push_back(p + k * L);
  }
  return 4;
}

Status Scanner::Scan(const Chunk& c, std::vector<uint64_t>* matches) {
  basis_ = c.basis;
  buf_len_ = 0;
  const uint64_t size = s_.sizes[c.basis];
  const uint32_t L = ix_.block_len();
  const uint32_t ls = ix_.short_len();
  uint32_t out_l[256], out_s[256];
  rk::OutTable(rk::Pow(L), out_l);
  rk::OutTable(rk::Pow(ls), out_s);
  const uint64_t limit = std::min(size, c.end + L);  // bytes the chunk reads
  // The last offset a window of each kind starts at, plus one.
  const uint64_t full_stop =
      size >= L ? std::min(c.end, size - L + 1) : c.begin;
  const uint64_t short_stop =
      ls && size >= ls ? std::min(c.end, size - ls + 1) : c.begin;
  short_open_ = ls != 0;
  int64_t predicted = BlockIndex::kNone;
  // Whether the last step was PredictedFour's or ByParts' (the fast path
  // runs): only then are parts tried.
  const bool parts = !s_.options.part_hashes.empty();
  bool try_parts = false;
  if (s_.options.aligned_fast_path && c.begin % L == 0 &&
      c.begin / L < ix_.full_blocks())
    predicted = static_cast<int64_t>(c.begin / L);

  uint64_t p = c.begin;
  while (p < full_stop) {
    if (s_.failed.load(std::memory_order_relaxed)) return Status::OK();
    if (predicted != BlockIndex::kNone) {
      if (try_parts) {
        FERRY_ASSIGN_OR_RETURN(uint64_t took,
                               ByParts(p, predicted, full_stop, matches));
        if (took) {
          p += took * L;
          predicted =
              static_cast<uint64_t>(predicted) + took < ix_.full_blocks()
                  ? predicted + static_cast<int64_t>(took)
                  : BlockIndex::kNone;
          continue;
        }
      }
      try_parts = false;
      FERRY_ASSIGN_OR_RETURN(
          int took, PredictedFour(p, predicted, full_stop, limit, matches));
      if (took) {
        p += uint64_t{4} * L;
        predicted = static_cast<uint64_t>(predicted) + 4 < ix_.full_blocks()
                        ? predicted + 4
                        : BlockIndex::kNone;
        try_parts = parts;
        continue;
      }
    }
    try_parts = false;
    FERRY_RETURN_IF_ERROR(Ensure(p, p + L + 1, limit));
    uint32_t h = rk::Sum(At(p), L);
    StrongSum strong(At(p), L, &stats.strong_sums);
    if (predicted != BlockIndex::kNone && ix_.Is(predicted, h, &strong)) {
      Record(ix_.GroupOf(predicted), p);
      matches->push_back(p);
      predicted = static_cast<uint64_t>(predicted) + 1 < ix_.full_blocks()
                      ? predicted + 1
                      : BlockIndex::kNone;
      p += L;
      continue;
    }
    int64_t g = ix_.Find(h, &strong);
    // Roll from p until a block matches or the chunk ends.
    uint32_t hs = 0;
    if (g == BlockIndex::kNone && short_open_) {
      hs = rk::Sum(At(p), ls);
      CheckShort(p, hs);
    }
    while (g == BlockIndex::kNone && p + 1 < full_stop) {
      // Roll on as far as the window in memory allows (in: byte p + L).
      FERRY_RETURN_IF_ERROR(Ensure(p, p + L + 1, limit));
      const uint64_t run_end = std::min(full_stop, buf_end() - L + 1);
      const uint8_t* b = buf_.data();  // b[x - o]: basis offset x
      const uint64_t o = buf_off_;
      uint64_t q = p + 1;
      if (!short_open_) {
        // Two offsets per step: both sums come from h with one multiply
        // each, halving the chain of dependent multiplies.
        constexpr uint32_t kMult2 = rk::kMult * rk::kMult;
        for (; q + 1 < run_end; q += 2) {
          const uint8_t* out = b + (q - 1 - o);
          const uint32_t t1 = out[L] - out_l[out[0]];
          const uint32_t t2 = out[L + 1] - out_l[out[1]];
          const uint32_t h1 = h * rk::kMult + t1;
          h = h * kMult2 + (t1 * rk::kMult + t2);
          if (ix_.MayHold(h1)) [[unlikely]] {
            StrongSum at_q(out + 1, L, &stats.strong_sums);
            g = ix_.Find(h1, &at_q);
            if (g != BlockIndex::kNone) {
              h = h1;
              break;
            }
          }
          if (ix_.MayHold(h)) [[unlikely]] {
            StrongSum at_q(out + 2, L, &stats.strong_sums);
            g = ix_.Find(h, &at_q);
            if (g != BlockIndex::kNone) {
              ++q;
              break;
            }
          }
        }
      }
      for (; g == BlockIndex::kNone && q < run_end; ++q) {
        const uint8_t* out = b + (q - 1 - o);
        h = rk::RollT(h, out_l, out[0], out[L]);
        if (short_open_) hs = rk::RollT(hs, out_s, out[0], out[ls]);
        if (ix_.MayHold(h)) {
          StrongSum at_q(out + 1, L, &stats.strong_sums);
          g = ix_.Find(h, &at_q);
          if (g != BlockIndex::kNone) break;
        }
        if (short_open_ && hs == ix_.short_weak()) CheckShort(q, hs);
      }
      stats.rolled_bytes += std::min(q, run_end - 1) - p;
      p = std::min(q, run_end - 1);
      if (g != BlockIndex::kNone) break;
    }
    if (g == BlockIndex::kNone) {
      // The last full window of the chunk missed: on to the short tail.
      ++p;
      if (short_open_ && p < short_stop) {
        // hs is the short sum at p - 1; ShortTail restarts from p.
        return ShortTail(p, short_stop, limit);
      }
      return Status::OK();
    }
    Record(static_cast<uint32_t>(g), p);
    matches->push_back(p);
    predicted =
        s_.options.aligned_fast_path ? ix_.Next(g, p) : BlockIndex::kNone;
    p += L;
  }
  if (short_open_ && p < short_stop) return ShortTail(p, short_stop, limit);
  return Status::OK();
}

}  // namespace

uint64_t BlockMap::BlockLength(uint64_t i) const {
  return std::min<uint64_t>(block_len, size - i * block_len);
}

uint64_t BlockMap::found_bytes() const {
  uint64_t n = 0;
  for (uint64_t i = 0; i < blocks.size(); ++i)
    if (blocks[i].found()) n += BlockLength(i);
  return n;
}

Result<BlockMap> MatchBlocks(const Signature& signature, uint64_t new_size,
                             Env* env,
                             const std::vector<std::string>& basis_paths,
                             const BlockMatchOptions& options,
                             BlockMatchStats* stats) {
  const auto& sig = SignatureAccess::Of(signature);
  const uint32_t L = sig.params.block_len;
  const uint64_t n = format::BlockCount(new_size, L);
  if (n != sig.blocks)
    return Status::Corruption(
        "signature", "has " + std::to_string(sig.blocks) +
                         " blocks; an object of " + std::to_string(new_size) +
                         " bytes has " + std::to_string(n));
  if (basis_paths.size() >= kMaxBases)
    return Status::InvalidArgument("block match", "too many basis files");
  if (!options.part_hashes.empty() &&
      (options.part_size == 0 ||
       options.part_hashes.size() !=
           (new_size + options.part_size - 1) / options.part_size))
    return Status::InvalidArgument(
        "block match", std::to_string(options.part_hashes.size()) +
                           " part hashes for an object of " +
                           std::to_string(new_size) + " bytes in parts of " +
                           std::to_string(options.part_size));
  BlockMap map;
  map.block_len = L;
  map.size = new_size;
  map.blocks.resize(n);
  BlockMatchStats total;

  std::vector<uint64_t> sizes;
  for (const std::string& path : basis_paths) {
    FERRY_ASSIGN_OR_RETURN(auto file, env->NewRandomAccessFile(path));
    auto size = file->Size();
    if (!size.ok()) return size.status().WithContext(path);
    if (*size >> kOffsetBits)
      return Status::InvalidArgument(path, "basis too large");
    sizes.push_back(*size);
    total.basis_bytes += *size;
  }
  if (n == 0 || basis_paths.empty()) {
    if (stats) *stats = total;
    return map;
  }

  BlockIndex index(sig.params, sig.weak.data(), sig.strong.data(), new_size);
  Shared shared{index,
                options,
                env,
                basis_paths,
                sizes,
                new_size,
                std::vector<std::atomic<uint64_t>>(index.groups() + 1)};
  for (auto& b : shared.best) b.store(kNotFound, std::memory_order_relaxed);
  const uint64_t chunk =
      std::max<uint64_t>(1, (options.chunk_bytes + L - 1) / L) * L;
  std::vector<Chunk> chunks;
  for (size_t b = 0; b < sizes.size(); ++b)
    for (uint64_t off = 0; off < sizes[b]; off += chunk)
      chunks.push_back(
          {static_cast<int>(b), off, std::min(sizes[b], off + chunk)});

  if (chunks.empty()) {  // every basis empty
    if (stats) *stats = total;
    return map;
  }
  size_t threads = options.threads > 0 ? options.threads
                                       : std::thread::hardware_concurrency();
  threads = std::clamp<size_t>(threads, 1, chunks.size());
  // Runs step(scanner, chunk index) over every chunk on `threads` threads;
  // the first failing chunk's error (in chunk order) is the answer.
  auto parallel = [&](auto step) -> Status {
    std::vector<Status> errors(chunks.size());
    std::vector<BlockMatchStats> worker_stats(threads);
    std::atomic<size_t> next{0};
    auto work = [&](size_t w) {
      Scanner scanner(&shared);
      for (size_t i; (i = next.fetch_add(1)) < chunks.size();) {
        if (shared.failed.load()) break;
        errors[i] = step(scanner, i);
        if (!errors[i].ok()) shared.failed.store(true);
      }
      worker_stats[w] = scanner.stats;
    };
    if (threads == 1) {
      work(0);
    } else {
      std::vector<std::thread> pool;
      for (size_t w = 0; w < threads; ++w) pool.emplace_back(work, w);
      for (auto& t : pool) t.join();
    }
    for (const auto& ws : worker_stats) {
      total.rolled_bytes += ws.rolled_bytes;
      total.strong_sums += ws.strong_sums;
      total.parts_hashed += ws.parts_hashed;
      total.part_bytes += ws.part_bytes;
    }
    for (const Status& e : errors)
      if (!e.ok()) return e;
    return Status::OK();
  };
  std::vector<std::vector<uint64_t>> matches(chunks.size());
  FERRY_RETURN_IF_ERROR(parallel(
      [&](Scanner& sc, size_t i) { return sc.Scan(chunks[i], &matches[i]); }));
  // Second pass, for what the greedy scan missed: inside matched windows.
  std::vector<uint32_t> missing;
  for (uint32_t g = 0; g < index.groups(); ++g)
    if (shared.best[g].load() == kNotFound) missing.push_back(g);
  const bool find_short =
      index.short_len() && shared.best[index.groups()].load() == kNotFound;
  if (options.exhaustive && (!missing.empty() || find_short)) {
    BlockIndex only(index, missing);
    FERRY_RETURN_IF_ERROR(parallel([&](Scanner& sc, size_t i) {
      return sc.Rescan(chunks[i], matches[i], only, find_short);
    }));
  }
  if (stats) *stats = total;

  for (uint64_t i = 0; i < n; ++i) {
    uint64_t key = shared.best[index.GroupOf(i)].load();
    if (key == kNotFound) continue;
    map.blocks[i].basis = static_cast<int32_t>(key >> kOffsetBits);
    map.blocks[i].offset = key & ((uint64_t{1} << kOffsetBits) - 1);
  }
  return map;
}

}  // namespace ferry::delta
