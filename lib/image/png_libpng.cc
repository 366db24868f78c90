// PNG through libpng: the reference for the fast decoder (tests compare the
// two pixel for pixel). libpng reports errors by longjmp, so everything that
// runs under setjmp lives in one C-style function with trivial locals only.
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ferry/image.h"
#include "image/png_format.h"

namespace ferry::image {
namespace {

struct MemReader {
  const uint8_t* data;
  size_t size;
  size_t pos;
};

struct ErrorState {
  std::jmp_buf jmp;
  char message[200];
};

// Output of the C-style decoder: a malloc'd buffer the caller frees.
struct PngRaw {
  uint8_t* pixels;
  uint32_t width, height;
  int channels;
};

void ReadFn(png_structp png, png_bytep out, png_size_t n) {
  auto* r = static_cast<MemReader*>(png_get_io_ptr(png));
  if (r->size - r->pos < n) png_error(png, "truncated PNG (read past the end)");
  std::memcpy(out, r->data + r->pos, n);
  r->pos += n;
}

void ErrorFn(png_structp png, png_const_charp msg) {
  auto* e = static_cast<ErrorState*>(png_get_error_ptr(png));
  std::snprintf(e->message, sizeof(e->message), "%s", msg);
  std::longjmp(e->jmp, 1);
}

void WarningFn(png_structp, png_const_charp) {}

// Returns 0 on success; on failure err->message says why.
int DecodeWithLibpng(MemReader* reader, int pillow16, ErrorState* err,
                     PngRaw* out) {
  png_structp png =
      png_create_read_struct(PNG_LIBPNG_VER_STRING, err, ErrorFn, WarningFn);
  if (png == nullptr) return -1;
  png_infop info = png_create_info_struct(png);
  png_bytep* volatile rows = nullptr;
  out->pixels = nullptr;
  if (setjmp(err->jmp)) {
    png_destroy_read_struct(&png, &info, nullptr);
    std::free(rows);
    std::free(out->pixels);
    out->pixels = nullptr;
    return -1;
  }
  png_set_read_fn(png, reader, ReadFn);
  png_read_info(png, info);
  int color_type = png_get_color_type(png, info);
  int bit_depth = png_get_bit_depth(png, info);
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8)
    png_set_expand_gray_1_2_4_to_8(png);
  if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
  if (bit_depth == 16) {
    if (pillow16) {
      png_set_strip_16(png);
    } else {
      png_set_scale_16(png);
    }
  }
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  out->width = png_get_image_width(png, info);
  out->height = png_get_image_height(png, info);
  out->channels = png_get_channels(png, info);
  size_t rowbytes = png_get_rowbytes(png, info);
  out->pixels = static_cast<uint8_t*>(std::malloc(rowbytes * out->height));
  rows = static_cast<png_bytep*>(std::malloc(sizeof(png_bytep) * out->height));
  if (out->pixels == nullptr || rows == nullptr)
    png_error(png, "out of memory");
  for (uint32_t y = 0; y < out->height; ++y)
    rows[y] = out->pixels + y * rowbytes;
  png_read_image(png, rows);
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  std::free(rows);
  return 0;
}

}  // namespace

Result<Image> DecodePngLibpng(std::string_view data,
                              const DecodeOptions& options) {
  // Check the header and the pixel budget before libpng allocates anything.
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  if (data.size() < 33 || std::memcmp(p, png::kSignature, 8) != 0 ||
      std::memcmp(p + 12, "IHDR", 4) != 0) {
    return Status::Corruption("not a PNG (bad signature or no IHDR)");
  }
  png::Header h;
  FERRY_RETURN_IF_ERROR(png::ParseHeader(p + 16, options.limits, &h));

  MemReader reader{p, data.size(), 0};
  ErrorState err{};
  PngRaw raw{};
  if (DecodeWithLibpng(&reader, options.pillow_16bit ? 1 : 0, &err, &raw) !=
      0) {
    return Status::Corruption(std::string("libpng: ") + err.message);
  }
  Image img;
  img.width = static_cast<int>(raw.width);
  img.height = static_cast<int>(raw.height);
  img.channels = raw.channels;
  img.pixels.assign(raw.pixels, raw.pixels + img.stride() * img.height);
  std::free(raw.pixels);
  return img;
}

}  // namespace ferry::image
