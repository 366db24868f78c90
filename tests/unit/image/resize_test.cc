#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <vector>

#include "ferry/image.h"
#include "image/image_view.h"
#include "testutil/image_util.h"
#include "testutil/test_util.h"

namespace ferry::image {
namespace {

std::string Golden(const std::string& name) {
  return std::string(FERRY_TEST_DATA_DIR) + "/unit/image/goldens/" + name;
}

Image Sample(const std::string& name) {
  auto img = DecodePng(test::SampleBytes("images/png/" + name), {});
  EXPECT_TRUE(img.ok());
  return *img;
}

struct Case {
  Filter filter;
  const char* name;
};
const Case kFilters[] = {{Filter::kLanczos3, "lanczos3"},
                         {Filter::kBicubic, "bicubic"},
                         {Filter::kBilinear, "bilinear"},
                         {Filter::kBox, "box"}};

// Within +-1 of Pillow's Image.resize for every filter (goldens made by
// make_goldens.py with python3-pil).
TEST(ResizeTest, MatchesPillowWithinOneOnRgbAndGray) {
  const Image rgb = Sample("rgb8.png");
  const Image gray = Sample("gray8.png");
  for (const Case& c : kFilters) {
    for (auto [w, h] : {std::pair{97, 73}, {40, 30}, {283, 97}}) {
      SCOPED_TRACE(std::string(c.name) + " " + std::to_string(w) + "x" +
                   std::to_string(h));
      Image want = test::ReadPnm(Golden("rgb8_" + std::string(c.name) + "_" +
                                        std::to_string(w) + "x" +
                                        std::to_string(h) + ".ppm"));
      test::Diff d = test::Compare(Resample(rgb, w, h, c.filter), want);
      EXPECT_LE(d.max, 0);
    }
    Image want_gray =
        test::ReadPnm(Golden("gray8_" + std::string(c.name) + "_97x73.pgm"));
    EXPECT_LE(test::Compare(Resample(gray, 97, 73, c.filter), want_gray).max, 0)
        << c.name;
    Box box{30.5, 10.25, 200.75, 180.0};
    Image want_box =
        test::ReadPnm(Golden("rgb8_" + std::string(c.name) + "_64x64_box.ppm"));
    EXPECT_LE(
        test::Compare(Resample(rgb, 64, 64, c.filter, &box), want_box).max, 0)
        << c.name;
  }
}

// Pillow's Resample.c written plainly (doubles -> 22-bit fixed point,
// horizontal pass over the rows the vertical pass reads, clamped to 8 bits
// in between): the optimised kernels must give exactly these bytes.
int32_t Fixed(double v) {
  return static_cast<int32_t>(v < 0 ? -0.5 + v * (1 << 22)
                                    : 0.5 + v * (1 << 22));
}
double RefFilter(Filter f, double x) {
  auto sinc = [](double v) {
    return v == 0.0 ? 1.0 : std::sin(v * M_PI) / (v * M_PI);
  };
  switch (f) {
    case Filter::kBox:
      return (x > -0.5 && x <= 0.5) ? 1.0 : 0.0;
    case Filter::kBilinear:
      return std::fabs(x) < 1.0 ? 1.0 - std::fabs(x) : 0.0;
    case Filter::kBicubic: {
      const double a = -0.5, ax = std::fabs(x);
      if (ax < 1.0) return ((a + 2.0) * ax - (a + 3.0)) * ax * ax + 1;
      if (ax < 2.0) return (((ax - 5) * ax + 8) * ax - 4) * a;
      return 0.0;
    }
    default:
      return (-3.0 <= x && x < 3.0) ? sinc(x) * sinc(x / 3) : 0.0;
  }
}
double RefSupport(Filter f) {
  return f == Filter::kBox        ? 0.5
         : f == Filter::kBilinear ? 1.0
         : f == Filter::kBicubic  ? 2.0
                                  : 3.0;
}
struct RefTaps {
  int min, n;
  std::vector<int32_t> k;
};
// The box edges are float32 as Pillow's C API takes them, their difference
// taken in float.
std::vector<RefTaps> RefWeights(int in, float in0, float in1, int out,
                                Filter f) {
  const double scale = double(in1 - in0) / out, fs = std::max(scale, 1.0);
  const double support = RefSupport(f) * fs;
  std::vector<RefTaps> taps(out);
  for (int xx = 0; xx < out; ++xx) {
    const double center = in0 + (xx + 0.5) * scale;
    const int xmin = std::max(static_cast<int>(center - support + 0.5), 0);
    const int xmax =
        std::min(static_cast<int>(center + support + 0.5), in) - xmin;
    std::vector<double> w(std::max(xmax, 0));
    double ww = 0;
    for (int x = 0; x < xmax; ++x) {
      w[x] = RefFilter(f, (x + xmin - center + 0.5) / fs);
      ww += w[x];
    }
    taps[xx].min = xmin;
    taps[xx].n = std::max(xmax, 0);
    for (double v : w) taps[xx].k.push_back(Fixed(ww != 0.0 ? v / ww : v));
  }
  return taps;
}
uint8_t RefClip(int64_t acc) {
  const int64_t v = acc >> 22;
  return static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
}
Image RefResample(const Image& in, int w, int h, Filter f, Box b) {
  const int ch = in.channels;
  const auto th = RefWeights(in.width, float(b.x0), float(b.x1), w, f);
  const auto tv = RefWeights(in.height, float(b.y0), float(b.y1), h, f);
  Image mid = Image::Make(w, in.height, ch);  // rows outside tv stay unused
  for (int y = 0; y < in.height; ++y) {
    for (int xx = 0; xx < w; ++xx) {
      for (int c = 0; c < ch; ++c) {
        int32_t acc = 1 << 21;
        for (int x = 0; x < th[xx].n; ++x)
          acc += in.row(y)[(th[xx].min + x) * ch + c] * th[xx].k[x];
        mid.row(y)[xx * ch + c] = RefClip(acc);
      }
    }
  }
  Image out = Image::Make(w, h, ch);
  for (int yy = 0; yy < h; ++yy) {
    for (int i = 0; i < w * ch; ++i) {
      int32_t acc = 1 << 21;
      for (int y = 0; y < tv[yy].n; ++y)
        acc += mid.row(tv[yy].min + y)[i] * tv[yy].k[y];
      out.row(yy)[i] = RefClip(acc);
    }
  }
  return out;
}

Image Noise(int w, int h, int ch, uint32_t seed) {
  Image img = Image::Make(w, h, ch);
  for (size_t i = 0; i < img.pixels.size(); ++i) {
    seed = seed * 1103515245 + 12345;
    // Smooth ramps plus noise, and some saturated runs so that clamping at
    // 0 and 255 happens.
    const int v = int(i % (size_t(w) * ch)) * 7 / ch + int(seed >> 27) * 9;
    img.pixels[i] = static_cast<uint8_t>(v % 320 > 255 ? 255 : v % 320);
  }
  return img;
}

// Every channel count, widths that leave partial vectors, down- and
// upscales, crop boxes: byte for byte Pillow's arithmetic.
TEST(ResizeTest, EqualsPillowsArithmeticExactly) {
  struct Size {
    int iw, ih, ow, oh;
  };
  const Size sizes[] = {{1280, 37, 512, 15}, {483, 29, 224, 13},
                        {97, 61, 13, 61},    {61, 97, 61, 17},
                        {33, 17, 101, 43},   {17, 9, 5, 3},
                        {1, 7, 3, 2},        {250, 250, 224, 224},
                        {301, 40, 299, 20},  {1500, 41, 31, 3}};
  for (const Case& c : kFilters) {
    for (int ch = 1; ch <= 4; ++ch) {
      for (const Size& s : sizes) {
        SCOPED_TRACE(std::string(c.name) + " ch=" + std::to_string(ch) + " " +
                     std::to_string(s.iw) + "x" + std::to_string(s.ih) + "->" +
                     std::to_string(s.ow) + "x" + std::to_string(s.oh));
        const Image in = Noise(s.iw, s.ih, ch, s.iw * 31 + s.ih);
        const Box full{0, 0, double(s.iw), double(s.ih)};
        EXPECT_TRUE(Resample(in, s.ow, s.oh, c.filter).pixels ==
                    RefResample(in, s.ow, s.oh, c.filter, full).pixels);
        const Box crop{s.iw * 0.125, s.ih * 0.25, s.iw * 0.9, s.ih * 0.75};
        EXPECT_TRUE(Resample(in, s.ow, s.oh, c.filter, &crop).pixels ==
                    RefResample(in, s.ow, s.oh, c.filter, crop).pixels);
      }
    }
  }
}

// A view into a PNG decoder's rows (a filter byte before each row, the last
// row ending the buffer), as convert resamples them in place: the same pixels
// as from a packed copy, and (under FERRY_SANITIZE=address) no byte read past
// the buffer.
TEST(ResizeTest, PngStyleViewGivesThePackedImagesPixels) {
  for (int w : {1, 2, 5, 13, 97}) {
    for (int h : {1, 2, 3, 9}) {
      const Image packed = Noise(w, h, 3, w * 7 + h);
      const size_t stride = packed.stride() + 1;
      std::vector<uint8_t> buf(stride * h, 0xee);
      for (int y = 0; y < h; ++y)
        std::memcpy(&buf[y * stride + 1], packed.row(y), packed.stride());
      const ImageView view{buf.data() + 1, stride, w, h, 3};
      for (int ow : {1, 3, 31}) {
        SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + "->" +
                     std::to_string(ow));
        EXPECT_TRUE(
            ResampleView(view, ow, h, Filter::kLanczos3, nullptr).pixels ==
            Resample(packed, ow, h, Filter::kLanczos3).pixels);
      }
    }
  }
}

// --mode cover is Pillow's ImageOps.fit: the fractional crop box goes to the
// resampler as float32, as Pillow passes it, so the pixels are identical.
TEST(ResizeTest, CoverIsPixelIdenticalToPillowImageOpsFit) {
  const Image rgb = Sample("rgb8.png");
  for (const Case& c : kFilters) {
    for (auto [w, h] : {std::pair{100, 37}, {45, 70}, {96, 50}}) {
      const std::string size = std::to_string(w) + "x" + std::to_string(h);
      SCOPED_TRACE(std::string(c.name) + " " + size);
      ResizeOptions o;
      o.width = w;
      o.height = h;
      o.mode = ResizeMode::kCover;
      o.filter = c.filter;
      Image want = test::ReadPnm(
          Golden("rgb8_" + std::string(c.name) + "_" + size + "_cover.ppm"));
      test::Diff d = test::Compare(Resize(rgb, o), want);
      EXPECT_EQ(d.max, 0);
    }
  }
}

TEST(ResizeTest, SameSizeIsANoOp) {
  const Image rgb = Sample("rgb8.png");
  EXPECT_TRUE(Resample(rgb, rgb.width, rgb.height, Filter::kLanczos3).pixels ==
              rgb.pixels);
}

TEST(ResizeTest, FlatImageStaysFlatUnderEveryFilter) {
  Image flat = Image::Make(50, 40, 3);
  std::fill(flat.pixels.begin(), flat.pixels.end(), 200);
  for (const Case& c : kFilters) {
    for (auto [w, h] : {std::pair{7, 5}, {120, 33}}) {
      Image r = Resample(flat, w, h, c.filter);
      for (uint8_t v : r.pixels) ASSERT_EQ(v, 200) << c.name;
    }
  }
}

// A limit was hit (ResourceExhausted).
bool Exhausted(const Status& s) {
  return s.code() == Status::Code::kResourceExhausted;
}

ResizeOptions Opts(int w, int h, ResizeMode m, bool upscale = false) {
  ResizeOptions o;
  o.width = w;
  o.height = h;
  o.mode = m;
  o.upscale = upscale;
  return o;
}

TEST(GeometryTest, FitKeepsAspectWithPillowRoundingAndNeverUpscalesByDefault) {
  Geometry g = ComputeGeometry(1000, 400, Opts(512, 512, ResizeMode::kFit));
  EXPECT_EQ(g.resize_w, 512);
  EXPECT_EQ(g.resize_h,
            205);  // 204.8: Pillow's thumbnail picks the closer aspect
  g = ComputeGeometry(300, 200, Opts(512, 512, ResizeMode::kFit));
  EXPECT_EQ(g.resize_w, 300);
  EXPECT_EQ(g.resize_h, 200);
  g = ComputeGeometry(300, 200, Opts(512, 512, ResizeMode::kFit, true));
  EXPECT_EQ(g.resize_w, 512);
  EXPECT_EQ(g.resize_h, 341);
  g = ComputeGeometry(400, 1000, Opts(512, 256, ResizeMode::kFit));
  EXPECT_EQ(g.resize_w, 102);
  EXPECT_EQ(g.resize_h, 256);
}

// Where the exact size ends in .5, floor and ceil are equally far from the
// aspect and Pillow's thumbnail keeps the first, the floor (Pillow 9.4:
// 1000x400 into 100x3 gives 7x3; 500x200 into 100x5 gives 12x5; 400x1000
// into 3x100 gives 3x8, where the errors differ).
TEST(GeometryTest, FitAspectTiesRoundDownAsPillow) {
  Geometry g = ComputeGeometry(1000, 400, Opts(100, 3, ResizeMode::kFit));
  EXPECT_EQ(g.resize_w, 7);
  EXPECT_EQ(g.resize_h, 3);
  g = ComputeGeometry(500, 200, Opts(100, 5, ResizeMode::kFit));
  EXPECT_EQ(g.resize_w, 12);
  EXPECT_EQ(g.resize_h, 5);
  g = ComputeGeometry(400, 1000, Opts(3, 100, ResizeMode::kFit));
  EXPECT_EQ(g.resize_w, 3);
  EXPECT_EQ(g.resize_h, 8);
}

TEST(GeometryTest, CoverFillsTheBoxFromTheCentredRegion) {
  Geometry g = ComputeGeometry(1000, 400, Opts(512, 512, ResizeMode::kCover));
  EXPECT_EQ(g.resize_w, 512);
  EXPECT_EQ(g.resize_h, 512);
  EXPECT_DOUBLE_EQ(g.box.x0, 300);
  EXPECT_DOUBLE_EQ(g.box.x1, 700);
  EXPECT_DOUBLE_EQ(g.box.y0, 0);
  EXPECT_DOUBLE_EQ(g.box.y1, 400);
  g = ComputeGeometry(
      100, 80, Opts(512, 256, ResizeMode::kCover));  // upscales: always exact
  EXPECT_EQ(g.resize_w, 512);
  EXPECT_DOUBLE_EQ(g.box.y0, 15);
  EXPECT_DOUBLE_EQ(g.box.y1, 65);
}

TEST(GeometryTest, ShorterSideMatchesTorchvisionTruncation) {
  Geometry g = ComputeGeometry(500, 375, Opts(256, 256, ResizeMode::kShorter));
  EXPECT_EQ(g.resize_h, 256);
  EXPECT_EQ(g.resize_w, 341);  // int(256 * 500 / 375) = int(341.33)
  g = ComputeGeometry(375, 500, Opts(224, 224, ResizeMode::kShorter));
  EXPECT_EQ(g.resize_w, 224);
  EXPECT_EQ(g.resize_h, 298);  // int(298.67)
}

TEST(GeometryTest, ShorterSideSaturatesInsteadOfOverflowing) {
  Geometry g =
      ComputeGeometry(1, 40000, Opts(60000, 60000, ResizeMode::kShorter));
  EXPECT_EQ(g.resize_w, 60000);
  EXPECT_EQ(g.resize_h, INT_MAX);  // 2.4e9 does not fit an int
  EXPECT_TRUE(Exhausted(CheckGeometry(g, Limits{})));
}

TEST(GeometryTest, CheckGeometryHoldsEveryImageToTheLimits) {
  Limits lim;
  lim.max_pixels = 1000000;
  auto check = [&](int iw, int ih, ResizeOptions o) {
    return CheckGeometry(ComputeGeometry(iw, ih, o), lim);
  };
  EXPECT_OK(check(4000, 3000, Opts(1000, 1000, ResizeMode::kFit)));
  EXPECT_OK(check(20, 20, Opts(1000, 1000, ResizeMode::kCover)));
  // The output: JPEG's side and the pixel budget.
  Status s = check(20000, 1, Opts(256, 256, ResizeMode::kShorter));
  EXPECT_TRUE(Exhausted(s));
  EXPECT_NE(s.ToString().find("65500"), std::string::npos) << s.ToString();
  EXPECT_TRUE(Exhausted(check(10, 10, Opts(10, 65501, ResizeMode::kExact))));
  EXPECT_TRUE(Exhausted(check(10, 10, Opts(65501, 10, ResizeMode::kExact))));
  EXPECT_OK(check(10, 1, Opts(65500, 1, ResizeMode::kExact)));
  EXPECT_TRUE(Exhausted(check(10, 10, Opts(1001, 1000, ResizeMode::kExact))));
  EXPECT_TRUE(Exhausted(check(10, 10, Opts(1001, 1000, ResizeMode::kCover))));
  EXPECT_TRUE(
      Exhausted(check(10, 10, Opts(2000, 2000, ResizeMode::kFit, true))));
  // pad's canvas, even when the image itself is small.
  EXPECT_TRUE(Exhausted(check(10, 10, Opts(2000, 2000, ResizeMode::kPad))));
  // The horizontal pass's intermediate: 60000 wide x 100000 source rows.
  s = check(1, 100000, Opts(60000, 10, ResizeMode::kExact));
  EXPECT_TRUE(Exhausted(s)) << s.ToString();
}

TEST(GeometryTest, ExactAndPad) {
  Geometry g = ComputeGeometry(1000, 400, Opts(64, 48, ResizeMode::kExact));
  EXPECT_EQ(g.resize_w, 64);
  EXPECT_EQ(g.resize_h, 48);
  g = ComputeGeometry(1000, 400, Opts(512, 512, ResizeMode::kPad));
  EXPECT_EQ(g.canvas_w, 512);
  EXPECT_EQ(g.canvas_h, 512);
  EXPECT_EQ(g.resize_h, 205);
  EXPECT_EQ(g.pad_x, 0);
  EXPECT_EQ(g.pad_y, 153);
}

TEST(ResizeTest, PadLetterboxesWithTheBackground) {
  Image img = Image::Make(40, 20, 3);
  std::fill(img.pixels.begin(), img.pixels.end(), 10);
  ResizeOptions o = Opts(30, 30, ResizeMode::kPad);
  o.background = Rgb{255, 0, 0};
  Image out = Resize(img, o);
  ASSERT_EQ(out.width, 30);
  ASSERT_EQ(out.height, 30);
  EXPECT_EQ(out.row(0)[0], 255);  // letterbox
  EXPECT_EQ(out.row(0)[1], 0);
  EXPECT_EQ(out.row(15)[45], 10);  // image
}

TEST(CompositeTest, AlphaIsBlendedOverTheBackgroundNotDropped) {
  Image rgba = Image::Make(2, 1, 4);
  rgba.pixels = {0,   0,   0,   0,
                 100, 150, 200, 255};  // transparent black, opaque colour
  Image white = CompositeOver(rgba, Rgb{255, 255, 255});
  EXPECT_EQ(white.channels, 3);
  EXPECT_EQ(white.pixels, (PixelVector{255, 255, 255, 100, 150, 200}));
  Image half = Image::Make(1, 1, 2);
  half.pixels = {0, 128};
  EXPECT_EQ(CompositeOver(half, Rgb{255, 255, 255}).pixels, (PixelVector{127}));
  EXPECT_EQ(CompositeOver(half, Rgb{0, 0, 255}).pixels,
            (PixelVector{0, 0, 127}));
}

// (c * a + bg * (255 - a) + 127) / 255: value 1 at alpha 128 over black is
// 128 / 255 = 0.502 -> 1, not 0. Pillow 9.4's alpha_composite and paste give
// the same {1, 78, 1} for the gray row.
TEST(CompositeTest, BlendRoundsToNearest) {
  Image ga = Image::Make(3, 1, 2);
  ga.pixels = {1, 128, 200, 100, 255, 1};
  EXPECT_EQ(CompositeOver(ga, Rgb{0, 0, 0}).pixels, (PixelVector{1, 78, 1}));
  Image rgba = Image::Make(1, 1, 4);
  rgba.pixels = {1, 2, 3, 128};
  EXPECT_EQ(CompositeOver(rgba, Rgb{0, 0, 0}).pixels, (PixelVector{1, 1, 2}));
}

// Every value under every alpha, over several backgrounds, in rows long and
// short enough for both the vectorised and the scalar part of a row.
TEST(CompositeTest, EveryValueAndAlphaBlendsByTheFormula) {
  for (int w : {256, 13}) {
    Image rgba = Image::Make(w, 256, 4);
    for (int y = 0; y < 256; ++y) {
      for (int x = 0; x < w; ++x) {
        uint8_t* p = rgba.row(y) + 4 * x;
        p[0] = static_cast<uint8_t>(x * 19 + y);
        p[1] = static_cast<uint8_t>(255 - x);
        p[2] = static_cast<uint8_t>(x * 37 + y * 3);
        p[3] = static_cast<uint8_t>(y);
      }
    }
    for (Rgb bg : {Rgb{255, 255, 255}, Rgb{0, 0, 0}, Rgb{17, 200, 93}}) {
      const Image out = CompositeOver(rgba, bg);
      ASSERT_EQ(out.channels, 3);
      const uint8_t back[3] = {bg.r, bg.g, bg.b};
      for (int y = 0; y < 256; ++y) {
        for (int x = 0; x < w; ++x) {
          const uint8_t* p = rgba.row(y) + 4 * x;
          for (int c = 0; c < 3; ++c) {
            const int want = (p[c] * p[3] + back[c] * (255 - p[3]) + 127) / 255;
            ASSERT_EQ(out.row(y)[3 * x + c], want)
                << "x=" << x << " y=" << y << " c=" << c;
          }
        }
      }
    }
  }
}

TEST(ParseTest, ColorsFiltersAndModes) {
  EXPECT_EQ(ParseColor("#ff8000")->g, 0x80);
  EXPECT_EQ(ParseColor("10,20,30")->b, 30);
  EXPECT_EQ(ParseColor("black")->r, 0);
  EXPECT_FALSE(ParseColor("#12345").ok());
  EXPECT_FALSE(ParseColor("300,0,0").ok());
  EXPECT_EQ(*ParseFilter("bicubic"), Filter::kBicubic);
  EXPECT_FALSE(ParseFilter("nearest").ok());
  EXPECT_EQ(*ParseResizeMode("cover"), ResizeMode::kCover);
  EXPECT_FALSE(ParseResizeMode("stretch").ok());
}

}  // namespace
}  // namespace ferry::image
