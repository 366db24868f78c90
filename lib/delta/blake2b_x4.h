// Internal to lib/delta: BLAKE2b-256 (unkeyed, 32-byte digest: librsync's
// strong sum) of four messages of the same length at once, one per 64-bit
// lane of AVX2 registers. Unchanged data costs one strong sum per block and
// BLAKE2b is the slowest step, so the aligned fast path hashes four blocks
// per call. Without AVX2 it is four calls to libb2.
//
// Thread-safety: a pure function.
#ifndef FERRY_LIB_DELTA_BLAKE2B_X4_H_
#define FERRY_LIB_DELTA_BLAKE2B_X4_H_

#include <cstddef>
#include <cstdint>

namespace ferry::delta {

void Blake2b256x4(const uint8_t* const in[4], size_t len, uint8_t out[4][32]);

}  // namespace ferry::delta

#endif  // FERRY_LIB_DELTA_BLAKE2B_X4_H_
