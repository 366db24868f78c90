// CompactString and InlineString (core/compact_string.h): what they hold
// reads back as given, whatever its length, through copies and
// assignments from their own bytes.
#include "core/compact_string.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace ferry {
namespace {

TEST(CompactStringTest, HoldsWhatItWasGivenInOnePointer) {
  static_assert(sizeof(CompactString) == sizeof(void*));
  CompactString none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(std::string_view(none), "");
  CompactString etag;
  etag = std::string("\"0123456789abcdef\"");  // as sync assigns it
  EXPECT_FALSE(etag.empty());
  CompactString copy = etag;
  EXPECT_EQ(copy.str(), "\"0123456789abcdef\"");
  EXPECT_TRUE(copy == etag);
  copy = std::string_view("other");
  EXPECT_FALSE(copy == etag);
  copy = copy;  // NOLINT: self-assignment keeps it
  EXPECT_EQ(copy.str(), "other");
  copy = std::string_view(copy);  // from its own bytes
  EXPECT_EQ(copy.str(), "other");
  copy.clear();
  EXPECT_TRUE(copy.empty());
  copy = std::string_view("");
  EXPECT_TRUE(copy.empty());
}

TEST(InlineStringTest, HoldsAnyLengthUpTo32InPlaceAndLongerOnTheHeap) {
  static_assert(sizeof(InlineString) <= 40);
  for (size_t n : {0, 1, 31, 32, 33, 100}) {
    const std::string s(n, static_cast<char>('a' + n % 26));
    InlineString k = s;
    EXPECT_EQ(k.str(), s) << n;
    InlineString copy = k;
    EXPECT_TRUE(copy == k) << n;
    InlineString other = "x";
    other = k;
    EXPECT_EQ(other.str(), s) << n;
    other = other;  // NOLINT: self-assignment keeps it
    EXPECT_EQ(other.str(), s) << n;
    // From its own bytes, longer to shorter and back.
    other = InlineString(std::string_view(other).substr(0, n / 2));
    EXPECT_EQ(other.str(), s.substr(0, n / 2)) << n;
    other = std::string(40, 'z');
    other = InlineString(std::string_view(other).substr(0, 3));
    EXPECT_EQ(other.str(), "zzz") << n;
    EXPECT_EQ(k + "/x", s + "/x") << n;
  }
  std::vector<InlineString> keys = {"b", std::string(40, 'a'), "a"};
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys[0].str(), "a");
  EXPECT_EQ(keys[1].str(), std::string(40, 'a'));
  EXPECT_EQ(keys[2].str(), "b");
}

}  // namespace
}  // namespace ferry
