// Fuzz target: a multipart/byteranges body (an untrusted HTTP server's
// answer to a GET of several ranges, remote/byteranges.h). The first byte
// picks the size of the pieces it is fed in; the rest is the body, with
// the boundary "B0UND". Each body is read or refused; no part ever gets
// more bytes than its Content-Range says, and a body read to its end gave
// every part all of them.
#include "remote/byteranges.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = 1 + data[0] % 64;
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  uint64_t want = 0, got = 0;
  bool in_part = false;
  ferry::remote::ByterangesReader reader(
      "B0UND",
      [&](const ferry::remote::ContentRange& cr) {
        if (in_part && got != want) std::abort();  // a part cut short
        if (cr.last < cr.first) std::abort();
        want = cr.last - cr.first + 1;
        got = 0;
        in_part = true;
        return ferry::Status::OK();
      },
      [&](std::string_view bytes) {
        if (!in_part || bytes.empty()) std::abort();
        got += bytes.size();
        if (got > want) std::abort();
        return ferry::Status::OK();
      });
  ferry::Status s;
  for (size_t at = 0; s.ok() && at < body.size(); at += piece)
    s = reader.Feed(body.substr(at, piece));
  if (s.ok() && reader.Finish().ok() && in_part && got != want) std::abort();
  return 0;
}
