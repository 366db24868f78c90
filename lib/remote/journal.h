// The resume journal of a download in progress, `DEST.ferry-part.journal`
// (docs/remote.md "What is on disk"): which parts of `DEST.ferry-part` hold
// their final bytes. Pure bytes in, bytes out; the file IO is part_file.h.
//
// Layout (integers little-endian):
//   header: "FERRYJ01"  u32 fields_len  fields  u32 crc32c(magic..fields)
//     fields: u64 size  u64 part_size  u8 have_expected  u8[16] expected
//             u16 etag_len etag  u16 url_len url
//   then one 20-byte record per part whose bytes were synced before the
//   record was written: u64 part  u64 part_len  u32 crc32c(header crc, part,
//   part_len) - chained to the header so no record fits another journal.
// Anything that does not parse exactly - a short or flipped byte anywhere, a
// part out of range, a wrong part length - makes the whole journal invalid,
// and an invalid journal is treated as absent (the part file is discarded).
#ifndef FERRY_LIB_REMOTE_JOURNAL_H_
#define FERRY_LIB_REMOTE_JOURNAL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/hash.h"
#include "ferry/result.h"

namespace ferry::remote {

struct JournalHeader {
  uint64_t size = 0;
  uint64_t part_size = 0;
  bool have_expected = false;
  Hash128 expected{};
  std::string etag;
  std::string url;

  uint64_t parts() const {
    return part_size == 0 ? 0 : (size + part_size - 1) / part_size;
  }
  uint64_t PartLength(uint64_t part) const {
    uint64_t off = part * part_size;
    return size - off < part_size ? size - off : part_size;
  }
  friend bool operator==(const JournalHeader&, const JournalHeader&) = default;
};

struct JournalState {
  JournalHeader header;
  std::vector<bool> done;  // one per part
  uint64_t done_bytes = 0;
};

constexpr size_t kJournalRecordSize = 20;

std::string EncodeJournalHeader(const JournalHeader& header);
// The record for `part` of a journal whose header encoded to header_bytes.
std::string EncodeJournalRecord(std::string_view header_bytes, uint64_t part,
                                uint64_t part_len);
// Corruption for anything but a well-formed journal.
Result<JournalState> ParseJournal(std::string_view bytes);

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_JOURNAL_H_
