// The order of items by path that the split lists and the assignment file
// are written in (and that ReadPreviousAssignment looks paths up in): bytes
// compared as unsigned, a path before every longer path it starts -- exactly
// std::string's operator<.
// Thread-safety: pure functions.
#ifndef FERRY_SPLIT_PATH_ORDER_H_
#define FERRY_SPLIT_PATH_ORDER_H_

#include <cstdint>
#include <vector>

#include "ferry/split.h"

namespace ferry::split {

// Indexes of the items sorted by path; equal paths by index. With keep
// given (one entry per item), only the items with keep[i] >= 0 (a split
// assignment: dropped items are -1).
//
// 1M paths sorted with std::sort and operator< cost two cache misses and a
// memcmp for each of ~20M comparisons. This is a most-significant-digit
// radix sort instead: each pass reads 7 bytes of every path in a range at
// once into an integer key, sorts the (key, index) pairs and goes on with
// the next 7 bytes only inside runs of equal keys; bytes every path in a
// range shares are skipped without a sort. Input already in order (a tree
// walk, a sorted listing) is found by one pass and kept.
std::vector<uint32_t> PathOrder(const std::vector<SplitItem>& items,
                                const std::vector<int>* keep = nullptr);

}  // namespace ferry::split

#endif  // FERRY_SPLIT_PATH_ORDER_H_
