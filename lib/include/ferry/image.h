// Images: decoding PNG and JPEG, resizing like Pillow, compositing alpha,
// encoding JPEG, and the one-call transcode that `ferry convert` uses.
//
// Pixels are 8-bit, interleaved, rows packed: 1 channel (gray), 2 (gray +
// alpha), 3 (RGB) or 4 (RGBA). Decoders check every limit before allocating.
// Errors say what is wrong with the data; callers add the file name.
// Thread-safety: free functions are safe from any thread; a JpegEncoder is
// used by one thread at a time (keep one per thread).
#ifndef FERRY_IMAGE_H_
#define FERRY_IMAGE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/result.h"

namespace ferry::image {

// An allocator that leaves new elements uninitialised: every pixel buffer is
// written in full right after it is made, so zero-filling it first is waste.
template <typename T>
struct NoInitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  NoInitAllocator() = default;
  template <typename U>
  NoInitAllocator(const NoInitAllocator<U>&) noexcept {}  // NOLINT
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using PixelVector = std::vector<uint8_t, NoInitAllocator<uint8_t>>;

struct FERRY_EXPORT Image {
  int width = 0;
  int height = 0;
  int channels = 0;  // 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA
  PixelVector pixels;
  std::string icc_profile;  // only when DecodeOptions::read_icc asked for it

  size_t stride() const { return static_cast<size_t>(width) * channels; }
  uint8_t* row(int y) { return pixels.data() + y * stride(); }
  const uint8_t* row(int y) const { return pixels.data() + y * stride(); }
  bool has_alpha() const { return channels == 2 || channels == 4; }
  static Image Make(int width, int height, int channels);
};

enum class Format { kUnknown, kPng, kJpeg };
// Detects the format from the first bytes (the content, not the file name).
FERRY_EXPORT Format Sniff(std::string_view data);
FERRY_EXPORT const char* FormatName(Format f);

struct Limits {
  // Pillow's DecompressionBombError threshold (2 x 89,478,485).
  uint64_t max_pixels = 178956970;
  // Largest PNG chunk other than IDAT (libpng's default malloc limit).
  uint32_t max_chunk_bytes = 8000000;
  // Progressive JPEG scans (a many-scan file is a known CPU bomb).
  int max_jpeg_scans = 1000;
  // Largest input file read (checked from its size, before reading it).
  uint64_t max_file_bytes = 1ull << 30;
};

struct DecodeOptions {
  Limits limits;
  // Apply the JPEG EXIF orientation (1-8) so pixels come out upright.
  bool autorotate = true;
  // 16-bit PNG samples: false scales accurately, (v * 255 + 32895) >> 16 as
  // libpng's png_set_scale_16; true keeps the high byte as Pillow does.
  bool pillow_16bit = false;
  // JPEG shrink-on-load: decode at 1/2, 1/4 or 1/8 scale when the result is
  // still at least twice this size (upright frame). 0 = full size.
  int shrink_to_width = 0;
  int shrink_to_height = 0;
  // Also return the embedded ICC profile (PNG iCCP, JPEG APP2 segments).
  bool read_icc = false;
};

// Output channels: gray 1, gray+alpha or gray with tRNS 2, RGB / palette 3,
// RGBA / RGB or palette with tRNS 4. Chunk CRCs and the zlib Adler-32 are
// verified. gAMA, cHRM, sRGB and iCCP do not change pixels (as in Pillow).
FERRY_EXPORT Result<Image> DecodePng(std::string_view data,
                                     const DecodeOptions& options);
// The same through libpng: the reference the fast decoder is tested against.
FERRY_EXPORT Result<Image> DecodePngLibpng(std::string_view data,
                                           const DecodeOptions& options);
// Gray JPEGs give 1 channel, others 3 (CMYK/YCCK converted, Adobe inverted
// data handled). A truncated file is an error.
FERRY_EXPORT Result<Image> DecodeJpeg(std::string_view data,
                                      const DecodeOptions& options);
// Sniffs, then decodes.
FERRY_EXPORT Result<Image> Decode(std::string_view data,
                                  const DecodeOptions& options);

// An image file's header facts, without decoding pixels.
struct ImageHeader {
  Format format = Format::kUnknown;
  int width = 0, height = 0;
  int bit_depth = 0;    // per sample
  int channels = 0;     // as stored (palette: 3)
  std::string colour;   // gray, gray+alpha, rgb, rgba, palette; ycbcr, cmyk
  int orientation = 1;  // EXIF (JPEG), 1 when absent
};
FERRY_EXPORT Result<ImageHeader> ReadImageHeader(std::string_view data);

// A JPEG's frame header (SOF): size, sample precision and components.
struct JpegFrame {
  int width = 0, height = 0, precision = 0, components = 0;
};
FERRY_EXPORT bool ReadJpegFrame(std::string_view data, JpegFrame* frame);

// EXIF orientation (1-8) of a JPEG, 1 when absent or unreadable.
FERRY_EXPORT int JpegExifOrientation(std::string_view data);
// Rotates/flips so that an image stored with `orientation` shows upright.
FERRY_EXPORT Image ApplyOrientation(const Image& in, int orientation);

struct Rgb {
  uint8_t r = 255, g = 255, b = 255;
  bool is_gray() const { return r == g && g == b; }
};
// Parses "white", "black", "gray", "#rrggbb", "rrggbb" or "r,g,b".
FERRY_EXPORT Result<Rgb> ParseColor(std::string_view text);

// Composites an image with alpha over a solid background; images without
// alpha are returned as they are. Gray+alpha over a non-gray background
// becomes RGB.
FERRY_EXPORT Image CompositeOver(Image in, Rgb background);

enum class Filter { kLanczos3, kBicubic, kBilinear, kBox };
FERRY_EXPORT Result<Filter> ParseFilter(std::string_view name);

struct Box {
  double x0, y0, x1, y1;  // source region, may be fractional
};
// Pillow's Image.resize(size, filter, box): separable convolution whose
// support grows with the downscale factor (antialiasing), fixed-point 8-bit
// arithmetic, horizontal pass first. 1 or 3 channels (composite alpha first).
FERRY_EXPORT Image Resample(const Image& in, int out_width, int out_height,
                            Filter filter, const Box* box = nullptr);

enum class ResizeMode { kFit, kCover, kExact, kShorter, kPad };
FERRY_EXPORT Result<ResizeMode> ParseResizeMode(std::string_view name);

struct ResizeOptions {
  int width = 0;  // the box; 0 and 0: no resizing
  int height = 0;
  ResizeMode mode = ResizeMode::kFit;
  Filter filter = Filter::kLanczos3;
  bool upscale = false;  // fit and pad only: allow growing small images
  Rgb background;        // alpha is composited over it; pad's letterbox colour
};

// Where an image of in_w x in_h goes: resampled to resize_w x resize_h from
// the source box, then (pad) placed at (pad_x, pad_y) on a canvas.
struct Geometry {
  int resize_w = 0, resize_h = 0;
  Box box{0, 0, 0, 0};
  int canvas_w = 0, canvas_h = 0;
  int pad_x = 0, pad_y = 0;
};
// Overflow-safe: a side too large for an int comes out as INT_MAX, which
// CheckGeometry rejects.
FERRY_EXPORT Geometry ComputeGeometry(int in_w, int in_h,
                                      const ResizeOptions& options);
// The largest side libjpeg writes (JPEG_MAX_DIMENSION).
inline constexpr int kMaxJpegSide = 65500;
// Whether the images `g` makes fit the limits, decided before any of them is
// allocated: the output and pad's canvas at most kMaxJpegSide a side and
// limits.max_pixels in all, and the resampler's intermediate (output width x
// source rows) at most limits.max_pixels. ResourceExhausted naming the sizes
// otherwise. Transcode checks this; ApplyGeometry and Resize do not.
FERRY_EXPORT Status CheckGeometry(const Geometry& g, const Limits& limits);
// Resamples per geometry (with the given filter), then letterboxes onto the
// canvas with background. 1 or 3 channels.
FERRY_EXPORT Image ApplyGeometry(const Image& in, const Geometry& g,
                                 Filter filter, Rgb background);
// ApplyGeometry(in, ComputeGeometry(in's size, options), ...): no-op without a
// box.
FERRY_EXPORT Image Resize(const Image& in, const ResizeOptions& options);

enum class Subsampling { k420, k444 };
struct EncodeOptions {
  int quality = 90;
  Subsampling subsampling = Subsampling::k420;
  bool optimize = false;  // optimised Huffman tables
  bool progressive = false;
  std::string icc_profile;  // written as APP2 when not empty
};

// JPEG encoder with the accurate integer DCT, no restart markers and no
// metadata but an optional ICC profile. Keeps its codec state between calls.
class FERRY_EXPORT JpegEncoder {
 public:
  JpegEncoder();
  ~JpegEncoder();
  JpegEncoder(const JpegEncoder&) = delete;
  JpegEncoder& operator=(const JpegEncoder&) = delete;
  // 1 or 3 channels.
  Result<std::string> Encode(const Image& image, const EncodeOptions& options);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

struct TranscodeOptions {
  DecodeOptions decode;
  // JPEG inputs: decode at 1/2, 1/4 or 1/8 scale while that keeps at least
  // twice the resampler's input (libvips' rule); off = always full size.
  bool shrink_on_load = true;
  // Copy the input's ICC profile (PNG iCCP, JPEG APP2) into the output when
  // its colour space is the output's (GRAY for gray, RGB for colour); a
  // CMYK profile of a converted CMYK JPEG, say, is dropped.
  bool keep_icc = false;
  ResizeOptions resize;
  EncodeOptions encode;
};

struct TranscodeInfo {
  Format input_format = Format::kUnknown;
  int input_width = 0, input_height = 0;  // as stored
  int output_width = 0, output_height = 0;
  int output_channels = 0;  // of the JPEG: 1 (gray) or 3
};

// Decode (with shrink-on-load) -> orient -> composite -> resize -> encode.
FERRY_EXPORT Result<std::string> Transcode(std::string_view data,
                                           const TranscodeOptions& options,
                                           JpegEncoder* encoder,
                                           TranscodeInfo* info = nullptr);

}  // namespace ferry::image

#endif  // FERRY_IMAGE_H_
