#include "ferry/split.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include "testutil/test_util.h"

namespace ferry {
namespace {

// The documented hash, pinned: changing it would silently move every item
// of every user's dataset to another split.
TEST(SplitHashTest, GoldenAssignmentsNeverChange) {
  struct Golden {
    const char* key;
    uint64_t seed;
    double u;
    int split;
  };
  const Golden kGolden[] = {{"p:cat/cat_000.png", 0u, 0.070350144026800399, 0},
                            {"p:cat/cat_000.png", 1u, 0.98687907547836173, 2},
                            {"p:cat/cat_000.png", 42u, 0.55248770268758551, 0},
                            {"p:a", 0u, 0.50894586095519745, 0},
                            {"p:a", 1u, 0.3269467937316155, 0},
                            {"g:scene-17", 0u, 0.96425642535849188, 2},
                            {"g:scene-17", 1u, 0.37403403925984291, 0},
                            {"g:scene-17", 42u, 0.88602785424220742, 1},
                            {"", 0u, 0.17588043334474279, 0}};
  for (const Golden& g : kGolden) {
    EXPECT_DOUBLE_EQ(SplitHashFraction(g.key, g.seed), g.u)
        << g.key << " " << g.seed;
    EXPECT_EQ(StableSplitIndex(g.key, g.seed, {7, 2, 1}), g.split)
        << g.key << " " << g.seed;
  }
}

TEST(SplitSpecTest, RatiosParseAndBadOnesAreRefused) {
  EXPECT_EQ(*ParseRatios("7:2:1"), (std::vector<double>{7, 2, 1}));
  EXPECT_EQ(*ParseRatios("0.7,0.2,0.1"), (std::vector<double>{0.7, 0.2, 0.1}));
  EXPECT_EQ(*ParseRatios("1"), (std::vector<double>{1}));
  for (const char* bad :
       {"7:-2:1", "a:b", "0:0:0", "", "7::1", "1,inf", "nan"}) {
    EXPECT_TRUE(ParseRatios(bad).status().IsInvalidArgument()) << bad;
  }
  SplitSpec spec;
  spec.names = {"train", "val"};
  EXPECT_FALSE(ValidateSpec(spec).ok());  // 3 ratios, 2 names
  spec.names = {"train", "train", "test"};
  EXPECT_FALSE(ValidateSpec(spec).ok());
  spec.names = {"train", "val", "te/st"};
  EXPECT_FALSE(ValidateSpec(spec).ok());
  spec.names = {"train", "val", "test"};
  spec.group_regex = "no capture";
  EXPECT_FALSE(ValidateSpec(spec).ok());
  spec.group_regex = "([";
  EXPECT_FALSE(ValidateSpec(spec).ok());
}

std::vector<SplitItem> MakeItems(const std::map<std::string, int>& per_class,
                                 int offset = 0) {
  std::vector<SplitItem> items;
  for (const auto& [label, n] : per_class) {
    for (int i = 0; i < n; ++i) {
      items.push_back(
          {label + "/img_" + std::to_string(offset + i) + ".png", label, ""});
    }
  }
  return items;
}

std::map<std::string, int> ByPath(const std::vector<SplitItem>& items,
                                  const SplitResult& r) {
  std::map<std::string, int> m;
  for (size_t i = 0; i < items.size(); ++i) m[items[i].path] = r.assignment[i];
  return m;
}

TEST(SplitExactTest, CountsMatchRatiosPerClassWithinOne) {
  SplitSpec spec;
  spec.mode = SplitMode::kExact;
  for (int n = 0; n <= 60; ++n) {
    auto items = MakeItems({{"a", n}, {"b", 1}, {"c", 10}});
    auto r = AssignSplits(items, spec, {});
    ASSERT_OK(r.status());
    for (size_t c = 0; c < r->classes.size(); ++c) {
      uint64_t total = 0;
      for (size_t s = 0; s < 3; ++s) total += r->counts[s][c];
      for (size_t s = 0; s < 3; ++s) {
        double share = total * spec.ratios[s] / 10.0;
        EXPECT_LE(std::fabs(double(r->counts[s][c]) - share), 1.0)
            << n << " class " << c;
      }
    }
    // 10 items give 7/2/1. (The 1-item class goes wherever the split
    // totals need it: see SplitTotalsHoldTheRatiosAcrossClasses.)
    const size_t c = std::find(r->classes.begin(), r->classes.end(), "c") -
                     r->classes.begin();
    EXPECT_EQ(r->classes.size(), n > 0 ? 3u : 2u);
    EXPECT_EQ(r->counts[0][c], 7u);
    EXPECT_EQ(r->counts[1][c], 2u);
    EXPECT_EQ(r->counts[2][c], 1u);
  }
}

// Largest remainder: 5 items at 8:1:1 are 4 + 0.5 + 0.5; the tie between
// val and test goes to the earlier split, val.
TEST(SplitExactTest, RemainderTiesGoToTheEarlierSplit) {
  SplitSpec spec;
  spec.mode = SplitMode::kExact;
  spec.ratios = {8, 1, 1};
  auto r = AssignSplits(MakeItems({{"a", 5}}), spec, {});
  ASSERT_OK(r.status());
  EXPECT_EQ(r->counts[0][0], 4u);
  EXPECT_EQ(r->counts[1][0], 1u);
  EXPECT_EQ(r->counts[2][0], 0u);
}

TEST(SplitExactTest, ZeroRatioSplitsStayEmpty) {
  for (SplitMode mode : {SplitMode::kExact, SplitMode::kStable}) {
    SplitSpec spec;
    spec.mode = mode;
    spec.ratios = {7, 0, 3};
    auto items = MakeItems({{"a", 500}, {"b", 3}});
    auto r = AssignSplits(items, spec, {});
    ASSERT_OK(r.status());
    EXPECT_EQ(r->counts[1][0] + r->counts[1][1], 0u);
  }
  SplitSpec one;
  one.names = {"all"};
  one.ratios = {1};
  auto r = AssignSplits(MakeItems({{"a", 5}}), one, {});
  ASSERT_OK(r.status());
  EXPECT_EQ(r->counts[0][0], 5u);
}

TEST(SplitStableTest, AddingAndRemovingItemsNeverMovesOthers) {
  SplitSpec spec;
  spec.mode = SplitMode::kStable;
  spec.seed = 7;
  auto before = MakeItems({{"a", 6000}, {"b", 4000}});
  auto r1 = AssignSplits(before, spec, {});
  ASSERT_OK(r1.status());
  auto m1 = ByPath(before, *r1);
  // Remove 5%, add 10% new.
  std::vector<SplitItem> after;
  for (size_t i = 0; i < before.size(); ++i) {
    if (i % 20 != 0) after.push_back(before[i]);
  }
  for (const auto& it :
       MakeItems({{"a", 600}, {"b", 400}, {"new", 50}}, 100000))
    after.push_back(it);
  auto r2 = AssignSplits(after, spec, {});
  ASSERT_OK(r2.status());
  auto m2 = ByPath(after, *r2);
  for (const auto& [path, s] : m2) {
    auto it = m1.find(path);
    if (it != m1.end()) ASSERT_EQ(it->second, s) << path;
  }
}

TEST(SplitStableTest, ClassSharesFollowRatiosWithinBinomialSpread) {
  SplitSpec spec;
  spec.mode = SplitMode::kStable;
  auto items = MakeItems({{"a", 20000}, {"b", 3000}});
  auto r = AssignSplits(items, spec, {});
  ASSERT_OK(r.status());
  for (size_t c = 0; c < 2; ++c) {
    const double n = c == 0 ? 20000 : 3000;
    for (size_t s = 0; s < 3; ++s) {
      const double p = spec.ratios[s] / 10.0;
      EXPECT_LE(std::fabs(r->counts[s][c] - n * p),
                4 * std::sqrt(n * p * (1 - p)))
          << c << " " << s;
    }
  }
}

TEST(SplitTest, SameAssignmentWhateverTheInputOrder) {
  for (SplitMode mode : {SplitMode::kStable, SplitMode::kExact}) {
    SplitSpec spec;
    spec.mode = mode;
    spec.group_regex = "_(\\d)\\.png$";  // 10 groups per class
    auto items = MakeItems({{"a", 300}, {"b", 77}});
    auto r1 = AssignSplits(items, spec, {});
    std::mt19937 rng(3);
    std::shuffle(items.begin(), items.end(), rng);
    auto r2 = AssignSplits(items, spec, {});
    ASSERT_OK(r1.status());
    ASSERT_OK(r2.status());
    auto sorted = items;
    std::sort(sorted.begin(), sorted.end(),
              [](auto& x, auto& y) { return x.path < y.path; });
    EXPECT_EQ(ByPath(items, *r2),
              ByPath(sorted, *AssignSplits(sorted, spec, {})));
  }
}

TEST(SplitTest, GroupsStayTogetherInBothModes) {
  for (SplitMode mode : {SplitMode::kStable, SplitMode::kExact}) {
    SplitSpec spec;
    spec.mode = mode;
    spec.group_regex = "^[^/]+/(scene-\\d+)_";
    std::vector<SplitItem> items;
    for (int scene = 0; scene < 40; ++scene) {
      for (int f = 0; f < 1 + scene % 7; ++f) {
        items.push_back({"cls" + std::to_string(scene % 2) + "/scene-" +
                             std::to_string(scene) + "_" + std::to_string(f) +
                             ".png",
                         "cls" + std::to_string(scene % 2), ""});
      }
    }
    auto r = AssignSplits(items, spec, {});
    ASSERT_OK(r.status());
    std::map<std::string, int> scene_split;
    for (size_t i = 0; i < items.size(); ++i) {
      std::string scene = items[i].path.substr(5, items[i].path.find('_') - 5);
      auto [it, fresh] = scene_split.emplace(scene, r->assignment[i]);
      EXPECT_EQ(it->second, r->assignment[i]) << items[i].path;
    }
    uint64_t groups = 0;
    for (uint64_t g : r->groups_per_split) groups += g;
    EXPECT_EQ(groups, 40u);
  }
}

TEST(SplitTest, ListedGroupsAreUsedWithoutARegex) {
  std::vector<SplitItem> items;
  for (int i = 0; i < 200; ++i)
    items.push_back(
        {"x/" + std::to_string(i), "x", "patient" + std::to_string(i % 9)});
  auto r = AssignSplits(items, SplitSpec{}, {});
  ASSERT_OK(r.status());
  for (size_t i = 9; i < items.size(); ++i)
    EXPECT_EQ(r->assignment[i], r->assignment[i % 9]);
}

TEST(SplitLeakageTest, PlantedDuplicatesAreFoundAndDedupKeepsThemTogether) {
  auto items = MakeItems({{"a", 400}});
  std::vector<Hash128> hashes;
  for (size_t i = 0; i < items.size(); ++i)
    hashes.push_back(HashBytes(items[i].path));
  // Plant 20 pairs of identical files.
  for (size_t k = 0; k < 20; ++k) hashes[200 + k] = hashes[k];
  SplitSpec spec;
  spec.mode = SplitMode::kStable;
  spec.duplicates = DuplicatePolicy::kAllowLeakage;
  auto r = AssignSplits(items, spec, hashes);
  ASSERT_OK(r.status());
  EXPECT_TRUE(r->hashed);
  EXPECT_EQ(r->duplicate_sets, 20u);
  EXPECT_GT(r->leaks.size(), 0u);  // with 7:2:1, some pairs straddle splits
  for (const auto& leak : r->leaks) {
    EXPECT_EQ(leak.items.size(), 2u);
    EXPECT_NE(r->assignment[leak.items[0]], r->assignment[leak.items[1]]);
  }
  spec.duplicates = DuplicatePolicy::kTogether;
  auto d = AssignSplits(items, spec, hashes);
  ASSERT_OK(d.status());
  EXPECT_TRUE(d->leaks.empty());
  // Each set goes where its first member (by path) would go on its own.
  for (size_t k = 0; k < 20; ++k) {
    size_t first = items[k].path < items[200 + k].path ? k : 200 + k;
    EXPECT_EQ(d->assignment[k],
              StableSplitIndex("p:" + items[first].path, 0, spec.ratios));
    EXPECT_EQ(d->assignment[200 + k], d->assignment[k]);
  }
}

// Largest remainder in integers: n * r_s / sum(r), with ratios given as
// integers, remainders compared exactly, ties to the earlier split.
std::vector<uint64_t> IntegerQuotas(uint64_t n, const std::vector<int>& r) {
  const uint64_t sum = std::accumulate(r.begin(), r.end(), uint64_t{0});
  std::vector<uint64_t> q(r.size());
  std::vector<std::pair<uint64_t, size_t>> rem;
  uint64_t given = 0;
  for (size_t s = 0; s < r.size(); ++s) {
    q[s] = n * r[s] / sum;
    given += q[s];
    rem.push_back({n * r[s] % sum, s});
  }
  std::stable_sort(rem.begin(), rem.end(),
                   [](auto& a, auto& b) { return a.first > b.first; });
  for (size_t k = 0; given < n; ++k, ++given) ++q[rem[k].second];
  return q;
}

std::vector<uint64_t> SplitTotals(const SplitResult& r) {
  std::vector<uint64_t> t(r.names.size(), 0);
  for (size_t s = 0; s < r.names.size(); ++s)
    for (uint64_t c : r.counts[s]) t[s] += c;
  return t;
}

// Every class's count in every split, and every split's total, within one
// item of its exact share.
void ExpectWithinOneOfQuota(const SplitResult& r,
                            const std::vector<double>& ratios,
                            const std::string& what) {
  const double sum = std::accumulate(ratios.begin(), ratios.end(), 0.0);
  uint64_t all = 0;
  for (size_t c = 0; c < r.classes.size(); ++c) {
    uint64_t n = 0;
    for (size_t s = 0; s < ratios.size(); ++s) n += r.counts[s][c];
    all += n;
    for (size_t s = 0; s < ratios.size(); ++s) {
      EXPECT_LE(std::fabs(double(r.counts[s][c]) - n * ratios[s] / sum), 1.0)
          << what << " class " << r.classes[c] << " split " << s;
    }
  }
  const std::vector<uint64_t> t = SplitTotals(r);
  for (size_t s = 0; s < ratios.size(); ++s) {
    EXPECT_LE(std::fabs(double(t[s]) - all * ratios[s] / sum), 1.0)
        << what << " split " << s << " total " << t[s] << " of " << all;
  }
}

TEST(SplitExactTest, ExactCountsForZeroToSixtyItems) {
  for (SplitMode mode : {SplitMode::kExact, SplitMode::kAuto}) {
    for (const std::vector<int>& ratios :
         {std::vector<int>{7, 2, 1}, std::vector<int>{8, 1, 1},
          std::vector<int>{1, 1}, std::vector<int>{3, 3, 3, 1}}) {
      SplitSpec spec;
      spec.mode = mode;
      spec.ratios.assign(ratios.begin(), ratios.end());
      spec.names.clear();
      for (size_t s = 0; s < ratios.size(); ++s)
        spec.names.push_back("s" + std::to_string(s));
      for (int n = 0; n <= 60; ++n) {
        auto r = AssignSplits(MakeItems({{"a", n}}), spec, {});
        ASSERT_OK(r.status());
        EXPECT_EQ(SplitTotals(*r), IntegerQuotas(n, ratios))
            << n << " items, ratios " << ratios.size();
        EXPECT_EQ(SplitQuotas(n, spec.ratios), IntegerQuotas(n, ratios)) << n;
      }
    }
  }
}

// As RemainderTiesGoToTheEarlierSplit, in the default mode (no earlier
// assignment) and for the quotas alone.
TEST(SplitExactTest, RemainderTiesGoToTheEarlierSplitInEveryExactMode) {
  for (SplitMode mode : {SplitMode::kExact, SplitMode::kAuto}) {
    SplitSpec spec;
    spec.mode = mode;
    spec.ratios = {8, 1, 1};
    auto r = AssignSplits(MakeItems({{"a", 5}}), spec, {});
    ASSERT_OK(r.status());
    EXPECT_EQ(SplitTotals(*r), (std::vector<uint64_t>{4, 1, 0}));
  }
  EXPECT_EQ(SplitQuotas(5, {8, 1, 1}), (std::vector<uint64_t>{4, 1, 0}));
  EXPECT_EQ(SplitQuotas(2, {1, 1, 1, 1}), (std::vector<uint64_t>{1, 1, 0, 0}));
}

// The cases: 120 items in 5 classes came out 93/22/5, 6 gave 5/0/1.
TEST(SplitExactTest, SplitTotalsHoldTheRatiosAcrossClasses) {
  SplitSpec spec;  // auto, no earlier assignment: exact
  auto r120 = AssignSplits(
      MakeItems({{"a", 24}, {"b", 24}, {"c", 24}, {"d", 24}, {"e", 24}}), spec,
      {});
  ASSERT_OK(r120.status());
  EXPECT_EQ(SplitTotals(*r120), (std::vector<uint64_t>{84, 24, 12}));
  ExpectWithinOneOfQuota(*r120, spec.ratios, "120");
  auto r6 = AssignSplits(MakeItems({{"a", 2}, {"b", 2}, {"c", 2}}), spec, {});
  ASSERT_OK(r6.status());
  EXPECT_EQ(SplitTotals(*r6), (std::vector<uint64_t>{4, 1, 1}));
  ExpectWithinOneOfQuota(*r6, spec.ratios, "6");
  // Many class mixes, sizes 0..60.
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    std::map<std::string, int> per_class;
    const int classes = 1 + int(rng() % 12);
    for (int c = 0; c < classes; ++c)
      per_class["c" + std::to_string(c)] = int(rng() % 61);
    auto r = AssignSplits(MakeItems(per_class), spec, {});
    ASSERT_OK(r.status());
    ExpectWithinOneOfQuota(*r, spec.ratios, "trial " + std::to_string(trial));
  }
}

// Groups of 7: no split overfills by most of a group while the last one
// starves (1,000 items came out 704/203/93 per mille); each split total is
// within one group of its share.
TEST(SplitExactTest, GroupedItemsFillEverySplitWithinOneGroup) {
  for (int n : {700, 1001, 2002, 3500}) {
    std::vector<SplitItem> items;
    for (int i = 0; i < n; ++i)
      items.push_back({"a/" + std::to_string(i), "a", std::to_string(i / 7)});
    for (SplitMode mode : {SplitMode::kExact, SplitMode::kAuto}) {
      SplitSpec spec;
      spec.mode = mode;
      auto r = AssignSplits(items, spec, {});
      ASSERT_OK(r.status());
      const auto t = SplitTotals(*r);
      for (size_t s = 0; s < 3; ++s)
        EXPECT_LT(std::fabs(double(t[s]) - n * spec.ratios[s] / 10), 7.0)
            << n << " split " << s << " " << t[s];
    }
  }
}

// Item 3's growth test: 20 steps of +10 % / -5 % with the earlier
// assignment kept. No surviving item changes split; every class and split
// stays within one item of its quota; the same whatever the input order.
TEST(SplitAutoTest, GrowthKeepsEveryItemAndTheRatios) {
  SplitSpec spec;
  spec.seed = 5;
  std::mt19937 rng(1);
  std::vector<SplitItem> items =
      MakeItems({{"a", 2000}, {"b", 1200}, {"c", 800}});
  int next_id = 1000000;
  auto r = AssignSplits(items, spec, {});
  ASSERT_OK(r.status());
  ExpectWithinOneOfQuota(*r, spec.ratios, "start");
  std::map<std::string, int> was = ByPath(items, *r);
  auto env = NewMemEnv();
  for (int step = 0; step < 20; ++step) {
    // The earlier run's output, read back as the next run would.
    ASSERT_OK(WriteSplit(env.get(), "out", items, spec, *r));
    std::vector<SplitItem> next;
    for (const SplitItem& it : items) {
      if (rng() % 100 >= 5) next.push_back(it);  // -5 %
    }
    const size_t add = items.size() / 10;  // +10 %
    for (size_t k = 0; k < add; ++k) {
      const std::string label = std::string(1, "abc"[rng() % 3]);
      next.push_back(
          {label + "/new_" + std::to_string(next_id++) + ".png", label, ""});
    }
    std::shuffle(next.begin(), next.end(), rng);
    auto prev =
        ReadPreviousAssignment(env.get(), "out/split.json", next, spec.names);
    ASSERT_OK(prev.status());
    EXPECT_EQ(prev->found, next.size() - add);
    auto r2 = AssignSplits(next, spec, {}, prev->split);
    ASSERT_OK(r2.status());
    EXPECT_EQ(r2->kept_items, next.size() - add);
    for (size_t i = 0; i < next.size(); ++i) {
      auto it = was.find(next[i].path);
      if (it != was.end())
        ASSERT_EQ(r2->assignment[i], it->second) << step << " " << next[i].path;
    }
    ExpectWithinOneOfQuota(*r2, spec.ratios, "step " + std::to_string(step));
    // Input order does not matter.
    auto sorted = next;
    std::sort(sorted.begin(), sorted.end(),
              [](auto& x, auto& y) { return x.path < y.path; });
    auto prev_sorted =
        ReadPreviousAssignment(env.get(), "out", sorted, spec.names);
    ASSERT_OK(prev_sorted.status());
    auto r3 = AssignSplits(sorted, spec, {}, prev_sorted->split);
    ASSERT_OK(r3.status());
    EXPECT_EQ(ByPath(sorted, *r3), ByPath(next, *r2));
    items = std::move(next);
    r = std::move(r2);
    was = ByPath(items, *r);
  }
  EXPECT_GT(items.size(), 8000u);
}

TEST(SplitAutoTest, GroupsStayWholeAndNewMembersJoinTheirGroup) {
  SplitSpec spec;
  spec.group_regex = "^[^/]+/(scene-\\d+)_";
  std::mt19937 rng(2);
  auto scene_item = [](int scene, int frame) {
    const std::string label = "cls" + std::to_string(scene % 3);
    return SplitItem{label + "/scene-" + std::to_string(scene) + "_" +
                         std::to_string(frame) + ".png",
                     label, ""};
  };
  std::vector<SplitItem> items;
  int scenes = 300, frame = 0;
  for (int sc = 0; sc < scenes; ++sc)
    for (int f = 0; f < 1 + sc % 4; ++f)
      items.push_back(scene_item(sc, frame++));
  auto r = AssignSplits(items, spec, {});
  ASSERT_OK(r.status());
  for (int step = 0; step < 20; ++step) {
    std::map<std::string, int> was = ByPath(items, *r);
    std::vector<SplitItem> next;
    std::vector<int> previous;
    for (const SplitItem& it : items) {
      if (rng() % 100 < 5) continue;
      next.push_back(it);
      previous.push_back(was[it.path]);
    }
    const size_t add = items.size() / 10;
    for (size_t k = 0; k < add; ++k) {
      // Half join earlier scenes, half start new ones.
      const int sc = k % 2 ? int(rng() % scenes) : scenes++;
      next.push_back(scene_item(sc, frame++));
      previous.push_back(-1);
    }
    auto r2 = AssignSplits(next, spec, {}, previous);
    ASSERT_OK(r2.status());
    std::map<std::string, int> scene_split;
    for (size_t i = 0; i < next.size(); ++i) {
      if (previous[i] >= 0) ASSERT_EQ(r2->assignment[i], previous[i]);
      const std::string& p = next[i].path;
      const std::string scene = p.substr(5, p.find('_') - 5);
      auto [it, fresh] = scene_split.emplace(scene, r2->assignment[i]);
      ASSERT_EQ(it->second, r2->assignment[i]) << step << " " << p;
    }
    items = std::move(next);
    r = std::move(r2);
  }
}

TEST(SplitAutoTest, ItemsOfASplitNoLongerNamedArePlacedAnew) {
  auto env = NewMemEnv();
  SplitSpec spec;
  auto items = MakeItems({{"a", 1000}});
  auto r = AssignSplits(items, spec, {});
  ASSERT_OK(r.status());
  ASSERT_OK(WriteSplit(env.get(), "out", items, spec, *r));
  SplitSpec two;
  two.names = {"train", "val"};
  two.ratios = {8, 2};
  auto prev = ReadPreviousAssignment(env.get(), "out", items, two.names);
  ASSERT_OK(prev.status());
  EXPECT_EQ(prev->unknown_split, 100u);
  auto r2 = AssignSplits(items, two, {}, prev->split);
  ASSERT_OK(r2.status());
  EXPECT_EQ(SplitTotals(*r2), (std::vector<uint64_t>{800, 200}));
  // And the output set is that of the new run only: no test.txt.
  ASSERT_OK(WriteSplit(env.get(), "out", items, two, *r2));
  EXPECT_FALSE(env->FileExists("out/test.txt"));
  EXPECT_TRUE(env->FileExists("out/val.txt"));
}

TEST(SplitLeakageTest, DuplicatesTogetherByDefaultDroppedOrAllowedOnRequest) {
  auto items = MakeItems({{"a", 300}, {"b", 100}});
  std::vector<Hash128> hashes;
  for (size_t i = 0; i < items.size(); ++i)
    hashes.push_back(HashBytes(items[i].path));
  for (size_t k = 0; k < 30; ++k) hashes[300 + k] = hashes[k];  // b copies a
  hashes[50] = hashes[51];  // a pair within a
  hashes[52] = hashes[0];   // a triple: a/0, a/52, b/0
  SplitSpec spec;           // auto mode, duplicates together
  auto r = AssignSplits(items, spec, hashes);
  ASSERT_OK(r.status());
  EXPECT_TRUE(r->leaks.empty());
  EXPECT_TRUE(r->dropped.empty());
  EXPECT_EQ(r->duplicate_sets, 31u);
  for (size_t k = 0; k < 30; ++k)
    EXPECT_EQ(r->assignment[k], r->assignment[300 + k]);
  EXPECT_EQ(r->assignment[50], r->assignment[51]);
  EXPECT_EQ(r->assignment[52], r->assignment[0]);
  spec.duplicates = DuplicatePolicy::kDrop;
  auto d = AssignSplits(items, spec, hashes);
  ASSERT_OK(d.status());
  EXPECT_TRUE(d->leaks.empty());
  ASSERT_EQ(d->dropped.size(), 32u);
  uint64_t placed = 0;
  for (int s : d->assignment) placed += s >= 0;
  EXPECT_EQ(placed, items.size() - 32);
  for (const auto& x : d->dropped) {
    EXPECT_EQ(d->assignment[x.item], -1);
    EXPECT_GE(d->assignment[x.kept], 0);
    EXPECT_EQ(hashes[x.item], hashes[x.kept]);
    EXPECT_LT(items[x.kept].path, items[x.item].path);
  }
  spec.duplicates = DuplicatePolicy::kAllowLeakage;
  auto a = AssignSplits(items, spec, hashes);
  ASSERT_OK(a.status());
  EXPECT_GT(a->leaks.size(), 0u);
}

// An earlier assignment (made with --allow-leakage, or before the files
// became identical) that puts identical files apart: refused by default.
TEST(SplitLeakageTest, EarlierAssignmentSplittingDuplicatesIsRefused) {
  auto items = MakeItems({{"a", 20}});
  std::vector<Hash128> hashes;
  for (const auto& it : items) hashes.push_back(HashBytes(it.path));
  hashes[3] = hashes[4];
  std::vector<int> previous(items.size(), -1);
  previous[3] = 0;
  previous[4] = 2;
  SplitSpec spec;
  auto r = AssignSplits(items, spec, hashes, previous);
  EXPECT_TRUE(r.status().IsInvalidArgument()) << r.status().ToString();
  spec.duplicates = DuplicatePolicy::kAllowLeakage;
  r = AssignSplits(items, spec, hashes, previous);
  ASSERT_OK(r.status());
  EXPECT_EQ(r->assignment[3], 0);
  EXPECT_EQ(r->assignment[4], 2);
  EXPECT_EQ(r->leaks.size(), 1u);
  // A new copy of an earlier item joins that item's split.
  hashes[9] = hashes[2];
  previous.assign(items.size(), -1);
  previous[2] = 1;
  spec.duplicates = DuplicatePolicy::kTogether;
  r = AssignSplits(items, spec, hashes, previous);
  ASSERT_OK(r.status());
  EXPECT_EQ(r->assignment[9], 1);
}

TEST(SplitIoTest, AssignmentFileRoundTripsOddPathsAndRefusesDamage) {
  auto env = NewMemEnv();
  std::vector<SplitItem> items = {{"a\tb.png", "x", ""},
                                  {"back\\slash.png", "x", "g\t1"},
                                  {"new\nline.png", "x", ""},
                                  {"plain.png", "x", "g\t1"}};
  SplitSpec spec;
  spec.ratios = {1, 1};
  spec.names = {"l", "r"};
  auto r = AssignSplits(items, spec, {});
  ASSERT_OK(r.status());
  ASSERT_OK(WriteAssignment(env.get(), "as.tsv.zst", items, spec, *r));
  auto shuffled = items;
  std::reverse(shuffled.begin(), shuffled.end());
  shuffled.push_back({"brand_new.png", "x", ""});
  auto p =
      ReadPreviousAssignment(env.get(), "as.tsv.zst", shuffled, spec.names);
  ASSERT_OK(p.status());
  EXPECT_EQ(p->listed, 4u);
  EXPECT_EQ(p->found, 4u);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(p->split[3 - i], r->assignment[i]) << items[i].path;
  EXPECT_EQ(p->split[4], -1);
  // Truncated, or not ours: Corruption.
  std::string bytes = test::ReadFile(env.get(), "as.tsv.zst");
  test::WriteFile(env.get(), "cut/" + std::string(kAssignmentFile),
                  bytes.substr(0, bytes.size() - 3));
  EXPECT_TRUE(ReadPreviousAssignment(env.get(), "cut", items, spec.names)
                  .status()
                  .IsCorruption());
  test::WriteFile(env.get(), "junk/" + std::string(kAssignmentFile), "hello");
  EXPECT_TRUE(ReadPreviousAssignment(env.get(), "junk", items, spec.names)
                  .status()
                  .IsCorruption());
  EXPECT_TRUE(ReadPreviousAssignment(env.get(), "nothing", items, spec.names)
                  .status()
                  .IsNotFound());
  // A split written before assignment files existed: its lists are read.
  test::WriteFile(env.get(), "old/split.json",
                  "{\"names\": [\"l\", \"r\", \"gone\"]}");
  test::WriteFile(env.get(), "old/l.txt", "plain.png\nremoved.png\n");
  test::WriteFile(env.get(), "old/r.txt", "back\\slash.png");
  auto old = ReadPreviousAssignment(env.get(), "old", items, spec.names);
  ASSERT_OK(old.status());
  EXPECT_EQ(old->listed, 3u);
  EXPECT_EQ(old->found, 2u);
  EXPECT_EQ(old->split, (std::vector<int>{-1, 1, -1, 0}));
}

// The whole stream of a zstd file ("" when damaged).
std::string Unzstd(const std::string& bytes) {
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> d(ZSTD_createDCtx(),
                                                       ZSTD_freeDCtx);
  std::string out, buf(ZSTD_DStreamOutSize(), '\0');
  ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
  for (;;) {
    ZSTD_outBuffer o{buf.data(), buf.size(), 0};
    const size_t left = ZSTD_decompressStream(d.get(), &o, &in);
    if (ZSTD_isError(left)) return "";
    out.append(buf.data(), o.pos);
    if (left == 0 && in.pos == in.size) return out;
    if (o.pos == 0 && in.pos == in.size) return "";
  }
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0, nl;
  while ((nl = text.find('\n', pos)) != std::string::npos) {
    out.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  EXPECT_EQ(pos, text.size()) << "last line without a newline";
  return out;
}

TEST(SplitIoTest, ListsAndAssignmentAreInPathOrderWhateverTheInputOrder) {
  // Bytes that sort differently as signed chars, paths that start others,
  // long shared prefixes; more than one sort pass needs; input shuffled.
  const char kBytes[] = {'/', '0', '9', 'A', '_', 'a', '\x7f', '\x80', '\xe9'};
  std::mt19937_64 rng(11);
  std::vector<SplitItem> items;
  std::map<std::string, bool> seen;
  while (items.size() < 400) {
    std::string p = rng() % 2 ? "images/class_0001/scene_" : "a";
    for (size_t k = rng() % 12; k > 0; --k) p.push_back(kBytes[rng() % 9]);
    if (p.back() == '/' || p.find("//") != std::string::npos ||
        !seen.emplace(p, true).second)
      continue;
    items.push_back({p, rng() % 2 ? "x" : "y",
                     rng() % 4 ? "" : "g" + std::to_string(rng() % 20)});
  }
  std::shuffle(items.begin(), items.end(), rng);
  auto env = NewMemEnv();
  SplitSpec spec;
  auto r = AssignSplits(items, spec, {});
  ASSERT_OK(r.status());
  ASSERT_OK(WriteSplit(env.get(), "out", items, spec, *r));
  std::vector<std::vector<std::string>> want(spec.names.size());
  std::vector<std::string> want_lines;
  auto by_path = items;
  std::sort(
      by_path.begin(), by_path.end(),
      [](const SplitItem& a, const SplitItem& b) { return a.path < b.path; });
  for (const SplitItem& it : by_path) {
    const size_t i =
        std::find_if(items.begin(), items.end(),
                     [&](const SplitItem& x) { return x.path == it.path; }) -
        items.begin();
    want[r->assignment[i]].push_back(it.path);
    want_lines.push_back(it.path + "\t" + spec.names[r->assignment[i]] + "\t" +
                         it.group);
  }
  for (size_t s = 0; s < spec.names.size(); ++s) {
    EXPECT_EQ(Lines(test::ReadFile(env.get(), "out/" + spec.names[s] + ".txt")),
              want[s])
        << spec.names[s];
  }
  auto lines = Lines(
      Unzstd(test::ReadFile(env.get(), "out/" + std::string(kAssignmentFile))));
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "# ferry-assignment-v1");
  lines.erase(lines.begin());
  EXPECT_EQ(lines, want_lines);
}

TEST(SplitIoTest, AssignmentLinesOutOfOrderOrFarApartAreAllFound) {
  // A hand-edited file: lines out of order, gaps of many items between
  // neighbours, a path that no longer exists.
  std::vector<SplitItem> items;
  for (int i = 0; i < 100; ++i)
    items.push_back({"p/" + std::to_string(100 + i), "c", ""});
  std::mt19937_64 rng(5);
  std::shuffle(items.begin(), items.end(), rng);
  const std::string text =
      "# ferry-assignment-v1\n"
      "p/150\tl\t\np/110\tr\t\np/100\tl\t\np/101\tr\t\np/199\tr\t\n"
      "p/gone\tl\t\np/120\tl\t\np/121\tr\t\np/190\tl\t\n";
  std::string z(ZSTD_compressBound(text.size()), '\0');
  z.resize(ZSTD_compress(z.data(), z.size(), text.data(), text.size(), 3));
  auto env = NewMemEnv();
  test::WriteFile(env.get(), "as.tsv.zst", z);
  auto p = ReadPreviousAssignment(env.get(), "as.tsv.zst", items, {"l", "r"});
  ASSERT_OK(p.status());
  EXPECT_EQ(p->listed, 9u);
  EXPECT_EQ(p->found, 8u);
  const std::map<std::string, int> want = {
      {"p/150", 0}, {"p/110", 1}, {"p/100", 0}, {"p/101", 1},
      {"p/199", 1}, {"p/120", 0}, {"p/121", 1}, {"p/190", 0}};
  for (size_t i = 0; i < items.size(); ++i) {
    auto w = want.find(items[i].path);
    EXPECT_EQ(p->split[i], w == want.end() ? -1 : w->second) << items[i].path;
  }
}

TEST(SplitIoTest, OutputsSwitchAsOneUnit) {
  auto env = NewMemEnv();
  auto items = MakeItems({{"a", 50}});
  SplitSpec spec;
  auto r = AssignSplits(items, spec, {});
  ASSERT_OK(r.status());
  ASSERT_OK(WriteSplit(env.get(), "o/s", items, spec, *r));
  EXPECT_TRUE(env->FileExists("o/s/test.txt"));
  EXPECT_TRUE(env->FileExists("o/s/" + std::string(kAssignmentFile)));
  // A file of the user's is carried over; a killed run's directory goes.
  test::WriteFile(env.get(), "o/s/NOTES.md", "mine");
  ASSERT_OK(env->CreateDir("o/.s.ferry-split-0123"));
  test::WriteFile(env.get(), "o/.s.ferry-split-0123/train.txt", "stale\n");
  SplitSpec two;
  two.names = {"train", "val"};
  two.ratios = {8, 2};
  auto r2 = AssignSplits(items, two, {});
  ASSERT_OK(r2.status());
  ASSERT_OK(WriteSplit(env.get(), "o/s", items, two, *r2));
  EXPECT_FALSE(env->FileExists("o/s/test.txt"));
  EXPECT_EQ(test::ReadFile(env.get(), "o/s/NOTES.md"), "mine");
  auto left = env->GetChildren("o");
  ASSERT_OK(left.status());
  ASSERT_EQ(left->size(), 1u) << (*left)[0].name;  // only s
  // A foreign directory inside: refused, the earlier set untouched.
  ASSERT_OK(env->CreateDir("o/s/photos"));
  const std::string before = test::ReadFile(env.get(), "o/s/split.json");
  Status s = WriteSplit(env.get(), "o/s", items, spec, *r);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(test::ReadFile(env.get(), "o/s/split.json"), before);
  EXPECT_EQ(env->GetChildren("o")->size(), 1u);
}

TEST(SplitIoTest, TreeListingsAndOutputs) {
  auto env = NewMemEnv();
  const std::string png = "\x89PNG\r\n\x1a\n";  // classified by content
  test::WriteFile(env.get(), "data/cat/b.png", png + "1");
  test::WriteFile(env.get(), "data/cat/a.png", png + "2");
  test::WriteFile(env.get(), "data/dog/x/c.png",
                  png + "1");  // same content as cat/b.png
  test::WriteFile(env.get(), "data/top.png", png + "3");
  test::WriteFile(env.get(), "data/dog/d.png", png + "4");
  auto tree = ItemsFromTree(env.get(), "data", {});
  ASSERT_OK(tree.status());
  const std::vector<SplitItem>* items = &tree->items;
  ASSERT_EQ(items->size(), 4u);
  EXPECT_EQ((*items)[0].path, "cat/a.png");
  EXPECT_EQ((*items)[0].label, "cat");
  EXPECT_EQ((*items)[2].label, "dog");
  EXPECT_EQ((*items)[3].path, "dog/x/c.png");
  // An image beside class folders has no class: skipped, with the reason.
  ASSERT_EQ(tree->skipped.size(), 1u);
  EXPECT_EQ(tree->skipped[0].path, "top.png");
  for (int jobs : {1, 3}) {
    auto h = HashItemContents(env.get(), "data", *items, jobs);
    ASSERT_OK(h.status());
    EXPECT_EQ((*h)[1], (*h)[3]);  // cat/b.png and dog/x/c.png
  }
  auto hashes = *HashItemContents(env.get(), "data", *items, 2);
  SplitSpec spec;
  spec.ratios = {1, 1};
  spec.names = {"left", "right"};
  auto r = AssignSplits(*items, spec, hashes);
  ASSERT_OK(r.status());
  ASSERT_OK(WriteSplit(env.get(), "out", *items, spec, *r));
  std::string left = test::ReadFile(env.get(), "out/left.txt");
  std::string right = test::ReadFile(env.get(), "out/right.txt");
  EXPECT_EQ(std::count(left.begin(), left.end(), '\n') +
                std::count(right.begin(), right.end(), '\n'),
            4);
  std::string json = test::ReadFile(env.get(), "out/split.json");
  EXPECT_NE(json.find("\"format\":\"ferry-split-v1\""), std::string::npos);
  EXPECT_NE(json.find("\"duplicate_sets\":1"), std::string::npos) << json;
  // Written twice, byte for byte the same.
  ASSERT_OK(WriteSplit(env.get(), "out2", *items, spec, *r));
  EXPECT_EQ(test::ReadFile(env.get(), "out2/split.json"), json);
  EXPECT_FALSE(ItemsFromTree(env.get(), "data/top.png", {}).ok());
}

TEST(SplitIoTest, CsvAndJsonlListings) {
  auto env = NewMemEnv();
  test::WriteFile(env.get(), "l.csv",
                  "label,path,group\r\ncat,\"a,1.png\",p1\ndog,b.png,"
                  "\n\n\"c\"\"at\",c.png,p1\n");
  auto csv = ItemsFromList(env.get(), "l.csv");
  ASSERT_OK(csv.status());
  ASSERT_EQ(csv->size(), 3u);
  EXPECT_EQ((*csv)[0].path, "a,1.png");
  EXPECT_EQ((*csv)[0].group, "p1");
  EXPECT_EQ((*csv)[1].group, "");
  EXPECT_EQ((*csv)[2].label, "c\"at");
  test::WriteFile(
      env.get(), "l.jsonl",
      "{\"path\": \"x/\\u00e9.png\", \"label\": 3, \"group\": null}\n\n"
      "{\"label\":\"b\",\"path\":\"y\\\"q.png\"}\n");
  auto jl = ItemsFromList(env.get(), "l.jsonl");
  ASSERT_OK(jl.status());
  ASSERT_EQ(jl->size(), 2u);
  EXPECT_EQ((*jl)[0].path, "x/\xc3\xa9.png");
  EXPECT_EQ((*jl)[0].label, "3");
  EXPECT_EQ((*jl)[1].path, "y\"q.png");
  test::WriteFile(env.get(), "bad.jsonl",
                  "{\"path\": \"a\"}\n{\"path\": [1]}\n");
  auto bad = ItemsFromList(env.get(), "bad.jsonl");
  EXPECT_NE(bad.status().ToString().find("bad.jsonl:2"), std::string::npos)
      << bad.status().ToString();
  test::WriteFile(env.get(), "nopath.csv", "file,label\na,b\n");
  EXPECT_FALSE(ItemsFromList(env.get(), "nopath.csv").ok());
}

}  // namespace
}  // namespace ferry
