#include "ferry/split.h"

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <regex>
#include <unordered_map>

namespace ferry {
namespace {

std::vector<double> Cumulative(const std::vector<double>& ratios) {
  const double sum = std::accumulate(ratios.begin(), ratios.end(), 0.0);
  std::vector<double> cum(ratios.size());
  double acc = 0;
  for (size_t i = 0; i < ratios.size(); ++i) {
    acc += ratios[i];
    cum[i] = acc / sum;
  }
  // Exactly 1 from the last non-zero ratio on, so every u < 1 lands.
  for (size_t i = ratios.size(); i-- > 0;) {
    cum[i] = 1.0;
    if (ratios[i] > 0) break;
  }
  return cum;
}

int IndexFor(double u, const std::vector<double>& cum) {
  for (size_t i = 0; i < cum.size(); ++i) {
    if (u < cum[i]) return static_cast<int>(i);
  }
  return static_cast<int>(cum.size()) - 1;
}

// Largest-remainder apportionment of n items over the ratios.
std::vector<uint64_t> Quotas(uint64_t n, const std::vector<double>& ratios) {
  const double sum = std::accumulate(ratios.begin(), ratios.end(), 0.0);
  std::vector<uint64_t> q(ratios.size());
  std::vector<std::pair<double, size_t>> frac;
  uint64_t given = 0;
  for (size_t i = 0; i < ratios.size(); ++i) {
    const double exact = n * ratios[i] / sum;
    q[i] = static_cast<uint64_t>(std::floor(exact));
    given += q[i];
    frac.emplace_back(exact - q[i], i);
  }
  std::stable_sort(frac.begin(), frac.end(), [](const auto& a, const auto& b) {
    return a.first > b.first;
  });
  for (size_t k = 0; given < n && k < frac.size(); ++k, ++given)
    ++q[frac[k].second];
  return q;
}

struct UnionFind {
  std::vector<uint32_t> parent;
  std::vector<size_t> first_item;  // smallest-path item of the set
  explicit UnionFind(size_t n) : parent(n), first_item(n, SIZE_MAX) {
    std::iota(parent.begin(), parent.end(), 0);
  }
  uint32_t Find(uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
};

struct HashKey {
  size_t operator()(const Hash128& h) const {
    return static_cast<size_t>(h.low ^ h.high);
  }
};

}  // namespace

Result<std::vector<double>> ParseRatios(std::string_view text) {
  std::vector<double> out;
  const char sep = text.find(':') != std::string_view::npos ? ':' : ',';
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(sep, pos);
    if (end == std::string_view::npos) end = text.size();
    std::string part(text.substr(pos, end - pos));
    char* stop = nullptr;
    double v = std::strtod(part.c_str(), &stop);
    if (part.empty() || *stop != '\0' || !std::isfinite(v) || v < 0) {
      return Status::InvalidArgument(
          "bad ratios '" + std::string(text) +
          "' (like 7:2:1 or 0.7,0.2,0.1, none negative)");
    }
    out.push_back(v);
    pos = end + 1;
  }
  const double sum = std::accumulate(out.begin(), out.end(), 0.0);
  if (!(sum > 0) || !std::isfinite(sum)) {
    return Status::InvalidArgument("ratios '" + std::string(text) +
                                   "' sum to " +
                                   (sum > 0 ? "infinity" : "zero"));
  }
  return out;
}

Result<std::vector<std::string>> ParseSplitNames(std::string_view text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string_view::npos) end = text.size();
    out.emplace_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

Status ValidateSpec(const SplitSpec& spec) {
  if (spec.names.size() != spec.ratios.size()) {
    return Status::InvalidArgument(
        std::to_string(spec.ratios.size()) + " ratios but " +
        std::to_string(spec.names.size()) + " split names");
  }
  double sum = 0;
  for (double r : spec.ratios) {
    if (!(r >= 0) || !std::isfinite(r))
      return Status::InvalidArgument("negative ratio");
    sum += r;
  }
  if (sum <= 0) return Status::InvalidArgument("ratios sum to zero");
  std::vector<std::string> sorted = spec.names;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    const std::string& n = sorted[i];
    if (n.empty() || n == "split" ||
        n.find_first_of("/\\ \t\n.") != std::string::npos) {
      return Status::InvalidArgument("bad split name '" + n + "'");
    }
    if (i > 0 && sorted[i - 1] == n)
      return Status::InvalidArgument("duplicate split name '" + n + "'");
  }
  if (!spec.group_regex.empty()) {
    try {
      std::regex re(spec.group_regex);
      if (re.mark_count() < 1) {
        return Status::InvalidArgument("--group-by needs a capture group: " +
                                       spec.group_regex);
      }
    } catch (const std::regex_error& e) {
      return Status::InvalidArgument(
          "bad --group-by regex '" + spec.group_regex + "'", e.what());
    }
  }
  return Status::OK();
}

double SplitHashFraction(std::string_view key, uint64_t seed) {
  const uint64_t h = XXH3_64bits_withSeed(key.data(), key.size(), seed);
  return static_cast<double>(h >> 11) *
         0x1.0p-53;  // 53 bits: exact in a double
}

int StableSplitIndex(std::string_view key, uint64_t seed,
                     const std::vector<double>& ratios) {
  return IndexFor(SplitHashFraction(key, seed), Cumulative(ratios));
}

Result<SplitResult> AssignSplits(const std::vector<SplitItem>& items,
                                 const SplitSpec& spec,
                                 const std::vector<Hash128>& hashes) {
  FERRY_RETURN_IF_ERROR(ValidateSpec(spec));
  if (!hashes.empty() && hashes.size() != items.size()) {
    return Status::InvalidArgument("one content hash per item expected");
  }
  SplitResult r;
  r.names = spec.names;
  r.hashed = !hashes.empty();
  const size_t n = items.size();
  const size_t ns = spec.names.size();

  // Classes, sorted.
  std::map<std::string, int> class_index;
  for (const SplitItem& it : items) class_index.emplace(it.label, 0);
  for (auto& [name, idx] : class_index) {
    idx = static_cast<int>(r.classes.size());
    r.classes.push_back(name);
  }
  std::vector<int> cls(n);
  for (size_t i = 0; i < n; ++i) cls[i] = class_index[items[i].label];

  // Groups: regex capture, else the listed group, else the path itself.
  std::unique_ptr<std::regex> re;
  if (!spec.group_regex.empty())
    re = std::make_unique<std::regex>(spec.group_regex);
  std::unordered_map<std::string, uint32_t> group_index;
  std::vector<std::string> group_key;
  std::vector<uint32_t> group_of(n);
  for (size_t i = 0; i < n; ++i) {
    std::string key;
    std::smatch m;
    if (re && std::regex_search(items[i].path, m, *re) && m.size() > 1 &&
        m[1].matched) {
      key = "g:" + m[1].str();
    } else if (!re && !items[i].group.empty()) {
      key = "g:" + items[i].group;
    } else {
      key = "p:" + items[i].path;  // prefixes keep group and path keys apart
    }
    auto [it, fresh] =
        group_index.emplace(std::move(key), uint32_t(group_key.size()));
    if (fresh) group_key.push_back(it->first);
    group_of[i] = it->second;
  }

  // Which items share content; with dedup their groups are merged, the
  // merged group keeping the key of its member that comes first by path.
  UnionFind uf(group_key.size());
  auto path_less = [&](size_t a, size_t b) {
    return items[a].path < items[b].path;
  };
  for (size_t i = 0; i < n; ++i) {
    size_t& f = uf.first_item[group_of[i]];
    if (f == SIZE_MAX || path_less(i, f)) f = i;
  }
  std::unordered_map<Hash128, std::vector<size_t>, HashKey> same;
  if (r.hashed) {
    for (size_t i = 0; i < n; ++i) same[hashes[i]].push_back(i);
    if (spec.dedup) {
      for (auto& [h, members] : same) {
        for (size_t k = 1; k < members.size(); ++k) {
          uint32_t a = uf.Find(group_of[members[0]]),
                   b = uf.Find(group_of[members[k]]);
          if (a == b) continue;
          if (path_less(uf.first_item[b], uf.first_item[a])) std::swap(a, b);
          uf.parent[b] = a;  // a holds the earliest item
        }
      }
    }
  }
  auto root_key = [&](uint32_t root) -> const std::string& {
    return group_key[group_of[uf.first_item[root]]];
  };

  std::vector<int> split_of_root(group_key.size(), -1);
  if (spec.mode == SplitMode::kStable) {
    const std::vector<double> cum = Cumulative(spec.ratios);
    for (uint32_t g = 0; g < group_key.size(); ++g) {
      uint32_t root = uf.Find(g);
      if (split_of_root[root] < 0) {
        split_of_root[root] =
            IndexFor(SplitHashFraction(root_key(root), spec.seed), cum);
      }
    }
  } else {
    // Exact: per stratum (the class of a group's first item), groups in
    // hash order fill each split up to its largest-remainder quota.
    struct G {
      double u;
      uint32_t root;
      uint64_t size;
      int stratum;
    };
    std::vector<G> roots;
    std::vector<int64_t> pos(group_key.size(), -1);
    for (size_t i = 0; i < n; ++i) {
      uint32_t root = uf.Find(group_of[i]);
      if (pos[root] < 0) {
        pos[root] = int64_t(roots.size());
        const size_t first = uf.first_item[root];
        roots.push_back({SplitHashFraction(root_key(root), spec.seed), root, 0,
                         spec.stratify ? cls[first] : 0});
      }
      ++roots[pos[root]].size;
    }
    std::sort(roots.begin(), roots.end(), [&](const G& a, const G& b) {
      if (a.stratum != b.stratum) return a.stratum < b.stratum;
      if (a.u != b.u) return a.u < b.u;
      return root_key(a.root) < root_key(b.root);
    });
    for (size_t s = 0; s < roots.size();) {
      size_t e = s;
      uint64_t total = 0;
      while (e < roots.size() && roots[e].stratum == roots[s].stratum)
        total += roots[e++].size;
      const std::vector<uint64_t> quota = Quotas(total, spec.ratios);
      std::vector<uint64_t> filled(ns, 0);
      for (size_t k = s; k < e; ++k) {
        size_t pick = ns;
        for (size_t i = 0; i < ns && pick == ns; ++i) {
          if (filled[i] < quota[i]) pick = i;
        }
        if (pick ==
            ns) {  // every quota met (a large group overshot): least over
          int64_t best = INT64_MIN;
          for (size_t i = 0; i < ns; ++i) {
            int64_t room = int64_t(quota[i]) - int64_t(filled[i]);
            if (spec.ratios[i] > 0 && room > best) {
              best = room;
              pick = i;
            }
          }
        }
        filled[pick] += roots[k].size;
        split_of_root[roots[k].root] = static_cast<int>(pick);
      }
      s = e;
    }
  }

  r.assignment.resize(n);
  r.counts.assign(ns, std::vector<uint64_t>(r.classes.size(), 0));
  r.groups_per_split.assign(ns, 0);
  std::vector<bool> root_counted(group_key.size(), false);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t root = uf.Find(group_of[i]);
    const int s = split_of_root[root];
    r.assignment[i] = s;
    ++r.counts[s][cls[i]];
    if (!root_counted[root]) {
      root_counted[root] = true;
      ++r.groups_per_split[s];
    }
  }

  // Leakage: identical content in two or more splits.
  for (auto& [h, members] : same) {
    if (members.size() < 2) continue;
    ++r.duplicate_sets;
    bool cross = false;
    for (size_t k = 1; k < members.size(); ++k) {
      cross |= r.assignment[members[k]] != r.assignment[members[0]];
    }
    if (!cross) continue;
    std::sort(members.begin(), members.end(), path_less);
    r.leaks.push_back({h, members});
  }
  std::sort(r.leaks.begin(), r.leaks.end(), [&](const auto& a, const auto& b) {
    return items[a.items[0]].path < items[b.items[0]].path;
  });
  return r;
}

}  // namespace ferry
