#include "remote/publisher.h"

#include <gtest/gtest.h>

#include <string>

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

// More objects than may wait at once: Add blocks until the thread has taken
// a batch, and every object ends under its name with its bytes.
TEST(PublisherTest, PublishesEveryObject) {
  Env* env = Env::Default();
  test::ScratchDir dir;
  const size_t n = Publisher::kMaxWaiting * 2 + 17;
  Publisher p(env);
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

// Closing with nothing added starts no thread and returns at once.
TEST(PublisherTest, CloseWithoutObjects) {
  Publisher p(Env::Default());
  p.Close();
  EXPECT_EQ(p.TakeOutcome().done, 0u);
}

}  // namespace
}  // namespace ferry::remote
