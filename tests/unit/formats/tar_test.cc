#include "formats/webdataset/tar.h"

#include <gtest/gtest.h>

#include "testutil/test_util.h"

namespace ferry::wds {
namespace {

TEST(TarTest, EntriesRoundTripOnBlockBoundaries) {
  std::string a;
  ASSERT_OK(AppendEntry("k1.cls", "3", &a));
  ASSERT_OK(AppendEntry("k1.jpg", std::string(1000, 'j'), &a));
  ASSERT_OK(AppendEntry("dir/k2.json", std::string(512, '{'), &a));
  AppendEnd(&a);
  EXPECT_EQ(a.size() % 512, 0u);
  auto e = ListEntries(a);
  ASSERT_OK(e.status());
  ASSERT_EQ(e->size(), 3u);
  EXPECT_EQ((*e)[1].name, "k1.jpg");
  EXPECT_EQ((*e)[1].data_offset, 1536u);
  EXPECT_EQ((*e)[1].size, 1000u);
  EXPECT_EQ(a.substr((*e)[0].data_offset, 1), "3");
  EXPECT_EQ(std::string(a.data() + 257, 5), "ustar");
}

// An entry of a whole number of blocks gets no padding: the next header
// follows its data at once (a stray zero block there would read as the end
// of the archive).
TEST(TarTest, BlockSizedEntryInTheMiddleIsNotPadded) {
  std::string a;
  ASSERT_OK(AppendEntry("k1.jpg", std::string(1024, 'j'), &a));
  ASSERT_OK(AppendEntry("k1.cls", "7", &a));
  AppendEnd(&a);
  EXPECT_EQ(a.size(), 512u + 1024 + 512 + 512 + 1024);
  EXPECT_EQ(a.substr(1536, 6), "k1.cls");  // the second header
  auto e = ListEntries(a);
  ASSERT_OK(e.status());
  ASSERT_EQ(e->size(), 2u);
  EXPECT_EQ((*e)[1].name, "k1.cls");
  EXPECT_EQ((*e)[1].data_offset, 2048u);
  EXPECT_EQ(a.substr((*e)[1].data_offset, 1), "7");
}

TEST(TarTest, DamageIsFoundAndPlaced) {
  std::string a;
  ASSERT_OK(AppendEntry("k1.jpg", std::string(700, 'j'), &a));
  ASSERT_OK(AppendEntry("k2.jpg", std::string(10, 'j'), &a));
  AppendEnd(&a);
  std::string bad = a;
  bad[1536 + 3] ^= 1;  // the second header's name
  EXPECT_NE(ListEntries(bad).status().ToString().find(
                "tar header at offset 1536: header checksum mismatch"),
            std::string::npos);
  EXPECT_NE(ListEntries(a.substr(0, a.size() - 512))
                .status()
                .ToString()
                .find("one zero block"),
            std::string::npos);
  EXPECT_FALSE(ListEntries(a.substr(0, 1024)).ok());
  EXPECT_FALSE(ListEntries(a.substr(0, 100)).ok());
  EXPECT_FALSE(AppendEntry(std::string(101, 'n'), "x", &a).ok());
}

TEST(TarTest, KeysEndAtTheFirstDotOfTheBasename) {
  std::string key, ext;
  SplitName("a.b/train_000000001.seg.png", &key, &ext);
  EXPECT_EQ(key, "a.b/train_000000001");
  EXPECT_EQ(ext, "seg.png");
  SplitName("noext", &key, &ext);
  EXPECT_EQ(key, "noext");
  EXPECT_EQ(ext, "");
}

}  // namespace
}  // namespace ferry::wds
