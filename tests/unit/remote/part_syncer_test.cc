#include "remote/part_syncer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "remote/journal.h"
#include "testutil/test_util.h"

namespace ferry::remote {
namespace {

constexpr uint64_t kPart = 1024;

// A journalled download of `parts` parts into dest, every byte written.
std::unique_ptr<Download> Written(Env* env, const std::string& dest,
                                  uint64_t parts) {
  GetItem item;
  item.key = "k";
  item.dest = dest;
  item.have_info = true;
  item.info.size = parts * kPart;
  item.info.etag = "\"e\"";
  auto dl = std::make_unique<Download>(item, kPart, "test://k", env);
  EXPECT_OK(dl->Open());
  EXPECT_TRUE(dl->journalled());
  for (uint64_t p = 0; p < parts; ++p)
    EXPECT_OK(dl->Write(p * kPart, std::string(kPart, char('a' + p))));
  return dl;
}

std::vector<bool> Journalled(Env* env, const std::string& dest) {
  auto bytes = ReadFileToString(env, dest + ".ferry-part.journal", 1 << 20);
  EXPECT_TRUE(bytes.ok());
  auto st = ParseJournal(bytes.ok() ? *bytes : "");
  EXPECT_TRUE(st.ok()) << st.status().ToString();
  return st.ok() ? st->done : std::vector<bool>();
}

// Parts handed over come back done, with the wake-up called, and only then
// are they in the journal; parts never handed over are not.
TEST(PartSyncerTest, SyncedPartsComeBackDoneAndJournalled) {
  Env* env = Env::Default();
  test::ScratchDir dir;
  auto dl = Written(env, dir.Join("obj"), 6);
  std::atomic<int> wakes{0};
  PartSyncer syncer([&] { ++wakes; });
  int tag = 0;
  for (uint64_t p : {0, 2, 3, 5}) syncer.Add(&tag, dl.get(), p);
  EXPECT_EQ(syncer.pending(), 4u);
  std::vector<PartSyncer::Done> done;
  for (int i = 0; i < 500 && done.size() < 4; ++i) {
    for (auto& d : syncer.TakeDone()) done.push_back(d);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(done.size(), 4u);
  EXPECT_EQ(syncer.pending(), 0u);
  EXPECT_GE(wakes.load(), 1);
  for (const auto& d : done) {
    EXPECT_EQ(d.tag, &tag);
    EXPECT_EQ(d.dl, dl.get());
    EXPECT_OK(d.status);
    dl->MarkDone(d.part);
  }
  EXPECT_EQ(Journalled(env, dir.Join("obj")),
            (std::vector<bool>{true, false, true, true, false, true}));
  EXPECT_FALSE(dl->AllDone());
}

// Forget: nothing of the download comes back afterwards (it may be gone).
TEST(PartSyncerTest, ForgottenDownloadsDoNotComeBack) {
  Env* env = Env::Default();
  test::ScratchDir dir;
  auto a = Written(env, dir.Join("a"), 4);
  auto b = Written(env, dir.Join("b"), 4);
  PartSyncer syncer(nullptr);
  int ta = 0, tb = 0;
  for (uint64_t p = 0; p < 4; ++p) {
    syncer.Add(&ta, a.get(), p);
    syncer.Add(&tb, b.get(), p);
  }
  syncer.Forget(a.get());
  a.reset();
  syncer.Close();
  auto done = syncer.TakeDone();
  EXPECT_EQ(syncer.pending(), 0u);
  for (const auto& d : done) EXPECT_EQ(d.tag, &tb);
  EXPECT_EQ(done.size(), 4u);
}

}  // namespace
}  // namespace ferry::remote
