#include <gtest/gtest.h>

#include "ferry/image.h"
#include "testutil/image_util.h"
#include "testutil/test_util.h"

namespace ferry::image {
namespace {

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

TEST(TranscodeTest, BadInputNamesTheProblem) {
  JpegEncoder enc;
  auto r = Transcode("definitely not an image", Fit(10), &enc);
  EXPECT_TRUE(r.status().IsInvalidArgument());
}

}  // namespace
}  // namespace ferry::image
