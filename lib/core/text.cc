#include "ferry/text.h"

#include <cstdio>

namespace ferry {

size_t Utf8Length(std::string_view s, size_t i) {
  const unsigned char c = s[i];
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const unsigned char b = s[i + k];
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return 0;
  }
  return n;
}

std::string Printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  auto escape = [&](std::string_view bytes) {
    for (unsigned char c : bytes) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  };
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = s[i];
    if (c < 0x20 || c == 0x7f) {
      escape(s.substr(i, 1));
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (const size_t n = Utf8Length(s, i); n == 0) {
      escape(s.substr(i, 1));  // not UTF-8
    } else {
      // U+0080..U+009F (C1 controls: 0xC2 0x80..0x9F) move a terminal too.
      const bool c1 = c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0;
      // U+2028/2029 (line and paragraph separators) and the bidirectional
      // controls U+202A..202E, U+2066..2069: they break a line, or show a
      // name's characters in another order than its bytes (E2 80 A8..AE,
      // E2 81 A6..A9).
      const unsigned char b1 = n == 3 ? s[i + 1] : 0,
                          b2 = n == 3 ? s[i + 2] : 0;
      const bool moves =
          c == 0xE2 && ((b1 == 0x80 && b2 >= 0xA8 && b2 <= 0xAE) ||
                        (b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9));
      if (c1 || moves) {
        escape(s.substr(i, n));
      } else {
        out.append(s.substr(i, n));
      }
      i += n - 1;
    }
  }
  return out;
}

}  // namespace ferry
