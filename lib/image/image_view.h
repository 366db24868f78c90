// Internal: images that may borrow their pixels, so the transcode path can
// resample straight out of the PNG decoder's buffer instead of copying a
// whole decoded image first.
#ifndef FERRY_IMAGE_IMAGE_VIEW_H_
#define FERRY_IMAGE_IMAGE_VIEW_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "ferry/image.h"

namespace ferry::image {

struct ImageView {
  const uint8_t* data = nullptr;
  size_t stride = 0;  // bytes from one row to the next
  int width = 0, height = 0, channels = 0;
  const uint8_t* row(int y) const {
    return data + static_cast<size_t>(y) * stride;
  }
  bool has_alpha() const { return channels == 2 || channels == 4; }
};

inline ImageView ViewOf(const Image& img) {
  return ImageView{img.pixels.data(), img.stride(), img.width, img.height,
                   img.channels};
}

Image CopyOf(const ImageView& v);

// A decoded PNG: either `owned`, or `view` into the calling thread's decoder
// scratch, valid until that thread decodes another PNG or calls
// ReleasePngScratch. `view` always describes the pixels.
struct Decoded {
  Image owned;
  ImageView view;
  std::string icc_profile;
};
Status DecodePngBorrowed(std::string_view data, const DecodeOptions& options,
                         Decoded* out);
// Frees the thread's decoder scratch if a very large image grew it.
void ReleasePngScratch();

#if defined(__x86_64__)
// Whether this CPU runs the AVX2 kernels (asked once).
inline bool HaveAvx2() {
  static const bool have = __builtin_cpu_supports("avx2");
  return have;
}
#endif

Image ResampleView(const ImageView& in, int out_w, int out_h, Filter filter,
                   const Box* box);
Image ApplyGeometryView(const ImageView& in, const Geometry& g, Filter filter,
                        Rgb background);
Image CompositeOverView(const ImageView& in, Rgb background);

}  // namespace ferry::image

#endif  // FERRY_IMAGE_IMAGE_VIEW_H_
