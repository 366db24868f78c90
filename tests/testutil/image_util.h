// Helpers for image tests: sample files, PNG chunk surgery, PPM goldens.
#ifndef FERRY_TESTS_TESTUTIL_IMAGE_UTIL_H_
#define FERRY_TESTS_TESTUTIL_IMAGE_UTIL_H_

#include <string>
#include <vector>

#include "ferry/image.h"

namespace ferry::test {

// samples/<rel> as bytes (fails the test if missing).
std::string SampleBytes(const std::string& rel);
std::string SamplesDir();
// Every file under samples/images/<kind> ("png" or "jpeg"), sorted.
std::vector<std::string> SampleImages(const std::string& kind);

// A PNG chunk with its length and CRC.
std::string PngChunk(const std::string& type, const std::string& data);
// An IHDR body.
std::string IhdrBody(uint32_t w, uint32_t h, int bit_depth, int color_type,
                     int interlace = 0);
// A zlib stream of data (for IDAT).
std::string ZlibCompress(const std::string& data);
// Signature + chunks.
std::string PngFile(const std::vector<std::string>& chunks);

// Reads a binary PPM (P6) or PGM (P5).
image::Image ReadPnm(const std::string& path);

// Largest and mean absolute difference of two same-sized images.
struct Diff {
  int max = 0;
  double mean = 0;
};
Diff Compare(const image::Image& a, const image::Image& b);

}  // namespace ferry::test

#endif  // FERRY_TESTS_TESTUTIL_IMAGE_UTIL_H_
