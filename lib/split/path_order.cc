#include "split/path_order.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string_view>

namespace ferry::split {
namespace {

struct Entry {
  uint64_t key;  // 7 bytes of the path from the current depth, then a count
  const char* p;
  uint32_t len;
  uint32_t idx;
};

// The 7 bytes of e's path from depth in the high bytes (big-endian, so
// integers compare as the bytes do, missing bytes as 0) and in the low byte
// how many of them the path has (0-7): a path that ends within them sorts
// before one that goes on, whatever the next byte is (NUL included).
// Requires e.len >= depth.
inline uint64_t Digit(const Entry& e, size_t depth) {
  const size_t left = e.len - depth;
  if (left >= 8) {
    uint64_t x;
    std::memcpy(&x, e.p + depth, 8);
    if constexpr (std::endian::native == std::endian::little)
      x = __builtin_bswap64(x);
    return (x & ~uint64_t{0xFF}) | 7;
  }
  const size_t n = left < 7 ? left : 7;
  uint64_t x = 0;
  for (size_t k = 0; k < n; ++k)
    x |= uint64_t{static_cast<unsigned char>(e.p[depth + k])} << (56 - 8 * k);
  return x | n;
}

constexpr uint64_t kFullDigit = 7;

// Sorts [b, e), whose paths share their first `depth` bytes (and are at
// least that long), by the rest of the path, then by index.
void SortFrom(Entry* b, Entry* e, size_t depth) {
  for (;;) {
    const size_t n = static_cast<size_t>(e - b);
    if (n < 2) return;
    if (n <= 32) {
      std::sort(b, e, [depth](const Entry& x, const Entry& y) {
        const std::string_view sx(x.p + depth, x.len - depth);
        const std::string_view sy(y.p + depth, y.len - depth);
        const int c = sx.compare(sy);
        return c != 0 ? c < 0 : x.idx < y.idx;
      });
      return;
    }
    bool same = true;
    for (Entry* x = b; x != e; ++x) {
      x->key = Digit(*x, depth);
      same &= x->key == b->key;
    }
    if (same && (b->key & 0xFF) == kFullDigit) {
      depth += 7;  // bytes they all share: no sort needed
      continue;
    }
    std::sort(b, e, [](const Entry& x, const Entry& y) {
      return x.key != y.key ? x.key < y.key : x.idx < y.idx;
    });
    // Runs of equal keys that go on are ordered by their next bytes; the
    // others are whole equal paths, already in index order.
    for (Entry* r = b; r != e;) {
      Entry* q = r + 1;
      while (q != e && q->key == r->key) ++q;
      if (q - r > 1 && (r->key & 0xFF) == kFullDigit) SortFrom(r, q, depth + 7);
      r = q;
    }
    return;
  }
}

}  // namespace

std::vector<uint32_t> PathOrder(const std::vector<SplitItem>& items,
                                const std::vector<int>* keep) {
  std::vector<uint32_t> order;
  order.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    if (!keep || (*keep)[i] >= 0) order.push_back(static_cast<uint32_t>(i));
  }
  const bool sorted = std::is_sorted(
      order.begin(), order.end(),
      [&](uint32_t a, uint32_t b) { return items[a].path < items[b].path; });
  if (sorted) return order;
  std::vector<Entry> entries(order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    const std::string& path = items[order[k]].path;
    entries[k] = {0, path.data(), static_cast<uint32_t>(path.size()), order[k]};
  }
  SortFrom(entries.data(), entries.data() + entries.size(), 0);
  for (size_t k = 0; k < entries.size(); ++k) order[k] = entries[k].idx;
  return order;
}

}  // namespace ferry::split
