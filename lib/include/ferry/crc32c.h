// CRC-32C (Castagnoli), as used by TFRecord framing, with TensorFlow's (and
// leveldb's) masking. Uses the SSE4.2 crc32 instruction when the CPU has it,
// a table-driven loop otherwise; both give the same values.
// Thread-safety: pure functions.
#ifndef FERRY_CRC32C_H_
#define FERRY_CRC32C_H_

#include <cstdint>
#include <string_view>

#include "ferry/export.h"

namespace ferry::crc32c {

// CRC of concat(A, data) where init_crc is the CRC of A.
FERRY_EXPORT uint32_t Extend(uint32_t init_crc, const char* data, size_t n);
inline uint32_t Value(std::string_view data) {
  return Extend(0, data.data(), data.size());
}

// The portable path alone (tests compare it with the accelerated one).
FERRY_EXPORT uint32_t ExtendPortable(uint32_t init_crc, const char* data,
                                     size_t n);
// True when Extend uses the hardware instruction.
FERRY_EXPORT bool IsAccelerated();

inline constexpr uint32_t kMaskDelta = 0xa282ead8u;
// Storing a CRC of data that itself contains CRCs is problematic, so stored
// CRCs are rotated and offset.
inline uint32_t Mask(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + kMaskDelta;
}
inline uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace ferry::crc32c

#endif  // FERRY_CRC32C_H_
