// Internal to lib/delta: boundary refinement of a delta made from a
// signature alone (docs/delta.md "Refining a delta"). rs_delta(sig(old),
// new) knows the old object only by whole blocks, so around each edit it
// sends as literal up to a block of bytes the old object has. Given the old
// blocks next to each literal (read from the bucket by the caller, each
// checked here against the old object's signature), the copies on either
// side grow byte by byte into the literal while the bytes agree.
//
// Thread-safety: functions of their arguments.
#ifndef FERRY_LIB_DELTA_REFINE_H_
#define FERRY_LIB_DELTA_REFINE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ferry/delta.h"
#include "ferry/env.h"
#include "formats/delta/rdiff_delta.h"

namespace ferry::delta {

using format::DeltaCommand;

// The old blocks a refinement of `commands` looks at, ascending: for a
// literal after a copy ending at a block boundary, the block that starts
// there; for a literal before a copy starting at a block boundary, the block
// that ends there. Blocks of an old object of old_size bytes only.
std::vector<uint64_t> BlocksAround(const std::vector<DeltaCommand>& commands,
                                   uint32_t block_len, uint64_t old_size);

struct RefineStats {
  uint64_t blocks_used = 0;     // old blocks that matched their sums
  uint64_t blocks_refused = 0;  // old blocks that did not: not used
  uint64_t literal_bytes_before = 0;
  uint64_t literal_bytes_after = 0;
};

// `commands` (a delta's, as DeltaReader lists them) with every copy next to
// a literal grown into it as far as the old bytes agree with the new ones:
// forward from its end, backward from its start, at most one block each way.
// `old_blocks` maps a block index to the bytes read for it; a block missing
// there or whose bytes do not have the weak and strong sum `old_sig` gives it
// is not used (its boundary stays as it was). `new_file` is the file the
// delta produces. The result produces the same bytes from the same old
// object; literals emptied are dropped. InvalidArgument when old_sig is not
// the signature of an old_size-byte object.
Result<std::vector<DeltaCommand>> RefineCommands(
    const std::vector<DeltaCommand>& commands, const Signature& old_sig,
    uint64_t old_size, const std::map<uint64_t, std::string>& old_blocks,
    const RandomAccessFile& new_file, RefineStats* stats = nullptr);

// Writes the delta of `commands` (literal bytes read from new_file at their
// offsets): copies that continue one another in the old object become one
// command, as do adjacent literals; each command in its shortest encoding.
Status WriteDelta(const std::vector<DeltaCommand>& commands,
                  const RandomAccessFile& new_file, ByteSink out);

}  // namespace ferry::delta

#endif  // FERRY_LIB_DELTA_REFINE_H_
