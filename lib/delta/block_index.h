// Internal to lib/delta: a new object's blocks (from its signature) indexed
// for the block matcher: equal blocks grouped by weak and strong sum (all of
// a group are satisfied by one match; librsync would index only the first),
// the groups hashed by weak sum, and a cache of the strong sum of the window
// being looked at (computed at most once per offset, only on a weak match).
//
// Thread-safety: a BlockIndex is read-only once built and shared by the
// scanning threads; a StrongSum belongs to one thread.
#ifndef FERRY_LIB_DELTA_BLOCK_INDEX_H_
#define FERRY_LIB_DELTA_BLOCK_INDEX_H_

#include <cstdint>
#include <cstring>
#include <vector>

#include "delta/signature_impl.h"

namespace ferry::delta {

// BLAKE2b-256 of a window, as librsync's strong sum, computed on demand.
class StrongSum {
 public:
  StrongSum(const uint8_t* data, size_t n, uint64_t* counter)
      : data_(data), n_(n), counter_(counter) {}
  // Whether the window's sum starts with `strong` (len bytes).
  bool Equals(const uint8_t* strong, size_t len);

 private:
  const uint8_t* data_;
  size_t n_;
  uint64_t* counter_;
  bool done_ = false;
  uint8_t sum_[32];
};

class BlockIndex {
 public:
  static constexpr int64_t kNone = -1;

  // The sums of a signature of an object of `size` bytes (block count
  // checked by the caller); they must outlive the index.
  BlockIndex(const SignatureParams& params, const uint32_t* weak,
             const uint8_t* strong, uint64_t size);
  // The same blocks, with only the groups in `only` in its table (Find and
  // MayHold see no others).
  BlockIndex(const BlockIndex& all, const std::vector<uint32_t>& only);

  uint32_t block_len() const { return block_len_; }
  uint64_t full_blocks() const { return full_; }
  // The last block, when shorter than block_len (0: none).
  uint32_t short_len() const { return short_len_; }
  uint32_t short_weak() const { return weak_[full_]; }
  const uint8_t* short_strong() const { return Strong(full_); }
  // Groups 0 .. groups()-1 are the full blocks' groups; groups() is the
  // short block's.
  uint32_t groups() const { return static_cast<uint32_t>(first_.size()); }
  uint32_t GroupOf(uint64_t block) const {
    return block < full_ ? group_of_[block] : groups();
  }

  // Whether a full block may have weak sum h (no false negatives; about 1
  // in 64 false positives: one bit set per group in a filter of 64 bits per
  // group, so a miss rarely costs a mispredicted branch).
  bool MayHold(uint32_t h) const {
    uint32_t bit = (h * 0x9E3779B1u) >> filter_shift_;
    return filter_[bit >> 6] >> (bit & 63) & 1;
  }
  // The group of the full block at the window with weak sum h, or kNone.
  int64_t Find(uint32_t h, StrongSum* strong) const;
  // Whether full block `block` is at the window.
  bool Is(uint64_t block, uint32_t h, StrongSum* strong) const {
    return weak_[block] == h && strong->Equals(Strong(block), strong_len_);
  }
  bool IsShort(uint32_t h, StrongSum* strong) const {
    return weak_[full_] == h && strong->Equals(Strong(full_), strong_len_);
  }
  uint32_t Weak(uint64_t block) const { return weak_[block]; }
  const uint8_t* Strong(uint64_t block) const {
    return strong_ + block * strong_len_;
  }
  uint32_t strong_len() const { return strong_len_; }

  // The block expected right after a match of group g at basis offset p: the
  // successor of the member aligned with p, or of the group's first member.
  int64_t Next(uint32_t g, uint64_t p) const;

 private:
  struct Entry {
    uint32_t weak;
    uint32_t group;
  };
  uint32_t Bucket(uint32_t h) const { return (h * 0x9E3779B1u) >> shift_; }
  void BuildTable(const std::vector<uint32_t>& groups);

  uint32_t block_len_, strong_len_, short_len_;
  uint64_t full_;
  const uint32_t* weak_;
  const uint8_t* strong_;
  std::vector<uint32_t> group_of_;  // per full block
  std::vector<uint32_t> first_;     // per group: its lowest block
  int shift_ = 31;
  int filter_shift_ = 31;
  std::vector<uint64_t> filter_;
  std::vector<uint32_t> start_;  // bucket b: entries_[start_[b], start_[b+1])
  std::vector<Entry> entries_;
};

}  // namespace ferry::delta

#endif  // FERRY_LIB_DELTA_BLOCK_INDEX_H_
