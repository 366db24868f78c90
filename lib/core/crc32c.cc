#include "ferry/crc32c.h"

#include <array>
#include <cstring>
#include <utility>

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
// The crc32 instruction has a latency of 3 cycles but a throughput of one
// per cycle, so three independent streams over three adjacent blocks run
// about three times faster than one. The streams are joined by "shifting"
// a CRC over a block of zeros: a linear map, applied with four byte tables.
constexpr size_t kLongBlock = 8192, kShortBlock = 256;

struct ShiftTables {
  uint32_t long_shift[4][256];
  uint32_t short_shift[4][256];
};

// Multiplies the 32x32 GF(2) matrix `m` (one column a row) by vector v.
uint32_t MatTimes(const uint32_t* m, uint32_t v) {
  uint32_t out = 0;
  for (int i = 0; v; ++i, v >>= 1) {
    if (v & 1) out ^= m[i];
  }
  return out;
}

// dst = m * m.
void MatSquare(uint32_t* dst, const uint32_t* m) {
  for (int i = 0; i < 32; ++i) dst[i] = MatTimes(m, m[i]);
}

// Fills t with the map "CRC register -> register after `bytes` zero bytes"
// (bytes a power of two), split into four byte-indexed tables.
void BuildShift(uint32_t t[4][256], size_t bytes) {
  uint32_t a[32], b[32];
  a[0] = kPoly;  // one zero bit
  for (int i = 1; i < 32; ++i) a[i] = 1u << (i - 1);
  uint32_t* cur = a;
  uint32_t* next = b;
  for (size_t bits = 1; bits < bytes * 8;
       bits *= 2) {  // square up to 8*bytes zero bits
    MatSquare(next, cur);
    std::swap(cur, next);
  }
  for (uint32_t v = 0; v < 256; ++v) {
    for (int k = 0; k < 4; ++k) t[k][v] = MatTimes(cur, v << (8 * k));
  }
}

const ShiftTables& Shifts() {
  static const ShiftTables* t = [] {
    auto* s = new ShiftTables;
    BuildShift(s->long_shift, kLongBlock);
    BuildShift(s->short_shift, kShortBlock);
    return s;
  }();
  return *t;
}

inline uint32_t Shift(const uint32_t t[4][256], uint32_t crc) {
  return t[0][crc & 0xff] ^ t[1][(crc >> 8) & 0xff] ^ t[2][(crc >> 16) & 0xff] ^
         t[3][crc >> 24];
}

__attribute__((target("sse4.2"))) uint64_t ThreeStreams(
    uint64_t c0, const char*& p, size_t& n, size_t block,
    const uint32_t t[4][256]) {
  while (n >= 3 * block) {
    uint64_t c1 = 0, c2 = 0;
    for (const char* end = p + block; p < end; p += 8) {
      c0 = _mm_crc32_u64(c0, LoadLE64(p));
      c1 = _mm_crc32_u64(c1, LoadLE64(p + block));
      c2 = _mm_crc32_u64(c2, LoadLE64(p + 2 * block));
    }
    c0 = Shift(t, static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1);
    c0 = Shift(t, static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c2);
    p += 2 * block;
    n -= 3 * block;
  }
  return c0;
}

__attribute__((target("sse4.2"))) uint32_t ExtendSse42(uint32_t crc,
                                                       const char* p,
                                                       size_t n) {
  uint64_t c = ~crc;
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), static_cast<uint8_t>(*p++));
    --n;
  }
  if (n >= 3 * kShortBlock) {
    const ShiftTables& t = Shifts();
    c = ThreeStreams(c, p, n, kLongBlock, t.long_shift);
    c = ThreeStreams(c, p, n, kShortBlock, t.short_shift);
  }
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
