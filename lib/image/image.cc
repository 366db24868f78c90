#include "ferry/image.h"

#include <cstdio>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "image/image_view.h"

namespace ferry::image {
namespace {

#if defined(__x86_64__)
// CompositeOverView's blend, four RGBA pixels a step in 16-bit lanes:
// c * a + bg * (255 - a) + 127 stays below 2^16, and for every such x,
// x / 255 = (x * 0x8081) >> 23. Returns how many pixels it did (the rest,
// fewer than 6, are left to the scalar loop: the 16-byte store of 12 RGB
// bytes stays inside the row).
__attribute__((target("avx2"))) int CompositeRgbaRowAvx2(const uint8_t* s,
                                                         int n, Rgb bg,
                                                         uint8_t* d) {
  const __m256i alpha = _mm256_setr_epi8(
      6, 7, 6, 7, 6, 7, 6, 7, 14, 15, 14, 15, 14, 15, 14, 15,  //
      6, 7, 6, 7, 6, 7, 6, 7, 14, 15, 14, 15, 14, 15, 14, 15);
  const __m256i back =
      _mm256_setr_epi16(bg.r, bg.g, bg.b, 0, bg.r, bg.g, bg.b, 0, bg.r, bg.g,
                        bg.b, 0, bg.r, bg.g, bg.b, 0);
  const __m256i k255 = _mm256_set1_epi16(255), k127 = _mm256_set1_epi16(127);
  const __m256i magic = _mm256_set1_epi16(static_cast<int16_t>(0x8081));
  const __m128i rgb =
      _mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
  int x = 0;
  for (; x + 6 <= n; x += 4) {
    const __m256i p = _mm256_cvtepu8_epi16(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 4 * x)));
    const __m256i a = _mm256_shuffle_epi8(p, alpha);
    __m256i v = _mm256_add_epi16(
        _mm256_add_epi16(_mm256_mullo_epi16(p, a),
                         _mm256_mullo_epi16(back, _mm256_sub_epi16(k255, a))),
        k127);
    v = _mm256_srli_epi16(_mm256_mulhi_epu16(v, magic), 7);
    const __m128i bytes = _mm_packus_epi16(_mm256_castsi256_si128(v),
                                           _mm256_extracti128_si256(v, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 3 * x),
                     _mm_shuffle_epi8(bytes, rgb));
  }
  return x;
}
#endif

}  // namespace

Image Image::Make(int width, int height, int channels) {
  Image img;
  img.width = width;
  img.height = height;
  img.channels = channels;
  img.pixels.resize(static_cast<size_t>(width) * height * channels);
  return img;
}

Format Sniff(std::string_view d) {
  if (d.size() >= 8 && std::memcmp(d.data(), "\x89PNG\r\n\x1a\n", 8) == 0)
    return Format::kPng;
  if (d.size() >= 3 && std::memcmp(d.data(), "\xFF\xD8\xFF", 3) == 0)
    return Format::kJpeg;
  return Format::kUnknown;
}

const char* FormatName(Format f) {
  switch (f) {
    case Format::kPng:
      return "png";
    case Format::kJpeg:
      return "jpeg";
    default:
      return "unknown";
  }
}

Result<Image> Decode(std::string_view data, const DecodeOptions& options) {
  switch (Sniff(data)) {
    case Format::kPng:
      return DecodePng(data, options);
    case Format::kJpeg:
      return DecodeJpeg(data, options);
    default:
      return Status::InvalidArgument("not a PNG or JPEG file");
  }
}

Result<Rgb> ParseColor(std::string_view t) {
  if (t == "white") return Rgb{255, 255, 255};
  if (t == "black") return Rgb{0, 0, 0};
  if (t == "gray" || t == "grey") return Rgb{128, 128, 128};
  std::string s(t);
  unsigned r, g, b;
  char tail;
  if (!s.empty() && s[0] == '#') s.erase(0, 1);
  if (s.size() == 6 &&
      std::sscanf(s.c_str(), "%2x%2x%2x%c", &r, &g, &b, &tail) == 3) {
    return Rgb{uint8_t(r), uint8_t(g), uint8_t(b)};
  }
  if (std::sscanf(s.c_str(), "%u,%u,%u%c", &r, &g, &b, &tail) == 3 && r < 256 &&
      g < 256 && b < 256) {
    return Rgb{uint8_t(r), uint8_t(g), uint8_t(b)};
  }
  return Status::InvalidArgument("bad color '" + std::string(t) +
                                 "' (white, black, gray, #rrggbb or r,g,b)");
}

Image CompositeOver(Image in, Rgb bg) {
  if (!in.has_alpha()) return in;
  return CompositeOverView(ViewOf(in), bg);
}

Image CompositeOverView(const ImageView& in, Rgb bg) {
  if (!in.has_alpha()) return CopyOf(in);
  const bool gray_out = in.channels == 2 && bg.is_gray();
  Image out = Image::Make(in.width, in.height, gray_out ? 1 : 3);
  auto mix = [](int c, int a, int b) {
    return static_cast<uint8_t>((c * a + b * (255 - a) + 127) / 255);
  };
  for (int y = 0; y < in.height; ++y) {
    const uint8_t* s = in.row(y);
    uint8_t* d = out.row(y);
    const int n = in.width;
    if (in.channels == 4) {
      int i = 0;
#if defined(__x86_64__)
      if (HaveAvx2()) {
        i = CompositeRgbaRowAvx2(s, n, bg, d);
        s += 4 * i;
        d += 3 * i;
      }
#endif
      for (; i < n; ++i, s += 4, d += 3) {
        d[0] = mix(s[0], s[3], bg.r);
        d[1] = mix(s[1], s[3], bg.g);
        d[2] = mix(s[2], s[3], bg.b);
      }
    } else if (gray_out) {
      for (int i = 0; i < n; ++i, s += 2) d[i] = mix(s[0], s[1], bg.r);
    } else {
      for (int i = 0; i < n; ++i, s += 2, d += 3) {
        d[0] = mix(s[0], s[1], bg.r);
        d[1] = mix(s[0], s[1], bg.g);
        d[2] = mix(s[0], s[1], bg.b);
      }
    }
  }
  return out;
}

Result<Filter> ParseFilter(std::string_view n) {
  if (n == "lanczos3" || n == "lanczos") return Filter::kLanczos3;
  if (n == "bicubic") return Filter::kBicubic;
  if (n == "bilinear") return Filter::kBilinear;
  if (n == "box") return Filter::kBox;
  return Status::InvalidArgument("unknown filter '" + std::string(n) +
                                 "' (lanczos3, bicubic, bilinear, box)");
}

Result<ResizeMode> ParseResizeMode(std::string_view n) {
  if (n == "fit") return ResizeMode::kFit;
  if (n == "cover") return ResizeMode::kCover;
  if (n == "exact") return ResizeMode::kExact;
  if (n == "shorter") return ResizeMode::kShorter;
  if (n == "pad") return ResizeMode::kPad;
  return Status::InvalidArgument("unknown mode '" + std::string(n) +
                                 "' (fit, cover, exact, shorter, pad)");
}

}  // namespace ferry::image
