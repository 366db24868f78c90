#include "remote/token_bucket.h"

#include <gtest/gtest.h>

namespace ferry::remote {
namespace {

TEST(TokenBucketTest, UnlimitedNeverWaits) {
  TokenBucket b(0, 0);
  EXPECT_TRUE(b.unlimited());
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(b.Take(1 << 30, 0));
  EXPECT_EQ(b.WaitMicros(0), 0u);
}

// Over a simulated second at 1 MB/s, takers get about 1 MB (plus the initial
// burst and one buffer of debt), however many of them there are.
TEST(TokenBucketTest, SharedRateHoldsAcrossTakers) {
  const uint64_t rate = 1000000;
  TokenBucket b(rate, 0);
  uint64_t taken = 0;
  for (uint64_t now = 0; now <= 1000000; now += 1000) {
    for (int taker = 0; taker < 16; ++taker) {
      if (b.Take(16384, now)) taken += 16384;
    }
  }
  EXPECT_GE(taken, rate);
  EXPECT_LE(taken, rate + rate / 10 + 16 * 16384);
}

TEST(TokenBucketTest, DebtIsPaidBeforeTheNextTake) {
  TokenBucket b(100000, 0);         // burst 16 KiB
  EXPECT_TRUE(b.Take(1 << 20, 0));  // one big buffer: allowed, into debt
  EXPECT_FALSE(b.Take(1, 0));
  uint64_t wait = b.WaitMicros(0);
  EXPECT_GT(wait, 9000000u);  // ~ (1 MiB - 16 KiB) / 100 kB/s
  EXPECT_FALSE(b.Take(1, wait - 100000));
  EXPECT_TRUE(b.Take(1, wait));
}

// A small rate gets no burst above a second of it (it was 16 KiB: 20 KB at
// 500 B/s went through in 0.2 s).
TEST(TokenBucketTest, BurstIsAtMostOneSecond) {
  for (uint64_t rate : {1u, 500u, 10000u, 16384u, 100000u, 1u << 30}) {
    TokenBucket b(rate, 0);
    EXPECT_LE(b.burst(), rate) << rate;
  }
  // Counted per window of simulated time: bytes taken by t never exceed
  // rate x t + a burst + one buffer of debt.
  const uint64_t rate = 500, buf = 1000;
  TokenBucket b(rate, 0);
  uint64_t taken = 0;
  for (uint64_t now = 0; now <= 60000000; now += 10000) {
    if (b.Take(buf, now)) taken += buf;
    EXPECT_LE(taken, rate * now / 1000000 + b.burst() + buf) << now;
  }
  EXPECT_GE(taken, rate * 59);
}

}  // namespace
}  // namespace ferry::remote
