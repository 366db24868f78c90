// JPEG decoding through libjpeg-turbo's libjpeg API. Errors arrive by
// longjmp, so the libjpeg calls live in one C-style function with trivial
// locals; the C++ around it owns memory and turns codes into Status.
#include <cstdio>
// clang-format off
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

#include <csetjmp>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ferry/image.h"

namespace ferry::image {
namespace {

struct JpegErr {
  jpeg_error_mgr pub;
  std::jmp_buf jmp;
  char message[JMSG_LENGTH_MAX + 64];
  int truncated;  // premature end of data seen
  int too_large;  // pixel budget exceeded
  int max_scans;
};

struct JpegRequest {
  uint64_t max_pixels;
  int shrink_w, shrink_h;  // in the stored frame; 0 = no shrink-on-load
  int read_icc;
};

struct JpegRaw {
  uint8_t* pixels;              // malloc'd
  int width, height, channels;  // channels 1, 3 or 4 (CMYK)
  int adobe_inverted;           // CMYK data stored inverted (Adobe APP14)
  uint32_t stored_w, stored_h;
  JOCTET* icc;  // malloc'd by libjpeg when asked for
  unsigned icc_len;
};

void ErrorExit(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<JpegErr*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, e->message);
  std::longjmp(e->jmp, 1);
}

void EmitMessage(j_common_ptr cinfo, int level) {
  auto* e = reinterpret_cast<JpegErr*>(cinfo->err);
  // Premature end: libjpeg would pad the image with grey and go on.
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) e->truncated = 1;
}

void Progress(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<JpegErr*>(cinfo->err);
  auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (cinfo->is_decompressor && d->input_scan_number > e->max_scans) {
    std::snprintf(e->message, sizeof(e->message),
                  "more than %d progressive scans", e->max_scans);
    std::longjmp(e->jmp, 1);
  }
}

int ShrinkDenom(uint32_t w, uint32_t h, int tw, int th) {
  if (tw <= 0 && th <= 0) return 1;
  for (int d : {8, 4, 2}) {
    // Scaled size rounds up, as libjpeg's jdiv_round_up.
    uint64_t sw = (w + d - 1) / d, sh = (h + d - 1) / d;
    if (sw >= uint64_t(2) * std::max(tw, 1) &&
        sh >= uint64_t(2) * std::max(th, 1))
      return d;
  }
  return 1;
}

int DecodeWithLibjpeg(const uint8_t* data, size_t size, const JpegRequest* req,
                      JpegErr* err, JpegRaw* out) {
  jpeg_decompress_struct cinfo;
  jpeg_progress_mgr progress;
  cinfo.err = jpeg_std_error(&err->pub);
  err->pub.error_exit = ErrorExit;
  err->pub.emit_message = EmitMessage;
  out->pixels = nullptr;
  out->icc = nullptr;
  if (setjmp(err->jmp)) {
    jpeg_destroy_decompress(&cinfo);
    std::free(out->pixels);
    std::free(out->icc);
    out->pixels = nullptr;
    out->icc = nullptr;
    return -1;
  }
  jpeg_create_decompress(&cinfo);
  progress.progress_monitor = Progress;
  cinfo.progress = &progress;
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  if (req->read_icc) jpeg_save_markers(&cinfo, JPEG_APP0 + 2, 0xFFFF);
  jpeg_read_header(&cinfo, TRUE);
  if (req->read_icc &&
      !jpeg_read_icc_profile(&cinfo, &out->icc, &out->icc_len)) {
    out->icc = nullptr;
    out->icc_len = 0;
  }
  out->stored_w = cinfo.image_width;
  out->stored_h = cinfo.image_height;
  if (uint64_t{cinfo.image_width} * cinfo.image_height > req->max_pixels) {
    err->too_large = 1;
    jpeg_destroy_decompress(&cinfo);
    return -1;
  }
  const bool cmyk =
      cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
  if (cinfo.jpeg_color_space == JCS_GRAYSCALE) {
    cinfo.out_color_space = JCS_GRAYSCALE;
  } else if (cmyk) {
    cinfo.out_color_space = JCS_CMYK;
  } else {
    cinfo.out_color_space = JCS_RGB;
  }
  cinfo.dct_method = JDCT_ISLOW;
  cinfo.scale_num = 1;
  cinfo.scale_denom = ShrinkDenom(cinfo.image_width, cinfo.image_height,
                                  req->shrink_w, req->shrink_h);
  jpeg_start_decompress(&cinfo);
  out->width = static_cast<int>(cinfo.output_width);
  out->height = static_cast<int>(cinfo.output_height);
  out->channels = cinfo.output_components;
  out->adobe_inverted = cmyk && cinfo.saw_Adobe_marker;
  const size_t stride = size_t(out->width) * out->channels;
  out->pixels = static_cast<uint8_t*>(std::malloc(stride * out->height));
  if (out->pixels == nullptr) ERREXIT(&cinfo, JERR_OUT_OF_MEMORY);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = out->pixels + stride * cinfo.output_scanline;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return 0;
}

inline uint8_t MulDiv255(int a, int b) {
  int t = a * b + 128;  // Pillow's MULDIV255
  return static_cast<uint8_t>(((t >> 8) + t) >> 8);
}

}  // namespace

Result<Image> DecodeJpeg(std::string_view data, const DecodeOptions& options) {
  const int orientation = options.autorotate ? JpegExifOrientation(data) : 1;
  JpegRequest req{options.limits.max_pixels, options.shrink_to_width,
                  options.shrink_to_height, options.read_icc ? 1 : 0};
  if (orientation >= 5) std::swap(req.shrink_w, req.shrink_h);
  JpegErr err{};
  err.max_scans = options.limits.max_jpeg_scans;
  JpegRaw raw{};
  int rc = DecodeWithLibjpeg(reinterpret_cast<const uint8_t*>(data.data()),
                             data.size(), &req, &err, &raw);
  std::string icc;
  if (raw.icc != nullptr) {
    icc.assign(reinterpret_cast<const char*>(raw.icc), raw.icc_len);
    std::free(raw.icc);
  }
  if (err.too_large) {
    return Status::ResourceExhausted(
        "image too large: " + std::to_string(raw.stored_w) + "x" +
        std::to_string(raw.stored_h) + " pixels, limit " +
        std::to_string(options.limits.max_pixels));
  }
  if (rc != 0)
    return Status::Corruption(std::string("bad JPEG: ") + err.message);
  if (err.truncated) {
    std::free(raw.pixels);
    return Status::Corruption("truncated JPEG (premature end of data)");
  }
  Image img =
      Image::Make(raw.width, raw.height, raw.channels == 4 ? 3 : raw.channels);
  const size_t n = size_t(raw.width) * raw.height;
  if (raw.channels == 4) {
    // CMYK -> RGB as Pillow: R = (255 - C)(255 - K) / 255. Adobe files store
    // 255 - C etc., so there R = C' * K' / 255.
    const uint8_t* s = raw.pixels;
    uint8_t* d = img.pixels.data();
    for (size_t i = 0; i < n; ++i, s += 4, d += 3) {
      int c = s[0], m = s[1], y = s[2], k = s[3];
      if (!raw.adobe_inverted) {
        c = 255 - c;
        m = 255 - m;
        y = 255 - y;
        k = 255 - k;
      }
      d[0] = MulDiv255(c, k);
      d[1] = MulDiv255(m, k);
      d[2] = MulDiv255(y, k);
    }
  } else {
    std::memcpy(img.pixels.data(), raw.pixels, n * raw.channels);
  }
  std::free(raw.pixels);
  img.icc_profile = std::move(icc);
  if (orientation > 1) {
    Image turned = ApplyOrientation(img, orientation);
    turned.icc_profile = std::move(img.icc_profile);
    return turned;
  }
  return img;
}

}  // namespace ferry::image
