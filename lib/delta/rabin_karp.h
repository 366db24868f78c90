// Internal to lib/delta: librsync's RabinKarp rolling sum (its
// src/rabinkarp.h), the weak sum of an rdiff signature (magic 0x72730147).
// The sum of bytes b[0..n) is MULT^n + sum b[k] * MULT^(n-1-k) mod 2^32.
//
// Thread-safety: pure functions.
#ifndef FERRY_LIB_DELTA_RABIN_KARP_H_
#define FERRY_LIB_DELTA_RABIN_KARP_H_

#include <cstddef>
#include <cstdint>

namespace ferry::delta::rk {

constexpr uint32_t kMult = 0x08104225u;
constexpr uint32_t kAdj = 0x08104224u;  // kMult - seed (1)

// kMult^n mod 2^32.
constexpr uint32_t Pow(uint64_t n) {
  uint32_t r = 1, b = kMult;
  for (; n; n >>= 1, b *= b)
    if (n & 1) r *= b;
  return r;
}

// The sum of data[0..n), as librsync's rabinkarp_update from its seed.
uint32_t Sum(const uint8_t* data, size_t n);

// The sum of the window one byte on: `out` leaves, `in` enters; pow_n is
// Pow(window length).
inline uint32_t Roll(uint32_t sum, uint32_t pow_n, uint8_t out, uint8_t in) {
  return sum * kMult + in - pow_n * (out + kAdj);
}

// Roll with the outgoing byte's term from a table (OutTable): one multiply
// per byte on the sum's chain instead of two.
inline uint32_t RollT(uint32_t sum, const uint32_t* out_term, uint8_t out,
                      uint8_t in) {
  return sum * kMult + in - out_term[out];
}
// out_term[b] = pow_n * (b + kAdj) for every byte b.
inline void OutTable(uint32_t pow_n, uint32_t* out_term) {
  for (uint32_t b = 0; b < 256; ++b) out_term[b] = pow_n * (b + kAdj);
}

}  // namespace ferry::delta::rk

#endif  // FERRY_LIB_DELTA_RABIN_KARP_H_
