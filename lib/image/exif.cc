// EXIF orientation: found by walking the JPEG's marker segments up to the
// first scan, then reading tag 0x0112 from IFD0 of the APP1 "Exif" segment.
// Every read is bounds-checked; anything unreadable means orientation 1.
#include <cstring>

#include "ferry/image.h"

namespace ferry::image {
namespace {

struct Tiff {
  const uint8_t* p;
  size_t n;
  bool big_endian;
  bool U16(size_t off, uint16_t* v) const {
    if (off + 2 > n) return false;
    *v = big_endian ? uint16_t(p[off] << 8 | p[off + 1])
                    : uint16_t(p[off + 1] << 8 | p[off]);
    return true;
  }
  bool U32(size_t off, uint32_t* v) const {
    if (off + 4 > n) return false;
    const uint8_t* q = p + off;
    *v = big_endian ? (uint32_t{q[0]} << 24 | uint32_t{q[1]} << 16 |
                       uint32_t{q[2]} << 8 | q[3])
                    : (uint32_t{q[3]} << 24 | uint32_t{q[2]} << 16 |
                       uint32_t{q[1]} << 8 | q[0]);
    return true;
  }
};

int OrientationFromTiff(const uint8_t* p, size_t n) {
  if (n < 8) return 1;
  Tiff t{p, n, false};
  if (p[0] == 'M' && p[1] == 'M') {
    t.big_endian = true;
  } else if (!(p[0] == 'I' && p[1] == 'I')) {
    return 1;
  }
  uint16_t magic, count;
  uint32_t ifd;
  if (!t.U16(2, &magic) || magic != 42 || !t.U32(4, &ifd) ||
      !t.U16(ifd, &count))
    return 1;
  for (uint32_t i = 0; i < count; ++i) {
    size_t e = size_t{ifd} + 2 + 12 * size_t{i};
    uint16_t tag, type;
    if (!t.U16(e, &tag)) return 1;
    if (tag != 0x0112) continue;
    if (!t.U16(e + 2, &type)) return 1;
    // SHORT as the standard says, or LONG as some writers store it (Pillow
    // reads both); the value is left-aligned in the entry's 4 bytes.
    uint32_t value;
    if (type == 3) {
      uint16_t v16;
      if (!t.U16(e + 8, &v16)) return 1;
      value = v16;
    } else if (type != 4 || !t.U32(e + 8, &value)) {
      return 1;
    }
    return value >= 1 && value <= 8 ? static_cast<int>(value) : 1;
  }
  return 1;
}

}  // namespace

int JpegExifOrientation(std::string_view data) {
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  const size_t n = data.size();
  if (n < 4 || p[0] != 0xFF || p[1] != 0xD8) return 1;
  size_t pos = 2;
  while (pos + 4 <= n) {
    if (p[pos] != 0xFF) return 1;
    const uint8_t marker = p[pos + 1];
    if (marker == 0xFF) {  // fill byte
      ++pos;
      continue;
    }
    if (marker == 0xDA || marker == 0xD9) return 1;  // scan or end: no EXIF
    const size_t len = size_t{p[pos + 2]} << 8 | p[pos + 3];
    if (len < 2 || pos + 2 + len > n) return 1;
    const uint8_t* seg = p + pos + 4;
    const size_t seg_len = len - 2;
    if (marker == 0xE1 && seg_len >= 6 &&
        std::memcmp(seg, "Exif\0\0", 6) == 0) {
      return OrientationFromTiff(seg + 6, seg_len - 6);
    }
    pos += 2 + len;
  }
  return 1;
}

Image ApplyOrientation(const Image& in, int o) {
  if (o <= 1 || o > 8) return in;
  const int w = in.width, h = in.height, ch = in.channels;
  const bool swap = o >= 5;
  Image out = Image::Make(swap ? h : w, swap ? w : h, ch);
  for (int y = 0; y < out.height; ++y) {
    uint8_t* d = out.row(y);
    for (int x = 0; x < out.width; ++x, d += ch) {
      int sx, sy;  // where output (x, y) comes from in the stored image
      switch (o) {
        case 2:
          sx = w - 1 - x;
          sy = y;
          break;  // mirror
        case 3:
          sx = w - 1 - x;
          sy = h - 1 - y;
          break;  // rotate 180
        case 4:
          sx = x;
          sy = h - 1 - y;
          break;  // flip
        case 5:
          sx = y;
          sy = x;
          break;  // transpose
        case 6:
          sx = y;
          sy = h - 1 - x;
          break;  // rotate 90 CW
        case 7:
          sx = w - 1 - y;
          sy = h - 1 - x;
          break;  // transverse
        default:
          sx = w - 1 - y;
          sy = x;
          break;  // 8: rotate 90 CCW
      }
      std::memcpy(d, in.row(sy) + size_t(sx) * ch, ch);
    }
  }
  return out;
}

}  // namespace ferry::image
