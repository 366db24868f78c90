// GetObjects against a real nginx: parallel ranged downloads, small objects
// many at once, resume from a journal, the journal's and the hash's refusals,
// a changed object, a locked destination.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>

#include "ferry/hash.h"
#include "ferry/transfer.h"
#include "remote/http_backend.h"
#include "remote/journal.h"
#include "remote/part_file.h"
#include "testutil/test_servers.h"
#include "testutil/test_util.h"

namespace ferry {
namespace {

class TransferGetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = test::TestServers::FromEnv();
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    servers_ = *s;
    // Each test its own folder on the server.
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::string("get-") + info->name();
    auto b = remote::NewHttpBackend(servers_.http_url + "/" + dir_, remote_);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    backend_ = std::move(*b);
    opt_.part_size = 64 << 10;
    opt_.connections = 8;
    opt_.max_retries = 2;
  }

  void Serve(const std::string& key, const std::string& data) {
    test::WriteFile(env_, servers_.http_root + "/" + dir_ + "/" + key, data);
  }

  TransferReport Get(std::vector<GetItem> items) {
    auto r = GetObjects(backend_.get(), std::move(items), opt_, env_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : TransferReport{};
  }

  GetItem Item(const std::string& key, const std::string& dest) {
    GetItem i;
    i.key = key;
    i.dest = dest;
    return i;
  }

  Env* env_ = Env::Default();
  test::TestServers servers_;
  std::string dir_;
  RemoteOptions remote_;
  std::unique_ptr<remote::HttpBackend> backend_;
  TransferOptions opt_;
  test::ScratchDir tmp_;
};

TEST_F(TransferGetTest, MultiPartObjectArrivesByteIdenticalInParallelParts) {
  std::string data = test::RandomBytes((1 << 20) + 12345, 1);
  Serve("big.bin", data);
  TransferReport r = Get({Item("big.bin", tmp_.Join("out/big.bin"))});
  ASSERT_EQ(r.files_failed, 0u) << r.failures[0].second.ToString();
  EXPECT_EQ(r.files_done, 1u);
  EXPECT_EQ(r.bytes, data.size());
  EXPECT_EQ(r.requests, 17u);  // ceil(size / 64 KiB) ranged GETs
  EXPECT_EQ(test::ReadFile(env_, tmp_.Join("out/big.bin")), data);
  EXPECT_FALSE(env_->FileExists(tmp_.Join("out/big.bin.ferry-part")));
  EXPECT_FALSE(env_->FileExists(tmp_.Join("out/big.bin.ferry-part.journal")));
}

TEST_F(TransferGetTest, ManySmallObjectsIncludingAnEmptyOne) {
  std::vector<GetItem> items;
  std::vector<std::string> datas;
  for (int i = 0; i < 120; ++i) {
    std::string key = "small/" + std::to_string(i) + ".bin";
    datas.push_back(test::RandomBytes(i == 0 ? 0 : size_t(i * 997 % 70000), i));
    Serve(key, datas.back());
    items.push_back(Item(key, tmp_.Join(key)));
  }
  TransferReport r = Get(items);
  ASSERT_EQ(r.files_failed, 0u) << r.failures[0].second.ToString();
  EXPECT_EQ(r.files_done, 120u);
  for (int i = 0; i < 120; ++i) {
    EXPECT_EQ(test::ReadFile(env_, items[i].dest), datas[i]) << i;
  }
}

// A journal saying parts 0, 2 and the last are done: only the others are
// fetched, and the bytes of the journalled parts are not fetched again.
TEST_F(TransferGetTest, ResumeFetchesOnlyThePartsTheJournalLacks) {
  std::string data = test::RandomBytes(10 * (64 << 10) + 100, 2);
  Serve("r.bin", data);
  auto info = backend_->Stat("r.bin");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  std::string dest = tmp_.Join("r.bin");
  remote::JournalHeader h;
  h.size = data.size();
  h.part_size = opt_.part_size;
  h.etag = info->etag;
  std::string head = remote::EncodeJournalHeader(h);
  std::string part(data.size(), 'x');  // unjournalled parts hold junk
  std::string journal = head;
  for (uint64_t p : {0, 2, 10}) {
    uint64_t off = p * h.part_size, len = h.PartLength(p);
    part.replace(off, len, data.substr(off, len));
    journal += remote::EncodeJournalRecord(head, p, len);
  }
  test::WriteFile(env_, dest + ".ferry-part", part);
  test::WriteFile(env_, dest + ".ferry-part.journal", journal);

  TransferReport r = Get({Item("r.bin", dest)});
  ASSERT_EQ(r.files_failed, 0u) << r.failures[0].second.ToString();
  EXPECT_EQ(r.requests, 8u);
  EXPECT_EQ(r.bytes_resumed, 2 * (64u << 10) + 100);
  EXPECT_EQ(r.bytes, data.size() - r.bytes_resumed);
  EXPECT_EQ(test::ReadFile(env_, dest), data);
}

TEST_F(TransferGetTest, DamagedJournalIsIgnoredAndTheObjectFetchedWhole) {
  std::string data = test::RandomBytes(4 * (64 << 10), 3);
  Serve("d.bin", data);
  auto info = backend_->Stat("d.bin");
  ASSERT_TRUE(info.ok());
  std::string dest = tmp_.Join("d.bin");
  remote::JournalHeader h;
  h.size = data.size();
  h.part_size = opt_.part_size;
  h.etag = info->etag;
  std::string head = remote::EncodeJournalHeader(h);
  std::string journal = head + remote::EncodeJournalRecord(head, 1, 64 << 10);
  journal[journal.size() - 3] ^= 4;  // a flipped bit in the record
  test::WriteFile(env_, dest + ".ferry-part", std::string(data.size(), 'x'));
  test::WriteFile(env_, dest + ".ferry-part.journal", journal);

  TransferReport r = Get({Item("d.bin", dest)});
  ASSERT_EQ(r.files_failed, 0u) << r.failures[0].second.ToString();
  EXPECT_EQ(r.bytes_resumed, 0u);
  EXPECT_EQ(r.bytes, data.size());
  EXPECT_EQ(test::ReadFile(env_, dest), data);
}

// The object changed since the journal was written: its parts are not
// mixed in, the download starts over.
TEST_F(TransferGetTest, ObjectChangedSinceTheJournalStartsOver) {
  std::string data = test::RandomBytes(3 * (64 << 10) + 1, 4);
  Serve("c.bin", data);
  std::string dest = tmp_.Join("c.bin");
  remote::JournalHeader h;
  h.size = data.size();
  h.part_size = opt_.part_size;
  h.etag = "\"an-older-version\"";
  std::string head = remote::EncodeJournalHeader(h);
  test::WriteFile(env_, dest + ".ferry-part", std::string(data.size(), 'x'));
  test::WriteFile(env_, dest + ".ferry-part.journal",
                  head + remote::EncodeJournalRecord(head, 0, 64 << 10) +
                      remote::EncodeJournalRecord(head, 1, 64 << 10));
  TransferReport r = Get({Item("c.bin", dest)});
  ASSERT_EQ(r.files_failed, 0u) << r.failures[0].second.ToString();
  EXPECT_EQ(test::ReadFile(env_, dest), data);
  EXPECT_EQ(r.retries["changed"], 1u);
}

TEST_F(TransferGetTest, ExpectedHashMismatchRemovesTheDownload) {
  std::string data = test::RandomBytes(200000, 5);
  Serve("h.bin", data);
  GetItem good = Item("h.bin", tmp_.Join("good.bin"));
  good.have_expected = true;
  good.expected = HashBytes(data);
  GetItem bad = Item("h.bin", tmp_.Join("bad.bin"));
  bad.have_expected = true;
  bad.expected = HashBytes("something else");
  TransferReport r = Get({good, bad});
  EXPECT_EQ(r.files_done, 1u);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_TRUE(r.failures[0].second.IsCorruption())
      << r.failures[0].second.ToString();
  EXPECT_EQ(test::ReadFile(env_, good.dest), data);
  EXPECT_FALSE(env_->FileExists(bad.dest));
  EXPECT_FALSE(env_->FileExists(bad.dest + ".ferry-part"));
  EXPECT_FALSE(env_->FileExists(bad.dest + ".ferry-part.journal"));
}

TEST_F(TransferGetTest, MissingObjectFailsByNameAndLeavesNothing) {
  Serve("there.bin", "x");
  TransferReport r = Get({Item("not-there.bin", tmp_.Join("n.bin")),
                          Item("there.bin", tmp_.Join("t.bin"))});
  EXPECT_EQ(r.files_done, 1u);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].first, "not-there.bin");
  EXPECT_TRUE(r.failures[0].second.IsNotFound())
      << r.failures[0].second.ToString();
  EXPECT_FALSE(env_->FileExists(tmp_.Join("n.bin")));
  EXPECT_FALSE(env_->FileExists(tmp_.Join("n.bin.ferry-part")));
}

TEST_F(TransferGetTest, DestinationHeldByAnotherRunFailsClearly) {
  Serve("l.bin", "abc");
  std::string dest = tmp_.Join("l.bin");
  auto held = remote::PartFile::Open(dest + ".ferry-part", false);
  ASSERT_TRUE(held.ok());
  TransferReport r = Get({Item("l.bin", dest)});
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_NE(r.failures[0].second.ToString().find("another ferry run"),
            std::string::npos)
      << r.failures[0].second.ToString();
  EXPECT_FALSE(env_->FileExists(dest));
}

TEST_F(TransferGetTest, BandwidthLimitedRunStillCompletes) {
  std::string data = test::RandomBytes(300000, 6);
  Serve("bw.bin", data);
  opt_.bwlimit = 4 << 20;
  TransferReport r = Get({Item("bw.bin", tmp_.Join("bw.bin"))});
  ASSERT_EQ(r.files_failed, 0u) << r.failures[0].second.ToString();
  EXPECT_EQ(test::ReadFile(env_, tmp_.Join("bw.bin")), data);
}

}  // namespace
}  // namespace ferry

namespace ferry {
namespace {

// The HTTP engine calls on_installed once per item that got its final name
// (many small ones, published in batches on the publisher's thread, and one
// of many parts), on the calling thread with the file in place; never for
// a missing object nor for one whose bytes are not the expected ones.
TEST_F(TransferGetTest,
       OnInstalledIsCalledOncePerInstalledItemNeverForAFailed) {
  std::vector<GetItem> items;
  for (int i = 0; i < 40; ++i) {
    std::string key = "s/" + std::to_string(i);
    std::string data = test::RandomBytes(1000 + i, 100 + i);
    Serve(key, data);
    items.push_back(Item(key, tmp_.Join(key)));
    items.back().have_expected = true;
    items.back().expected = HashBytes(data);
  }
  std::string big = test::RandomBytes((1 << 20) + 7, 7);
  Serve("big", big);
  items.push_back(Item("big", tmp_.Join("big")));
  Serve("bad", "not the expected bytes");
  items.push_back(Item("bad", tmp_.Join("bad")));
  items.back().have_expected = true;
  items.back().expected = HashBytes("other bytes");
  items.push_back(Item("missing", tmp_.Join("missing")));
  std::map<std::string, int> calls;
  bool all_there = true, all_on_caller = true;
  const auto caller = std::this_thread::get_id();
  opt_.on_installed = [&](const GetItem& item) {
    ++calls[item.key];
    all_there = all_there && env_->FileExists(item.dest);
    all_on_caller = all_on_caller && std::this_thread::get_id() == caller;
  };
  TransferReport r = Get(items);
  EXPECT_EQ(r.files_done, 41u);
  EXPECT_EQ(r.files_failed, 2u);
  std::map<std::string, int> want{{"big", 1}};
  for (int i = 0; i < 40; ++i) want["s/" + std::to_string(i)] = 1;
  EXPECT_EQ(calls, want);
  EXPECT_TRUE(all_there);
  EXPECT_TRUE(all_on_caller);
}

}  // namespace
}  // namespace ferry
