// Raw rdiff delta commands (formats/delta/README.md), for tests that build
// damaged or malicious deltas by hand.
#ifndef FERRY_TESTS_TESTUTIL_DELTA_BYTES_H_
#define FERRY_TESTS_TESTUTIL_DELTA_BYTES_H_

#include <cstdint>
#include <string>

namespace ferry::test {

// Big-endian n-byte integer.
inline std::string Be(uint64_t v, int n) {
  std::string s;
  for (int i = n - 1; i >= 0; --i) s += static_cast<char>(v >> (8 * i));
  return s;
}

inline const std::string kDeltaMagic("rs\x02\x36", 4);
inline const std::string kDeltaEnd(1, '\0');
// COPY with 8-byte position and 8-byte length (rdiff's 0x54).
inline std::string Copy8(uint64_t pos, uint64_t len) {
  return "\x54" + Be(pos, 8) + Be(len, 8);
}
// LITERAL with a 1-byte length (< 256 bytes).
inline std::string Literal(const std::string& bytes) {
  return "\x41" + Be(bytes.size(), 1) + bytes;
}
// LITERAL with a 4-byte length.
inline std::string Literal4(const std::string& bytes) {
  return "\x43" + Be(bytes.size(), 4) + bytes;
}

}  // namespace ferry::test

#endif  // FERRY_TESTS_TESTUTIL_DELTA_BYTES_H_
