// lib/delta: from a block map to copies and merged range fetches.
#include "ferry/delta.h"

namespace ferry::delta {

BlockPlan PlanRanges(const BlockMap& map, uint64_t gap) {
  BlockPlan plan;
  const uint64_t n = map.blocks.size();
  // Runs of missing blocks, merged across holes of fewer than `gap` bytes.
  for (uint64_t i = 0; i < n; ++i) {
    if (map.blocks[i].found()) continue;
    uint64_t begin = map.BlockOffset(i);
    uint64_t end = begin + map.BlockLength(i);
    if (!plan.fetches.empty()) {
      BlockPlan::Range& last = plan.fetches.back();
      const uint64_t hole = begin - (last.offset + last.length);
      if (hole == 0 || hole < gap) {
        last.length = end - last.offset;
        continue;
      }
    }
    plan.fetches.push_back({begin, end - begin});
  }
  // Found blocks outside the fetched ranges are copied; a block adjacent in
  // both the new object and the same basis extends the previous copy.
  size_t r = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t begin = map.BlockOffset(i), len = map.BlockLength(i);
    while (r < plan.fetches.size() &&
           plan.fetches[r].offset + plan.fetches[r].length <= begin)
      ++r;
    if (r < plan.fetches.size() && plan.fetches[r].offset <= begin) continue;
    const BlockLocation& at = map.blocks[i];
    if (!plan.copies.empty()) {
      BlockPlan::Copy& last = plan.copies.back();
      if (last.basis == at.basis && last.new_offset + last.length == begin &&
          last.basis_offset + last.length == at.offset) {
        last.length += len;
        continue;
      }
    }
    plan.copies.push_back({at.basis, at.offset, begin, len});
  }
  for (const auto& c : plan.copies) plan.copy_bytes += c.length;
  for (const auto& f : plan.fetches) plan.fetch_bytes += f.length;
  return plan;
}

}  // namespace ferry::delta
