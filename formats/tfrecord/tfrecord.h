// TFRecord framing, exactly as TensorFlow writes it
// (formats/tfrecord/README.md):
//   u64 length (LE) | u32 masked CRC32C of those 8 bytes | data | u32 masked
//   CRC32C of data
// Pure bytes in, bytes out: the caller owns files and buffers.
// Thread-safety: functions are pure; a RecordReader is used by one thread.
#ifndef FERRY_FORMATS_TFRECORD_TFRECORD_H_
#define FERRY_FORMATS_TFRECORD_TFRECORD_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "ferry/status.h"

namespace ferry::tfrecord {

inline constexpr size_t kHeaderSize = 12;  // length + its CRC
inline constexpr size_t kFooterSize = 4;   // data CRC
inline constexpr size_t kOverhead = kHeaderSize + kFooterSize;

// Appends the framed record to *out.
void AppendRecord(std::string_view data, std::string* out);

// The two checks every reader makes. DecodeHeader: the 12 header bytes'
// length CRC holds; sets *length. DataCrcMatches: the 4 footer bytes hold
// the masked CRC32C of data.
bool DecodeHeader(std::string_view header, uint64_t* length);
bool DataCrcMatches(std::string_view data, std::string_view footer);

// Reads framed records from a buffer of a whole (uncompressed) TFRecord file,
// checking both CRCs. Errors name the record index and byte offset.
class RecordReader {
 public:
  explicit RecordReader(std::string_view file) : file_(file) {}
  // *data views the payload; at the end returns OK with *done = true.
  Status Next(std::string_view* data, uint64_t* offset, bool* done);
  uint64_t records_read() const { return index_; }

 private:
  std::string_view file_;
  uint64_t pos_ = 0;
  uint64_t index_ = 0;
};

// The DALI tfrecord2idx line for a record: "<offset> <framed size>\n".
std::string DaliIndexLine(uint64_t offset, uint64_t payload_size);

}  // namespace ferry::tfrecord

#endif  // FERRY_FORMATS_TFRECORD_TFRECORD_H_
