// lib/delta: the new object's blocks indexed for the block matcher.
#include "delta/block_index.h"

#include <blake2.h>

#include <algorithm>
#include <numeric>

namespace ferry::delta {

bool StrongSum::Equals(const uint8_t* strong, size_t len) {
  if (!done_) {
    // librsync's rs_calc_blake2_sum: BLAKE2b with a 32-byte digest (not a
    // cut BLAKE2b-512), unkeyed.
    blake2b(sum_, data_, nullptr, sizeof(sum_), n_, 0);
    done_ = true;
    ++*counter_;
  }
  return std::memcmp(sum_, strong, len) == 0;
}

BlockIndex::BlockIndex(const SignatureParams& params, const uint32_t* weak,
                       const uint8_t* strong, uint64_t size)
    : block_len_(params.block_len),
      strong_len_(params.strong_len),
      short_len_(static_cast<uint32_t>(size % params.block_len)),
      full_(size / params.block_len),
      weak_(weak),
      strong_(strong) {
  // Groups of equal blocks: blocks sorted by (weak, strong, index).
  std::vector<uint32_t> order(full_);
  std::iota(order.begin(), order.end(), 0);
  auto less = [&](uint32_t a, uint32_t b) {
    if (weak_[a] != weak_[b]) return weak_[a] < weak_[b];
    int c = std::memcmp(Strong(a), Strong(b), strong_len_);
    return c != 0 ? c < 0 : a < b;
  };
  std::sort(order.begin(), order.end(), less);
  group_of_.resize(full_);
  for (size_t i = 0; i < order.size(); ++i) {
    uint32_t b = order[i];
    bool same = i > 0 && weak_[b] == weak_[order[i - 1]] &&
                std::memcmp(Strong(b), Strong(order[i - 1]), strong_len_) == 0;
    if (!same) first_.push_back(b);
    group_of_[b] = static_cast<uint32_t>(first_.size() - 1);
  }
  std::vector<uint32_t> all(first_.size());
  std::iota(all.begin(), all.end(), 0);
  BuildTable(all);
}

BlockIndex::BlockIndex(const BlockIndex& all, const std::vector<uint32_t>& only)
    : block_len_(all.block_len_),
      strong_len_(all.strong_len_),
      short_len_(all.short_len_),
      full_(all.full_),
      weak_(all.weak_),
      strong_(all.strong_),
      group_of_(all.group_of_),
      first_(all.first_) {
  BuildTable(only);
}

void BlockIndex::BuildTable(const std::vector<uint32_t>& groups) {
  // Buckets: at least 4 per group, so most offsets of changed data find an
  // empty bucket and cost no more than the rolling itself.
  int bits = 1;
  while ((uint64_t{1} << bits) < uint64_t{4} * groups.size() + 1) ++bits;
  shift_ = 32 - bits;
  start_.assign((size_t{1} << bits) + 1, 0);
  for (uint32_t g : groups) ++start_[Bucket(weak_[first_[g]]) + 1];
  std::partial_sum(start_.begin(), start_.end(), start_.begin());
  entries_.resize(groups.size());
  std::vector<uint32_t> fill(start_.begin(), start_.end() - 1);
  for (uint32_t g : groups) {
    uint32_t w = weak_[first_[g]];
    entries_[fill[Bucket(w)]++] = {w, g};
  }
  int filter_bits = 6;
  while (filter_bits < 32 &&
         (uint64_t{1} << filter_bits) < uint64_t{64} * groups.size())
    ++filter_bits;
  filter_shift_ = 32 - filter_bits;
  filter_.assign(std::max<size_t>(1, (size_t{1} << filter_bits) / 64), 0);
  for (uint32_t g : groups) {
    uint32_t bit = (weak_[first_[g]] * 0x9E3779B1u) >> filter_shift_;
    filter_[bit >> 6] |= uint64_t{1} << (bit & 63);
  }
}

int64_t BlockIndex::Find(uint32_t h, StrongSum* strong) const {
  uint32_t b = Bucket(h);
  for (uint32_t e = start_[b]; e < start_[b + 1]; ++e) {
    if (entries_[e].weak != h) continue;
    uint32_t g = entries_[e].group;
    if (strong->Equals(Strong(first_[g]), strong_len_)) return g;
  }
  return kNone;
}

int64_t BlockIndex::Next(uint32_t g, uint64_t p) const {
  uint64_t m = first_[g];
  if (p % block_len_ == 0 && p / block_len_ < full_ &&
      group_of_[p / block_len_] == g)
    m = p / block_len_;
  return m + 1 < full_ ? static_cast<int64_t>(m + 1) : kNone;
}

}  // namespace ferry::delta
