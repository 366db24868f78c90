// Fuzz target: untrusted image bytes through every decoder and the whole
// transcode. Nothing may crash; when both PNG decoders accept an input they
// must agree on every pixel.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ferry/image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ferry::image;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  DecodeOptions opt;
  opt.limits.max_pixels = 1 << 22;  // keep each run small
  opt.read_icc = true;
  auto fast = DecodePng(bytes, opt);
  auto ref = DecodePngLibpng(bytes, opt);
  if (fast.ok() && ref.ok() && !(fast->pixels == ref->pixels)) std::abort();
  (void)DecodeJpeg(bytes, opt);
  thread_local JpegEncoder encoder;
  TranscodeOptions t;
  t.decode = opt;
  t.resize.width = t.resize.height = 37;
  t.resize.mode = ResizeMode::kCover;
  (void)Transcode(bytes, t, &encoder);
  return 0;
}
