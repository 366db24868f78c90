#include "testutil/image_util.h"

#include <gtest/gtest.h>
#include <libdeflate.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "testutil/test_util.h"

namespace ferry::test {

std::string SamplesDir() { return FERRY_SAMPLES_DIR; }

std::string SampleBytes(const std::string& rel) {
  auto s = ReadFileToString(Env::Default(), SamplesDir() + "/" + rel);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : std::string();
}

std::vector<std::string> SampleImages(const std::string& kind) {
  auto files =
      ListFilesRecursive(Env::Default(), SamplesDir() + "/images/" + kind);
  EXPECT_TRUE(files.ok());
  std::vector<std::string> out;
  for (const auto& f : *files) out.push_back("images/" + kind + "/" + f);
  return out;
}

static std::string BE32(uint32_t v) {
  std::string s(4, '\0');
  s[0] = char(v >> 24);
  s[1] = char(v >> 16);
  s[2] = char(v >> 8);
  s[3] = char(v);
  return s;
}

std::string PngChunk(const std::string& type, const std::string& data) {
  std::string td = type + data;
  return BE32(uint32_t(data.size())) + td +
         BE32(libdeflate_crc32(0, td.data(), td.size()));
}

std::string IhdrBody(uint32_t w, uint32_t h, int bd, int ct, int interlace) {
  return BE32(w) + BE32(h) +
         std::string{char(bd), char(ct), 0, 0, char(interlace)};
}

std::string ZlibCompress(const std::string& data) {
  libdeflate_compressor* c = libdeflate_alloc_compressor(6);
  std::string out(libdeflate_zlib_compress_bound(c, data.size()), '\0');
  out.resize(libdeflate_zlib_compress(c, data.data(), data.size(), out.data(),
                                      out.size()));
  libdeflate_free_compressor(c);
  return out;
}

std::string PngFile(const std::vector<std::string>& chunks) {
  std::string s("\x89PNG\r\n\x1a\n", 8);
  for (const auto& c : chunks) s += c;
  return s;
}

image::Image ReadPnm(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string magic;
  int w = 0, h = 0, maxv = 0;
  in >> magic >> w >> h >> maxv;
  in.get();
  EXPECT_TRUE((magic == "P6" || magic == "P5") && maxv == 255) << path;
  image::Image img = image::Image::Make(w, h, magic == "P6" ? 3 : 1);
  in.read(reinterpret_cast<char*>(img.pixels.data()), img.pixels.size());
  EXPECT_TRUE(in.good()) << path;
  return img;
}

Diff Compare(const image::Image& a, const image::Image& b) {
  Diff d;
  EXPECT_EQ(a.width, b.width);
  EXPECT_EQ(a.height, b.height);
  EXPECT_EQ(a.channels, b.channels);
  if (a.pixels.size() != b.pixels.size() || a.pixels.empty()) {
    d.max = 256;
    return d;
  }
  double sum = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i) {
    int v = std::abs(int(a.pixels[i]) - int(b.pixels[i]));
    d.max = std::max(d.max, v);
    sum += v;
  }
  d.mean = sum / a.pixels.size();
  return d;
}

}  // namespace ferry::test
