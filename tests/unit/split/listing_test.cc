// Listings (--list): CSV read as Python's csv module reads it, JSONL through
// simdjson with numbers kept as text, and the items a listing may not hold.
#include <gtest/gtest.h>

#include "ferry/split.h"
#include "testutil/test_util.h"

namespace ferry {
namespace {

Result<std::vector<SplitItem>> Read(Env* env, const std::string& name,
                                    const std::string& text) {
  test::WriteFile(env, name, text);
  return ItemsFromList(env, name);
}

std::vector<std::string> Paths(const std::vector<SplitItem>& items) {
  std::vector<std::string> out;
  for (const auto& it : items) out.push_back(it.path);
  return out;
}

TEST(ListingCsvTest, StrayQuoteInAnUnquotedFieldIsACharacter) {
  auto env = NewMemEnv();
  auto r = Read(env.get(), "l.csv",
                "path,label\n12\"_monitor.jpg,tv\nb.jpg,x\nc.jpg,y\n");
  ASSERT_OK(r.status());
  EXPECT_EQ(Paths(*r),
            (std::vector<std::string>{"12\"_monitor.jpg", "b.jpg", "c.jpg"}));
  EXPECT_EQ((*r)[0].label, "tv");
}

TEST(ListingCsvTest, TextAfterAClosingQuoteIsKeptAsPythonDoes) {
  auto env = NewMemEnv();
  auto r =
      Read(env.get(), "l.csv", "path,label\n\"ab\"c,d\n\"x,\"\"y\",\"z\nw\"\n");
  ASSERT_OK(r.status());
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].path, "abc");
  EXPECT_EQ((*r)[0].label, "d");
  EXPECT_EQ((*r)[1].path, "x,\"y");
  EXPECT_EQ((*r)[1].label, "z\nw");  // a quoted line break is data
}

TEST(ListingCsvTest, ByteOrderMarkAndSpacedHeaderNames) {
  auto env = NewMemEnv();
  auto r = Read(env.get(), "l.csv", "\xEF\xBB\xBFpath, label\r\na.jpg,cat\r\n");
  ASSERT_OK(r.status());
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].path, "a.jpg");
  EXPECT_EQ((*r)[0].label, "cat");
  auto j =
      Read(env.get(), "l.jsonl", "\xEF\xBB\xBF{\"path\":\"a\",\"label\":1}\n");
  ASSERT_OK(j.status());
  EXPECT_EQ((*j)[0].label, "1");
}

TEST(ListingCsvTest, UnclosedQuoteAtTheEndIsAnErrorWithItsLine) {
  auto env = NewMemEnv();
  auto r = Read(env.get(), "l.csv", "path\na\n\"b\nc\nd\n");
  EXPECT_TRUE(r.status().IsInvalidArgument()) << r.status().ToString();
  EXPECT_NE(r.status().ToString().find("line 3"), std::string::npos)
      << r.status().ToString();
}

TEST(ListingJsonlTest, NumbersKeepTheirText) {
  auto env = NewMemEnv();
  auto r =
      Read(env.get(), "l.jsonl",
           "{\"path\":\"a\",\"group\":1600000000000000001,\"label\":0.1}\n"
           "{\"path\":\"b\",\"group\":1600000000000000002,\"label\":1e20}\n"
           "{\"path\":\"c\",\"group\":-0,\"label\":1E+400}\n");
  ASSERT_OK(r.status());
  EXPECT_EQ((*r)[0].group, "1600000000000000001");
  EXPECT_EQ((*r)[1].group, "1600000000000000002");
  EXPECT_EQ((*r)[0].label, "0.1");
  EXPECT_EQ((*r)[1].label, "1e20");
  EXPECT_EQ((*r)[2].label, "1E+400");
}

TEST(ListingJsonlTest, MalformedLinesAreUsageErrorsNamingTheLine) {
  auto env = NewMemEnv();
  for (const char* bad :
       {"{\"path\":\"a\"}\n{\"path\": [1]}\n", "{\"path\":\"a\"}\n{\"path\":\n",
        "{\"path\":\"a\"}\n{\"path\":\"\\ud800\\u0041\"}\n",
        "{\"path\":\"a\"}\n{\"path\":\"\xff\"}\n",
        "{\"path\":\"a\"}\n{\"path\":\"b\",\"path\":\"c\"}\n",
        "{\"path\":\"a\"}\n{\"path\":\"b\",\"label\":01}\n"}) {
    auto r = Read(env.get(), "bad.jsonl", bad);
    EXPECT_TRUE(r.status().IsInvalidArgument()) << bad << r.status().ToString();
    EXPECT_NE(r.status().ToString().find("bad.jsonl:2"), std::string::npos)
        << r.status().ToString();
  }
}

TEST(ListingJsonlTest, SurrogateEscapesGiveBackNonUtf8Bytes) {
  auto env = NewMemEnv();
  auto r = Read(env.get(), "l.jsonl", "{\"path\":\"\\udcff\\udcfe.png\"}\n");
  ASSERT_OK(r.status());
  EXPECT_EQ((*r)[0].path, "\xff\xfe.png");
}

TEST(ListingTest, DuplicateAndMultiLinePathsRefuseTheListing) {
  auto env = NewMemEnv();
  auto dup = Read(env.get(), "d.csv", "path,label\na,x\nb,x\na,y\n");
  EXPECT_TRUE(dup.status().IsInvalidArgument());
  EXPECT_NE(dup.status().ToString().find("d.csv:4: path \"a\" is listed twice "
                                         "(also on line 2)"),
            std::string::npos)
      << dup.status().ToString();
  auto nl = Read(env.get(), "n.csv", "path\n\"a\nb\"\nc\n\"d\re\"\n");
  EXPECT_TRUE(nl.status().IsInvalidArgument());
  EXPECT_NE(nl.status().ToString().find("n.csv:2: a path with a line break"),
            std::string::npos)
      << nl.status().ToString();
  EXPECT_NE(nl.status().ToString().find("n.csv:5:"), std::string::npos)
      << nl.status().ToString();
  auto js = Read(env.get(), "n.jsonl", "{\"path\":\"a\\nb\"}\n");
  EXPECT_TRUE(js.status().IsInvalidArgument());
  auto empty = Read(env.get(), "e.csv", "path,label\n,x\n");
  EXPECT_TRUE(empty.status().IsInvalidArgument());
}

TEST(ListingTest, EachPathIsReadInItsOneSpelling) {
  // Already in it (kept as they are), or not: empty and '.' parts go, a
  // leading '/' stays; names that merely start with dots are names.
  auto env = NewMemEnv();
  auto r = Read(env.get(), "s.csv",
                "path\n./a.png\nb//c.png\nd/./e.png\n/abs/f.png\ng/\n"
                ".hidden/h.png\ni/..j.png\nk/.l\n..m\n/\nn/o.png\n//p\n");
  ASSERT_OK(r.status());
  EXPECT_EQ(Paths(*r), (std::vector<std::string>{
                           "a.png", "b/c.png", "d/e.png", "/abs/f.png", "g",
                           ".hidden/h.png", "i/..j.png", "k/.l", "..m", "/",
                           "n/o.png", "/p"}));
  for (const char* bad : {"x/../y", "..", "../z", "w/.."}) {
    auto up = Read(env.get(), "u.csv", std::string("path\n") + bad + "\n");
    EXPECT_NE(up.status().ToString().find("'..' part"), std::string::npos)
        << bad << ": " << up.status().ToString();
  }
}

TEST(ListingTest, LongListingsWithGrowingRecordsAreReadWhole) {
  // Room for the items is made from the bytes the first records took: here
  // later records are much longer, so the estimate falls short and grows.
  auto env = NewMemEnv();
  std::string csv = "path,label\n", jsonl;
  std::vector<std::string> want;
  for (int i = 0; i < 20000; ++i) {
    want.push_back(std::string(i < 5000 ? 1 : 200, 'p') + std::to_string(i));
    csv += want.back() + ",c\n";
    jsonl += "{\"path\":\"" + want.back() + "\"}\n";
  }
  for (const auto& [name, text] :
       {std::pair{"l.csv", csv}, {"l.jsonl", jsonl}}) {
    auto r = Read(env.get(), name, text);
    ASSERT_OK(r.status());
    EXPECT_EQ(Paths(*r), want) << name;
  }
}

// Opens fine, fails on the first read (a directory, /proc/self/mem).
class UnreadableEnv : public EnvWrapper {
 public:
  using EnvWrapper::EnvWrapper;
  Result<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& path) override {
    struct Failing : SequentialFile {
      std::string path;
      Status Read(size_t, std::string_view*, char*) override {
        return Status::IOError(path, "Is a directory");
      }
      Status Skip(uint64_t) override { return Status::OK(); }
    };
    auto f = std::make_unique<Failing>();
    f->path = path;
    return std::unique_ptr<SequentialFile>(std::move(f));
  }
};

TEST(ListingTest, AnUnreadableListingIsAnErrorNotAnEmptyOne) {
  auto env = NewMemEnv();
  UnreadableEnv bad(env.get());
  auto r = ItemsFromList(&bad, "l.csv");
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("l.csv"), std::string::npos)
      << r.status().ToString();
}

TEST(ListingTest, EmptyListingHasNoItems) {
  auto env = NewMemEnv();
  auto r = Read(env.get(), "e.csv", "\n\n");
  ASSERT_OK(r.status());
  EXPECT_TRUE(r->empty());
}

}  // namespace
}  // namespace ferry
