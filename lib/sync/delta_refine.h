// Publish's boundary refinement of a delta (docs/delta.md "Refining a
// delta"): the old object's blocks next to each literal of a delta, read
// from the bucket with ranged GETs, for lib/delta's RefineCommands.
//
// Thread-safety: functions of their arguments (the Backend is thread-safe).
#ifndef FERRY_LIB_SYNC_DELTA_REFINE_H_
#define FERRY_LIB_SYNC_DELTA_REFINE_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/remote.h"
#include "ferry/result.h"

namespace ferry::sync {

// Blocks closer than this are read in one GET (the bytes between are read
// too: a round trip to S3 costs more than 64 KiB at 200 Mbit/s).
inline constexpr uint64_t kRefineGap = 64 << 10;
// GETs in flight at once per delta.
inline constexpr int kRefineReaders = 8;
// Old bytes read per delta at most (blocks past it are not read: their
// boundaries are not refined).
inline constexpr uint64_t kMaxRefineRead = uint64_t{16} << 20;

struct RefineReads {
  uint64_t bytes = 0;            // read from the bucket
  uint64_t requests = 0;         // ranged GETs
  uint64_t blocks_left_out = 0;  // past max_bytes
};

// Block i (of block_len bytes, the last one shorter) of the old object at
// `key`, of old_size bytes, for each i in `blocks` (ascending), as far as
// max_bytes allows, in order. Any failed read fails the call.
Result<std::map<uint64_t, std::string>> ReadOldBlocks(
    Backend* backend, std::string_view key, uint64_t old_size,
    uint32_t block_len, const std::vector<uint64_t>& blocks, uint64_t max_bytes,
    RefineReads* reads);

}  // namespace ferry::sync

#endif  // FERRY_LIB_SYNC_DELTA_REFINE_H_
