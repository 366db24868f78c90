// The transcode entry point: one input file's bytes in, JPEG bytes out.
#include <algorithm>
#include <cmath>

#include "ferry/image.h"

namespace ferry::image {
namespace {

// JPEG dimensions from the SOF marker, without decoding.
bool JpegSize(std::string_view data, int* w, int* h) {
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
      *h = p[pos + 5] << 8 | p[pos + 6];
      *w = p[pos + 7] << 8 | p[pos + 8];
      return *w > 0 && *h > 0;
    }
    if (m == 0xDA || len < 2) return false;
    pos += 2 + len;
  }
  return false;
}

}  // namespace

Result<std::string> Transcode(std::string_view data, const TranscodeOptions& options,
                              JpegEncoder* encoder, TranscodeInfo* info) {
  const Format fmt = Sniff(data);
  const ResizeOptions& ro = options.resize;
  const bool resizing = ro.width > 0 && ro.height > 0;
  DecodeOptions dopt = options.decode;
  dopt.read_icc = dopt.read_icc || options.keep_icc;
  // Geometry comes from the full (upright) size, as Pillow's thumbnail and
  // ImageOps compute it; shrink-on-load then only changes the source scale.
  Geometry g;
  bool have_geometry = false;
  int w = 0, h = 0;
  if (fmt == Format::kJpeg && resizing && JpegSize(data, &w, &h)) {
    if (dopt.autorotate && JpegExifOrientation(data) >= 5) std::swap(w, h);
    g = ComputeGeometry(w, h, ro);
    have_geometry = true;
    if (options.shrink_on_load && dopt.shrink_to_width == 0 && dopt.shrink_to_height == 0) {
      // Keep twice what the resampler reads, over the whole image.
      dopt.shrink_to_width = static_cast<int>(std::ceil(g.resize_w * w / (g.box.x1 - g.box.x0)));
      dopt.shrink_to_height = static_cast<int>(std::ceil(g.resize_h * h / (g.box.y1 - g.box.y0)));
    }
  }
  FERRY_ASSIGN_OR_RETURN(Image img, Decode(data, dopt));
  if (!have_geometry) {
    w = img.width;
    h = img.height;
    g = ComputeGeometry(w, h, ro);
  } else if (img.width != w || img.height != h) {
    const double sx = double(img.width) / w, sy = double(img.height) / h;
    g.box = Box{g.box.x0 * sx, g.box.y0 * sy, g.box.x1 * sx, g.box.y1 * sy};
  }
  if (info) {
    info->input_format = fmt;
    info->input_width = w;
    info->input_height = h;
  }
  std::string icc = options.keep_icc ? std::move(img.icc_profile) : std::string();
  img = CompositeOver(std::move(img), ro.background);
  if (resizing) img = ApplyGeometry(img, g, ro.filter, ro.background);
  if (info) {
    info->output_width = img.width;
    info->output_height = img.height;
  }
  if (icc.empty()) return encoder->Encode(img, options.encode);
  EncodeOptions eopt = options.encode;
  eopt.icc_profile = std::move(icc);
  return encoder->Encode(img, eopt);
}

}  // namespace ferry::image
