#include "remote/publisher.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "testutil/test_util.h"

namespace ferry::remote {
namespace {

// A one-part download of data into dest, written and verified (not synced).
std::unique_ptr<Download> Written(Env* env, const std::string& key,
                                  const std::string& dest,
                                  const std::string& data) {
  GetItem item;
  item.key = key;
  item.dest = dest;
  item.have_info = true;
  item.info.size = data.size();
  item.info.etag = "\"e\"";
  auto dl = std::make_unique<Download>(item, 1 << 20, "test://" + key, env);
  EXPECT_OK(dl->Open());
  EXPECT_FALSE(dl->journalled());
  EXPECT_OK(dl->Write(0, data));
  EXPECT_OK(dl->Verify(/*sync=*/false));
  return dl;
}

// More objects than may be held at once: Add blocks until the thread has
// published a batch, and every object ends under its name with its bytes.
TEST(PublisherTest, PublishesEveryObject) {
  Env* env = Env::Default();
  test::ScratchDir dir;
  const size_t max_open = 16;
  const size_t n = max_open * 2 + 17;
  Publisher p(env, /*durable=*/true, max_open);
  uint64_t done = 0;
  for (size_t i = 0; i < n; ++i) {
    std::string key = (i % 2 ? "a/" : "b/") + std::to_string(i);
    p.Add(Written(env, key, dir.Join(key), "bytes of " + key));
    done += p.TakeOutcome().done;
  }
  p.Close();
  Publisher::Outcome last = p.TakeOutcome();
  EXPECT_TRUE(last.failures.empty());
  EXPECT_EQ(done + last.done, n);
  for (size_t i = 0; i < n; ++i) {
    std::string key = (i % 2 ? "a/" : "b/") + std::to_string(i);
    EXPECT_EQ(test::ReadFile(env, dir.Join(key)), "bytes of " + key);
    EXPECT_FALSE(env->FileExists(dir.Join(key) + ".ferry-part")) << key;
  }
}

// An object that cannot take its name fails alone, named by its key; its
// part file goes (nothing in it can be trusted later without a journal).
TEST(PublisherTest, ReportsAFailedRenameByKey) {
  Env* env = Env::Default();
  test::ScratchDir dir;
  test::WriteFile(env, dir.Join("taken/inside"), "a folder in the way");
  Publisher p(env);
  p.Add(Written(env, "ok", dir.Join("ok"), "fine"));
  p.Add(Written(env, "taken", dir.Join("taken"), "no room"));
  p.Close();
  Publisher::Outcome out = p.TakeOutcome();
  EXPECT_EQ(out.done, 1u);
  ASSERT_EQ(out.failures.size(), 1u);
  EXPECT_EQ(out.failures[0].first, "taken");
  EXPECT_FALSE(out.failures[0].second.ok());
  EXPECT_EQ(test::ReadFile(env, dir.Join("ok")), "fine");
  EXPECT_FALSE(env->FileExists(dir.Join("taken.ferry-part")));
}

// Holds the first syncfs until released.
class GatedSyncEnv : public EnvWrapper {
 public:
  using EnvWrapper::EnvWrapper;
  Status SyncFileSystem(const std::string& path) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      entered_ = true;
      cv_.notify_all();
      cv_.wait(lock, [this] { return open_; });
    }
    return EnvWrapper::SyncFileSystem(path);
  }
  void WaitEntered() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return entered_; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool entered_ = false, open_ = false;
};

// While a batch's syncfs takes long, the objects added meanwhile and the
// batch together hold at most max_open part files (each a descriptor): Add
// waits for the batch to be published instead of opening more (a cold sync
// of 450 objects under RLIMIT_NOFILE 380 on a busy machine failed with
// EMFILE when 256 could wait beside a batch of 256).
TEST(PublisherTest, HoldsAtMostMaxOpenObjectsWhileASyncTakesLong) {
  GatedSyncEnv env(Env::Default());
  test::ScratchDir dir;
  const size_t max_open = 4, n = 3 * max_open;
  Publisher p(&env, /*durable=*/true, max_open);
  std::mutex mu;
  std::condition_variable cv;
  size_t added = 0;
  std::thread adder([&] {
    for (size_t i = 0; i < n; ++i) {
      std::string key = "k" + std::to_string(i);
      p.Add(Written(&env, key, dir.Join(key), "bytes of " + key));
      std::lock_guard<std::mutex> lock(mu);
      ++added;
      cv.notify_all();
    }
  });
  env.WaitEntered();  // a batch is taken and its syncfs held
  size_t added_while_held;
  for (;;) {  // until Add waits for room, or every object is added
    std::unique_lock<std::mutex> lock(mu);
    if (added == n || p.AddBlocked()) {
      added_while_held = added;
      break;
    }
    cv.wait_for(lock, std::chrono::milliseconds(1));
  }
  env.Open();
  adder.join();
  p.Close();
  EXPECT_LE(added_while_held, max_open);
  Publisher::Outcome out = p.TakeOutcome();
  EXPECT_TRUE(out.failures.empty());
  EXPECT_EQ(out.done, n);
  for (size_t i = 0; i < n; ++i) {
    std::string key = "k" + std::to_string(i);
    EXPECT_EQ(test::ReadFile(&env, dir.Join(key)), "bytes of " + key);
  }
}

// The cap follows the descriptor limit: a quarter of it, at least one, at
// most kMaxOpen.
TEST(PublisherTest, MaxOpenFollowsTheDescriptorLimit) {
  EXPECT_EQ(Publisher::MaxOpenFor(380), 95u);
  EXPECT_EQ(Publisher::MaxOpenFor(1024), 256u);
  EXPECT_EQ(Publisher::MaxOpenFor(1 << 20), Publisher::kMaxOpen);
  EXPECT_EQ(Publisher::MaxOpenFor(2), 1u);
}

// Closing with nothing added starts no thread and returns at once.
TEST(PublisherTest, CloseWithoutObjects) {
  Publisher p(Env::Default());
  p.Close();
  EXPECT_EQ(p.TakeOutcome().done, 0u);
}

}  // namespace
}  // namespace ferry::remote
