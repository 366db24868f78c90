// Resampling after Pillow's Resample.c: for each output pixel a window of
// source pixels weighted by the filter, the window widened by the downscale
// factor (antialiasing); weights normalised, then fixed point with 22
// fractional bits; horizontal pass first, clamped to 8 bits in between.
// Doing the same arithmetic in the same order keeps us within +-1 of Pillow.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "ferry/image.h"
#include "image/image_view.h"

namespace ferry::image {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;

double BoxFilter(double x) { return (x > -0.5 && x <= 0.5) ? 1.0 : 0.0; }
double BilinearFilter(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}
double BicubicFilter(double x) {
  constexpr double a = -0.5;
  x = std::fabs(x);
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}
double Sinc(double x) {
  if (x == 0.0) return 1.0;
  x *= M_PI;
  return std::sin(x) / x;
}
double LanczosFilter(double x) {
  return (-3.0 <= x && x < 3.0) ? Sinc(x) * Sinc(x / 3) : 0.0;
}

struct FilterDef {
  double (*fn)(double);
  double support;
};

FilterDef DefFor(Filter f) {
  switch (f) {
    case Filter::kBox:
      return {BoxFilter, 0.5};
    case Filter::kBilinear:
      return {BilinearFilter, 1.0};
    case Filter::kBicubic:
      return {BicubicFilter, 2.0};
    default:
      return {LanczosFilter, 3.0};
  }
}

struct Coeffs {
  int ksize = 0;
  std::vector<int> bounds;  // per output: first source index, count
  std::vector<int32_t> k;   // per output: ksize weights
  bool split16 = true;      // every weight's k >> 8 fits in an int16
};

// The box edges are float32, as Pillow's C API parses them ("(ffff)"), and
// their difference is taken in float before widening: with a double box a
// fractional crop (--mode cover) gives other weights than Pillow's.
Coeffs Precompute(int in_size, float in0, float in1, int out_size,
                  FilterDef f) {
  Coeffs c;
  double scale = static_cast<double>(in1 - in0) / out_size;
  double filterscale = std::max(scale, 1.0);
  double support = f.support * filterscale;
  c.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  c.bounds.resize(size_t(out_size) * 2);
  c.k.assign(size_t(out_size) * c.ksize, 0);
  std::vector<double> w(c.ksize);
  for (int xx = 0; xx < out_size; ++xx) {
    double center = in0 + (xx + 0.5) * scale;
    double ss = 1.0 / filterscale;
    int xmin = std::max(static_cast<int>(center - support + 0.5), 0);
    int xmax =
        std::min(static_cast<int>(center + support + 0.5), in_size) - xmin;
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      w[x] = f.fn((x + xmin - center + 0.5) * ss);
      ww += w[x];
    }
    int32_t* k = &c.k[size_t(xx) * c.ksize];
    for (int x = 0; x < xmax; ++x) {
      double v = ww != 0.0 ? w[x] / ww : w[x];
      k[x] = static_cast<int32_t>(v < 0 ? -0.5 + v * (1 << kPrecisionBits)
                                        : 0.5 + v * (1 << kPrecisionBits));
    }
    c.bounds[2 * xx] = xmin;
    c.bounds[2 * xx + 1] = std::max(xmax, 0);
  }
  for (int32_t v : c.k) c.split16 &= (v >> 8) == int16_t(v >> 8);
  return c;
}

// Weights depend only on the arguments below. A thread keeps the last few:
// a dataset of same-sized images, and both axes of a square image, compute
// them (two sin() a tap) once.
struct CoeffsKey {
  int in_size, out_size;
  float in0, in1;
  Filter filter;
  bool operator==(const CoeffsKey&) const = default;
};

std::shared_ptr<const Coeffs> CachedCoeffs(int in_size, float in0, float in1,
                                           int out_size, Filter filter) {
  constexpr int kEntries = 8;
  struct Entry {
    CoeffsKey key;
    std::shared_ptr<const Coeffs> coeffs;
  };
  thread_local Entry cache[kEntries];
  thread_local int next = 0;
  const CoeffsKey key{in_size, out_size, in0, in1, filter};
  for (const Entry& e : cache) {
    if (e.coeffs && e.key == key) return e.coeffs;
  }
  auto c = std::make_shared<const Coeffs>(
      Precompute(in_size, in0, in1, out_size, DefFor(filter)));
  cache[next] = {key, c};
  next = (next + 1) % kEntries;
  return c;
}

inline uint8_t Clip8(int32_t v) {
  v >>= kPrecisionBits;
  return static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
}

// One row, horizontally. The hot loop of a downscale; cloned for AVX2.
template <int CH>
__attribute__((target_clones("avx2", "default"))) void HorizontalRow(
    const uint8_t* in, uint8_t* out, int out_w, const Coeffs& c) {
  for (int xx = 0; xx < out_w; ++xx) {
    const int xmin = c.bounds[2 * xx], n = c.bounds[2 * xx + 1];
    const int32_t* k = &c.k[size_t(xx) * c.ksize];
    const uint8_t* s = in + size_t(xmin) * CH;
    int32_t acc[CH];
    for (int ch = 0; ch < CH; ++ch) acc[ch] = 1 << (kPrecisionBits - 1);
    for (int x = 0; x < n; ++x) {
      for (int ch = 0; ch < CH; ++ch) acc[ch] += s[x * CH + ch] * k[x];
    }
    for (int ch = 0; ch < CH; ++ch) out[xx * CH + ch] = Clip8(acc[ch]);
  }
}

// Accumulates whole rows, so the inner loop runs over contiguous bytes and
// vectorises; integer sums give exactly Pillow's per-pixel result.
__attribute__((target_clones("avx2", "default"))) void VerticalRow(
    const uint8_t* const* rows, const int32_t* k, int n, size_t width_bytes,
    int32_t* acc, uint8_t* out) {
  for (size_t i = 0; i < width_bytes; ++i) acc[i] = 1 << (kPrecisionBits - 1);
  for (int y = 0; y < n; ++y) {
    const uint8_t* r = rows[y];
    const int32_t ky = k[y];
    for (size_t i = 0; i < width_bytes; ++i) acc[i] += r[i] * ky;
  }
  for (size_t i = 0; i < width_bytes; ++i) out[i] = Clip8(acc[i]);
}

template <int CH>
void Horizontal(const ImageView& in, int y0, int y1, int out_w, const Coeffs& c,
                Image* out) {
  for (int y = y0; y < y1; ++y)
    HorizontalRow<CH>(in.row(y), out->row(y - y0), out_w, c);
}

#if defined(__x86_64__)
// The same sums with AVX2, bit-identical to the scalar loops. Sources are
// copied into padded rows so that a last, partly used vector never reads
// past the image. The RGB horizontal pass multiplies in 16 bits (vpmaddwd:
// 16 products, added in pairs): a weight k is split as k = 256 * hi + lo (lo
// in 0..255, hi a signed 16-bit number: Coeffs::split16), and
// 256 * sum(p * hi) + sum(p * lo) is the very integer sum. The gray and
// vertical passes keep 32-bit multiplies (the split measured no faster
// there).

inline int16_t High(int32_t k) { return static_cast<int16_t>(k >> 8); }
inline int16_t Low(int32_t k) { return static_cast<int16_t>(k & 255); }

// The full sums from the sums of hi and lo parts.
__attribute__((target("avx2"))) inline __m256i Join(__m256i hi, __m256i lo) {
  return _mm256_add_epi32(_mm256_slli_epi32(hi, 8), lo);
}

// VerticalRow with the sums for 32 bytes held in registers over all taps
// (the portable loop reloads and stores them every tap).
__attribute__((target("avx2"))) inline __m256i MulAddRow(__m256i acc,
                                                         const uint8_t* r,
                                                         __m256i k) {
  const __m256i v = _mm256_cvtepu8_epi32(
      _mm_loadl_epi64(reinterpret_cast<const __m128i*>(r)));
  return _mm256_add_epi32(acc, _mm256_mullo_epi32(v, k));
}

__attribute__((target("avx2"))) void VerticalRowAvx2(const uint8_t* const* rows,
                                                     const int32_t* k, int n,
                                                     size_t width_bytes,
                                                     uint8_t* out) {
  const __m256i round = _mm256_set1_epi32(1 << (kPrecisionBits - 1));
  // packs/packus interleave 128-bit lanes; this puts the bytes back in order.
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  size_t i = 0;
  for (; i + 32 <= width_bytes; i += 32) {
    __m256i a0 = round, a1 = round, a2 = round, a3 = round;
    for (int y = 0; y < n; ++y) {
      const __m256i ky = _mm256_set1_epi32(k[y]);
      const uint8_t* r = rows[y] + i;
      a0 = MulAddRow(a0, r, ky);
      a1 = MulAddRow(a1, r + 8, ky);
      a2 = MulAddRow(a2, r + 16, ky);
      a3 = MulAddRow(a3, r + 24, ky);
    }
    const __m256i lo =
        _mm256_packs_epi32(_mm256_srai_epi32(a0, kPrecisionBits),
                           _mm256_srai_epi32(a1, kPrecisionBits));
    const __m256i hi =
        _mm256_packs_epi32(_mm256_srai_epi32(a2, kPrecisionBits),
                           _mm256_srai_epi32(a3, kPrecisionBits));
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(out + i),
        _mm256_permutevar8x32_epi32(_mm256_packus_epi16(lo, hi), order));
  }
  for (; i < width_bytes; ++i) {
    int32_t acc = 1 << (kPrecisionBits - 1);
    for (int y = 0; y < n; ++y) acc += rows[y][i] * k[y];
    out[i] = Clip8(acc);
  }
}

// 8 int16 in both 128-bit halves.
__attribute__((target("avx2"))) inline __m256i Weights(const int16_t* w) {
  return _mm256_broadcastsi128_si256(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
}

// Two rows at once, one in each 128-bit half, four taps (12 bytes) a step:
// pixels 0 and 1 as 16-bit pairs {p0.c, p1.c} (and a zero pair) against
// weights {k0, k1} x 4, and pixels 2 and 3 against {k2, k3} x 4 (per step and
// output pixel 32 int16: {k0, k1} and {k2, k3} hi parts, then lo parts).
// Each half ends with its row's R, G, B sums: no reduction across lanes.
// A step loads 16 bytes and the last step of a window may run 3 pixels past
// it: up to 13 bytes past a row, read in place where the view has them, else
// from a padded copy of the row.
__attribute__((target("avx2"))) void HorizontalRgbAvx2(const ImageView& in,
                                                       int y0, int y1,
                                                       int out_w,
                                                       const Coeffs& c,
                                                       Image* out) {
  const int quads = (c.ksize + 3) / 4;
  std::vector<int16_t> kv(size_t(out_w) * quads * 32);
  for (int xx = 0; xx < out_w; ++xx) {
    const int32_t* k = &c.k[size_t(xx) * c.ksize];
    int16_t* dst = &kv[size_t(xx) * quads * 32];
    for (int t = 0; t < quads * 4; ++t) {
      const int32_t kt = t < c.ksize ? k[t] : 0;
      const int half = (t % 4) / 2, odd = t % 2;
      for (int i = 0; i < 4; ++i) {
        dst[(t / 4) * 32 + half * 8 + 2 * i + odd] = High(kt);
        dst[(t / 4) * 32 + 16 + half * 8 + 2 * i + odd] = Low(kt);
      }
    }
  }
  const __m256i pairs01 = _mm256_setr_epi8(
      0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1,  //
      0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1);
  const __m256i pairs23 = _mm256_setr_epi8(
      6, -1, 9, -1, 7, -1, 10, -1, 8, -1, 11, -1, -1, -1, -1, -1,  //
      6, -1, 9, -1, 7, -1, 10, -1, 8, -1, 11, -1, -1, -1, -1, -1);
  const __m256i round = _mm256_set1_epi32(1 << (kPrecisionBits - 1));
  constexpr size_t kOverRead = 13;
  const size_t row_bytes = size_t(in.width) * 3;
  std::vector<uint8_t> padded(2 * (row_bytes + kOverRead), 0);
  // Row y in place if the view holds kOverRead bytes after it (the rows
  // below), else copied.
  auto source = [&](int y, int slot) -> const uint8_t* {
    if (size_t(in.height - 1 - y) * in.stride >= kOverRead) {
      return in.row(y);
    }
    uint8_t* copy = padded.data() + slot * (row_bytes + kOverRead);
    std::memcpy(copy, in.row(y), row_bytes);
    return copy;
  };
  for (int y = y0; y < y1; y += 2) {
    // An odd last row goes alone: the other half's sums are not stored.
    const bool two = y + 1 < y1;
    const uint8_t* const buf0 = source(y, 0);
    const uint8_t* const buf1 = two ? source(y + 1, 1) : buf0;
    uint8_t* d0 = out->row(y - y0);
    uint8_t* d1 = two ? out->row(y + 1 - y0) : nullptr;
    for (int xx = 0; xx < out_w; ++xx) {
      const int xmin = c.bounds[2 * xx], n = c.bounds[2 * xx + 1];
      const uint8_t* p0 = buf0 + size_t(xmin) * 3;
      const uint8_t* p1 = buf1 + size_t(xmin) * 3;
      const int16_t* w = &kv[size_t(xx) * quads * 32];
      __m256i hi = _mm256_setzero_si256(), lo = hi;
      for (int q = 0; q < (n + 3) / 4; ++q, p0 += 12, p1 += 12, w += 32) {
        const __m256i v = _mm256_inserti128_si256(
            _mm256_castsi128_si256(
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(p0))),
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(p1)), 1);
        const __m256i a = _mm256_shuffle_epi8(v, pairs01);
        const __m256i b = _mm256_shuffle_epi8(v, pairs23);
        hi = _mm256_add_epi32(
            hi, _mm256_add_epi32(_mm256_madd_epi16(a, Weights(w)),
                                 _mm256_madd_epi16(b, Weights(w + 8))));
        lo = _mm256_add_epi32(
            lo, _mm256_add_epi32(_mm256_madd_epi16(a, Weights(w + 16)),
                                 _mm256_madd_epi16(b, Weights(w + 24))));
      }
      __m256i acc = _mm256_srai_epi32(_mm256_add_epi32(Join(hi, lo), round),
                                      kPrecisionBits);
      acc = _mm256_packus_epi16(_mm256_packs_epi32(acc, acc), acc);
      const uint32_t v0 =
          static_cast<uint32_t>(_mm_cvtsi128_si32(_mm256_castsi256_si128(acc)));
      const uint32_t v1 = static_cast<uint32_t>(
          _mm_cvtsi128_si32(_mm256_extracti128_si256(acc, 1)));
      // Four bytes (the fourth is overwritten by the next pixel), but
      // three at the end of a row.
      if (xx + 1 < out_w) {
        std::memcpy(d0 + 3 * size_t(xx), &v0, 4);
        if (two) std::memcpy(d1 + 3 * size_t(xx), &v1, 4);
      } else {
        std::memcpy(d0 + 3 * size_t(xx), &v0, 3);
        if (two) std::memcpy(d1 + 3 * size_t(xx), &v1, 3);
      }
    }
  }
}

__attribute__((target("avx2"))) void HorizontalGrayAvx2(const ImageView& in,
                                                        int y0, int y1,
                                                        int out_w,
                                                        const Coeffs& c,
                                                        Image* out) {
  const int ksize8 = (c.ksize + 7) / 8 * 8;
  std::vector<int32_t> k8(size_t(out_w) * ksize8, 0);
  for (int xx = 0; xx < out_w; ++xx) {
    std::memcpy(&k8[size_t(xx) * ksize8], &c.k[size_t(xx) * c.ksize],
                c.ksize * sizeof(int32_t));
  }
  std::vector<uint8_t> row(size_t(in.width) + ksize8 + 8, 0);
  for (int y = y0; y < y1; ++y) {
    std::memcpy(row.data(), in.row(y), in.width);
    uint8_t* d = out->row(y - y0);
    for (int xx = 0; xx < out_w; ++xx) {
      const int xmin = c.bounds[2 * xx], n = c.bounds[2 * xx + 1];
      const int32_t* k = &k8[size_t(xx) * ksize8];
      __m256i acc = _mm256_setzero_si256();
      for (int x = 0; x < n; x += 8) {
        __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64(
            reinterpret_cast<const __m128i*>(row.data() + xmin + x)));
        acc = _mm256_add_epi32(
            acc, _mm256_mullo_epi32(
                     v, _mm256_loadu_si256(
                            reinterpret_cast<const __m256i*>(k + x))));
      }
      __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc),
                                _mm256_extracti128_si256(acc, 1));
      s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
      s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
      int32_t v = _mm_cvtsi128_si32(s) + (1 << (kPrecisionBits - 1));
      d[xx] = Clip8(v);
    }
  }
}
#endif

}  // namespace

Image CopyOf(const ImageView& v) {
  Image img = Image::Make(v.width, v.height, v.channels);
  for (int y = 0; y < v.height; ++y)
    std::memcpy(img.row(y), v.row(y), img.stride());
  return img;
}

Image Resample(const Image& in, int out_w, int out_h, Filter filter,
               const Box* box) {
  return ResampleView(ViewOf(in), out_w, out_h, filter, box);
}

Image ResampleView(const ImageView& in, int out_w, int out_h, Filter filter,
                   const Box* box_in) {
  struct {
    float x0, y0, x1, y1;
  } box{0, 0, float(in.width), float(in.height)};
  if (box_in) {
    box = {float(box_in->x0), float(box_in->y0), float(box_in->x1),
           float(box_in->y1)};
  }
  const bool need_h = out_w != in.width || box.x0 != 0 || box.x1 != in.width;
  const bool need_v = out_h != in.height || box.y0 != 0 || box.y1 != in.height;
  if (!need_h && !need_v) return CopyOf(in);

  const auto cv_cached = CachedCoeffs(in.height, box.y0, box.y1, out_h, filter);
  const Coeffs& cv = *cv_cached;
  ImageView src = in;
  Image tmp;
  int row_offset = 0;  // first source row held by *src
  if (need_h) {
    const auto ch_cached =
        CachedCoeffs(in.width, box.x0, box.x1, out_w, filter);
    const Coeffs& ch = *ch_cached;
    const int y_first = cv.bounds[0];
    const int y_last = cv.bounds[2 * out_h - 2] + cv.bounds[2 * out_h - 1];
    tmp = Image::Make(out_w, y_last - y_first, in.channels);
#if defined(__x86_64__)
    if (HaveAvx2() && ch.split16 && in.channels == 3) {
      HorizontalRgbAvx2(in, y_first, y_last, out_w, ch, &tmp);
    } else if (HaveAvx2() && in.channels == 1) {
      HorizontalGrayAvx2(in, y_first, y_last, out_w, ch, &tmp);
    } else
#endif
      switch (in.channels) {
        case 1:
          Horizontal<1>(in, y_first, y_last, out_w, ch, &tmp);
          break;
        case 2:
          Horizontal<2>(in, y_first, y_last, out_w, ch, &tmp);
          break;
        case 3:
          Horizontal<3>(in, y_first, y_last, out_w, ch, &tmp);
          break;
        default:
          Horizontal<4>(in, y_first, y_last, out_w, ch, &tmp);
          break;
      }
    src = ViewOf(tmp);
    row_offset = y_first;
  }
  if (!need_v) return tmp;

  Image out = Image::Make(src.width, out_h, in.channels);
  const size_t width_bytes = size_t(src.width) * src.channels;
  std::vector<int32_t> acc(width_bytes);
  std::vector<const uint8_t*> rows(cv.ksize);
  for (int yy = 0; yy < out_h; ++yy) {
    const int ymin = cv.bounds[2 * yy] - row_offset, n = cv.bounds[2 * yy + 1];
    for (int y = 0; y < n; ++y) rows[y] = src.row(ymin + y);
    const int32_t* k = &cv.k[size_t(yy) * cv.ksize];
#if defined(__x86_64__)
    if (HaveAvx2()) {
      VerticalRowAvx2(rows.data(), k, n, width_bytes, out.row(yy));
      continue;
    }
#endif
    VerticalRow(rows.data(), k, n, width_bytes, acc.data(), out.row(yy));
  }
  return out;
}

namespace {

// A size as an int, INT_MAX when it is larger (CheckGeometry rejects it).
int SaturatedSize(double v) {
  return v >= double(INT_MAX) ? INT_MAX : static_cast<int>(v);
}

// Pillow's thumbnail(): of floor and ceil, the size whose aspect is closer.
int RoundAspect(double number, double aspect, bool key_on_x, int other) {
  int lo = std::max(SaturatedSize(std::floor(number)), 1);
  int hi = std::max(SaturatedSize(std::ceil(number)), 1);
  auto err = [&](int n) {
    return key_on_x ? std::fabs(aspect - double(n) / other)
                    : std::fabs(aspect - double(other) / n);
  };
  return err(hi) < err(lo) ? hi : lo;
}

void FitSize(int iw, int ih, int bw, int bh, bool upscale, int* w, int* h) {
  if (!upscale && iw <= bw && ih <= bh) {
    *w = iw;
    *h = ih;
    return;
  }
  const double aspect = double(iw) / ih;
  if (double(bw) / bh >= aspect) {
    *h = bh;
    *w = RoundAspect(bh * aspect, aspect, true, bh);
  } else {
    *w = bw;
    *h = RoundAspect(bw / aspect, aspect, false, bw);
  }
}

}  // namespace

Geometry ComputeGeometry(int iw, int ih, const ResizeOptions& o) {
  Geometry g;
  g.box = Box{0, 0, double(iw), double(ih)};
  g.resize_w = g.canvas_w = iw;
  g.resize_h = g.canvas_h = ih;
  if (o.width <= 0 || o.height <= 0) return g;
  switch (o.mode) {
    case ResizeMode::kExact:
      g.resize_w = o.width;
      g.resize_h = o.height;
      break;
    case ResizeMode::kFit:
    case ResizeMode::kPad:
      FitSize(iw, ih, o.width, o.height, o.upscale, &g.resize_w, &g.resize_h);
      break;
    case ResizeMode::kShorter: {
      // torchvision Resize(int): shorter side = N, longer truncated.
      const int n = o.width;
      auto longer = [n](int64_t l, int64_t s) {
        const int64_t v = int64_t{n} * l / s;  // < 2^62: no overflow
        return v >= INT_MAX ? INT_MAX : std::max(1, static_cast<int>(v));
      };
      if (iw <= ih) {
        g.resize_w = n;
        g.resize_h = longer(ih, iw);
      } else {
        g.resize_h = n;
        g.resize_w = longer(iw, ih);
      }
      break;
    }
    case ResizeMode::kCover: {
      // Pillow's ImageOps.fit: the centred source region of the box's aspect.
      const double out_ratio = double(o.width) / o.height;
      const double live_ratio = double(iw) / ih;
      double cw = iw, chh = ih;
      if (live_ratio > out_ratio) {
        cw = out_ratio * ih;
      } else if (live_ratio < out_ratio) {
        chh = iw / out_ratio;
      }
      const double left = (iw - cw) * 0.5, top = (ih - chh) * 0.5;
      g.box = Box{left, top, left + cw, top + chh};
      g.resize_w = o.width;
      g.resize_h = o.height;
      break;
    }
  }
  g.canvas_w = g.resize_w;
  g.canvas_h = g.resize_h;
  if (o.mode == ResizeMode::kPad) {
    g.canvas_w = o.width;
    g.canvas_h = o.height;
    g.pad_x = (o.width - g.resize_w) / 2;
    g.pad_y = (o.height - g.resize_h) / 2;
  }
  return g;
}

namespace {

std::string SizeText(int w, int h) {
  auto side = [](int v) {
    return v == INT_MAX ? std::to_string(v) + "+" : std::to_string(v);
  };
  return side(w) + "x" + side(h);
}

Status CheckImageSize(const char* what, int w, int h, const Limits& limits) {
  if (w > kMaxJpegSide || h > kMaxJpegSide) {
    return Status::ResourceExhausted(
        std::string(what) + " would be " + SizeText(w, h) +
        " pixels: a JPEG side is at most " + std::to_string(kMaxJpegSide));
  }
  const uint64_t pixels = uint64_t(w) * uint64_t(h);
  if (pixels > limits.max_pixels) {
    return Status::ResourceExhausted(
        std::string(what) + " would be " + SizeText(w, h) + " = " +
        std::to_string(pixels) + " pixels, limit " +
        std::to_string(limits.max_pixels));
  }
  return Status::OK();
}

}  // namespace

Status CheckGeometry(const Geometry& g, const Limits& limits) {
  FERRY_RETURN_IF_ERROR(
      CheckImageSize("output", g.resize_w, g.resize_h, limits));
  FERRY_RETURN_IF_ERROR(
      CheckImageSize("canvas", g.canvas_w, g.canvas_h, limits));
  // The horizontal pass keeps output width x the source rows the vertical
  // filter reads: the box's rows, widened by the largest support (3) times
  // the downscale factor on each side. No wider than the source, it is no
  // larger than the source, which the decoder has limited.
  if (g.resize_w <= g.box.x1 - g.box.x0) return Status::OK();
  const double rows = g.box.y1 - g.box.y0;
  const double reach = 3.0 * std::max(1.0, rows / std::max(g.resize_h, 1));
  const double tmp = double(g.resize_w) * std::ceil(rows + 2 * reach + 2);
  if (tmp > double(limits.max_pixels)) {
    return Status::ResourceExhausted(
        "resizing to " + SizeText(g.resize_w, g.resize_h) + " from " +
        std::to_string(static_cast<int64_t>(std::ceil(rows))) +
        " source rows needs more than the pixel limit " +
        std::to_string(limits.max_pixels));
  }
  return Status::OK();
}

Image Resize(const Image& in, const ResizeOptions& o) {
  return ApplyGeometry(in, ComputeGeometry(in.width, in.height, o), o.filter,
                       o.background);
}

Image ApplyGeometry(const Image& in, const Geometry& g, Filter filter,
                    Rgb background) {
  return ApplyGeometryView(ViewOf(in), g, filter, background);
}

Image ApplyGeometryView(const ImageView& in, const Geometry& g, Filter filter,
                        Rgb background) {
  Image r = ResampleView(in, g.resize_w, g.resize_h, filter, &g.box);
  if (g.canvas_w == g.resize_w && g.canvas_h == g.resize_h) return r;
  const bool gray = r.channels == 1 && background.is_gray();
  Image canvas = Image::Make(g.canvas_w, g.canvas_h, gray ? 1 : 3);
  const uint8_t fill[3] = {background.r, background.g, background.b};
  for (int y = 0; y < canvas.height; ++y) {
    uint8_t* d = canvas.row(y);
    for (int x = 0; x < canvas.width; ++x)
      std::memcpy(d + size_t(x) * canvas.channels, fill, canvas.channels);
  }
  for (int y = 0; y < r.height; ++y) {
    uint8_t* d = canvas.row(y + g.pad_y) + size_t(g.pad_x) * canvas.channels;
    const uint8_t* s = r.row(y);
    if (r.channels == canvas.channels) {
      std::memcpy(d, s, r.stride());
    } else {  // gray image on a coloured letterbox
      for (int x = 0; x < r.width; ++x)
        d[3 * x] = d[3 * x + 1] = d[3 * x + 2] = s[x];
    }
  }
  return canvas;
}

}  // namespace ferry::image
