// The fast PNG decoder: chunks parsed here, all IDAT data inflated in one
// call by libdeflate (which also checks the Adler-32), then rows unfiltered
// and converted to 8-bit. libpng feeds zlib one row at a time, which keeps
// inflate off its fast path; this is the main cost of PNG input.
#include <libdeflate.h>
#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ferry/image.h"
#include "image/image_view.h"
#include "image/png_format.h"

namespace ferry::image {
namespace {

using png::Header;
using png::LoadBE32;

struct Chunks {
  Header hdr;
  uint8_t palette[256 * 3] = {};  // entries past the PLTE count stay black
  int palette_entries = 0;
  uint8_t palette_alpha[256];  // from tRNS; 255 where absent
  bool has_trns = false;
  uint16_t trns_key[3] = {0, 0, 0};  // gray or RGB colour key
  std::string* idat;  // a per-thread buffer, reused between images
  std::string iccp;   // the iCCP chunk body, when asked for
};

bool IsLetter(uint8_t c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

struct Pass {
  int x0, y0, dx, dy;
  uint32_t w, h;
};

std::vector<Pass> PassesFor(const Header& h) {
  if (!h.interlace) return {{0, 0, 1, 1, h.width, h.height}};
  static const int kAdam7[7][4] = {{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8},
                                   {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2},
                                   {0, 1, 1, 2}};
  std::vector<Pass> out;
  for (const auto& a : kAdam7) {
    uint32_t w =
        h.width > uint32_t(a[0]) ? (h.width - a[0] + a[2] - 1) / a[2] : 0;
    uint32_t hh =
        h.height > uint32_t(a[1]) ? (h.height - a[1] + a[3] - 1) / a[3] : 0;
    if (w && hh) out.push_back({a[0], a[1], a[2], a[3], w, hh});
  }
  return out;
}

size_t RowBytes(uint32_t w, const Header& h) {
  return (uint64_t{w} * h.samples() * h.bit_depth + 7) / 8;
}

Status ParseChunks(std::string_view data, const Limits& limits, bool want_icc,
                   Chunks* c) {
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  const size_t n = data.size();
  if (n < 8 || std::memcmp(p, png::kSignature, 8) != 0) {
    return Status::Corruption("not a PNG (bad signature)");
  }
  std::memset(c->palette_alpha, 255, sizeof(c->palette_alpha));
  size_t pos = 8;
  bool seen_ihdr = false, seen_iend = false, idat_done = false;
  size_t idat_cap = 0;
  while (!seen_iend) {
    if (n - pos < 12) return Status::Corruption("truncated PNG: no IEND chunk");
    const uint32_t len = LoadBE32(p + pos);
    const uint8_t* type = p + pos + 4;
    if (len > 0x7fffffffu) return Status::Corruption("bad PNG chunk length");
    if (!IsLetter(type[0]) || !IsLetter(type[1]) || !IsLetter(type[2]) ||
        !IsLetter(type[3])) {
      return Status::Corruption("bad PNG chunk type at offset " +
                                std::to_string(pos));
    }
    const std::string name(reinterpret_cast<const char*>(type), 4);
    if (n - pos - 12 < len) {
      return Status::Corruption("truncated PNG: chunk " + name + " at offset " +
                                std::to_string(pos) + " runs past the end");
    }
    const uint8_t* body = type + 4;
    const uint32_t crc = LoadBE32(body + len);
    if (libdeflate_crc32(0, type, len + 4) != crc) {
      return Status::Corruption("PNG chunk " + name + " at offset " +
                                std::to_string(pos) + ": CRC mismatch");
    }
    pos += 12 + size_t{len};
    if (!seen_ihdr) {
      if (name != "IHDR" || len != 13)
        return Status::Corruption("bad PNG: first chunk is not IHDR");
      FERRY_RETURN_IF_ERROR(png::ParseHeader(body, limits, &c->hdr));
      seen_ihdr = true;
      // The largest zlib stream that can hold this image (stored blocks).
      size_t raw = 0;
      for (const Pass& ps : PassesFor(c->hdr))
        raw += ps.h * (1 + RowBytes(ps.w, c->hdr));
      idat_cap = raw + raw / 64 + 4096;
      continue;
    }
    const bool idat = name == "IDAT";
    if (!idat && !c->idat->empty()) idat_done = true;
    if (idat) {
      if (idat_done)
        return Status::Corruption("bad PNG: IDAT chunks are not consecutive");
      if (c->hdr.color_type == png::kPalette && c->palette_entries == 0) {
        return Status::Corruption(
            "bad PNG: palette image without PLTE before IDAT");
      }
      if (c->idat->size() + len > idat_cap) {
        return Status::Corruption(
            "bad PNG: more IDAT data than any stream for this image");
      }
      c->idat->append(reinterpret_cast<const char*>(body), len);
    } else if (name == "IEND") {
      seen_iend = true;
    } else if (name == "PLTE") {
      // libpng's rules: a PLTE after IDAT is ignored; a second one before is an
      // error.
      if (!c->idat->empty()) continue;
      if (c->palette_entries > 0)
        return Status::Corruption("bad PNG: duplicate PLTE");
      if (len % 3 != 0 || len == 0 || len > 768)
        return Status::Corruption("bad PNG PLTE length");
      c->palette_entries = static_cast<int>(len / 3);
      std::memcpy(c->palette, body, len);
    } else if (name == "tRNS" && !c->has_trns && c->idat->empty()) {
      // A second tRNS, or one after IDAT, is ignored, as libpng does.
      const uint8_t ct = c->hdr.color_type;
      if (ct == png::kPalette) {
        // Before PLTE, or longer than the palette: ignored, as libpng does.
        if (c->palette_entries > 0 && len <= uint32_t(c->palette_entries)) {
          std::memcpy(c->palette_alpha, body, len);
          c->has_trns = len > 0;
        }
      } else if (ct == png::kGray && len == 2) {
        c->trns_key[0] = static_cast<uint16_t>(body[0] << 8 | body[1]);
        c->has_trns = true;
      } else if (ct == png::kRgb && len == 6) {
        for (int i = 0; i < 3; ++i)
          c->trns_key[i] =
              static_cast<uint16_t>(body[2 * i] << 8 | body[2 * i + 1]);
        c->has_trns = true;
      }  // tRNS on images with an alpha channel is ignored, as libpng does
    } else if (name == "iCCP" && want_icc && len <= limits.max_chunk_bytes) {
      c->iccp.assign(reinterpret_cast<const char*>(body), len);
    } else if (!(name[0] & 0x20)) {
      return Status::Corruption("bad PNG: unknown critical chunk " + name);
    } else if (len > limits.max_chunk_bytes) {
      return Status::ResourceExhausted("PNG chunk " + name + " of " +
                                       std::to_string(len) +
                                       " bytes exceeds the limit");
    }
  }
  if (c->idat->empty()) return Status::Corruption("bad PNG: missing IDAT");
  return Status::OK();
}

inline uint8_t Paeth(int a, int b, int c) {
  int pa = b - c < 0 ? c - b : b - c;
  int pb = a - c < 0 ? c - a : a - c;
  int pc = a + b - 2 * c < 0 ? 2 * c - a - b : a + b - 2 * c;
  if (pa <= pb && pa <= pc) return static_cast<uint8_t>(a);
  return static_cast<uint8_t>(pb <= pc ? b : c);
}

#if defined(__SSE2__)
// Sub, Average and Paeth carry a dependency from one pixel to the next, so
// the compiler cannot vectorise them; with 3 or 4 bytes a pixel, one pixel
// per step in 16-bit lanes is ~3x faster than byte by byte (libpng does the
// same in its SSE2 filters).
// Bytes are assembled in registers: a 3-byte memcpy through the stack
// would stall every pixel on store forwarding.
template <int BPP>
inline __m128i Load(const uint8_t* p) {
  uint32_t v;
  if constexpr (BPP == 4) {
    std::memcpy(&v, p, 4);
  } else {
    v = uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16;
  }
  return _mm_unpacklo_epi8(_mm_cvtsi32_si128(static_cast<int>(v)),
                           _mm_setzero_si128());
}

template <int BPP>
inline void Store(uint8_t* p, __m128i v) {
  uint32_t out =
      static_cast<uint32_t>(_mm_cvtsi128_si32(_mm_packus_epi16(v, v)));
  if constexpr (BPP == 4) {
    std::memcpy(p, &out, 4);
  } else {
    p[0] = static_cast<uint8_t>(out);
    p[1] = static_cast<uint8_t>(out >> 8);
    p[2] = static_cast<uint8_t>(out >> 16);
  }
}

inline __m128i Abs16(__m128i x) {
  return _mm_max_epi16(x, _mm_sub_epi16(_mm_setzero_si128(), x));
}

inline __m128i Select(__m128i mask, __m128i yes, __m128i no) {
  return _mm_or_si128(_mm_and_si128(mask, yes), _mm_andnot_si128(mask, no));
}

template <int BPP>
void SubRow(uint8_t* r, size_t n) {
  __m128i a = _mm_setzero_si128();
  for (size_t i = 0; i + BPP <= n; i += BPP) {
    a = _mm_add_epi8(Load<BPP>(r + i), a);
    Store<BPP>(r + i, a);
  }
}

template <int BPP>
void AvgRow(uint8_t* r, const uint8_t* prev, size_t n) {
  __m128i a = _mm_setzero_si128();
  for (size_t i = 0; i + BPP <= n; i += BPP) {
    __m128i b = Load<BPP>(prev + i);
    __m128i avg = _mm_srli_epi16(_mm_add_epi16(a, b), 1);
    a = _mm_add_epi8(Load<BPP>(r + i), avg);
    a = _mm_and_si128(a, _mm_set1_epi16(0xff));
    Store<BPP>(r + i, a);
  }
}

template <int BPP>
void PaethRow(uint8_t* r, const uint8_t* prev, size_t n) {
  __m128i a = _mm_setzero_si128(), c = _mm_setzero_si128();
  for (size_t i = 0; i + BPP <= n; i += BPP) {
    __m128i b = Load<BPP>(prev + i);
    __m128i d = Load<BPP>(r + i);
    __m128i pa = _mm_sub_epi16(b, c);    // p - a
    __m128i pb = _mm_sub_epi16(a, c);    // p - b
    __m128i pc = _mm_add_epi16(pa, pb);  // p - c
    pa = Abs16(pa);
    pb = Abs16(pb);
    pc = Abs16(pc);
    __m128i smallest = _mm_min_epi16(pc, _mm_min_epi16(pa, pb));
    // Ties go to a, then b, then c.
    __m128i nearest = Select(_mm_cmpeq_epi16(smallest, pa), a,
                             Select(_mm_cmpeq_epi16(smallest, pb), b, c));
    d = _mm_and_si128(_mm_add_epi8(d, nearest), _mm_set1_epi16(0xff));
    Store<BPP>(r + i, d);
    c = b;
    a = d;
  }
}

// Paeth on K consecutive rows at once, as a wavefront: row k works on pixel
// t - k at step t, so it only needs row k-1's pixels up to t - k, which are
// done. The K dependency chains are independent and overlap in the CPU.
template <int BPP, int K>
void PaethRows(uint8_t* const* rows, const uint8_t* prev, size_t n) {
  const long npix = static_cast<long>(n / BPP);
  __m128i a[K], c[K];
  for (int k = 0; k < K; ++k) a[k] = c[k] = _mm_setzero_si128();
  for (long t = 0; t < npix + K - 1; ++t) {
    for (int k = 0; k < K; ++k) {
      const long i = t - k;
      if (i < 0 || i >= npix) continue;
      const uint8_t* up = k == 0 ? prev : rows[k - 1];
      __m128i b = Load<BPP>(up + i * BPP);
      __m128i d = Load<BPP>(rows[k] + i * BPP);
      __m128i pa = _mm_sub_epi16(b, c[k]);
      __m128i pb = _mm_sub_epi16(a[k], c[k]);
      __m128i pc = _mm_add_epi16(pa, pb);
      pa = Abs16(pa);
      pb = Abs16(pb);
      pc = Abs16(pc);
      __m128i smallest = _mm_min_epi16(pc, _mm_min_epi16(pa, pb));
      __m128i nearest = Select(_mm_cmpeq_epi16(smallest, pa), a[k],
                               Select(_mm_cmpeq_epi16(smallest, pb), b, c[k]));
      d = _mm_and_si128(_mm_add_epi8(d, nearest), _mm_set1_epi16(0xff));
      Store<BPP>(rows[k] + i * BPP, d);
      c[k] = b;
      a[k] = d;
    }
  }
}

template <int BPP>
void PaethRowsN(uint8_t* const* rows, const uint8_t* prev, size_t n, int k) {
  switch (k) {
    case 4:
      return PaethRows<BPP, 4>(rows, prev, n);
    case 3:
      return PaethRows<BPP, 3>(rows, prev, n);
    case 2:
      return PaethRows<BPP, 2>(rows, prev, n);
    default:
      return PaethRow<BPP>(rows[0], prev, n);
  }
}

#if defined(__x86_64__)
// The same wavefront with all four rows in one AVX2 register: 64-bit lane k
// holds row k's pixel t - k (4 channels in 16-bit lanes). Row k's "above"
// pixel is row k-1's result of the previous step, so it comes from a lane
// shift instead of memory, and one set of instructions serves four rows.
// A pixel's bytes, with zeros past BPP.
template <int BPP>
inline uint32_t PixelBytes(const uint8_t* p) {
  uint32_t v = 0;
  std::memcpy(&v, p, BPP);
  return v;
}

// Inside the main loop a 4-byte load stays in the buffer (rows 0-2 are
// followed by another row, row 3 is not at its last pixel); bytes past the
// pixel only feed lanes that are never stored.
inline uint32_t Load4(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

template <int BPP>
__attribute__((target("avx2"))) inline void StoreLanes(uint8_t* const* rows,
                                                       long t, long npix,
                                                       __m256i d) {
  const __m256i packed = _mm256_packus_epi16(d, d);
  const __m128i lo = _mm256_castsi256_si128(packed);
  const __m128i hi = _mm256_extracti128_si256(packed, 1);
  const uint32_t v[4] = {static_cast<uint32_t>(_mm_cvtsi128_si32(lo)),
                         static_cast<uint32_t>(_mm_extract_epi32(lo, 1)),
                         static_cast<uint32_t>(_mm_cvtsi128_si32(hi)),
                         static_cast<uint32_t>(_mm_extract_epi32(hi, 1))};
  for (int k = 0; k < 4; ++k) {
    const long i = t - k;
    if (i < 0 || i >= npix) continue;
    uint8_t* p = rows[k] + i * BPP;
    if constexpr (BPP == 3) {  // two stores: no byte of the next pixel
      const uint16_t lo16 = static_cast<uint16_t>(v[k]);
      std::memcpy(p, &lo16, 2);
      p[2] = static_cast<uint8_t>(v[k] >> 16);
    } else {
      std::memcpy(p, &v[k], BPP);
    }
  }
}

template <int BPP>
__attribute__((target("avx2"))) void PaethRows4Avx2(uint8_t* const* rows,
                                                    const uint8_t* prev,
                                                    size_t n) {
  const long npix = static_cast<long>(n / BPP);
  __m256i a = _mm256_setzero_si256(), c = a, d = a;
  for (long t = 0; t < npix + 3; ++t) {
    uint32_t up, x[4];
    if (t >= 3 && t < npix) {  // every row in its interior
      up = Load4(prev + t * BPP);
      for (int k = 0; k < 4; ++k) x[k] = Load4(rows[k] + (t - k) * BPP);
    } else {  // rows not started yet or done: zeros, never stored
      up = t < npix ? PixelBytes<BPP>(prev + t * BPP) : 0;
      for (int k = 0; k < 4; ++k) {
        const long i = t - k;
        x[k] = i >= 0 && i < npix ? PixelBytes<BPP>(rows[k] + i * BPP) : 0;
      }
    }
    // b: the row above; lane 0 from memory, lanes 1-3 the previous step's
    // results of rows 0-2.
    const __m256i b = _mm256_blend_epi32(
        _mm256_permute4x64_epi64(d, _MM_SHUFFLE(2, 1, 0, 0)),
        _mm256_cvtepu8_epi16(_mm_cvtsi32_si128(static_cast<int>(up))), 0x03);
    const __m256i raw = _mm256_cvtepu8_epi16(
        _mm_setr_epi32(static_cast<int>(x[0]), static_cast<int>(x[1]),
                       static_cast<int>(x[2]), static_cast<int>(x[3])));
    __m256i pa = _mm256_sub_epi16(b, c);    // p - a
    __m256i pb = _mm256_sub_epi16(a, c);    // p - b
    __m256i pc = _mm256_add_epi16(pa, pb);  // p - c
    pa = _mm256_abs_epi16(pa);
    pb = _mm256_abs_epi16(pb);
    pc = _mm256_abs_epi16(pc);
    const __m256i smallest = _mm256_min_epi16(pc, _mm256_min_epi16(pa, pb));
    // Ties go to a, then b, then c.
    const __m256i nearest = _mm256_blendv_epi8(
        _mm256_blendv_epi8(c, b, _mm256_cmpeq_epi16(smallest, pb)), a,
        _mm256_cmpeq_epi16(smallest, pa));
    // Bytes in 16-bit lanes: the high bytes stay zero.
    d = _mm256_add_epi8(raw, nearest);
    StoreLanes<BPP>(rows, t, npix, d);
    c = b;
    a = d;
  }
}
#endif

constexpr uint32_t kPaethRows = 4;  // 8 measured no faster

// Unfilters up to kPaethRows consecutive Paeth rows starting at row y (y > 0,
// so it has a previous row): four at once with AVX2 (1-4 bytes a pixel), else
// two to four with SSE2 (3 or 4 bytes a pixel). Returns how many rows it did
// (0: not applicable).
uint32_t PaethBlockSimd(uint8_t* rows, size_t rowbytes, uint32_t y, uint32_t h,
                        int bpp) {
  if (bpp > 4 || y == 0) return 0;
  uint8_t* r[kPaethRows];
  uint32_t k = 0;
  while (k < kPaethRows && y + k < h && rows[(y + k) * (rowbytes + 1)] == 4) {
    r[k] = rows + (y + k) * (rowbytes + 1) + 1;
    ++k;
  }
  if (k < 2) return 0;
  const uint8_t* prev = rows + (y - 1) * (rowbytes + 1) + 1;
#if defined(__x86_64__)
  if (k == 4 && HaveAvx2()) {
    switch (bpp) {
      case 1:
        PaethRows4Avx2<1>(r, prev, rowbytes);
        break;
      case 2:
        PaethRows4Avx2<2>(r, prev, rowbytes);
        break;
      case 3:
        PaethRows4Avx2<3>(r, prev, rowbytes);
        break;
      default:
        PaethRows4Avx2<4>(r, prev, rowbytes);
    }
    return k;
  }
#endif
  if (bpp < 3) return 0;  // the SSE2 kernels have 3 or 4 bytes a pixel
  bpp == 3 ? PaethRowsN<3>(r, prev, rowbytes, k)
           : PaethRowsN<4>(r, prev, rowbytes, k);
  return k;
}

// True if the row was handled here.
bool UnfilterSimd(uint8_t f, uint8_t* r, const uint8_t* prev, size_t n,
                  int bpp) {
  if ((bpp != 3 && bpp != 4) || prev == nullptr || f == 0 || f == 2)
    return false;
  if (f == 1) {
    bpp == 3 ? SubRow<3>(r, n) : SubRow<4>(r, n);
  } else if (f == 3) {
    bpp == 3 ? AvgRow<3>(r, prev, n) : AvgRow<4>(r, prev, n);
  } else if (f == 4) {
    bpp == 3 ? PaethRow<3>(r, prev, n) : PaethRow<4>(r, prev, n);
  } else {
    return false;
  }
  return true;
}
#else
bool UnfilterSimd(uint8_t, uint8_t*, const uint8_t*, size_t, int) {
  return false;
}
uint32_t PaethBlockSimd(uint8_t*, size_t, uint32_t, uint32_t, int) { return 0; }
#endif

// Undoes the scanline filters in place. rows: h x (1 + rowbytes).
Status Unfilter(uint8_t* rows, size_t rowbytes, uint32_t h, int bpp) {
  const uint8_t* prev = nullptr;
  for (uint32_t y = 0; y < h; ++y) {
    uint8_t* f = rows + y * (rowbytes + 1);
    uint8_t* r = f + 1;
    if (*f == 4) {
      if (uint32_t done = PaethBlockSimd(rows, rowbytes, y, h, bpp)) {
        y += done - 1;
        prev = rows + y * (rowbytes + 1) + 1;
        continue;
      }
    }
    if (UnfilterSimd(*f, r, prev, rowbytes, bpp)) {
      prev = r;
      continue;
    }
    switch (*f) {
      case 0:
        break;
      case 1:
        for (size_t i = bpp; i < rowbytes; ++i) r[i] += r[i - bpp];
        break;
      case 2:
        if (prev)
          for (size_t i = 0; i < rowbytes; ++i) r[i] += prev[i];
        break;
      case 3:
        if (prev) {
          for (int i = 0; i < bpp; ++i) r[i] += prev[i] >> 1;
          for (size_t i = bpp; i < rowbytes; ++i)
            r[i] += (r[i - bpp] + prev[i]) >> 1;
        } else {
          for (size_t i = bpp; i < rowbytes; ++i) r[i] += r[i - bpp] >> 1;
        }
        break;
      case 4:
        if (prev) {
          for (int i = 0; i < bpp; ++i) r[i] += prev[i];  // Paeth(0, b, 0) = b
          for (size_t i = bpp; i < rowbytes; ++i)
            r[i] += Paeth(r[i - bpp], prev[i], prev[i - bpp]);
        } else {
          for (size_t i = bpp; i < rowbytes; ++i) r[i] += r[i - bpp];  // = Sub
        }
        break;
      default:
        return Status::Corruption("bad PNG filter type " + std::to_string(*f) +
                                  " in row " + std::to_string(y));
    }
    prev = r;
  }
  return Status::OK();
}

// Converts one unfiltered row of w pixels to 8-bit output pixels, written
// `step` bytes apart (step > channels for Adam7 passes).
class RowConverter {
 public:
  RowConverter(const Chunks& c, bool pillow16)
      : c_(c),
        h_(c.hdr),
        pillow16_(pillow16),
        out_ch_(png::OutputChannels(c.hdr, c.has_trns)) {
    for (int i = 0; i < 256; ++i) {
      const uint8_t px[4] = {c.palette[3 * i], c.palette[3 * i + 1],
                             c.palette[3 * i + 2], c.palette_alpha[i]};
      std::memcpy(&palette4_[i], px, 4);
    }
  }
  int out_channels() const { return out_ch_; }

  void Convert(const uint8_t* s, uint32_t w, uint8_t* d, size_t step) const {
    const int bd = h_.bit_depth;
    if (bd < 8) return ConvertLowBits(s, w, d, step);
    if (bd == 8) return Convert8(s, w, d, step);
    return Convert16(s, w, d, step);
  }

 private:
  void ConvertLowBits(const uint8_t* s, uint32_t w, uint8_t* d,
                      size_t step) const {
    const int bd = h_.bit_depth;
    const int mask = (1 << bd) - 1;
    const int scale = 255 / mask;
    const int per_byte = 8 / bd;
    for (uint32_t x = 0; x < w; ++x, d += step) {
      int v = (s[x / per_byte] >> (8 - bd * (x % per_byte + 1))) & mask;
      if (h_.color_type == png::kPalette) {
        PutPalette(v, d);
      } else {
        d[0] = static_cast<uint8_t>(v * scale);
        if (c_.has_trns) d[1] = v == (c_.trns_key[0] & mask) ? 0 : 255;
      }
    }
  }

  void PutPalette(int i, uint8_t* d) const {
    d[0] = c_.palette[3 * i];
    d[1] = c_.palette[3 * i + 1];
    d[2] = c_.palette[3 * i + 2];
    if (c_.has_trns) d[3] = c_.palette_alpha[i];
  }

  void Convert8(const uint8_t* s, uint32_t w, uint8_t* d, size_t step) const {
    // 8-bit images compare the key's low byte, as libpng does.
    const uint8_t k0 = c_.trns_key[0] & 0xff, k1 = c_.trns_key[1] & 0xff,
                  k2 = c_.trns_key[2] & 0xff;
    switch (h_.color_type) {
      case png::kPalette:
        if (step == size_t(out_ch_) && w > 0) {
          // Whole entries (RGB + alpha) as one 4-byte store; with RGB out
          // its fourth byte is overwritten by the next pixel, and the last
          // pixel is put byte by byte.
          for (uint32_t x = 0; x + 1 < w; ++x, d += step)
            std::memcpy(d, &palette4_[s[x]], 4);
          PutPalette(s[w - 1], d);
          return;
        }
        for (uint32_t x = 0; x < w; ++x, d += step) PutPalette(s[x], d);
        return;
      case png::kGray:
        for (uint32_t x = 0; x < w; ++x, d += step) {
          d[0] = s[x];
          if (c_.has_trns) d[1] = s[x] == k0 ? 0 : 255;
        }
        return;
      case png::kRgb:
        if (!c_.has_trns && step == 3) {
          std::memcpy(d, s, size_t{w} * 3);
          return;
        }
        for (uint32_t x = 0; x < w; ++x, d += step, s += 3) {
          d[0] = s[0];
          d[1] = s[1];
          d[2] = s[2];
          if (c_.has_trns) {
            d[3] = (s[0] == k0 && s[1] == k1 && s[2] == k2) ? 0 : 255;
          }
        }
        return;
      default: {  // gray+alpha, RGBA: already what we output
        const int ch = h_.samples();
        if (step == size_t(ch)) {
          std::memcpy(d, s, size_t{w} * ch);
          return;
        }
        for (uint32_t x = 0; x < w; ++x, d += step, s += ch)
          std::memcpy(d, s, ch);
      }
    }
  }

  // (v * 255 + 32895) >> 16, as libpng's png_do_scale_16_to_8.
  static uint8_t Scale16(const uint8_t* p) {
    const uint32_t v = uint32_t{p[0]} << 8 | p[1];
    return static_cast<uint8_t>((v * 255 + 32895) >> 16);
  }
  uint8_t To8(const uint8_t* p) const { return pillow16_ ? p[0] : Scale16(p); }

  void Convert16(const uint8_t* s, uint32_t w, uint8_t* d, size_t step) const {
    const int ch = h_.samples();
    if (!c_.has_trns && step == size_t(ch)) {  // plain loops, vectorised
      const size_t n = size_t{w} * ch;
      if (pillow16_) {
        for (size_t i = 0; i < n; ++i) d[i] = s[2 * i];
      } else {
        for (size_t i = 0; i < n; ++i) d[i] = Scale16(s + 2 * i);
      }
      return;
    }
    for (uint32_t x = 0; x < w; ++x, d += step, s += 2 * ch) {
      for (int k = 0; k < ch; ++k) d[k] = To8(s + 2 * k);
      if (c_.has_trns) {
        bool key = true;
        for (int k = 0; k < ch; ++k)
          key &= (uint16_t(s[2 * k] << 8 | s[2 * k + 1]) == c_.trns_key[k]);
        d[ch] = key ? 0 : 255;
      }
    }
  }

  const Chunks& c_;
  const Header& h_;
  bool pillow16_;
  int out_ch_;
  uint32_t palette4_[256];  // RGB + alpha of each entry, in memory order
};

// iCCP: profile name, NUL, method 0, zlib data. A damaged profile is
// dropped (as libpng warns and goes on), never fatal.
std::string InflateIcc(const std::string& body, uint32_t max_bytes,
                       libdeflate_decompressor* d) {
  size_t nul = body.find('\0');
  if (nul == std::string::npos || nul + 2 > body.size() || body[nul + 1] != 0)
    return {};
  const char* z = body.data() + nul + 2;
  const size_t zlen = body.size() - nul - 2;
  for (size_t cap = 1 << 16; cap <= max_bytes; cap *= 4) {
    std::string out(cap, '\0');
    size_t got = 0;
    auto r = libdeflate_zlib_decompress(d, z, zlen, out.data(), cap, &got);
    if (r == LIBDEFLATE_SUCCESS) {
      out.resize(got);
      return out;
    }
    if (r != LIBDEFLATE_INSUFFICIENT_SPACE) return {};
  }
  return {};
}

struct DecompressorDeleter {
  void operator()(libdeflate_decompressor* d) const {
    libdeflate_free_decompressor(d);
  }
};

libdeflate_decompressor* ThreadDecompressor() {
  thread_local std::unique_ptr<libdeflate_decompressor, DecompressorDeleter> d(
      libdeflate_alloc_decompressor());
  return d.get();
}

// Per-thread scratch: the concatenated IDAT data and the inflated rows. Kept
// between images (no zero-filling, no page faults), released when large.
struct Scratch {
  std::string idat;
  std::unique_ptr<uint8_t[]> raw;
  size_t raw_cap = 0;
  uint8_t* Raw(size_t n) {
    if (n > raw_cap) {
      raw.reset(new uint8_t[n]);
      raw_cap = n;
    }
    return raw.get();
  }
  void Trim() {
    constexpr size_t kKeep = 64 << 20;
    if (raw_cap > kKeep) {
      raw.reset();
      raw_cap = 0;
    }
    if (idat.capacity() > kKeep) std::string().swap(idat);
    idat.clear();
  }
};

Scratch& ThreadScratch() {
  thread_local Scratch s;
  return s;
}

}  // namespace

void ReleasePngScratch() { ThreadScratch().Trim(); }

Result<Image> DecodePng(std::string_view data, const DecodeOptions& options) {
  Decoded d;
  Status s = DecodePngBorrowed(data, options, &d);
  if (s.ok() && d.owned.pixels.empty()) d.owned = CopyOf(d.view);
  ReleasePngScratch();
  FERRY_RETURN_IF_ERROR(s);
  d.owned.icc_profile = std::move(d.icc_profile);
  return std::move(d.owned);
}

Status DecodePngBorrowed(std::string_view data, const DecodeOptions& options,
                         Decoded* out) {
  Scratch& scratch = ThreadScratch();
  scratch.idat.clear();
  auto chunks = std::make_unique<Chunks>();
  chunks->idat = &scratch.idat;
  FERRY_RETURN_IF_ERROR(
      ParseChunks(data, options.limits, options.read_icc, chunks.get()));
  const Header& h = chunks->hdr;
  const std::vector<Pass> passes = PassesFor(h);
  size_t raw_size = 0;
  for (const Pass& p : passes) raw_size += p.h * (1 + RowBytes(p.w, h));

  uint8_t* raw = scratch.Raw(raw_size);
  libdeflate_decompressor* d = ThreadDecompressor();
  if (d == nullptr)
    return Status::ResourceExhausted("out of memory for the inflater");
  switch (libdeflate_zlib_decompress(
      d, scratch.idat.data(), scratch.idat.size(), raw, raw_size, nullptr)) {
    case LIBDEFLATE_SUCCESS:
      break;
    case LIBDEFLATE_SHORT_OUTPUT:
      return Status::Corruption("truncated PNG image data (IDAT)");
    case LIBDEFLATE_INSUFFICIENT_SPACE:
      return Status::Corruption(
          "PNG IDAT holds more data than the image needs");
    default:
      return Status::Corruption(
          "corrupt PNG image data (IDAT zlib stream or Adler-32)");
  }
  if (!chunks->iccp.empty()) {
    out->icc_profile =
        InflateIcc(chunks->iccp, options.limits.max_chunk_bytes, d);
  }

  RowConverter conv(*chunks, options.pillow_16bit);
  const int bpp = std::max(1, h.samples() * h.bit_depth / 8);
  if (!h.interlace && h.bit_depth == 8 && !chunks->has_trns &&
      h.color_type != png::kPalette) {
    // Unfiltered rows already hold the output pixels: lend them.
    const size_t rowbytes = RowBytes(h.width, h);
    FERRY_RETURN_IF_ERROR(Unfilter(raw, rowbytes, h.height, bpp));
    out->view = ImageView{raw + 1, rowbytes + 1, static_cast<int>(h.width),
                          static_cast<int>(h.height), h.samples()};
    return Status::OK();
  }
  Image& img = out->owned;
  img = Image::Make(static_cast<int>(h.width), static_cast<int>(h.height),
                    conv.out_channels());
  const int ch = img.channels;
  uint8_t* base = raw;
  for (const Pass& p : passes) {
    const size_t rowbytes = RowBytes(p.w, h);
    FERRY_RETURN_IF_ERROR(Unfilter(base, rowbytes, p.h, bpp));
    for (uint32_t y = 0; y < p.h; ++y) {
      uint8_t* dst =
          img.row(static_cast<int>(p.y0 + y * p.dy)) + size_t(p.x0) * ch;
      conv.Convert(base + y * (rowbytes + 1) + 1, p.w, dst, size_t(p.dx) * ch);
    }
    base += p.h * (rowbytes + 1);
  }
  out->view = ViewOf(img);
  return Status::OK();
}

}  // namespace ferry::image
