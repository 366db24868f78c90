// The transcode entry point: one input file's bytes in, JPEG bytes out.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ferry/image.h"
#include "image/image_view.h"
#include "image/png_format.h"

namespace ferry::image {
namespace {

// JPEG dimensions from the SOF marker, without decoding.
bool JpegSize(std::string_view data, int* w, int* h) {
  JpegFrame f;
  if (!ReadJpegFrame(data, &f)) return false;
  *w = f.width;
  *h = f.height;
  return true;
}

// PNG dimensions from IHDR, without decoding.
bool PngSize(std::string_view data, int* w, int* h) {
  if (data.size() < 24 || data.substr(12, 4) != "IHDR") return false;
  const auto* p = reinterpret_cast<const uint8_t*>(data.data()) + 16;
  const uint32_t pw = png::LoadBE32(p), ph = png::LoadBE32(p + 4);
  if (pw == 0 || ph == 0 || pw > INT32_MAX || ph > INT32_MAX) return false;
  *w = static_cast<int>(pw);
  *h = static_cast<int>(ph);
  return true;
}

// Whether an ICC profile describes images with this many channels: its
// header's data colour space (bytes 16-19) is 'GRAY' for 1 and 'RGB ' for 3.
// A CMYK profile in an RGB JPEG (a CMYK input, converted) is rejected by
// colour-managed readers such as LittleCMS.
bool IccFits(std::string_view icc, int channels) {
  if (icc.size() < 128 || icc.substr(36, 4) != "acsp") return false;
  return icc.substr(16, 4) == (channels == 1 ? "GRAY" : "RGB ");
}

}  // namespace

Result<std::string> Transcode(std::string_view data,
                              const TranscodeOptions& options,
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
  // The output size is checked from the header, before anything is
  // allocated.
  int w = 0, h = 0;
  const bool jpeg = fmt == Format::kJpeg;
  if (resizing && (jpeg ? JpegSize(data, &w, &h) : PngSize(data, &w, &h))) {
    if (jpeg && dopt.autorotate && JpegExifOrientation(data) >= 5)
      std::swap(w, h);
    g = ComputeGeometry(w, h, ro);
    FERRY_RETURN_IF_ERROR(CheckGeometry(g, dopt.limits));
    have_geometry = true;
    if (jpeg && options.shrink_on_load && dopt.shrink_to_width == 0 &&
        dopt.shrink_to_height == 0) {
      // Keep twice what the resampler reads, over the whole image.
      dopt.shrink_to_width = static_cast<int>(
          std::ceil(double(g.resize_w) * w / (g.box.x1 - g.box.x0)));
      dopt.shrink_to_height = static_cast<int>(
          std::ceil(double(g.resize_h) * h / (g.box.y1 - g.box.y0)));
    }
  }
  // PNG pixels may stay in the decoder's buffer (no copy of the image).
  struct ReleaseScratch {
    ~ReleaseScratch() { ReleasePngScratch(); }
  } release;
  Decoded dec;
  if (fmt == Format::kPng) {
    FERRY_RETURN_IF_ERROR(DecodePngBorrowed(data, dopt, &dec));
  } else {
    FERRY_ASSIGN_OR_RETURN(dec.owned, Decode(data, dopt));
    dec.icc_profile = std::move(dec.owned.icc_profile);
    dec.view = ViewOf(dec.owned);
  }
  ImageView view = dec.view;
  if (!have_geometry) {
    w = view.width;
    h = view.height;
    g = ComputeGeometry(w, h, ro);
    FERRY_RETURN_IF_ERROR(CheckGeometry(g, dopt.limits));
  } else if (view.width != w || view.height != h) {
    const double sx = double(view.width) / w, sy = double(view.height) / h;
    g.box = Box{g.box.x0 * sx, g.box.y0 * sy, g.box.x1 * sx, g.box.y1 * sy};
  }
  if (info) {
    info->input_format = fmt;
    info->input_width = w;
    info->input_height = h;
  }
  Image img;
  if (view.has_alpha()) {
    img = CompositeOverView(view, ro.background);
    view = ViewOf(img);
  }
  if (resizing) {
    img = ApplyGeometryView(view, g, ro.filter, ro.background);
  } else if (img.pixels.empty()) {
    img = dec.owned.pixels.empty() ? CopyOf(view) : std::move(dec.owned);
  }
  if (info) {
    info->output_width = img.width;
    info->output_height = img.height;
    info->output_channels = img.channels;
  }
  if (!options.keep_icc || !IccFits(dec.icc_profile, img.channels))
    return encoder->Encode(img, options.encode);
  EncodeOptions eopt = options.encode;
  eopt.icc_profile = std::move(dec.icc_profile);
  return encoder->Encode(img, eopt);
}

}  // namespace ferry::image
