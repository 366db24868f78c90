// Every field of TranscodeOptions for core/options_visit.h: the one list
// that convert's resume fingerprint and pack's (and dataset.json's
// "options") are made from.
// Thread-safety: pure.
#ifndef FERRY_IMAGE_TRANSCODE_FIELDS_H_
#define FERRY_IMAGE_TRANSCODE_FIELDS_H_

#include <cstdio>
#include <string>

#include "core/options_visit.h"
#include "ferry/hash.h"
#include "ferry/image.h"

namespace ferry::image {

// A new field in any of these structs must be visited below; then update
// the count here.
static_assert(core::FieldCount<TranscodeOptions>() == 5);
static_assert(core::FieldCount<DecodeOptions>() == 6);
static_assert(core::FieldCount<Limits>() == 4);
static_assert(core::FieldCount<ResizeOptions>() == 6);
static_assert(core::FieldCount<Rgb>() == 3);
static_assert(core::FieldCount<EncodeOptions>() == 5);

template <class V>
void VisitTranscodeOptions(const TranscodeOptions& t, V& v) {
  static const char* const kModes[] = {"fit", "cover", "exact", "shorter",
                                       "pad"};
  static const char* const kFilters[] = {"lanczos3", "bicubic", "bilinear",
                                         "box"};
  const DecodeOptions& d = t.decode;
  v("max_pixels", d.limits.max_pixels);
  v("max_chunk_bytes", d.limits.max_chunk_bytes);
  v("max_jpeg_scans", d.limits.max_jpeg_scans);
  v("max_file_bytes", d.limits.max_file_bytes);
  v("autorotate", d.autorotate);
  v("pillow_16bit", d.pillow_16bit);
  v("shrink_to_width", d.shrink_to_width);
  v("shrink_to_height", d.shrink_to_height);
  v("read_icc", d.read_icc);
  v("shrink_on_load", t.shrink_on_load);
  v("keep_icc", t.keep_icc);
  const ResizeOptions& r = t.resize;
  v("width", r.width);
  v("height", r.height);
  v("mode", core::EnumField{int(r.mode), kModes[int(r.mode)]});
  v("filter", core::EnumField{int(r.filter), kFilters[int(r.filter)]});
  v("upscale", r.upscale);
  char bg[8];
  std::snprintf(bg, sizeof(bg), "#%02x%02x%02x", r.background.r, r.background.g,
                r.background.b);
  v("background", std::string(bg));
  const EncodeOptions& e = t.encode;
  v("quality", e.quality);
  v("subsampling",
    core::EnumField{int(e.subsampling),
                    e.subsampling == Subsampling::k420 ? "420" : "444"});
  v("optimize", e.optimize);
  v("progressive", e.progressive);
  v("icc_profile_xxh3", HashBytes(e.icc_profile).ToHex());
}

// Changes whenever any field does.
inline std::string TranscodeFingerprint(const TranscodeOptions& t) {
  core::OptionsText text;
  VisitTranscodeOptions(t, text);
  return "transcode-v2 " + HashBytes(text.str()).ToHex();
}

}  // namespace ferry::image

#endif  // FERRY_IMAGE_TRANSCODE_FIELDS_H_
