#include "ferry/crc32c.h"

#include <gtest/gtest.h>

#include <string>

namespace ferry::crc32c {
namespace {

// RFC 3720 B.4 and the TFRecord vectors in shared/reference/shards.md.
TEST(Crc32cTest, MatchesRfc3720Vectors) {
  EXPECT_EQ(Value(std::string(32, '\0')), 0x8a9136aau);
  EXPECT_EQ(Value(std::string(32, '\xff')), 0x62a8ab43u);
  std::string ascending(32, '\0');
  for (int i = 0; i < 32; ++i) ascending[i] = static_cast<char>(i);
  EXPECT_EQ(Value(ascending), 0x46dd794eu);
  std::string descending(32, '\0');
  for (int i = 0; i < 32; ++i) descending[i] = static_cast<char>(31 - i);
  EXPECT_EQ(Value(descending), 0x113fdb5cu);
}

TEST(Crc32cTest, MatchesKnownStrings) {
  EXPECT_EQ(Value("123456789"), 0xe3069283u);
  EXPECT_EQ(Value("hello"), 0x9a71bb4cu);
  EXPECT_EQ(Value(""), 0u);
}

TEST(Crc32cTest, ExtendEqualsWholeValue) {
  std::string s = "hello world, this is a longer string for crc";
  for (size_t cut = 0; cut <= s.size(); ++cut) {
    uint32_t part =
        Extend(Value(s.substr(0, cut)), s.data() + cut, s.size() - cut);
    EXPECT_EQ(part, Value(s)) << cut;
  }
}

TEST(Crc32cTest, AcceleratedAndPortableAgreeOnEveryLengthAndAlignment) {
  std::string buf(300, '\0');
  for (size_t i = 0; i < buf.size(); ++i)
    buf[i] = static_cast<char>(i * 131 + 7);
  for (size_t off = 0; off < 9; ++off) {
    for (size_t n = 0; n + off <= buf.size(); n += 7) {
      ASSERT_EQ(Extend(0, buf.data() + off, n),
                ExtendPortable(0, buf.data() + off, n))
          << off << " " << n;
    }
  }
}

TEST(Crc32cTest, ThreeStreamPathAgreesOnLargeBuffers) {
  std::string buf(200000, '\0');
  uint32_t x = 1;
  for (char& c : buf) {
    x = x * 1664525 + 1013904223;
    c = static_cast<char>(x >> 24);
  }
  for (size_t off : {0u, 1u, 5u}) {
    for (size_t n :
         {767u, 768u, 769u, 24575u, 24576u, 24577u, 100000u, 199990u}) {
      ASSERT_EQ(Extend(7, buf.data() + off, n),
                ExtendPortable(7, buf.data() + off, n))
          << off << " " << n;
    }
  }
}

TEST(Crc32cTest, MaskMatchesTfRecordVectors) {
  EXPECT_EQ(Mask(0), 0xa282ead8u);
  // record(b"hello"): length 5 as u64 LE, masked CRC ea b2 04 3e; data CRC bb
  // 1f 1c 19.
  std::string len("\x05\0\0\0\0\0\0\0", 8);
  EXPECT_EQ(Mask(Value(len)), 0x3e04b2eau);
  EXPECT_EQ(Mask(Value("hello")), 0x191c1fbbu);
  // record(b""): length CRC 29 03 98 07.
  EXPECT_EQ(Mask(Value(std::string(8, '\0'))), 0x07980329u);
}

TEST(Crc32cTest, UnmaskInvertsMask) {
  for (uint32_t v : {0u, 1u, 0xdeadbeefu, 0xffffffffu, 0x12345678u}) {
    EXPECT_EQ(Unmask(Mask(v)), v);
    EXPECT_NE(Mask(v), v);
  }
}

}  // namespace
}  // namespace ferry::crc32c
