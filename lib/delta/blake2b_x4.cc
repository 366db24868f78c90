// lib/delta: four BLAKE2b-256 sums at once (RFC 7693), lane i of every
// register holding message i's state. Checked against libb2 in
// BlockMatchTest.FourWayBlake2bIsLibb2s.
#include "delta/blake2b_x4.h"

#include <blake2.h>
#include <immintrin.h>

#include <cstring>

namespace ferry::delta {
namespace {

constexpr uint64_t kIv[8] = {0x6a09e667f3bcc908ull, 0xbb67ae8584caa73bull,
                             0x3c6ef372fe94f82bull, 0xa54ff53a5f1d36f1ull,
                             0x510e527fade682d1ull, 0x9b05688c2b3e6c1full,
                             0x1f83d9abfb41bd6bull, 0x5be0cd19137e2179ull};

constexpr uint8_t kSigma[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
    {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
    {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
    {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
    {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3}};

#define FERRY_AVX2 __attribute__((target("avx2")))

FERRY_AVX2 inline __m256i Rotr32(__m256i x) {
  return _mm256_shuffle_epi32(x, _MM_SHUFFLE(2, 3, 0, 1));
}
FERRY_AVX2 inline __m256i Rotr24(__m256i x) {
  const __m256i r =
      _mm256_setr_epi8(3, 4, 5, 6, 7, 0, 1, 2, 11, 12, 13, 14, 15, 8, 9, 10, 3,
                       4, 5, 6, 7, 0, 1, 2, 11, 12, 13, 14, 15, 8, 9, 10);
  return _mm256_shuffle_epi8(x, r);
}
FERRY_AVX2 inline __m256i Rotr16(__m256i x) {
  const __m256i r =
      _mm256_setr_epi8(2, 3, 4, 5, 6, 7, 0, 1, 10, 11, 12, 13, 14, 15, 8, 9, 2,
                       3, 4, 5, 6, 7, 0, 1, 10, 11, 12, 13, 14, 15, 8, 9);
  return _mm256_shuffle_epi8(x, r);
}
FERRY_AVX2 inline __m256i Rotr63(__m256i x) {
  return _mm256_or_si256(_mm256_srli_epi64(x, 63), _mm256_add_epi64(x, x));
}

// Message word w of the four 128-byte blocks, one per lane.
FERRY_AVX2 inline void LoadMessage(const uint8_t* const blk[4], __m256i m[16]) {
  for (int w = 0; w < 16; w += 4) {
    // A 4x4 transpose of 64-bit words: row i = words w..w+3 of message i.
    __m256i r0 =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk[0] + 8 * w));
    __m256i r1 =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk[1] + 8 * w));
    __m256i r2 =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk[2] + 8 * w));
    __m256i r3 =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk[3] + 8 * w));
    __m256i t0 = _mm256_unpacklo_epi64(r0, r1);  // 0:w 1:w 0:w+2 1:w+2
    __m256i t1 = _mm256_unpackhi_epi64(r0, r1);  // 0:w+1 1:w+1 0:w+3 1:w+3
    __m256i t2 = _mm256_unpacklo_epi64(r2, r3);
    __m256i t3 = _mm256_unpackhi_epi64(r2, r3);
    m[w] = _mm256_permute2x128_si256(t0, t2, 0x20);
    m[w + 1] = _mm256_permute2x128_si256(t1, t3, 0x20);
    m[w + 2] = _mm256_permute2x128_si256(t0, t2, 0x31);
    m[w + 3] = _mm256_permute2x128_si256(t1, t3, 0x31);
  }
}

FERRY_AVX2 void Compress(__m256i h[8], const uint8_t* const blk[4], uint64_t t,
                         bool last) {
  __m256i m[16];
  LoadMessage(blk, m);
  __m256i v[16];
  for (int i = 0; i < 8; ++i) {
    v[i] = h[i];
    v[i + 8] = _mm256_set1_epi64x(static_cast<long long>(kIv[i]));
  }
  v[12] =
      _mm256_xor_si256(v[12], _mm256_set1_epi64x(static_cast<long long>(t)));
  if (last) v[14] = _mm256_xor_si256(v[14], _mm256_set1_epi64x(-1));
  auto g = [&](int a, int b, int c, int d, __m256i x, __m256i y)
      __attribute__((always_inline, target("avx2"))) {
    v[a] = _mm256_add_epi64(_mm256_add_epi64(v[a], v[b]), x);
    v[d] = Rotr32(_mm256_xor_si256(v[d], v[a]));
    v[c] = _mm256_add_epi64(v[c], v[d]);
    v[b] = Rotr24(_mm256_xor_si256(v[b], v[c]));
    v[a] = _mm256_add_epi64(_mm256_add_epi64(v[a], v[b]), y);
    v[d] = Rotr16(_mm256_xor_si256(v[d], v[a]));
    v[c] = _mm256_add_epi64(v[c], v[d]);
    v[b] = Rotr63(_mm256_xor_si256(v[b], v[c]));
  };
  for (int r = 0; r < 12; ++r) {
    const uint8_t* s = kSigma[r];
    g(0, 4, 8, 12, m[s[0]], m[s[1]]);
    g(1, 5, 9, 13, m[s[2]], m[s[3]]);
    g(2, 6, 10, 14, m[s[4]], m[s[5]]);
    g(3, 7, 11, 15, m[s[6]], m[s[7]]);
    g(0, 5, 10, 15, m[s[8]], m[s[9]]);
    g(1, 6, 11, 12, m[s[10]], m[s[11]]);
    g(2, 7, 8, 13, m[s[12]], m[s[13]]);
    g(3, 4, 9, 14, m[s[14]], m[s[15]]);
  }
  for (int i = 0; i < 8; ++i)
    h[i] = _mm256_xor_si256(h[i], _mm256_xor_si256(v[i], v[i + 8]));
}

FERRY_AVX2 void X4Avx2(const uint8_t* const in[4], size_t len,
                       uint8_t out[4][32]) {
  __m256i h[8];
  for (int i = 0; i < 8; ++i)
    h[i] = _mm256_set1_epi64x(static_cast<long long>(kIv[i]));
  // Parameter block: digest length 32, no key, fanout 1, depth 1.
  h[0] = _mm256_xor_si256(h[0], _mm256_set1_epi64x(0x01010020));
  size_t off = 0;
  while (len - off > 128) {
    const uint8_t* blk[4] = {in[0] + off, in[1] + off, in[2] + off,
                             in[3] + off};
    off += 128;
    Compress(h, blk, off, false);
  }
  // The last block (possibly short or empty), zero-padded.
  alignas(32) uint8_t pad[4][128] = {};
  for (int i = 0; i < 4; ++i) std::memcpy(pad[i], in[i] + off, len - off);
  const uint8_t* blk[4] = {pad[0], pad[1], pad[2], pad[3]};
  Compress(h, blk, len, true);
  alignas(32) uint64_t lanes[4][4];  // word w of message i: lanes[w][i]
  for (int w = 0; w < 4; ++w)
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes[w]), h[w]);
  for (int i = 0; i < 4; ++i)
    for (int w = 0; w < 4; ++w) std::memcpy(out[i] + 8 * w, &lanes[w][i], 8);
}

}  // namespace

void Blake2b256x4(const uint8_t* const in[4], size_t len, uint8_t out[4][32]) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return X4Avx2(in, len, out);
  for (int i = 0; i < 4; ++i) blake2b(out[i], in[i], nullptr, 32, len, 0);
}

}  // namespace ferry::delta
