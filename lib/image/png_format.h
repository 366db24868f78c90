// PNG facts shared by the two decoders: header fields and their checks.
#ifndef FERRY_IMAGE_PNG_FORMAT_H_
#define FERRY_IMAGE_PNG_FORMAT_H_

#include <cstdint>
#include <string_view>

#include "ferry/image.h"

namespace ferry::image::png {

inline constexpr uint8_t kSignature[8] = {0x89, 'P',  'N',  'G',
                                          '\r', '\n', 0x1a, '\n'};

enum ColorType : uint8_t {
  kGray = 0,
  kRgb = 2,
  kPalette = 3,
  kGrayAlpha = 4,
  kRgba = 6,
};

struct Header {
  uint32_t width = 0, height = 0;
  uint8_t bit_depth = 0, color_type = 0, interlace = 0;
  int samples() const;  // per pixel, before any expansion
};

inline uint32_t LoadBE32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
         (uint32_t{p[2]} << 8) | p[3];
}

// Validates the 13 IHDR bytes (dimensions, colour type / bit depth pairs,
// methods) and the pixel budget. Never allocates.
Status ParseHeader(const uint8_t* ihdr, const Limits& limits, Header* out);

// Output channels after expansion (palette -> RGB, tRNS -> alpha).
int OutputChannels(const Header& h, bool has_trns);

}  // namespace ferry::image::png

#endif  // FERRY_IMAGE_PNG_FORMAT_H_
