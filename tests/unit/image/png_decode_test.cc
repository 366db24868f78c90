#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>
#include <string>

#include "ferry/image.h"
#include "testutil/image_util.h"
#include "testutil/test_util.h"

namespace ferry::image {
namespace {

// The fast decoder gives libpng's pixels exactly, for every sample kind, in
// both 16-bit modes.
TEST(PngDecodeTest, EverySampleMatchesLibpngPixelForPixel) {
  const auto files = test::SampleImages("png");
  ASSERT_GE(files.size(), 18u);
  for (bool pillow16 : {false, true}) {
    DecodeOptions opt;
    opt.pillow_16bit = pillow16;
    for (const std::string& f : files) {
      SCOPED_TRACE(f);
      std::string bytes = test::SampleBytes(f);
      auto fast = DecodePng(bytes, opt);
      auto ref = DecodePngLibpng(bytes, opt);
      ASSERT_OK(fast.status());
      ASSERT_OK(ref.status());
      EXPECT_EQ(fast->width, ref->width);
      EXPECT_EQ(fast->height, ref->height);
      EXPECT_EQ(fast->channels, ref->channels);
      EXPECT_TRUE(fast->pixels == ref->pixels);
    }
  }
}

TEST(PngDecodeTest, OutputChannelsFollowColorTypeAndTransparency) {
  const std::map<std::string, int> want = {
      {"rgb8", 3},        {"rgba8", 4},
      {"gray8", 1},       {"gray_alpha8", 2},
      {"gray1", 1},       {"palette8", 3},
      {"palette4", 3},    {"palette8_trns", 4},
      {"gray8_trns", 2},  {"rgb16", 3},
      {"rgba16", 4},      {"gray16", 1},
      {"rgb8_adam7", 3},  {"palette8_trns_adam7", 4},
      {"gray16_adam7", 1}};
  for (const auto& [name, ch] : want) {
    auto img = DecodePng(test::SampleBytes("images/png/" + name + ".png"), {});
    ASSERT_OK(img.status());
    EXPECT_EQ(img->channels, ch) << name;
  }
}

TEST(PngDecodeTest, InterlacedDecodesToTheSamePixelsAsProgressive) {
  auto adam7 = DecodePng(test::SampleBytes("images/png/rgb8_adam7.png"), {});
  auto plain = DecodePng(test::SampleBytes("images/png/rgb8.png"), {});
  ASSERT_OK(adam7.status());
  ASSERT_OK(plain.status());
  ASSERT_EQ(adam7->width, 253);
  // The Adam7 sample is the top-left 253x187 of the plain one.
  for (int y = 0; y < adam7->height; ++y) {
    ASSERT_EQ(0, std::memcmp(adam7->row(y), plain->row(y), adam7->stride()))
        << y;
  }
}

TEST(PngDecodeTest, SixteenBitScalingIsAccurateOrPillowHighByte) {
  // One gray pixel 0xff00: accurate (v*255+32895)>>16 = 254, high byte 255.
  std::string idat =
      test::PngChunk("IDAT", test::ZlibCompress(std::string("\0\xff\x00", 3)));
  std::string png =
      test::PngFile({test::PngChunk("IHDR", test::IhdrBody(1, 1, 16, 0)), idat,
                     test::PngChunk("IEND", "")});
  DecodeOptions accurate, pillow;
  pillow.pillow_16bit = true;
  EXPECT_EQ(DecodePng(png, accurate)->pixels[0], 254);
  EXPECT_EQ(DecodePng(png, pillow)->pixels[0], 255);
  EXPECT_EQ(DecodePngLibpng(png, accurate)->pixels[0], 254);
  EXPECT_EQ(DecodePngLibpng(png, pillow)->pixels[0], 255);
}

// Bad files: both decoders refuse them with a clear error, never crash.
struct BadPng {
  const char* name;
  std::string bytes;
  const char* want;  // part of the fast decoder's message
};

std::vector<BadPng> BadPngs() {
  const std::string good = test::SampleBytes("images/png/rgb8.png");
  std::vector<BadPng> v;
  std::string bad_crc = good;
  bad_crc[20] ^= 1;  // inside IHDR's data
  v.push_back({"bad_crc", bad_crc, "CRC mismatch"});
  v.push_back(
      {"zero_width",
       test::PngFile({test::PngChunk("IHDR", test::IhdrBody(0, 10, 8, 2)),
                      good.substr(33)}),
       "dimensions"});
  v.push_back({"truncated_idat", good.substr(0, good.size() / 2), "truncated"});
  v.push_back(
      {"missing_idat",
       test::PngFile({test::PngChunk("IHDR", test::IhdrBody(4, 4, 8, 2)),
                      test::PngChunk("IEND", "")}),
       "missing IDAT"});
  v.push_back(
      {"bad_color_type",
       test::PngFile({test::PngChunk("IHDR", test::IhdrBody(4, 4, 8, 7)),
                      good.substr(33)}),
       "color type"});
  v.push_back(
      {"bad_bit_depth",
       test::PngFile({test::PngChunk("IHDR", test::IhdrBody(4, 4, 4, 2)),
                      good.substr(33)}),
       "bit depth"});
  // Filter types are 0-4; a 5 in the second row's filter byte is damage.
  const std::string rows = std::string(1, '\0') + std::string(12, 'x') +
                           std::string(1, '\5') + std::string(12, 'x');
  v.push_back(
      {"bad_filter_type",
       test::PngFile({test::PngChunk("IHDR", test::IhdrBody(4, 2, 8, 2)),
                      test::PngChunk("IDAT", test::ZlibCompress(rows)),
                      test::PngChunk("IEND", "")}),
       "bad PNG filter type 5 in row 1"});
  v.push_back(
      {"bomb_787402",
       test::PngFile(
           {test::PngChunk("IHDR", test::IhdrBody(787402, 787402, 8, 2)),
            test::PngChunk("IDAT",
                           std::string("\x78\x9c\x03\x00\x00\x00\x00\x01", 8)),
            test::PngChunk("IEND", "")}),
       "too large"});
  std::string corrupt_zlib = good;
  // Damage IDAT payload bytes and re-seal the chunk CRC, so only zlib notices.
  size_t idat = corrupt_zlib.find("IDAT");
  uint32_t len = uint32_t((uint8_t)corrupt_zlib[idat - 4]) << 24 |
                 uint32_t((uint8_t)corrupt_zlib[idat - 3]) << 16 |
                 uint32_t((uint8_t)corrupt_zlib[idat - 2]) << 8 |
                 (uint8_t)corrupt_zlib[idat - 1];
  std::string payload = corrupt_zlib.substr(idat + 4, len);
  for (size_t i = 100; i < 140; ++i) payload[i] ^= 0x5a;
  corrupt_zlib = corrupt_zlib.substr(0, idat - 4) +
                 test::PngChunk("IDAT", payload) +
                 corrupt_zlib.substr(idat + 8 + len);
  v.push_back({"corrupt_zlib", corrupt_zlib, "IDAT"});
  v.push_back({"not_png", "this is not an image at all, just text named .png",
               "signature"});
  v.push_back({"empty", "", "signature"});
  return v;
}

TEST(PngDecodeTest, BadFilesGiveCleanErrors) {
  for (const BadPng& b : BadPngs()) {
    SCOPED_TRACE(b.name);
    auto fast = DecodePng(b.bytes, {});
    ASSERT_FALSE(fast.ok());
    EXPECT_NE(fast.status().ToString().find(b.want), std::string::npos)
        << fast.status().ToString();
    EXPECT_FALSE(DecodePngLibpng(b.bytes, {}).ok());
  }
}

TEST(PngDecodeTest, BombIsRefusedBeforeAllocating) {
  auto r = DecodePng(test::PngFile({test::PngChunk(
                         "IHDR", test::IhdrBody(787402, 787402, 8, 6))}),
                     {});
  EXPECT_EQ(r.status().code(), Status::Code::kResourceExhausted)
      << r.status().ToString();
  DecodeOptions small;
  small.limits.max_pixels = 100;
  auto s = DecodePng(test::SampleBytes("images/png/rgb8.png"), small);
  EXPECT_EQ(s.status().code(), Status::Code::kResourceExhausted);
  EXPECT_EQ(DecodePngLibpng(test::SampleBytes("images/png/rgb8.png"), small)
                .status()
                .code(),
            Status::Code::kResourceExhausted);
}

TEST(PngDecodeTest, OversizedAncillaryChunkIsRefused) {
  std::string good = test::SampleBytes("images/png/rgb8.png");
  DecodeOptions opt;
  opt.limits.max_chunk_bytes = 1000;
  std::string with_text = good.substr(0, 33) +
                          test::PngChunk("tEXt", std::string(5000, 'x')) +
                          good.substr(33);
  EXPECT_EQ(DecodePng(with_text, opt).status().code(),
            Status::Code::kResourceExhausted);
  EXPECT_OK(DecodePng(with_text, {}).status());
}

}  // namespace
}  // namespace ferry::image

namespace ferry::image {
namespace {

uint8_t PaethPredict(int a, int b, int c) {
  int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b),
      pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return uint8_t(a);
  return uint8_t(pb <= pc ? b : c);
}

// An 8-bit PNG of smooth-ish noise whose row y uses filter filters(y).
std::string FilteredPng(int w, int h, int ch,
                        const std::function<int(int)>& filters) {
  const int ct = ch == 3 ? 2 : ch == 4 ? 6 : ch == 2 ? 4 : 0;
  const size_t rb = size_t(w) * ch;
  std::vector<uint8_t> img(rb * h);
  uint32_t seed = 12345;
  for (size_t i = 0; i < img.size(); ++i) {
    seed = seed * 1103515245 + 12345;
    img[i] = uint8_t((i % rb) / ch * 3 + (seed >> 24) % 40);
  }
  std::string raw;
  for (int y = 0; y < h; ++y) {
    const int f = filters(y);
    raw.push_back(char(f));
    for (size_t i = 0; i < rb; ++i) {
      int x = img[y * rb + i];
      int a = i >= size_t(ch) ? img[y * rb + i - ch] : 0;
      int b = y > 0 ? img[(y - 1) * rb + i] : 0;
      int c = (y > 0 && i >= size_t(ch)) ? img[(y - 1) * rb + i - ch] : 0;
      int pred = f == 1   ? a
                 : f == 2 ? b
                 : f == 3 ? (a + b) / 2
                 : f == 4 ? PaethPredict(a, b, c)
                          : 0;
      raw.push_back(char(uint8_t(x - pred)));
    }
  }
  return test::PngFile({test::PngChunk("IHDR", test::IhdrBody(w, h, 8, ct)),
                        test::PngChunk("IDAT", test::ZlibCompress(raw)),
                        test::PngChunk("IEND", "")});
}

// Runs of Paeth rows take the wavefront path; mixed runs and every row
// count and width must still match libpng exactly.
TEST(PngDecodeTest, FilterRunsOfEveryLengthMatchLibpng) {
  const std::vector<std::pair<const char*, std::function<int(int)>>> patterns =
      {{"all paeth", [](int) { return 4; }},
       {"paeth pairs", [](int y) { return (y / 2) % 2 ? 4 : 1; }},
       {"paeth triples", [](int y) { return y % 4 == 3 ? 3 : 4; }},
       {"cycle", [](int y) { return y % 5; }},
       {"avg and sub", [](int y) { return y % 2 ? 3 : 1; }},
       // The first row has no previous one: Avg is a + 0 / 2, Up is x.
       {"all avg", [](int) { return 3; }},
       {"all up", [](int) { return 2; }}};
  for (const auto& [name, fn] : patterns) {
    for (int ch : {1, 2, 3, 4}) {
      for (auto [w, h] : {std::pair{1, 1}, {1, 9}, {7, 5}, {33, 13}, {64, 4}}) {
        SCOPED_TRACE(std::string(name) + " ch=" + std::to_string(ch) + " " +
                     std::to_string(w) + "x" + std::to_string(h));
        std::string png = FilteredPng(w, h, ch, fn);
        auto fast = DecodePng(png, {});
        auto ref = DecodePngLibpng(png, {});
        ASSERT_OK(fast.status());
        ASSERT_OK(ref.status());
        EXPECT_TRUE(fast->pixels == ref->pixels);
      }
    }
  }
}

}  // namespace
}  // namespace ferry::image
