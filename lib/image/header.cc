// What an image file is, from its header alone (no pixel decoding).
#include <string>

#include "ferry/image.h"
#include "image/png_format.h"

namespace ferry::image {

bool ReadJpegFrame(std::string_view data, JpegFrame* f) {
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  size_t pos = 2, n = data.size();
  while (pos + 4 <= n) {
    if (p[pos] != 0xFF) return false;
    uint8_t m = p[pos + 1];
    if (m == 0xFF) {
      ++pos;
      continue;
    }
    size_t len = size_t{p[pos + 2]} << 8 | p[pos + 3];
    if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) {
      if (pos + 9 > n) return false;
      f->precision = p[pos + 4];
      f->height = p[pos + 5] << 8 | p[pos + 6];
      f->width = p[pos + 7] << 8 | p[pos + 8];
      f->components = pos + 9 < n ? p[pos + 9] : 0;
      return f->width > 0 && f->height > 0;
    }
    if (m == 0xDA || len < 2) return false;
    pos += 2 + len;
  }
  return false;
}

Result<ImageHeader> ReadImageHeader(std::string_view data) {
  ImageHeader h;
  h.format = Sniff(data);
  if (h.format == Format::kPng) {
    // Signature, then IHDR: length, type, 13 bytes.
    if (data.size() < 8 + 8 + 13 || data.substr(12, 4) != "IHDR")
      return Status::Corruption("PNG without an IHDR chunk first");
    png::Header ph;
    Limits unlimited;
    unlimited.max_pixels = UINT64_MAX;
    FERRY_RETURN_IF_ERROR(png::ParseHeader(
        reinterpret_cast<const uint8_t*>(data.data()) + 16, unlimited, &ph));
    static const char* const kColours[] = {"gray",       "?", "rgb", "palette",
                                           "gray+alpha", "?", "rgba"};
    h.width = int(ph.width);
    h.height = int(ph.height);
    h.bit_depth = ph.bit_depth;
    h.channels = ph.color_type == png::kPalette ? 3 : ph.samples();
    h.colour = ph.color_type <= 6 ? kColours[ph.color_type] : "?";
    return h;
  }
  if (h.format == Format::kJpeg) {
    JpegFrame f;
    if (!ReadJpegFrame(data, &f))
      return Status::Corruption("JPEG without a frame header (SOF)");
    h.width = f.width;
    h.height = f.height;
    h.bit_depth = f.precision;
    h.channels = f.components;
    h.colour = f.components == 1   ? "gray"
               : f.components == 3 ? "ycbcr"
               : f.components == 4 ? "cmyk"
                                   : "?";
    h.orientation = JpegExifOrientation(data);
    return h;
  }
  return Status::NotSupported("not a PNG or JPEG image");
}

}  // namespace ferry::image
