#include "remote/journal.h"

#include <cstring>

#include "ferry/crc32c.h"

namespace ferry::remote {
namespace {

constexpr char kMagic[8] = {'F', 'E', 'R', 'R', 'Y', 'J', '0', '1'};
constexpr size_t kMaxString = 8192;

void PutU(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(char((v >> (8 * i)) & 0xff));
}

struct Reader {
  std::string_view in;
  bool ok = true;
  uint64_t U(int bytes) {
    if (in.size() < size_t(bytes)) {
      ok = false;
      return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i)
      v |= uint64_t(static_cast<unsigned char>(in[i])) << (8 * i);
    in.remove_prefix(bytes);
    return v;
  }
  std::string Str() {
    size_t n = U(2);
    if (!ok || in.size() < n) {
      ok = false;
      return {};
    }
    std::string s(in.substr(0, n));
    in.remove_prefix(n);
    return s;
  }
};

uint32_t RecordCrc(uint32_t header_crc, uint64_t part, uint64_t len) {
  std::string b;
  PutU(&b, header_crc, 4);
  PutU(&b, part, 8);
  PutU(&b, len, 8);
  return crc32c::Value(b);
}

Status Bad(std::string_view why) {
  return Status::Corruption("resume journal", why);
}

}  // namespace

std::string EncodeJournalHeader(const JournalHeader& h) {
  std::string fields;
  PutU(&fields, h.size, 8);
  PutU(&fields, h.part_size, 8);
  PutU(&fields, h.have_expected ? 1 : 0, 1);
  PutU(&fields, h.expected.high, 8);
  PutU(&fields, h.expected.low, 8);
  std::string etag = h.etag.substr(0, kMaxString);
  std::string url = h.url.substr(0, kMaxString);
  PutU(&fields, etag.size(), 2);
  fields += etag;
  PutU(&fields, url.size(), 2);
  fields += url;
  std::string out(kMagic, sizeof(kMagic));
  PutU(&out, fields.size(), 4);
  out += fields;
  PutU(&out, crc32c::Value(out), 4);
  return out;
}

std::string EncodeJournalRecord(std::string_view header_bytes, uint64_t part,
                                uint64_t part_len) {
  uint32_t header_crc =
      crc32c::Value(header_bytes.substr(0, header_bytes.size() - 4));
  std::string out;
  PutU(&out, part, 8);
  PutU(&out, part_len, 8);
  PutU(&out, RecordCrc(header_crc, part, part_len), 4);
  return out;
}

Result<JournalState> ParseJournal(std::string_view bytes) {
  if (bytes.size() < 12 || std::memcmp(bytes.data(), kMagic, 8) != 0)
    return Bad("no header");
  Reader r{bytes.substr(8)};
  uint64_t fields_len = r.U(4);
  size_t header_len = 12 + fields_len + 4;
  if (fields_len > 2 * kMaxString + 64 || bytes.size() < header_len)
    return Bad("short header");
  uint32_t header_crc = crc32c::Value(bytes.substr(0, 12 + fields_len));
  Reader f{bytes.substr(12, fields_len)};
  Reader c{bytes.substr(12 + fields_len, 4)};
  if (c.U(4) != header_crc) return Bad("header checksum mismatch");
  JournalState st;
  JournalHeader& h = st.header;
  h.size = f.U(8);
  h.part_size = f.U(8);
  uint64_t have = f.U(1);
  h.expected.high = f.U(8);
  h.expected.low = f.U(8);
  h.etag = f.Str();
  h.url = f.Str();
  if (!f.ok || !f.in.empty() || have > 1 || h.part_size == 0)
    return Bad("malformed header");
  h.have_expected = have == 1;
  std::string_view recs = bytes.substr(header_len);
  if (recs.size() % kJournalRecordSize != 0) return Bad("torn record");
  st.done.assign(h.parts(), false);
  for (size_t i = 0; i < recs.size(); i += kJournalRecordSize) {
    Reader rr{recs.substr(i, kJournalRecordSize)};
    uint64_t part = rr.U(8), len = rr.U(8), crc = rr.U(4);
    if (crc != RecordCrc(header_crc, part, len))
      return Bad("record checksum mismatch");
    if (part >= h.parts() || len != h.PartLength(part))
      return Bad("record for a part the object does not have");
    if (!st.done[part]) {
      st.done[part] = true;
      st.done_bytes += len;
    }
  }
  return st;
}

}  // namespace ferry::remote
