#include "formats/tfrecord/tfrecord.h"

#include <cstring>

#include "ferry/crc32c.h"

namespace ferry::tfrecord {
namespace {

void PutFixed32(std::string* out, uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<char>(v >> (8 * i));
  out->append(b, 4);
}

uint32_t GetFixed32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= uint32_t(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

uint64_t GetFixed64(const char* p) {
  return uint64_t(GetFixed32(p)) | uint64_t(GetFixed32(p + 4)) << 32;
}

}  // namespace

void AppendRecord(std::string_view data, std::string* out) {
  char len[8];
  const uint64_t n = data.size();
  for (int i = 0; i < 8; ++i) len[i] = static_cast<char>(n >> (8 * i));
  out->append(len, 8);
  PutFixed32(out, crc32c::Mask(crc32c::Extend(0, len, 8)));
  out->append(data);
  PutFixed32(out, crc32c::Mask(crc32c::Value(data)));
}

bool DecodeHeader(std::string_view h, uint64_t* length) {
  if (h.size() < kHeaderSize || crc32c::Unmask(GetFixed32(h.data() + 8)) !=
                                    crc32c::Extend(0, h.data(), 8)) {
    return false;
  }
  *length = GetFixed64(h.data());
  return true;
}

bool DataCrcMatches(std::string_view data, std::string_view footer) {
  return footer.size() >= kFooterSize &&
         crc32c::Unmask(GetFixed32(footer.data())) == crc32c::Value(data);
}

Status RecordReader::Next(std::string_view* data, uint64_t* offset,
                          bool* done) {
  *done = false;
  *offset = pos_;
  const std::string where =
      "record " + std::to_string(index_) + " at offset " + std::to_string(pos_);
  const uint64_t left = file_.size() - pos_;
  if (left == 0) {
    *done = true;
    return Status::OK();
  }
  if (left < kHeaderSize) return Status::Corruption(where, "truncated header");
  const char* h = file_.data() + pos_;
  uint64_t len = 0;
  if (!DecodeHeader(std::string_view(h, kHeaderSize), &len)) {
    return Status::Corruption(where, "length CRC mismatch");
  }
  if (len > left - kHeaderSize || left - kHeaderSize - len < kFooterSize) {
    return Status::Corruption(
        where, "truncated record (length " + std::to_string(len) + ")");
  }
  std::string_view payload(h + kHeaderSize, len);
  if (!DataCrcMatches(payload,
                      std::string_view(h + kHeaderSize + len, kFooterSize))) {
    return Status::Corruption("record " + std::to_string(index_) +
                                  " at offset " +
                                  std::to_string(pos_ + kHeaderSize),
                              "data CRC mismatch");
  }
  *data = payload;
  pos_ += kOverhead + len;
  ++index_;
  return Status::OK();
}

std::string DaliIndexLine(uint64_t offset, uint64_t payload_size) {
  return std::to_string(offset) + " " +
         std::to_string(payload_size + kOverhead) + "\n";
}

}  // namespace ferry::tfrecord
