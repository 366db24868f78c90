#include "split/path_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

namespace ferry::split {
namespace {

// What PathOrder must equal: std::string's operator<, equal paths by index.
std::vector<uint32_t> Reference(const std::vector<SplitItem>& items,
                                const std::vector<int>* keep = nullptr) {
  std::vector<uint32_t> order;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!keep || (*keep)[i] >= 0) order.push_back(static_cast<uint32_t>(i));
  }
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return items[a].path < items[b].path;
  });
  return order;
}

std::vector<SplitItem> Items(const std::vector<std::string>& paths) {
  std::vector<SplitItem> items;
  for (const auto& p : paths) items.push_back({p, "", ""});
  return items;
}

// Paths from a few bytes that order differently as signed and unsigned
// chars, or sit next to '/', with long shared prefixes (so that runs of
// equal 7-byte digits go several levels deep) and duplicates.
std::vector<std::string> RandomPaths(std::mt19937_64* rng, size_t n) {
  static const char kBytes[] = {'\0', '\x01', '.',    '/',    '0',   'a',
                                'b',  '\x7f', '\x80', '\xc3', '\xff'};
  const std::string prefixes[] = {
      "", "class_0000/scene_",
      std::string(20, 'x') + "/" + std::string(13, 'y')};
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && (*rng)() % 10 == 0) {
      out.push_back(out[(*rng)() % out.size()]);  // listed again
      continue;
    }
    std::string p = prefixes[(*rng)() % 3];
    const size_t len = (*rng)() % 24;
    for (size_t k = 0; k < len; ++k) p.push_back(kBytes[(*rng)() % 11]);
    out.push_back(std::move(p));
  }
  return out;
}

TEST(PathOrderTest, EqualsStringOrderOnRandomPaths) {
  std::mt19937_64 rng(7);
  for (size_t n : {0, 1, 2, 31, 33, 200, 5000}) {
    const auto items = Items(RandomPaths(&rng, n));
    EXPECT_EQ(PathOrder(items), Reference(items)) << n;
    std::vector<int> keep(n);
    for (int& k : keep) k = static_cast<int>(rng() % 3) - 1;  // -1: dropped
    EXPECT_EQ(PathOrder(items, &keep), Reference(items, &keep)) << n;
  }
}

TEST(PathOrderTest, PrefixesHighBytesAndLengthsAtDigitEdges) {
  // A path before the longer ones it starts; bytes compare unsigned; a NUL
  // after the end of a shorter path still sorts after it; lengths around
  // the 7-byte digits, shared by more than 32 paths (the radix passes).
  std::vector<std::string> paths;
  const std::string stem = "abcdefghijklmn";  // two whole digits
  for (size_t len = 0; len <= stem.size(); ++len) {
    paths.push_back(stem.substr(0, len));
    paths.push_back(stem.substr(0, len) + '\0');
    paths.push_back(stem.substr(0, len) + "\x80");
    paths.push_back(stem.substr(0, len) + "/");
    paths.push_back(stem.substr(0, len) + "0");
  }
  std::mt19937_64 rng(3);
  std::shuffle(paths.begin(), paths.end(), rng);
  const auto items = Items(paths);
  const std::vector<uint32_t> order = PathOrder(items);
  EXPECT_EQ(order, Reference(items));
  EXPECT_EQ(items[order.front()].path, "");
  EXPECT_EQ(items[order.back()].path, "\x80");
}

TEST(PathOrderTest, SortedInputKeepsItsOrder) {
  std::vector<std::string> paths;
  for (int i = 0; i < 100; ++i)
    paths.push_back("p/" + std::to_string(1000 + i));
  const auto items = Items(paths);
  std::vector<uint32_t> want(100);
  std::iota(want.begin(), want.end(), 0);
  EXPECT_EQ(PathOrder(items), want);
}

}  // namespace
}  // namespace ferry::split
