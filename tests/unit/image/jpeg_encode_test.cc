#include <gtest/gtest.h>

#include "ferry/image.h"
#include "testutil/image_util.h"
#include "testutil/test_util.h"

namespace ferry::image {
namespace {

Image Photo() {
  auto img = DecodePng(test::SampleBytes("images/png/rgb8.png"), {});
  EXPECT_TRUE(img.ok());
  return *img;
}

// The luma sampling byte of the first frame header (0x22 = 4:2:0, 0x11 =
// 4:4:4).
int LumaSampling(const std::string& jpeg) {
  for (const char* sof : {"\xFF\xC0", "\xFF\xC2"}) {
    size_t p = jpeg.find(sof);
    if (p != std::string::npos) return static_cast<uint8_t>(jpeg[p + 11]);
  }
  return -1;
}

TEST(JpegEncodeTest, RoundTripsCloseToTheOriginal) {
  JpegEncoder enc;
  const Image img = Photo();
  auto jpeg = enc.Encode(img, {});
  ASSERT_OK(jpeg.status());
  auto back = DecodeJpeg(*jpeg, {});
  ASSERT_OK(back.status());
  EXPECT_LT(test::Compare(*back, img).mean, 3.0);
}

// An encoder is reused (one per thread): what it wrote before must not
// change what it writes next, or output bytes would depend on -j.
TEST(JpegEncodeTest, EarlierCallsDoNotChangeTheNextOutput) {
  const Image img = Photo();
  Image gray = Image::Make(img.width, img.height, 1);
  for (size_t i = 0; i < gray.pixels.size(); ++i)
    gray.pixels[i] = img.pixels[3 * i];
  EncodeOptions base;
  std::vector<std::pair<const char*, EncodeOptions>> before;
  for (int k = 0; k < 5; ++k) {
    EncodeOptions o;
    const char* name = "";
    switch (k) {
      case 0:
        o.quality = 50;
        name = "quality";
        break;
      case 1:
        o.subsampling = Subsampling::k444;
        name = "444";
        break;
      case 2:
        o.optimize = true;
        name = "optimize";
        break;
      case 3:
        o.progressive = true;
        name = "progressive";
        break;
      case 4:
        o.icc_profile = std::string(300, 'p');
        name = "icc";
        break;
    }
    before.push_back({name, o});
  }
  const std::vector<const Image*> images = {&img, &gray};
  for (const Image* im : images) {
    JpegEncoder fresh_enc;
    const std::string fresh = *fresh_enc.Encode(*im, base);
    for (const auto& [name, o] : before) {
      for (const Image* first : images) {
        SCOPED_TRACE(std::string(name) + (first == &gray ? " gray" : " rgb") +
                     " then " + (im == &gray ? "gray" : "rgb"));
        JpegEncoder enc;
        ASSERT_OK(enc.Encode(*first, o).status());
        EXPECT_TRUE(*enc.Encode(*im, base) == fresh);
      }
    }
  }
}

TEST(JpegEncodeTest, SubsamplingProgressiveAndNoRestartMarkersOrMetadata) {
  JpegEncoder enc;
  const Image img = Photo();
  EncodeOptions o;
  std::string j420 = *enc.Encode(img, o);
  EXPECT_EQ(LumaSampling(j420), 0x22);
  EXPECT_EQ(j420.find("\xFF\xDD"), std::string::npos);  // DRI
  EXPECT_EQ(j420.find("Exif"), std::string::npos);
  EXPECT_EQ(j420.find("\xFF\xC2"), std::string::npos);
  o.subsampling = Subsampling::k444;
  EXPECT_EQ(LumaSampling(*enc.Encode(img, o)), 0x11);
  o.progressive = true;
  std::string prog = *enc.Encode(img, o);
  EXPECT_NE(prog.find("\xFF\xC2"), std::string::npos);
}

TEST(JpegEncodeTest, QualityAndOptimizeChangeSize) {
  JpegEncoder enc;
  const Image img = Photo();
  EncodeOptions lo, hi, opt;
  lo.quality = 50;
  hi.quality = 95;
  opt.optimize = true;
  size_t n_lo = enc.Encode(img, lo)->size(), n_hi = enc.Encode(img, hi)->size();
  EXPECT_LT(n_lo, n_hi);
  EXPECT_LT(enc.Encode(img, opt)->size(), enc.Encode(img, {})->size());
}

TEST(JpegEncodeTest, ReusedEncoderIsDeterministic) {
  JpegEncoder a, b;
  const Image img = Photo();
  std::string first = *a.Encode(img, {});
  (void)a.Encode(Image::Make(9, 9, 1), {});
  EXPECT_EQ(*a.Encode(img, {}), first);
  EXPECT_EQ(*b.Encode(img, {}), first);
}

TEST(JpegEncodeTest, GrayStaysGrayAndIccIsWritten) {
  JpegEncoder enc;
  Image gray = Image::Make(16, 16, 1);
  EncodeOptions o;
  o.icc_profile = std::string(200, 'p');
  std::string j = *enc.Encode(gray, o);
  EXPECT_NE(j.find("ICC_PROFILE"), std::string::npos);
  EXPECT_EQ(DecodeJpeg(j, {})->channels, 1);
}

TEST(JpegEncodeTest, RejectsAlphaAndBadQuality) {
  JpegEncoder enc;
  EXPECT_FALSE(enc.Encode(Image::Make(4, 4, 4), {}).ok());
  EncodeOptions o;
  o.quality = 0;
  EXPECT_FALSE(enc.Encode(Image::Make(4, 4, 3), o).ok());
  EXPECT_OK(enc.Encode(Image::Make(4, 4, 3), {}).status());  // still usable
}

}  // namespace
}  // namespace ferry::image
