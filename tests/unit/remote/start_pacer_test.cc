#include "remote/start_pacer.h"

#include <gtest/gtest.h>

namespace ferry::remote {
namespace {

// The most requests Allows lets into flight at `now`, starting them one by
// one (each start noted) until it says no or `connections` are in flight.
size_t FillAt(StartPacer& p, uint64_t now, uint64_t bytes, size_t* active,
              size_t connections = 16) {
  while (*active < connections && p.Allows(now, bytes, *active)) {
    p.OnStart(now);
    ++*active;
  }
  return *active;
}

TEST(StartPacerTest, OffStartsEverythingAtOnce) {
  StartPacer p(16, /*enabled=*/false, {});
  size_t active = 0;
  EXPECT_EQ(FillAt(p, 1000, 0, &active), 16u);
  StartPacer one(1, true, {});
  EXPECT_FALSE(one.pacing());
}

// Until the first request is answered, nothing else starts; a quick answer
// (a short path) starts the pacing at one in flight.
TEST(StartPacerTest, AQuickAnswerStartsTheRampAtOne) {
  StartPacer p(16, true, {});
  size_t active = 0;
  EXPECT_EQ(FillAt(p, 1000, 0, &active), 1u);  // the probe goes alone
  EXPECT_EQ(FillAt(p, 5000, 0, &active), 1u);
  p.OnAnswer(4000, 0);  // 3 ms after it started
  EXPECT_TRUE(p.pacing());
  EXPECT_EQ(FillAt(p, 4000, 0, &active), 1u);
  // One more per 25 ms.
  EXPECT_EQ(FillAt(p, 4000 + 25000, 0, &active), 2u);
  EXPECT_EQ(FillAt(p, 4000 + 49000, 0, &active), 2u);
  EXPECT_EQ(FillAt(p, 4000 + 50000, 0, &active), 3u);
}

// No answer within the probe time (a long round trip): everything starts,
// and a late answer does not bring the pacing back.
TEST(StartPacerTest, ASlowAnswerLiftsTheLimitAfterTheProbe) {
  StartPacer p(16, true, {});
  size_t active = 0;
  EXPECT_EQ(FillAt(p, 1000, 0, &active), 1u);
  EXPECT_EQ(FillAt(p, 1000 + 9999, 0, &active), 1u);
  EXPECT_EQ(p.WaitMicros(1000 + 9999), 1u);
  EXPECT_EQ(FillAt(p, 1000 + 10000, 0, &active), 16u);
  EXPECT_FALSE(p.pacing());
  p.OnAnswer(200000, 0);
  EXPECT_FALSE(p.pacing());
  // An answer that came at 10 ms (the loop saw it late) is slow too.
  StartPacer q(16, true, {});
  active = 0;
  FillAt(q, 1000, 0, &active);
  q.OnAnswer(11000, 0);
  EXPECT_EQ(FillAt(q, 11000, 0, &active), 16u);
}

// Bytes received and requests ended grow the limit too: a fast link or
// many small objects ramp up in a few milliseconds.
TEST(StartPacerTest, BytesAndEndedRequestsGrowTheLimit) {
  StartPacer p(16, true, {});
  size_t active = 0;
  FillAt(p, 1000, 0, &active);
  p.OnAnswer(1500, 0);
  EXPECT_EQ(FillAt(p, 2000, (1u << 20) - 1, &active), 1u);
  EXPECT_EQ(FillAt(p, 2000, 1u << 20, &active), 2u);
  EXPECT_EQ(FillAt(p, 2100, 3u << 20, &active), 4u);  // 2 MiB more: 2 more
  // A request that ends frees its slot and adds one.
  p.OnEnd();
  --active;
  EXPECT_EQ(FillAt(p, 2200, 3u << 20, &active), 5u);
  // At the run's connections the pacing is over.
  EXPECT_EQ(FillAt(p, 2300, 20u << 20, &active), 16u);
  EXPECT_FALSE(p.pacing());
}

// Whatever the limit, pacing ends after max_us; WaitMicros says when the
// clock next matters.
TEST(StartPacerTest, PacingEndsAfterASecond) {
  StartPacer::Options o;
  o.gap_us = 400000;  // slower than max_us / connections
  StartPacer p(16, true, o);
  size_t active = 0;
  FillAt(p, 1, 0, &active);
  p.OnAnswer(2, 0);
  EXPECT_EQ(p.WaitMicros(2), 400000u);
  EXPECT_EQ(FillAt(p, 500000, 0, &active), 2u);
  EXPECT_EQ(FillAt(p, 999999, 0, &active), 3u);
  EXPECT_EQ(p.WaitMicros(999999), 2u);
  EXPECT_EQ(FillAt(p, 1000001, 0, &active), 16u);
  EXPECT_FALSE(p.pacing());
  EXPECT_EQ(p.WaitMicros(1000001), UINT64_MAX);
}

}  // namespace
}  // namespace ferry::remote
