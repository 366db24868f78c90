#include <gtest/gtest.h>

#include "ferry/image.h"
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
      EXPECT_LE(d.max, 1);
    }
    Image want_gray =
        test::ReadPnm(Golden("gray8_" + std::string(c.name) + "_97x73.pgm"));
    EXPECT_LE(test::Compare(Resample(gray, 97, 73, c.filter), want_gray).max, 1)
        << c.name;
    Box box{30.5, 10.25, 200.75, 180.0};
    Image want_box =
        test::ReadPnm(Golden("rgb8_" + std::string(c.name) + "_64x64_box.ppm"));
    EXPECT_LE(
        test::Compare(Resample(rgb, 64, 64, c.filter, &box), want_box).max, 1)
        << c.name;
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
