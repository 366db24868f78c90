#include "ferry/hash.h"

#include <gtest/gtest.h>

#include "testutil/test_util.h"

namespace ferry {
namespace {

// Reference values printed by `xxhsum -H2` (xxHash 0.8.1).
TEST(HashTest, MatchesXxhsumOnKnownInputs) {
  EXPECT_EQ(HashBytes("").ToHex(), "99aa06d3014798d86001c324468d497f");
  EXPECT_EQ(HashBytes("hello").ToHex(), "b5e9c1ad071b3e7fc779cfaa5e523818");
}

TEST(HashTest, StreamingEqualsOneShotForAnySplit) {
  std::string data(5000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7);
  Hash128 whole = HashBytes(data);
  for (size_t cut : {0u, 1u, 63u, 64u, 240u, 241u, 1024u, 4999u, 5000u}) {
    Hasher128 h;
    h.Update(std::string_view(data).substr(0, cut));
    h.Update(std::string_view(data).substr(cut));
    EXPECT_EQ(h.Digest(), whole) << cut;
  }
}

TEST(HashTest, ResetStartsOver) {
  Hasher128 h;
  h.Update("garbage");
  h.Reset();
  h.Update("hello");
  EXPECT_EQ(h.Digest(), HashBytes("hello"));
}

TEST(HashTest, HexRoundTripsAndRejectsBadInput) {
  Hash128 h = HashBytes("x");
  auto back = Hash128::FromHex(h.ToHex());
  ASSERT_OK(back.status());
  EXPECT_EQ(*back, h);
  EXPECT_EQ(*Hash128::FromHex("B5E9C1AD071B3E7FC779CFAA5E523818"),
            HashBytes("hello"));
  EXPECT_FALSE(Hash128::FromHex("b5e9").ok());
  EXPECT_FALSE(Hash128::FromHex("g5e9c1ad071b3e7fc779cfaa5e523818").ok());
}

TEST(HashTest, HashFileStreamsLargeFilesAndReportsSize) {
  auto env = NewMemEnv();
  std::string data(3 * 1024 * 1024 + 17, 'q');
  test::WriteFile(env.get(), "big", data);
  uint64_t size = 0;
  auto h = HashFile(env.get(), "big", &size);
  ASSERT_OK(h.status());
  EXPECT_EQ(*h, HashBytes(data));
  EXPECT_EQ(size, data.size());
  EXPECT_TRUE(HashFile(env.get(), "missing").status().IsNotFound());
}

}  // namespace
}  // namespace ferry
