// The rdiff delta command stream (formats/delta/README.md "Delta"): a reader
// that lists a delta's commands placed in the file it produces (the bytes of
// its literals skipped), and a writer that emits commands in their shortest
// encodings, as librsync does. Pure bytes in, bytes out; no IO. Publish uses
// both to refine the deltas librsync makes (docs/delta.md).
//
// Thread-safety: each object is used by one thread at a time.
#ifndef FERRY_FORMATS_DELTA_RDIFF_DELTA_H_
#define FERRY_FORMATS_DELTA_RDIFF_DELTA_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/status.h"

namespace ferry::delta::format {

// One command of a delta, placed in the file it produces: bytes
// [new_offset, new_offset + length) of that file are a copy of the basis's
// [old_offset, old_offset + length) (copy) or the literal's own bytes.
struct DeltaCommand {
  bool copy = false;
  uint64_t new_offset = 0;
  uint64_t length = 0;
  uint64_t old_offset = 0;  // copy only
  bool operator==(const DeltaCommand&) const = default;
};

// Reads a delta fed in pieces of any size. Consecutive literals become one
// command; copies are listed as written (a copy continuing the one before
// in the basis is not merged). Errors (bad magic, reserved or zero-length
// commands, a length or offset past 2^62, anything after END, a delta cut
// short) are Corruption and sticky.
class DeltaReader {
 public:
  Status Update(std::string_view data);
  // Refuses a delta without its END.
  Status Finish();
  const std::vector<DeltaCommand>& commands() const { return commands_; }
  uint64_t literal_bytes() const { return literal_bytes_; }
  uint64_t output_bytes() const { return out_; }

 private:
  Status Fail(std::string why);
  void Add(bool copy, uint64_t length, uint64_t old_offset);

  std::string pending_;  // an unfinished header or command
  bool magic_done_ = false;
  bool ended_ = false;
  uint64_t literal_left_ = 0;  // literal bytes still to skip
  uint64_t out_ = 0;
  uint64_t literal_bytes_ = 0;
  std::vector<DeltaCommand> commands_;
  Status error_;
};

// Writes a delta to a sink: the magic (before the first command), then commands
// in the shortest encoding librsync would use for them (a literal of 1..64
// bytes in its opcode, other lengths and copy offsets in the fewest of 1, 2, 4
// or 8 big-endian bytes), then END. The sink's error is sticky.
class DeltaWriter {
 public:
  using Sink = std::function<Status(std::string_view)>;
  explicit DeltaWriter(Sink sink);
  // Length 0 writes nothing.
  Status Copy(uint64_t old_offset, uint64_t length);
  // A literal's header; its `length` bytes must follow through Bytes.
  Status LiteralHeader(uint64_t length);
  Status Bytes(std::string_view data);
  Status End();

 private:
  Status Put(std::string_view data);
  Sink sink_;
  bool started_ = false;
  Status error_;
};

}  // namespace ferry::delta::format

#endif  // FERRY_FORMATS_DELTA_RDIFF_DELTA_H_
