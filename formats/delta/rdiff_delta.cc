// formats/delta/README.md "Delta": reading and writing the command stream.
#include "formats/delta/rdiff_delta.h"

#include <algorithm>

#include "formats/delta/rdiff_format.h"

namespace ferry::delta::format {
namespace {

constexpr uint8_t kEnd = 0x00;
constexpr uint8_t kLiteral64 = 0x40;  // 0x01..0x40: the length is the opcode
constexpr uint8_t kLiteralN1 = 0x41;  // 0x41..0x44: length in 1/2/4/8 bytes
constexpr uint8_t kCopyN1N1 = 0x45;   // 0x45..0x54: 0x45 + 4 × pos + len
constexpr uint8_t kFirstReserved = 0x55;
// Far above any file a manifest allows (2^50); keeps sums from overflowing.
constexpr uint64_t kMaxValue = uint64_t{1} << 62;

// The index (0..3) of the fewest of 1, 2, 4, 8 bytes that hold v.
int WidthIndex(uint64_t v) {
  if (v <= 0xff) return 0;
  if (v <= 0xffff) return 1;
  if (v <= 0xffffffff) return 2;
  return 3;
}

void PutBigEndian(uint64_t v, int width, std::string* out) {
  for (int i = width - 1; i >= 0; --i)
    out->push_back(static_cast<char>(v >> (8 * i) & 0xff));
}

uint64_t GetBigEndian(const char* p, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) v = v << 8 | static_cast<uint8_t>(p[i]);
  return v;
}

// Bytes of the command whose opcode is op (opcode included); 0: reserved.
size_t CommandBytes(uint8_t op) {
  if (op <= kLiteral64) return 1;
  if (op < kCopyN1N1) return 1 + (size_t{1} << (op - kLiteralN1));
  if (op < kFirstReserved) {
    int i = op - kCopyN1N1;
    return 1 + (size_t{1} << (i / 4)) + (size_t{1} << (i % 4));
  }
  return 0;
}

}  // namespace

Status DeltaReader::Fail(std::string why) {
  if (error_.ok()) error_ = Status::Corruption("delta", std::move(why));
  return error_;
}

void DeltaReader::Add(bool copy, uint64_t length, uint64_t old_offset) {
  if (!copy && !commands_.empty() && !commands_.back().copy) {
    commands_.back().length += length;
  } else {
    commands_.push_back(DeltaCommand{copy, out_, length, old_offset});
  }
  out_ += length;
  if (!copy) literal_bytes_ += length;
}

Status DeltaReader::Update(std::string_view data) {
  FERRY_RETURN_IF_ERROR(error_);
  while (!data.empty()) {
    if (ended_) return Fail("bytes after its END command");
    if (literal_left_ > 0) {
      uint64_t n = std::min<uint64_t>(literal_left_, data.size());
      literal_left_ -= n;
      data.remove_prefix(n);
      continue;
    }
    pending_.push_back(data.front());
    data.remove_prefix(1);
    if (!magic_done_) {
      if (pending_.size() < 4) continue;
      if (GetBigEndian(pending_.data(), 4) != kDeltaMagic)
        return Fail("not an rdiff delta (bad magic)");
      magic_done_ = true;
      pending_.clear();
      continue;
    }
    const uint8_t op = static_cast<uint8_t>(pending_[0]);
    const size_t need = CommandBytes(op);
    if (need == 0)
      return Fail("reserved command " + std::to_string(op) + " at output " +
                  std::to_string(out_));
    if (pending_.size() < need) continue;
    if (op == kEnd) {
      ended_ = true;
    } else if (op <= kLiteral64) {
      Add(false, op, 0);
      literal_left_ = op;
    } else if (op < kCopyN1N1) {
      uint64_t len =
          GetBigEndian(pending_.data() + 1, int{1} << (op - kLiteralN1));
      if (len == 0 || len > kMaxValue)
        return Fail("literal of length " + std::to_string(len));
      Add(false, len, 0);
      literal_left_ = len;
    } else {
      int i = op - kCopyN1N1;
      int pw = 1 << (i / 4), lw = 1 << (i % 4);
      uint64_t pos = GetBigEndian(pending_.data() + 1, pw);
      uint64_t len = GetBigEndian(pending_.data() + 1 + pw, lw);
      if (len == 0 || len > kMaxValue || pos > kMaxValue)
        return Fail("copy of " + std::to_string(len) + " bytes at " +
                    std::to_string(pos));
      Add(true, len, pos);
    }
    if (out_ > kMaxValue) return Fail("output past 2^62 bytes");
    pending_.clear();
  }
  return Status::OK();
}

Status DeltaReader::Finish() {
  FERRY_RETURN_IF_ERROR(error_);
  if (!ended_) return Fail("cut short: no END command");
  return Status::OK();
}

DeltaWriter::DeltaWriter(Sink sink) : sink_(std::move(sink)) {}

Status DeltaWriter::Put(std::string_view data) {
  FERRY_RETURN_IF_ERROR(error_);
  if (!started_) {
    started_ = true;
    std::string magic;
    PutBigEndian(kDeltaMagic, 4, &magic);
    error_ = sink_(magic);
    FERRY_RETURN_IF_ERROR(error_);
  }
  error_ = sink_(data);
  return error_;
}

Status DeltaWriter::Copy(uint64_t old_offset, uint64_t length) {
  if (length == 0) return error_;
  const int pi = WidthIndex(old_offset), li = WidthIndex(length);
  std::string cmd(1, static_cast<char>(kCopyN1N1 + 4 * pi + li));
  PutBigEndian(old_offset, 1 << pi, &cmd);
  PutBigEndian(length, 1 << li, &cmd);
  return Put(cmd);
}

Status DeltaWriter::LiteralHeader(uint64_t length) {
  if (length == 0) return error_;
  if (length <= kLiteral64)
    return Put(std::string(1, static_cast<char>(length)));
  const int li = WidthIndex(length);
  std::string cmd(1, static_cast<char>(kLiteralN1 + li));
  PutBigEndian(length, 1 << li, &cmd);
  return Put(cmd);
}

Status DeltaWriter::Bytes(std::string_view data) {
  if (data.empty()) return error_;
  return Put(data);
}

Status DeltaWriter::End() {
  return Put(std::string(1, static_cast<char>(kEnd)));
}

}  // namespace ferry::delta::format
