#include "ferry/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define FERRY_CRC32C_X86 1
#endif

namespace ferry::crc32c {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli

// Slicing-by-8 tables: kTable[k][b] is the CRC of byte b followed by k zeros.
constexpr std::array<std::array<uint32_t, 256>, 8> MakeTables() {
  std::array<std::array<uint32_t, 256>, 8> t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int i = 0; i < 8; ++i) c = (c >> 1) ^ ((c & 1) ? kPoly : 0);
    t[0][b] = c;
  }
  for (int k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFF];
    }
  }
  return t;
}
constexpr auto kTable = MakeTables();

inline uint64_t LoadLE64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;  // x86 and the other supported targets are little-endian
}

#ifdef FERRY_CRC32C_X86
__attribute__((target("sse4.2"))) uint32_t ExtendSse42(uint32_t crc,
                                                       const char* p,
                                                       size_t n) {
  uint64_t c = ~crc;
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), static_cast<uint8_t>(*p++));
    --n;
  }
  // Three independent streams would hide the instruction's latency; one is
  // already far above what TFRecord framing needs (several GB/s).
  while (n >= 8) {
    c = _mm_crc32_u64(c, LoadLE64(p));
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), static_cast<uint8_t>(*p++));
    --n;
  }
  return ~static_cast<uint32_t>(c);
}

bool HaveSse42() {
  static const bool have = __builtin_cpu_supports("sse4.2");
  return have;
}
#endif

}  // namespace

uint32_t ExtendPortable(uint32_t crc, const char* p, size_t n) {
  uint32_t c = ~crc;
  while (n >= 8) {
    uint64_t v = LoadLE64(p) ^ c;
    c = kTable[7][v & 0xFF] ^ kTable[6][(v >> 8) & 0xFF] ^
        kTable[5][(v >> 16) & 0xFF] ^ kTable[4][(v >> 24) & 0xFF] ^
        kTable[3][(v >> 32) & 0xFF] ^ kTable[2][(v >> 40) & 0xFF] ^
        kTable[1][(v >> 48) & 0xFF] ^ kTable[0][v >> 56];
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = (c >> 8) ^ kTable[0][(c ^ static_cast<uint8_t>(*p++)) & 0xFF];
    --n;
  }
  return ~c;
}

bool IsAccelerated() {
#ifdef FERRY_CRC32C_X86
  return HaveSse42();
#else
  return false;
#endif
}

uint32_t Extend(uint32_t crc, const char* data, size_t n) {
#ifdef FERRY_CRC32C_X86
  if (HaveSse42()) return ExtendSse42(crc, data, n);
#endif
  return ExtendPortable(crc, data, n);
}

}  // namespace ferry::crc32c
