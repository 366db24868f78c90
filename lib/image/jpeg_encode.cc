// JPEG encoding through libjpeg-turbo's libjpeg API (the TurboJPEG wrapper
// would pick the fast DCT below quality 96). The compressor and its output
// buffer live as long as the JpegEncoder, so a worker thread reuses them.
#include <cstdio>
// clang-format off
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

#include <csetjmp>
#include <cstdlib>
#include <cstring>

#include "ferry/image.h"

namespace ferry::image {
namespace {

struct EncErr {
  jpeg_error_mgr pub;
  std::jmp_buf jmp;
  char message[JMSG_LENGTH_MAX];
};

// A destination that grows a malloc'd buffer kept between images.
struct GrowDest {
  jpeg_destination_mgr pub;
  uint8_t* buf;
  size_t cap;
  size_t len;
};

void InitDest(j_compress_ptr c) {
  auto* d = reinterpret_cast<GrowDest*>(c->dest);
  d->pub.next_output_byte = d->buf;
  d->pub.free_in_buffer = d->cap;
  d->len = 0;
}

boolean EmptyDest(j_compress_ptr c) {
  auto* d = reinterpret_cast<GrowDest*>(c->dest);
  size_t ncap = d->cap * 2;
  auto* nbuf = static_cast<uint8_t*>(std::realloc(d->buf, ncap));
  if (nbuf == nullptr) ERREXIT(c, JERR_OUT_OF_MEMORY);
  d->pub.next_output_byte = nbuf + d->cap;
  d->pub.free_in_buffer = ncap - d->cap;
  d->buf = nbuf;
  d->cap = ncap;
  return TRUE;
}

void TermDest(j_compress_ptr c) {
  auto* d = reinterpret_cast<GrowDest*>(c->dest);
  d->len = d->cap - d->pub.free_in_buffer;
}

void EncErrorExit(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<EncErr*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, e->message);
  std::longjmp(e->jmp, 1);
}

void EncEmit(j_common_ptr, int) {}

struct EncodeParams {
  const uint8_t* pixels;
  int width, height, channels;
  int quality;
  int h_samp;  // luma sampling: 2 for 4:2:0, 1 for 4:4:4
  int optimize, progressive;
  const uint8_t* icc;
  unsigned icc_len;
};

// Returns 0 on success. Only trivial locals: libjpeg errors longjmp here.
int EncodeWithLibjpeg(jpeg_compress_struct* cinfo, EncErr* err,
                      const EncodeParams* p) {
  if (setjmp(err->jmp)) {
    jpeg_abort_compress(cinfo);
    return -1;
  }
  cinfo->image_width = static_cast<JDIMENSION>(p->width);
  cinfo->image_height = static_cast<JDIMENSION>(p->height);
  cinfo->input_components = p->channels;
  cinfo->in_color_space = p->channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(cinfo);
  jpeg_set_quality(cinfo, p->quality, TRUE);
  cinfo->dct_method = JDCT_ISLOW;
  cinfo->optimize_coding = p->optimize ? TRUE : FALSE;
  cinfo->restart_interval = 0;
  cinfo->write_JFIF_header = TRUE;
  if (p->channels == 3) {
    cinfo->comp_info[0].h_samp_factor = p->h_samp;
    cinfo->comp_info[0].v_samp_factor = p->h_samp;
    cinfo->comp_info[1].h_samp_factor = cinfo->comp_info[1].v_samp_factor = 1;
    cinfo->comp_info[2].h_samp_factor = cinfo->comp_info[2].v_samp_factor = 1;
  }
  if (p->progressive) jpeg_simple_progression(cinfo);
  jpeg_start_compress(cinfo, TRUE);
  if (p->icc_len > 0) jpeg_write_icc_profile(cinfo, p->icc, p->icc_len);
  const size_t stride = size_t(p->width) * p->channels;
  while (cinfo->next_scanline < cinfo->image_height) {
    JSAMPROW row =
        const_cast<uint8_t*>(p->pixels + stride * cinfo->next_scanline);
    jpeg_write_scanlines(cinfo, &row, 1);
  }
  jpeg_finish_compress(cinfo);
  return 0;
}

}  // namespace

struct JpegEncoder::State {
  jpeg_compress_struct cinfo;
  EncErr err;
  GrowDest dest;
  // Optimised Huffman tables (--optimize, and every progressive file) are
  // written over the codec's tables, and jpeg_set_defaults keeps tables it
  // finds: the next file would use them. Such a codec is made anew.
  bool tables_changed = false;
  State() {
    InitCodec();
    dest.cap = 1 << 16;
    dest.buf = static_cast<uint8_t*>(std::malloc(dest.cap));
    dest.len = 0;
    dest.pub.init_destination = InitDest;
    dest.pub.empty_output_buffer = EmptyDest;
    dest.pub.term_destination = TermDest;
  }
  void InitCodec() {
    std::memset(&cinfo, 0, sizeof(cinfo));
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = EncErrorExit;
    err.pub.emit_message = EncEmit;
    jpeg_create_compress(&cinfo);
    cinfo.dest = &dest.pub;
  }
  ~State() {
    jpeg_destroy_compress(&cinfo);
    std::free(dest.buf);
  }
};

JpegEncoder::JpegEncoder() : state_(std::make_unique<State>()) {}
JpegEncoder::~JpegEncoder() = default;

Result<std::string> JpegEncoder::Encode(const Image& image,
                                        const EncodeOptions& o) {
  if (image.channels != 1 && image.channels != 3) {
    return Status::InvalidArgument(
        "JPEG encoding needs 1 or 3 channels (composite alpha first)");
  }
  if (image.width <= 0 || image.height <= 0 || image.width > kMaxJpegSide ||
      image.height > kMaxJpegSide) {
    return Status::InvalidArgument(
        "JPEG size out of range: " + std::to_string(image.width) + "x" +
        std::to_string(image.height));
  }
  if (o.quality < 1 || o.quality > 100)
    return Status::InvalidArgument("quality must be 1-100");
  if (state_->dest.buf == nullptr)
    return Status::ResourceExhausted("out of memory");
  EncodeParams p{image.pixels.data(),
                 image.width,
                 image.height,
                 image.channels,
                 o.quality,
                 o.subsampling == Subsampling::k420 ? 2 : 1,
                 o.optimize,
                 o.progressive,
                 reinterpret_cast<const uint8_t*>(o.icc_profile.data()),
                 static_cast<unsigned>(o.icc_profile.size())};
  if (state_->tables_changed) {
    jpeg_destroy_compress(&state_->cinfo);
    state_->InitCodec();
  }
  state_->tables_changed = o.optimize || o.progressive;
  if (EncodeWithLibjpeg(&state_->cinfo, &state_->err, &p) != 0) {
    return Status::IOError(std::string("JPEG encoder: ") + state_->err.message);
  }
  return std::string(reinterpret_cast<const char*>(state_->dest.buf),
                     state_->dest.len);
}

}  // namespace ferry::image
