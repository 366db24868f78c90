#include "image/png_format.h"

#include <string>

namespace ferry::image::png {

int Header::samples() const {
  switch (color_type) {
    case kGray:
    case kPalette:
      return 1;
    case kGrayAlpha:
      return 2;
    case kRgb:
      return 3;
    case kRgba:
      return 4;
  }
  return 0;
}

Status ParseHeader(const uint8_t* p, const Limits& limits, Header* h) {
  h->width = LoadBE32(p);
  h->height = LoadBE32(p + 4);
  h->bit_depth = p[8];
  h->color_type = p[9];
  h->interlace = p[12];
  if (h->width == 0 || h->height == 0 || h->width > 0x7fffffffu ||
      h->height > 0x7fffffffu) {
    return Status::Corruption("bad PNG IHDR: dimensions " +
                              std::to_string(h->width) + "x" +
                              std::to_string(h->height));
  }
  const int bd = h->bit_depth;
  bool ok = false;
  switch (h->color_type) {
    case kGray:
      ok = bd == 1 || bd == 2 || bd == 4 || bd == 8 || bd == 16;
      break;
    case kPalette:
      ok = bd == 1 || bd == 2 || bd == 4 || bd == 8;
      break;
    case kRgb:
    case kGrayAlpha:
    case kRgba:
      ok = bd == 8 || bd == 16;
      break;
    default:
      return Status::Corruption("bad PNG IHDR: color type " +
                                std::to_string(h->color_type));
  }
  if (!ok) {
    return Status::Corruption("bad PNG IHDR: bit depth " + std::to_string(bd) +
                              " with color type " +
                              std::to_string(h->color_type));
  }
  if (p[10] != 0 || p[11] != 0 || h->interlace > 1) {
    return Status::Corruption(
        "bad PNG IHDR: unknown compression, filter or interlace method");
  }
  uint64_t pixels = uint64_t{h->width} * h->height;
  if (pixels > limits.max_pixels) {
    return Status::ResourceExhausted(
        "image too large: " + std::to_string(h->width) + "x" +
        std::to_string(h->height) + " = " + std::to_string(pixels) +
        " pixels, limit " + std::to_string(limits.max_pixels));
  }
  return Status::OK();
}

int OutputChannels(const Header& h, bool has_trns) {
  switch (h.color_type) {
    case kGray:
      return has_trns ? 2 : 1;
    case kGrayAlpha:
      return 2;
    case kRgb:
    case kPalette:
      return has_trns ? 4 : 3;
    case kRgba:
      return 4;
  }
  return 0;
}

}  // namespace ferry::image::png
