#include "remote/opener.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <string>

#include "remote/publisher.h"
#include "remote/transfer_util.h"
#include "testutil/test_util.h"

namespace ferry::remote {
namespace {

std::vector<GetItem> Items(const test::ScratchDir& dir, size_t n) {
  std::vector<GetItem> items;
  for (size_t i = 0; i < n; ++i) {
    GetItem item;
    item.key = "k/" + std::to_string(i);
    item.dest = dir.Join("out/" + item.key);
    items.push_back(item);
  }
  return items;
}

// More items than are opened ahead: each comes out once, in item order,
// opened (its part file created and held).
TEST(OpenerTest, HandsOutEveryItemInOrder) {
  Env* env = Env::Default();
  test::ScratchDir dir;
  const size_t n = Opener::kAhead * 3 + 5;
  Opener opener(Items(dir, n), 1 << 20, "http://h/p", env);
  EXPECT_EQ(opener.size(), n);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(opener.More());
    auto [dl, s] = opener.Next();
    ASSERT_OK(s);
    EXPECT_EQ(dl->item().key, "k/" + std::to_string(i));
    EXPECT_TRUE(env->FileExists(dl->item().dest + ".ferry-part"));
  }
  EXPECT_FALSE(opener.More());
}

// An item that cannot be opened comes out with its error; the others open.
TEST(OpenerTest, AFailedOpenIsThatItemsAlone) {
  Env* env = Env::Default();
  test::ScratchDir dir;
  std::vector<GetItem> items = Items(dir, 3);
  test::WriteFile(env, dir.Join("file"), "x");
  items[1].dest = dir.Join("file/below");  // a file where a folder must be
  Opener opener(std::move(items), 1 << 20, "http://h/p", env);
  EXPECT_OK(opener.Next().second);
  auto [dl, s] = opener.Next();
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(dl->item().key, "k/1");
  EXPECT_OK(opener.Next().second);
}

// Opened ahead and never taken (a run that ends early): nothing is left.
TEST(OpenerTest, UntakenDownloadsLeaveNoPartFiles) {
  Env* env = Env::Default();
  test::ScratchDir dir;
  {
    Opener opener(Items(dir, 10), 1 << 20, "http://h/p", env);
    auto first = opener.Next();
    ASSERT_OK(first.second);
    first.first.reset();
  }
  auto left = ListFilesRecursive(env, dir.Join("out"));
  ASSERT_TRUE(left.ok());
  EXPECT_TRUE(left->empty()) << left->front();
}

// A download without a journal starts from an empty part file: a stale one
// is emptied, an empty one is left alone (on ext4 a truncate to 0 makes the
// file's close flush it: ~0.2 s at the end of a 1 GiB --no-fsync get). The
// untouched file keeps its old mtime; a truncate would set it to now.
TEST(OpenerTest, AnEmptyPartFileIsNotTruncatedAgain) {
  Env* env = Env::Default();
  test::ScratchDir dir;
  std::vector<GetItem> items = Items(dir, 2);
  ASSERT_OK(env->CreateDirs(dir.Join("out/k")));
  const std::string empty = items[0].dest + ".ferry-part";
  const std::string stale = items[1].dest + ".ferry-part";
  test::WriteFile(env, empty, "");
  test::WriteFile(env, stale, "stale bytes");
  const struct timeval old[2] = {{1000000000, 0}, {1000000000, 0}};
  ASSERT_EQ(::utimes(empty.c_str(), old), 0);
  Opener opener(std::move(items), 1 << 20, "http://h/p", env);
  auto first = opener.Next();
  auto second = opener.Next();
  ASSERT_OK(first.second);
  ASSERT_OK(second.second);
  struct stat st;
  ASSERT_EQ(::stat(empty.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0);
  EXPECT_EQ(st.st_mtime, 1000000000);
  ASSERT_EQ(::stat(stale.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0);
}

// The engine's share of descriptors follows the process's limit: at the
// usual 1024 the defaults; at a low limit fewer connections, fewer opened
// ahead, smaller syncfs batches, their sum within the limit; never zero.
TEST(DescriptorPlanTest, FollowsTheLimitAndNeverReachesIt) {
  DescriptorPlan usual = PlanDescriptors(1024, 16);
  EXPECT_EQ(usual.connections, 16);
  EXPECT_EQ(usual.ahead, Opener::kAhead);
  EXPECT_EQ(usual.publish, size_t{248});
  EXPECT_EQ(PlanDescriptors(uint64_t{1} << 20, 16).publish,
            Publisher::kMaxOpen);
  for (uint64_t limit : {8, 20, 32, 64, 128, 256}) {
    DescriptorPlan p = PlanDescriptors(limit, 16);
    SCOPED_TRACE(limit);
    EXPECT_GE(p.connections, 1);
    EXPECT_GE(p.ahead, size_t{1});
    EXPECT_GE(p.publish, size_t{1});
    // sockets (2 a connection), in-progress objects (2 + 2 a connection,
    // each a part file and a journal), opened ahead, waiting for syncfs
    uint64_t held = 2 * uint64_t(p.connections) +
                    2 * (2 * uint64_t(p.connections) + 2) + p.ahead + p.publish;
    if (limit >= 64) EXPECT_LT(held, limit - 16);
  }
  EXPECT_EQ(PlanDescriptors(64, 16).connections, 3);
  EXPECT_EQ(PlanDescriptors(1024, 4).connections, 4);  // never more than asked
}

// One connection per MiB of known bytes (ranges, else the listed or
// expected size), 2 at least, never more than asked; an unknown size or
// bytes past the cap (without overflowing) allow all of them.
TEST(ConnectionsForWorkTest, OnePerMiBOfKnownBytes) {
  auto sized = [](uint64_t n) {
    GetItem item;
    item.have_expected_size = true;
    item.expected_size = n;
    return item;
  };
  EXPECT_EQ(ConnectionsForWork({}, 16), 2);
  EXPECT_EQ(ConnectionsForWork({sized(0)}, 16), 2);
  EXPECT_EQ(ConnectionsForWork({sized(1 << 20)}, 16), 2);
  EXPECT_EQ(ConnectionsForWork({sized((2 << 20) + 1)}, 16), 3);
  EXPECT_EQ(ConnectionsForWork({sized(1 << 20)}, 1), 1);
  EXPECT_EQ(ConnectionsForWork({sized(3 << 20), sized(1)}, 16), 4);
  EXPECT_EQ(ConnectionsForWork({sized(uint64_t{1} << 40)}, 16), 16);
  EXPECT_EQ(ConnectionsForWork({sized(5 << 20)}, 4), 4);
  EXPECT_EQ(ConnectionsForWork({sized(5 << 20)}, 0), 1);
  EXPECT_EQ(ConnectionsForWork({sized(~uint64_t{0}), sized(~uint64_t{0})}, 16),
            16);
  GetItem listed;
  listed.have_info = true;
  listed.info.size = 2 << 20;
  EXPECT_EQ(ConnectionsForWork({listed, listed}, 16), 4);
  GetItem ranges = sized(uint64_t{1} << 40);  // only its ranges count
  ranges.ranges = {ByteRange{0, 1000}, ByteRange{1 << 30, (2 << 20) + 1}};
  EXPECT_EQ(ConnectionsForWork({ranges}, 16), 3);
  GetItem unknown;
  EXPECT_EQ(ConnectionsForWork({sized(10), unknown}, 16), 16);
}

// Many small objects, each a round trip: one connection per 8 of them
// (10,000 objects of 150 bytes went over 2 connections).
TEST(ConnectionsForWorkTest, OnePerEightItemsWhenThatIsMore) {
  GetItem tiny;
  tiny.have_expected_size = true;
  tiny.expected_size = 150;
  EXPECT_EQ(ConnectionsForWork(std::vector<GetItem>(16, tiny), 16), 2);
  EXPECT_EQ(ConnectionsForWork(std::vector<GetItem>(17, tiny), 16), 3);
  EXPECT_EQ(ConnectionsForWork(std::vector<GetItem>(100, tiny), 16), 13);
  EXPECT_EQ(ConnectionsForWork(std::vector<GetItem>(10000, tiny), 16), 16);
  EXPECT_EQ(ConnectionsForWork(std::vector<GetItem>(10000, tiny), 4), 4);
  GetItem ranges = tiny;  // one item, however many ranges: one GET of them
  ranges.ranges = std::vector<ByteRange>(500, ByteRange{0, 10});
  EXPECT_EQ(ConnectionsForWork({ranges}, 16), 2);
}

}  // namespace
}  // namespace ferry::remote
