// Internal to lib/delta: what a loaded Signature holds.
#ifndef FERRY_LIB_DELTA_SIGNATURE_IMPL_H_
#define FERRY_LIB_DELTA_SIGNATURE_IMPL_H_

#include <librsync.h>

#include <cstdint>
#include <vector>

#include "ferry/delta.h"

namespace ferry::delta {

struct Signature::Impl {
  ~Impl() {
    if (sig) rs_free_sumset(sig);
  }
  rs_signature_t* sig = nullptr;  // hash table built
  SignatureParams params;
  uint64_t blocks = 0;
  // The same sums again, for the block matcher (librsync keeps its own
  // opaque): weak[i], and strong_len bytes of block i at strong[i *
  // strong_len].
  std::vector<uint32_t> weak;
  std::vector<uint8_t> strong;
};

// Lets lib/delta's block matcher read a loaded signature's sums.
struct SignatureAccess {
  static const Signature::Impl& Of(const Signature& s) { return *s.impl_; }
};

}  // namespace ferry::delta

#endif  // FERRY_LIB_DELTA_SIGNATURE_IMPL_H_
