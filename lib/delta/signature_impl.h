// Internal to lib/delta: what a loaded Signature holds.
#ifndef FERRY_LIB_DELTA_SIGNATURE_IMPL_H_
#define FERRY_LIB_DELTA_SIGNATURE_IMPL_H_

#include <librsync.h>

#include "ferry/delta.h"

namespace ferry::delta {

struct Signature::Impl {
  ~Impl() {
    if (sig) rs_free_sumset(sig);
  }
  rs_signature_t* sig = nullptr;  // hash table built
  SignatureParams params;
  uint64_t blocks = 0;
};

}  // namespace ferry::delta

#endif  // FERRY_LIB_DELTA_SIGNATURE_IMPL_H_
