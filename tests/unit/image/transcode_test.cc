#include <gtest/gtest.h>

#include "ferry/image.h"
#include "testutil/image_util.h"
#include "testutil/test_util.h"

namespace ferry::image {
namespace {

// A limit was hit (ResourceExhausted).
bool Exhausted(const Status& s) {
  return s.code() == Status::Code::kResourceExhausted;
}

TranscodeOptions Fit(int n) {
  TranscodeOptions o;
  o.resize.width = o.resize.height = n;
  return o;
}

TEST(TranscodeTest, EverySampleBecomesAJpegInsideTheBox) {
  JpegEncoder enc;
  for (const std::string& kind : {"png", "jpeg"}) {
    for (const std::string& f : test::SampleImages(kind)) {
      SCOPED_TRACE(f);
      TranscodeInfo info;
      auto out = Transcode(test::SampleBytes(f), Fit(100), &enc, &info);
      ASSERT_OK(out.status());
      EXPECT_EQ(Sniff(*out), Format::kJpeg);
      EXPECT_EQ(std::max(info.output_width, info.output_height), 100);
      auto back = DecodeJpeg(*out, {});
      ASSERT_OK(back.status());
      EXPECT_EQ(back->width, info.output_width);
    }
  }
}

TEST(TranscodeTest, TransparentCornersTakeTheBackground) {
  JpegEncoder enc;
  const std::string rgba =
      test::SampleBytes("images/png/rgba8.png");  // corners alpha 0
  for (auto [bg, want] :
       {std::pair{Rgb{255, 255, 255}, 255}, {Rgb{0, 0, 0}, 0}}) {
    TranscodeOptions o = Fit(64);
    o.resize.background = bg;
    auto img = DecodeJpeg(*Transcode(rgba, o, &enc), {});
    ASSERT_OK(img.status());
    EXPECT_NEAR(img->row(0)[0], want, 6);
    EXPECT_NEAR(img->row(img->height - 1)[3 * (img->width - 1)], want, 6);
  }
}

TEST(TranscodeTest, ShrinkOnLoadGivesTheSameSizeAndNearlyTheSamePixels) {
  JpegEncoder enc;
  const std::string jpeg =
      test::SampleBytes("images/jpeg/baseline.jpg");  // 320x240
  TranscodeOptions shrink = Fit(60), full = Fit(60);
  full.shrink_on_load = false;
  TranscodeInfo a, b;
  auto fast = DecodeJpeg(*Transcode(jpeg, shrink, &enc, &a), {});
  auto slow = DecodeJpeg(*Transcode(jpeg, full, &enc, &b), {});
  EXPECT_EQ(a.output_width, 60);
  EXPECT_EQ(a.output_height, 45);
  EXPECT_EQ(a.input_width, 320);
  EXPECT_EQ(b.output_width, 60);
  EXPECT_LT(test::Compare(*fast, *slow).mean, 4.0);
}

TEST(TranscodeTest, CoverCropsExactlyAndOrientationIsAppliedFirst) {
  JpegEncoder enc;
  TranscodeOptions o = Fit(50);
  o.resize.mode = ResizeMode::kCover;
  TranscodeInfo info;
  auto out = Transcode(test::SampleBytes("images/jpeg/exif_orientation_6.jpg"),
                       o, &enc, &info);
  ASSERT_OK(out.status());
  EXPECT_EQ(info.input_width, 240);  // upright frame
  EXPECT_EQ(info.output_width, 50);
  EXPECT_EQ(info.output_height, 50);
}

// A gray PNG of w x h, all black.
std::string BlackPng(uint32_t w, uint32_t h) {
  std::string raw;
  for (uint32_t y = 0; y < h; ++y) raw += std::string(1 + w, '\0');
  return test::PngFile({test::PngChunk("IHDR", test::IhdrBody(w, h, 8, 0)),
                        test::PngChunk("IDAT", test::ZlibCompress(raw)),
                        test::PngChunk("IEND", "")});
}

// Issue 10 B6: --mode shorter on a 20000x1 image asked for 5,120,000x256
// (4 GB); on 1x40000 with 60000 the size overflowed into a 60000x1 JPEG.
TEST(TranscodeTest, OversizeOutputIsRefusedBeforeResizing) {
  JpegEncoder enc;
  TranscodeOptions o = Fit(256);
  o.resize.mode = ResizeMode::kShorter;
  auto r = Transcode(BlackPng(20000, 1), o, &enc);
  EXPECT_TRUE(Exhausted(r.status())) << r.status().ToString();
  EXPECT_NE(r.status().ToString().find("5120000x256"), std::string::npos)
      << r.status().ToString();
  o = Fit(60000);
  o.resize.mode = ResizeMode::kShorter;
  TranscodeInfo info;
  r = Transcode(BlackPng(1, 40000), o, &enc, &info);
  EXPECT_TRUE(Exhausted(r.status())) << r.status().ToString();
  EXPECT_EQ(info.output_width, 0);
  // Within the limits the same modes work.
  o = Fit(30);
  o.resize.mode = ResizeMode::kShorter;
  ASSERT_OK(Transcode(BlackPng(300, 2), o, &enc, &info).status());
  EXPECT_EQ(info.output_width, 4500);
  EXPECT_EQ(info.output_height, 30);
  // --max-pixels bounds the output too, in every mode.
  o = Fit(2000);
  o.resize.mode = ResizeMode::kExact;
  o.decode.limits.max_pixels = 1000000;
  r = Transcode(BlackPng(10, 10), o, &enc);
  EXPECT_TRUE(Exhausted(r.status())) << r.status().ToString();
  o.resize.mode = ResizeMode::kCover;
  EXPECT_TRUE(Exhausted(Transcode(BlackPng(10, 10), o, &enc).status()));
  o.resize.mode = ResizeMode::kPad;
  EXPECT_TRUE(Exhausted(Transcode(BlackPng(10, 10), o, &enc).status()));
  // A JPEG input is checked from its header as well.
  o = Fit(60000);
  o.resize.mode = ResizeMode::kShorter;
  r = Transcode(test::SampleBytes("images/jpeg/baseline.jpg"), o, &enc);
  EXPECT_TRUE(Exhausted(r.status())) << r.status().ToString();
}

TEST(TranscodeTest, BadInputNamesTheProblem) {
  JpegEncoder enc;
  auto r = Transcode("definitely not an image", Fit(10), &enc);
  EXPECT_TRUE(r.status().IsInvalidArgument());
}

}  // namespace
}  // namespace ferry::image
