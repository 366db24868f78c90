// lib/delta: the RabinKarp sum of a whole block, vectorised. Horner's rule
// is one long chain of multiplies; 32 interleaved chains (byte k goes to
// chain k % 32, each stepping by kMult^32) are independent, so the compiler
// maps them to vector multiplies, and they are joined at the end.
#include "delta/rabin_karp.h"

namespace ferry::delta::rk {
namespace {

constexpr int kLanes = 32;
constexpr uint32_t kMultLanes = Pow(kLanes);

// sum data[k] * kMult^(n-1-k), without the seed's term.
__attribute__((target_clones("avx2", "default"))) uint32_t Body(
    const uint8_t* data, size_t n) {
  uint32_t acc[kLanes] = {};
  size_t whole = n / kLanes * kLanes;
  for (size_t i = 0; i < whole; i += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] = acc[l] * kMultLanes + data[i + l];
  uint32_t h = 0;
  for (int l = 0; l < kLanes; ++l) h = h * kMult + acc[l];
  for (size_t i = whole; i < n; ++i) h = h * kMult + data[i];
  return h;
}

}  // namespace

uint32_t Sum(const uint8_t* data, size_t n) { return Pow(n) + Body(data, n); }

}  // namespace ferry::delta::rk
