#include "ferry/split.h"

#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <deque>
#include <numeric>
#include <regex>
#include <string_view>
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

// n * ratio / sum, snapped to the integer when within rounding noise.
double ExactShare(uint64_t n, double ratio, double sum) {
  const double exact = static_cast<double>(n) * ratio / sum;
  const double r = std::round(exact);
  return std::fabs(exact - r) < 1e-9 * std::max(1.0, exact) ? r : exact;
}

// A remainder with the rounding noise cut off, so that equal remainders
// compare equal (and the tie goes to the earlier split).
double Remainder(double v) { return std::round(v * 1e9) / 1e9; }

// Rounds each exact share down, then gives the units left (up to total)
// to the largest remainders; ties go to the earlier split.
std::vector<uint64_t> LargestRemainder(const std::vector<double>& exact,
                                       uint64_t total) {
  std::vector<uint64_t> q(exact.size());
  std::vector<std::pair<double, size_t>> frac;
  uint64_t given = 0;
  for (size_t i = 0; i < exact.size(); ++i) {
    q[i] = static_cast<uint64_t>(std::floor(exact[i]));
    given += q[i];
    frac.emplace_back(Remainder(exact[i] - q[i]), i);
  }
  std::stable_sort(frac.begin(), frac.end(), [](const auto& a, const auto& b) {
    return a.first > b.first;
  });
  for (size_t k = 0; given < total && k < frac.size(); ++k, ++given)
    ++q[frac[k].second];
  return q;
}

// Largest-remainder apportionment of n items over the ratios.
std::vector<uint64_t> Quotas(uint64_t n, const std::vector<double>& ratios) {
  const double sum = std::accumulate(ratios.begin(), ratios.end(), 0.0);
  std::vector<double> exact(ratios.size());
  for (size_t i = 0; i < ratios.size(); ++i)
    exact[i] = ExactShare(n, ratios[i], sum);
  return LargestRemainder(exact, n);
}

// Quotas for every class at once (rows: classes of n[c] items; columns:
// splits): each cell is its exact share rounded down or up, each row sums
// to n[c], and each column total is its exact share of the whole rounded
// down or up (largest remainder, ties to the earlier split). The rounding
// units left after flooring are a bipartite b-matching of classes to
// splits, solved greedily (largest fraction first) and completed with
// augmenting paths.
std::vector<std::vector<uint64_t>> JointQuotas(
    const std::vector<uint64_t>& n, const std::vector<double>& ratios) {
  const double sum = std::accumulate(ratios.begin(), ratios.end(), 0.0);
  const size_t nc = n.size(), ns = ratios.size();
  std::vector<std::vector<uint64_t>> q(nc, std::vector<uint64_t>(ns));
  std::vector<std::vector<double>> frac(nc, std::vector<double>(ns));
  std::vector<uint64_t> want(nc);  // units each class still needs
  std::vector<double> col_frac(ns, 0);
  for (size_t c = 0; c < nc; ++c) {
    uint64_t given = 0;
    for (size_t s = 0; s < ns; ++s) {
      const double exact = ExactShare(n[c], ratios[s], sum);
      q[c][s] = static_cast<uint64_t>(std::floor(exact));
      frac[c][s] = Remainder(exact - q[c][s]);
      col_frac[s] += frac[c][s];
      given += q[c][s];
    }
    want[c] = n[c] - given;
  }
  const uint64_t units = std::accumulate(want.begin(), want.end(), uint64_t{0});
  // Units per column: the column fractions, largest remainder.
  std::vector<double> col_exact(ns);
  for (size_t s = 0; s < ns; ++s) {
    const double snapped = std::round(col_frac[s]);
    col_exact[s] =
        std::fabs(col_frac[s] - snapped) < 1e-6 ? snapped : col_frac[s];
  }
  std::vector<uint64_t> cap = LargestRemainder(col_exact, units);
  std::vector<std::vector<char>> x(nc, std::vector<char>(ns, 0));
  std::vector<uint64_t> used(ns, 0);
  auto allowed = [&](size_t c, size_t s) { return frac[c][s] > 1e-9; };
  // Greedy: each class takes its largest fractions where room is left.
  for (size_t c = 0; c < nc; ++c) {
    std::vector<size_t> order(ns);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return frac[c][a] > frac[c][b];
    });
    for (size_t s : order) {
      if (want[c] == 0) break;
      if (allowed(c, s) && used[s] < cap[s]) {
        x[c][s] = 1;
        ++used[s];
        --want[c];
      }
    }
  }
  // Augmenting paths: class -> split it may take -> class holding that
  // split that can move to another split ... -> a split with room.
  auto augment = [&](size_t c0) -> bool {
    std::vector<int64_t> split_from_class(ns, -1);  // BFS tree over splits
    std::vector<int64_t> split_prev_split(ns, -2);
    std::vector<size_t> queue;
    for (size_t s = 0; s < ns; ++s) {
      if (allowed(c0, s) && !x[c0][s]) {
        split_prev_split[s] = -1;
        split_from_class[s] = static_cast<int64_t>(c0);
        queue.push_back(s);
      }
    }
    for (size_t qi = 0; qi < queue.size(); ++qi) {
      const size_t s = queue[qi];
      if (used[s] < cap[s]) {
        // Unwind: along the path each class moves from prev split to s.
        size_t cur = s;
        ++used[s];
        for (;;) {
          const size_t c = static_cast<size_t>(split_from_class[cur]);
          x[c][cur] = 1;
          const int64_t prev = split_prev_split[cur];
          if (prev < 0) break;
          x[c][static_cast<size_t>(prev)] = 0;
          cur = static_cast<size_t>(prev);
        }
        return true;
      }
      for (size_t c = 0; c < nc; ++c) {
        if (!x[c][s]) continue;
        for (size_t t = 0; t < ns; ++t) {
          if (split_prev_split[t] != -2 || !allowed(c, t) || x[c][t]) continue;
          split_prev_split[t] = static_cast<int64_t>(s);
          split_from_class[t] = static_cast<int64_t>(c);
          queue.push_back(t);
        }
      }
    }
    return false;
  };
  for (int pass = 0; pass < 3; ++pass) {
    bool done = true;
    for (size_t c = 0; c < nc; ++c) {
      while (want[c] > 0 && augment(c)) --want[c];
      done &= want[c] == 0;
    }
    if (done) break;
    // Not feasible with these column totals: allow every column its
    // rounded-up share, then (never seen) any room at all.
    for (size_t s = 0; s < ns; ++s) {
      cap[s] = pass == 0 ? std::max(cap[s], static_cast<uint64_t>(
                                                std::ceil(col_frac[s] - 1e-9)))
                         : units;
    }
  }
  for (size_t c = 0; c < nc; ++c) {
    for (size_t s = 0; s < ns; ++s) q[c][s] += x[c][s];
    // Last resort (unreachable in practice): per-class largest remainder.
    if (want[c] > 0) q[c] = Quotas(n[c], ratios);
  }
  return q;
}

// A group key, "g:" + a group or "p:" + a path, kept as the kind letter and
// a view of the text (which the items hold) rather than a string of its own:
// a 1M-item listing would otherwise keep a second copy of every path.
struct GroupKey {
  char kind;  // 'g' or 'p'
  std::string_view text;
  // The key as hashed: kind, ':', text (in *buf).
  std::string_view Text(std::string* buf) const {
    buf->assign(1, kind);
    buf->push_back(':');
    buf->append(text);
    return *buf;
  }
  // The order of the keys as hashed.
  bool operator<(const GroupKey& o) const {
    return kind != o.kind ? static_cast<unsigned char>(kind) <
                                static_cast<unsigned char>(o.kind)
                          : text < o.text;
  }
};

// Numbers distinct group keys as they are added (open addressing over
// XXH3-64 of the key; a std::unordered_map<std::string> costs an allocation
// per key and twice the time).
class GroupIndex {
 public:
  GroupIndex(size_t n, std::vector<GroupKey>* keys)
      : keys_(keys),
        slots_(std::bit_ceil(std::max<size_t>(16, 2 * n)), kEmpty) {}
  uint32_t Add(GroupKey key) {
    const uint64_t h = XXH3_64bits_withSeed(
        key.text.data(), key.text.size(), static_cast<unsigned char>(key.kind));
    const size_t mask = slots_.size() - 1;
    for (size_t s = h & mask;; s = (s + 1) & mask) {
      uint32_t& g = slots_[s];
      if (g == kEmpty) {
        g = static_cast<uint32_t>(keys_->size());
        keys_->push_back(key);
        hashes_.push_back(h);
        return g;
      }
      const GroupKey& k = (*keys_)[g];
      if (hashes_[g] == h && k.kind == key.kind && k.text == key.text) return g;
    }
  }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  std::vector<GroupKey>* keys_;
  std::vector<uint32_t> slots_;
  std::vector<uint64_t> hashes_;
};

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
                                 const std::vector<Hash128>& hashes,
                                 const std::vector<int>& previous) {
  FERRY_RETURN_IF_ERROR(ValidateSpec(spec));
  if (!hashes.empty() && hashes.size() != items.size()) {
    return Status::InvalidArgument("one content hash per item expected");
  }
  if (!previous.empty() && previous.size() != items.size()) {
    return Status::InvalidArgument("one earlier split per item expected");
  }
  for (int p : previous) {
    if (p < -1 || p >= static_cast<int>(spec.names.size()))
      return Status::InvalidArgument("earlier split index out of range");
  }
  SplitResult r;
  r.names = spec.names;
  r.hashed = !hashes.empty();
  const size_t n = items.size();
  const size_t ns = spec.names.size();

  // Classes, sorted: labels numbered as first seen, then renumbered.
  std::vector<int> cls(n);
  {
    std::unordered_map<std::string_view, int> seen;
    std::vector<std::string_view> labels;
    for (size_t i = 0; i < n; ++i) {
      auto [it, fresh] = seen.emplace(items[i].label, int(labels.size()));
      if (fresh) labels.push_back(items[i].label);
      cls[i] = it->second;
    }
    std::vector<int> by_name(labels.size());
    std::iota(by_name.begin(), by_name.end(), 0);
    std::sort(by_name.begin(), by_name.end(),
              [&](int a, int b) { return labels[a] < labels[b]; });
    std::vector<int> rank(labels.size());
    for (size_t k = 0; k < by_name.size(); ++k) {
      rank[by_name[k]] = int(k);
      r.classes.emplace_back(labels[by_name[k]]);
    }
    for (int& c : cls) c = rank[c];
  }

  // Groups: regex capture, else the listed group, else the path itself.
  std::unique_ptr<std::regex> re;
  if (!spec.group_regex.empty())
    re = std::make_unique<std::regex>(spec.group_regex);
  std::deque<std::string> captures;  // what regex keys point into
  std::vector<GroupKey> group_key;
  std::vector<uint32_t> group_of(n);
  {
    GroupIndex index(n, &group_key);
    for (size_t i = 0; i < n; ++i) {
      std::smatch m;
      if (re && std::regex_search(items[i].path, m, *re) && m.size() > 1 &&
          m[1].matched) {
        captures.push_back(m[1].str());
        group_of[i] = index.Add({'g', captures.back()});
      } else if (!re && !items[i].group.empty()) {
        group_of[i] = index.Add({'g', items[i].group});
      } else {
        group_of[i] = index.Add({'p', items[i].path});
      }
    }
  }

  // Which items share content. kDrop keeps the first member (by path) of
  // each set; kTogether merges their groups, the merged group keeping the
  // key of its member that comes first by path.
  auto path_less = [&](size_t a, size_t b) {
    return items[a].path < items[b].path;
  };
  std::unordered_map<Hash128, std::vector<size_t>, HashKey> same;
  std::vector<char> dropped(n, 0);
  if (r.hashed) {
    for (size_t i = 0; i < n; ++i) same[hashes[i]].push_back(i);
    for (auto& [h, members] : same) {
      if (members.size() < 2) continue;
      ++r.duplicate_sets;
      std::sort(members.begin(), members.end(), path_less);
      if (spec.duplicates != DuplicatePolicy::kDrop) continue;
      for (size_t k = 1; k < members.size(); ++k) {
        dropped[members[k]] = 1;
        r.dropped.push_back({members[k], members[0]});
      }
    }
    std::sort(r.dropped.begin(), r.dropped.end(),
              [&](const auto& a, const auto& b) {
                return path_less(a.item, b.item);
              });
  }
  UnionFind uf(group_key.size());
  for (size_t i = 0; i < n; ++i) {
    if (dropped[i]) continue;
    size_t& f = uf.first_item[group_of[i]];
    if (f == SIZE_MAX || path_less(i, f)) f = i;
  }
  if (r.hashed && spec.duplicates == DuplicatePolicy::kTogether) {
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
  auto root_key = [&](uint32_t root) -> const GroupKey& {
    return group_key[group_of[uf.first_item[root]]];
  };
  std::string key_text;
  auto root_u = [&](uint32_t root) {
    return SplitHashFraction(root_key(root).Text(&key_text), spec.seed);
  };

  // Auto mode: earlier items keep their split; a group with earlier
  // members goes where its first earlier member (by path) is.
  const bool use_previous = spec.mode == SplitMode::kAuto && !previous.empty();
  std::vector<size_t> fixed_item(group_key.size(), SIZE_MAX);
  if (use_previous) {
    for (size_t i = 0; i < n; ++i) {
      if (dropped[i] || previous[i] < 0) continue;
      ++r.kept_items;
      size_t& f = fixed_item[uf.Find(group_of[i])];
      if (f == SIZE_MAX || path_less(i, f)) f = i;
    }
  }
  auto split_of_item = [&](size_t i, const std::vector<int>& split_of_root) {
    if (use_previous && previous[i] >= 0) return previous[i];
    const uint32_t root = uf.Find(group_of[i]);
    const size_t f = fixed_item[root];
    return f != SIZE_MAX ? previous[f] : split_of_root[root];
  };

  std::vector<int> split_of_root(group_key.size(), -1);
  if (spec.mode == SplitMode::kStable) {
    const std::vector<double> cum = Cumulative(spec.ratios);
    for (uint32_t g = 0; g < group_key.size(); ++g) {
      uint32_t root = uf.Find(g);
      if (split_of_root[root] < 0 && uf.first_item[root] != SIZE_MAX) {
        split_of_root[root] = IndexFor(root_u(root), cum);
      }
    }
  } else {
    // Exact (and auto): per stratum (the class of a group's first item),
    // quotas of the whole stratum; the new groups, in hash order, fill
    // each split up to its quota less what earlier items hold there.
    struct G {
      double u;
      uint32_t root;
      uint64_t size;
      int stratum;
    };
    auto stratum_of = [&](uint32_t root) {
      return spec.stratify ? cls[uf.first_item[root]] : 0;
    };
    const size_t nstrata = spec.stratify ? r.classes.size() : 1;
    std::vector<uint64_t> total(nstrata, 0);
    std::vector<std::vector<uint64_t>> kept(nstrata,
                                            std::vector<uint64_t>(ns, 0));
    std::vector<G> roots;
    std::vector<int64_t> pos(group_key.size(), -1);
    for (size_t i = 0; i < n; ++i) {
      if (dropped[i]) continue;
      uint32_t root = uf.Find(group_of[i]);
      const int stratum = stratum_of(root);
      ++total[stratum];
      if (fixed_item[root] != SIZE_MAX) {
        ++kept[stratum][split_of_item(i, split_of_root)];
        continue;
      }
      if (pos[root] < 0) {
        pos[root] = int64_t(roots.size());
        roots.push_back({root_u(root), root, 0, stratum});
      }
      ++roots[pos[root]].size;
    }
    std::sort(roots.begin(), roots.end(), [&](const G& a, const G& b) {
      if (a.stratum != b.stratum) return a.stratum < b.stratum;
      if (a.u != b.u) return a.u < b.u;
      return root_key(a.root) < root_key(b.root);
    });
    const std::vector<std::vector<uint64_t>> quota =
        JointQuotas(total, spec.ratios);
    const double rsum =
        std::accumulate(spec.ratios.begin(), spec.ratios.end(), 0.0);
    for (size_t s = 0; s < roots.size();) {
      const int c = roots[s].stratum;
      size_t e = s;
      uint64_t fresh = 0;
      while (e < roots.size() && roots[e].stratum == c)
        fresh += roots[e++].size;
      // Room per split; when earlier items overfill a split, the new items
      // go one by one where the stratum is furthest below its exact share.
      std::vector<int64_t> room(ns);
      bool over = false;
      for (size_t i = 0; i < ns; ++i) {
        room[i] = int64_t(quota[c][i]) - int64_t(kept[c][i]);
        over |= room[i] < 0;
      }
      if (over) {
        std::vector<uint64_t> cur = kept[c];
        std::fill(room.begin(), room.end(), 0);
        for (uint64_t k = 0; k < fresh; ++k) {
          size_t best = ns;
          double best_gap = 0;
          for (size_t i = 0; i < ns; ++i) {
            if (spec.ratios[i] <= 0) continue;
            const double gap =
                ExactShare(total[c], spec.ratios[i], rsum) - double(cur[i]);
            if (best == ns || gap > best_gap) {
              best = i;
              best_gap = gap;
            }
          }
          ++cur[best];
          ++room[best];
        }
      }
      std::vector<int64_t> filled(ns, 0);
      for (size_t k = s; k < e; ++k) {
        // The first split with room for the whole group; else the one with
        // the most room left (a group never overfills early splits and
        // starves the last one).
        size_t pick = ns;
        const int64_t size = int64_t(roots[k].size);
        for (size_t i = 0; i < ns && pick == ns; ++i) {
          if (filled[i] + size <= room[i]) pick = i;
        }
        if (pick == ns) {
          int64_t best = INT64_MIN;
          for (size_t i = 0; i < ns; ++i) {
            int64_t left = room[i] - filled[i];
            if (spec.ratios[i] > 0 && left > best) {
              best = left;
              pick = i;
            }
          }
        }
        filled[pick] += int64_t(roots[k].size);
        split_of_root[roots[k].root] = static_cast<int>(pick);
      }
      s = e;
    }
  }

  r.assignment.assign(n, -1);
  r.counts.assign(ns, std::vector<uint64_t>(r.classes.size(), 0));
  r.groups_per_split.assign(ns, 0);
  std::vector<bool> root_counted(group_key.size(), false);
  for (size_t i = 0; i < n; ++i) {
    if (dropped[i]) continue;
    const uint32_t root = uf.Find(group_of[i]);
    const int s = split_of_item(i, split_of_root);
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
    bool cross = false;
    for (size_t k = 1; k < members.size(); ++k) {
      cross |= !dropped[members[k]] &&
               r.assignment[members[k]] != r.assignment[members[0]];
    }
    if (!cross) continue;
    r.leaks.push_back({h, members});
  }
  std::sort(r.leaks.begin(), r.leaks.end(), [&](const auto& a, const auto& b) {
    return items[a.items[0]].path < items[b.items[0]].path;
  });
  // Only an earlier assignment can split a set kept together: keeping it
  // would make a leaking output, moving an item would break the promise.
  if (spec.duplicates == DuplicatePolicy::kTogether && !r.leaks.empty()) {
    const auto& leak = r.leaks[0];
    std::string where;
    for (size_t i : leak.items) {
      where += (where.empty() ? "" : ", ") + items[i].path + " (" +
               spec.names[r.assignment[i]] + ")";
    }
    return Status::InvalidArgument(
        "the earlier assignment puts identical files in different splits: " +
            where +
            (r.leaks.size() > 1
                 ? " and " + std::to_string(r.leaks.size() - 1) + " more sets"
                 : ""),
        "keep it with --allow-leakage, or start afresh with --split-mode "
        "exact");
  }
  return r;
}

std::vector<uint64_t> SplitQuotas(uint64_t n,
                                  const std::vector<double>& ratios) {
  return Quotas(n, ratios);
}

const char* SplitModeName(SplitMode mode) {
  switch (mode) {
    case SplitMode::kStable:
      return "stable";
    case SplitMode::kExact:
      return "exact";
    case SplitMode::kAuto:
      break;
  }
  return "auto";
}

}  // namespace ferry
