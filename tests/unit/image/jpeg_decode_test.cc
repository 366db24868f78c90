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

// baseline.jpg with an APP1 Exif segment whose IFD0 holds one orientation
// entry of the given TIFF type (3 SHORT, 4 LONG) and byte order.
std::string WithExifOrientation(int type, int orientation, bool big_endian) {
  std::string tiff;
  auto put = [&](uint32_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) {
      const int shift = big_endian ? 8 * (bytes - 1 - i) : 8 * i;
      tiff += static_cast<char>((v >> shift) & 0xFF);
    }
  };
  tiff += big_endian ? "MM" : "II";
  put(42, 2);
  put(8, 4);  // IFD0 right after the header
  put(1, 2);  // one entry
  put(0x0112, 2);
  put(type, 2);
  put(1, 4);        // count
  if (type == 3) {  // a SHORT is left-aligned in the value field
    put(orientation, 2);
    put(0, 2);
  } else {
    put(orientation, 4);
  }
  put(0, 4);  // no next IFD
  const std::string seg = std::string("Exif\0\0", 6) + tiff;
  const size_t len = seg.size() + 2;
  const std::string app1 = std::string("\xFF\xE1") +
                           static_cast<char>(len >> 8) +
                           static_cast<char>(len & 0xFF) + seg;
  const std::string jpeg = test::SampleBytes("images/jpeg/baseline.jpg");
  return jpeg.substr(0, 2) + app1 + jpeg.substr(2);
}

// Issue 10 B8: an orientation stored as LONG was ignored; Pillow's
// exif_transpose honours it (checked with Pillow 9.4, both byte orders).
TEST(JpegDecodeTest, ExifOrientationStoredAsLongIsHonoured) {
  DecodeOptions stored;
  stored.autorotate = false;
  for (bool be : {false, true}) {
    for (int type : {3, 4}) {
      SCOPED_TRACE(std::string(be ? "MM" : "II") + " type " +
                   std::to_string(type));
      const std::string bytes = WithExifOrientation(type, 6, be);
      EXPECT_EQ(JpegExifOrientation(bytes), 6);
      auto img = DecodeJpeg(bytes, {});
      ASSERT_OK(img.status());
      EXPECT_EQ(img->width, 240);  // baseline.jpg is stored 320x240
      EXPECT_EQ(img->height, 320);
      auto raw = DecodeJpeg(bytes, stored);
      ASSERT_OK(raw.status());
      EXPECT_TRUE(ApplyOrientation(*raw, 6).pixels == img->pixels);
    }
  }
  // An out-of-range LONG still means "upright" (Pillow leaves it too).
  EXPECT_EQ(JpegExifOrientation(WithExifOrientation(4, 0x10006, false)), 1);
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
