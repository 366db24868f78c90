#include "ferry/split.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
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
    // The 1-item class goes to the biggest split; 10 items give 7/2/1.
    const size_t b = std::find(r->classes.begin(), r->classes.end(), "b") -
                     r->classes.begin();
    const size_t c = std::find(r->classes.begin(), r->classes.end(), "c") -
                     r->classes.begin();
    EXPECT_EQ(r->classes.size(), n > 0 ? 3u : 2u);
    EXPECT_EQ(r->counts[0][b], 1u);
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
  auto r = AssignSplits(items, spec, hashes);
  ASSERT_OK(r.status());
  EXPECT_TRUE(r->hashed);
  EXPECT_EQ(r->duplicate_sets, 20u);
  EXPECT_GT(r->leaks.size(), 0u);  // with 7:2:1, some pairs straddle splits
  for (const auto& leak : r->leaks) {
    EXPECT_EQ(leak.items.size(), 2u);
    EXPECT_NE(r->assignment[leak.items[0]], r->assignment[leak.items[1]]);
  }
  spec.dedup = true;
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
