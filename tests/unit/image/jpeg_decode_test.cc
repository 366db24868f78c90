#include <gtest/gtest.h>

#include "ferry/image.h"
#include "testutil/image_util.h"
#include "testutil/test_util.h"

namespace ferry::image {
namespace {

TEST(JpegDecodeTest, EverySampleDecodes) {
  for (const std::string& f : test::SampleImages("jpeg")) {
    auto img = DecodeJpeg(test::SampleBytes(f), {});
    ASSERT_OK(img.status());
    EXPECT_EQ(img->channels, f.find("gray") != std::string::npos ? 1 : 3) << f;
  }
}

TEST(JpegDecodeTest, ExifOrientationsAllComeOutUpright) {
  auto upright =
      DecodeJpeg(test::SampleBytes("images/jpeg/exif_orientation_1.jpg"), {});
  ASSERT_OK(upright.status());
  for (int o = 1; o <= 8; ++o) {
    SCOPED_TRACE(o);
    std::string bytes = test::SampleBytes("images/jpeg/exif_orientation_" +
                                          std::to_string(o) + ".jpg");
    EXPECT_EQ(JpegExifOrientation(bytes), o);
    auto img = DecodeJpeg(bytes, {});
    ASSERT_OK(img.status());
    ASSERT_EQ(img->width, 240);
    ASSERT_EQ(img->height, 160);
    const uint8_t* px = img->row(5) + 5 * 3;  // the red marker, top-left
    EXPECT_GT(px[0], 180);
    EXPECT_LT(px[1], 80);
    EXPECT_LT(px[2], 80);
    EXPECT_LT(test::Compare(*img, *upright).mean, 3.0);
  }
}

TEST(JpegDecodeTest, NoAutorotateKeepsStoredOrientation) {
  DecodeOptions opt;
  opt.autorotate = false;
  auto img =
      DecodeJpeg(test::SampleBytes("images/jpeg/exif_orientation_6.jpg"), opt);
  ASSERT_OK(img.status());
  EXPECT_EQ(img->width, 160);
  EXPECT_EQ(img->height, 240);
}

TEST(JpegDecodeTest, ApplyOrientationInvertsPillowTransposes) {
  Image img = Image::Make(3, 2, 1);
  for (int i = 0; i < 6; ++i) img.pixels[i] = uint8_t(i);  // 0 1 2 / 3 4 5
  EXPECT_EQ(ApplyOrientation(img, 2).pixels, (PixelVector{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(ApplyOrientation(img, 3).pixels, (PixelVector{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(ApplyOrientation(img, 4).pixels, (PixelVector{3, 4, 5, 0, 1, 2}));
  EXPECT_EQ(ApplyOrientation(img, 5).pixels, (PixelVector{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(ApplyOrientation(img, 6).pixels, (PixelVector{3, 0, 4, 1, 5, 2}));
  EXPECT_EQ(ApplyOrientation(img, 7).pixels, (PixelVector{5, 2, 4, 1, 3, 0}));
  EXPECT_EQ(ApplyOrientation(img, 8).pixels, (PixelVector{2, 5, 1, 4, 0, 3}));
  EXPECT_EQ(ApplyOrientation(img, 6).width, 2);
}

TEST(JpegDecodeTest, CmykMatchesTheRgbEncodingOfTheSamePicture) {
  auto cmyk = DecodeJpeg(test::SampleBytes("images/jpeg/cmyk.jpg"), {});
  auto rgb = DecodeJpeg(test::SampleBytes("images/jpeg/baseline.jpg"), {});
  ASSERT_OK(cmyk.status());
  ASSERT_OK(rgb.status());
  EXPECT_EQ(cmyk->channels, 3);
  EXPECT_LT(test::Compare(*cmyk, *rgb).mean, 4.0);  // not inverted, not naive
}

TEST(JpegDecodeTest, ShrinkOnLoadKeepsTwiceTheTarget) {
  std::string bytes = test::SampleBytes("images/jpeg/baseline.jpg");  // 320x240
  DecodeOptions opt;
  opt.shrink_to_width = 40;
  opt.shrink_to_height = 30;
  auto img = DecodeJpeg(bytes, opt);
  ASSERT_OK(img.status());
  EXPECT_EQ(img->width, 80);  // 1/4 scale: 80 >= 2 x 40, 1/8 would be 40
  opt.shrink_to_width = 100;
  opt.shrink_to_height = 60;
  EXPECT_EQ(DecodeJpeg(bytes, opt)->width, 320);  // 1/2 would give 160 < 200
  opt.shrink_to_width = 20;
  opt.shrink_to_height = 15;
  EXPECT_EQ(DecodeJpeg(bytes, opt)->width, 40);
}

TEST(JpegDecodeTest, TruncatedFileIsAnErrorNotGreyPadding) {
  std::string bytes = test::SampleBytes("images/jpeg/baseline.jpg");
  for (size_t cut : {bytes.size() * 3 / 5, bytes.size() - 10, size_t(400)}) {
    auto r = DecodeJpeg(bytes.substr(0, cut), {});
    ASSERT_FALSE(r.ok()) << cut;
    EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();
  }
  auto prog = DecodeJpeg(
      test::SampleBytes("images/jpeg/progressive.jpg").substr(0, 3000), {});
  EXPECT_FALSE(prog.ok());
}

TEST(JpegDecodeTest, HugeDimensionsAreRefusedBeforeDecoding) {
  std::string bytes = test::SampleBytes("images/jpeg/baseline.jpg");
  size_t sof = bytes.find("\xFF\xC0");
  ASSERT_NE(sof, std::string::npos);
  bytes[sof + 5] = bytes[sof + 6] = bytes[sof + 7] = bytes[sof + 8] =
      '\xFD';  // 65021 x 65021
  auto r = DecodeJpeg(bytes, {});
  EXPECT_EQ(r.status().code(), Status::Code::kResourceExhausted)
      << r.status().ToString();
}

TEST(JpegDecodeTest, GarbageIsAnError) {
  EXPECT_FALSE(DecodeJpeg("\xFF\xD8\xFF garbage garbage", {}).ok());
  EXPECT_FALSE(DecodeJpeg("", {}).ok());
  auto r = Decode("GIF89a not supported", {});
  EXPECT_TRUE(r.status().IsInvalidArgument());
}

}  // namespace
}  // namespace ferry::image
