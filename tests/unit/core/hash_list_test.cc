#include "ferry/hash_list.h"

#include <gtest/gtest.h>

#include "testutil/test_util.h"

namespace ferry {
namespace {

TEST(HashListTest, FormatMatchesXxhsumLine) {
  EXPECT_EQ(FormatHashLine(HashBytes("hello"), "dir/a b.png"),
            "b5e9c1ad071b3e7fc779cfaa5e523818  dir/a b.png\n");
  // xxhsum 0.8.1 leaves backslashes alone.
  EXPECT_EQ(FormatHashLine(HashBytes("hello"), "we\\ird"),
            "b5e9c1ad071b3e7fc779cfaa5e523818  we\\ird\n");
}

TEST(HashListTest, NewlineInNameIsEscapedAndParsesBack) {
  std::string line = FormatHashLine(HashBytes("a"), "two\nlines\\x");
  EXPECT_EQ(line.front(), '\\');
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1);
  auto parsed = ParseHashLine(line);
  ASSERT_OK(parsed.status());
  EXPECT_EQ(parsed->path, "two\nlines\\x");
  EXPECT_EQ(parsed->hash, HashBytes("a"));
}

TEST(HashListTest, ParsesGnuBinaryAndBsdForms) {
  const std::string hex = "b5e9c1ad071b3e7fc779cfaa5e523818";
  for (const std::string& line :
       {hex + "  p/q.jpg", hex + " *p/q.jpg", "XXH128 (p/q.jpg) = " + hex,
        hex + "  p/q.jpg\r\n"}) {
    auto parsed = ParseHashLine(line);
    ASSERT_TRUE(parsed.ok()) << line << ": " << parsed.status().ToString();
    EXPECT_EQ(parsed->path, "p/q.jpg") << line;
    EXPECT_EQ(parsed->hash, HashBytes("hello"));
  }
}

TEST(HashListTest, RejectsMalformedLines) {
  for (std::string line : {"", "hello", "b5e9c1ad071b3e7fc779cfaa5e523818",
                           "b5e9c1ad071b3e7fc779cfaa5e523818  ",
                           "b5e9c1ad071b3e7fc779cfaa5e5238  short",
                           "XXH128 (x = b5e9c1ad071b3e7fc779cfaa5e523818",
                           "XXH64 (x) = b5e9c1ad071b3e7f"}) {
    EXPECT_FALSE(ParseHashLine(line).ok()) << line;
  }
}

class HashPathsTest : public ::testing::TestWithParam<int> {};

TEST_P(HashPathsTest, WalksSortedAndReportsFailuresInOrder) {
  auto env = NewMemEnv();
  test::WriteFile(env.get(), "d/b.txt", "b");
  test::WriteFile(env.get(), "d/a/z", "z");
  test::WriteFile(env.get(), "d/a.txt", "a");
  test::WriteFile(env.get(), "f", "f");
  for (int i = 0; i < 50; ++i) {
    test::WriteFile(env.get(), "many/" + std::to_string(1000 + i),
                    std::to_string(i));
  }
  HashOptions opt;
  opt.env = env.get();
  opt.jobs = GetParam();
  std::vector<std::string> seen;
  auto summary =
      HashPaths({"f", "missing", "d", "many"}, opt, [&](const HashEntry& e) {
        seen.push_back(e.path);
        if (e.path == "missing") {
          EXPECT_TRUE(e.status.IsNotFound());
        } else {
          EXPECT_OK(e.status);
          EXPECT_EQ(e.hash, HashBytes(test::ReadFile(env.get(), e.path)));
        }
      });
  ASSERT_OK(summary.status());
  ASSERT_EQ(seen.size(), 55u);
  EXPECT_EQ(seen[0], "f");
  EXPECT_EQ(seen[1], "missing");
  EXPECT_EQ(seen[2], "d/a.txt");
  EXPECT_EQ(seen[3], "d/a/z");
  EXPECT_EQ(seen[4], "d/b.txt");
  EXPECT_EQ(seen[5], "many/1000");
  EXPECT_EQ(seen[54], "many/1049");
  EXPECT_EQ(summary->files, 54u);
  EXPECT_EQ(summary->failed, 1u);
}

INSTANTIATE_TEST_SUITE_P(Jobs, HashPathsTest, ::testing::Values(1, 2, 4));

TEST(CheckHashListTest, FindsMismatchesMissingFilesAndBadLines) {
  auto env = NewMemEnv();
  test::WriteFile(env.get(), "good", "good");
  test::WriteFile(env.get(), "changed", "after");
  std::string list = FormatHashLine(HashBytes("good"), "good") +
                     FormatHashLine(HashBytes("before"), "changed") +
                     "not a hash line\n\n" +
                     FormatHashLine(HashBytes("x"), "gone");
  test::WriteFile(env.get(), "list", list);
  HashOptions opt;
  opt.env = env.get();
  opt.jobs = 2;
  std::vector<std::pair<std::string, CheckEntry::Outcome>> seen;
  std::vector<uint64_t> bad;
  auto summary = CheckHashList(
      "list", opt,
      [&](const CheckEntry& e) { seen.emplace_back(e.path, e.outcome); },
      [&](uint64_t n, std::string_view) { bad.push_back(n); });
  ASSERT_OK(summary.status());
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0],
            std::make_pair(std::string("good"), CheckEntry::Outcome::kOk));
  EXPECT_EQ(seen[1], std::make_pair(std::string("changed"),
                                    CheckEntry::Outcome::kMismatch));
  EXPECT_EQ(seen[2],
            std::make_pair(std::string("gone"), CheckEntry::Outcome::kMissing));
  EXPECT_EQ(bad, std::vector<uint64_t>{3});
  EXPECT_EQ(summary->ok, 1u);
  EXPECT_EQ(summary->mismatched, 1u);
  EXPECT_EQ(summary->missing, 1u);
  EXPECT_FALSE(summary->clean());
}

TEST(CheckHashListTest, MissingListIsAnError) {
  auto env = NewMemEnv();
  HashOptions opt;
  opt.env = env.get();
  auto s = CheckHashList(
      "nolist", opt, [](const CheckEntry&) {}, nullptr);
  EXPECT_TRUE(s.status().IsNotFound());
}

}  // namespace
}  // namespace ferry
