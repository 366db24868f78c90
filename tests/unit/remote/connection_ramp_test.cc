#include "remote/connection_ramp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>

namespace ferry::remote {
namespace {

// Drives a ramp with a link: rate(limit) bytes/s arrive, busy(now, limit)
// slots are busy (all of them unless told), in turns of 1 ms, for ms.
// One step: settle, measure, and a few turns more.
constexpr uint64_t kStepMs =
    (ConnectionRamp::kSettleUs + ConnectionRamp::kMeasureUs) / 1000 + 5;

struct Link {
  std::function<double(size_t)> rate;
  std::function<size_t(uint64_t, size_t)> busy = [](uint64_t, size_t n) {
    return n;
  };
  uint64_t now_us = 0;
  double bytes = 0;
  void Run(ConnectionRamp* ramp, uint64_t ms) {
    for (uint64_t i = 0; i < ms; ++i) {
      ramp->Observe(now_us, uint64_t(bytes), busy(now_us, ramp->limit()));
      now_us += 1000;
      bytes += rate(ramp->limit()) / 1000;
    }
  }
};

// Behind latency (or a server that limits each connection) the rate grows
// with every connection: the ramp doubles up to the maximum, one step per
// settle + measure.
TEST(ConnectionRampTest, GrowsToTheMaximumWhileTheRateGrows) {
  ConnectionRamp ramp(4, 16);
  EXPECT_EQ(ramp.limit(), 4u);
  EXPECT_FALSE(ramp.settled());
  Link link{[](size_t n) { return 1e6 * double(n); }};
  link.Run(&ramp, kStepMs);
  EXPECT_EQ(ramp.limit(), 8u);
  link.Run(&ramp, kStepMs - 5);
  EXPECT_EQ(ramp.limit(), 16u);
  link.Run(&ramp, 3 * kStepMs);
  EXPECT_EQ(ramp.limit(), 16u);
  EXPECT_TRUE(ramp.settled());
}

// A link that few flows fill (200 Mbit/s): the doubling gains nothing, the
// ramp goes back to the count before and stays there.
TEST(ConnectionRampTest, GoesBackWhenADoublingOnlySharesTheLink) {
  ConnectionRamp ramp(4, 16);
  Link link{[](size_t n) { return std::min(25e6, 10e6 * double(n)); }};
  link.Run(&ramp, kStepMs);
  EXPECT_EQ(ramp.limit(), 8u);  // 4 -> 8: the rate did not grow
  link.Run(&ramp, kStepMs - 5);
  EXPECT_EQ(ramp.limit(), 4u);
  EXPECT_TRUE(ramp.settled());
  link.Run(&ramp, 5000);
  EXPECT_EQ(ramp.limit(), 4u);
}

// A gain of under 10 % does not count; one of over 10 % does.
TEST(ConnectionRampTest, KeepsADoublingOnlyForATenthMore) {
  ConnectionRamp small(4, 16);
  Link a{[](size_t n) { return n > 4 ? 10.8e6 : 10e6; }};
  a.Run(&small, 2000);
  EXPECT_EQ(small.limit(), 4u);
  EXPECT_TRUE(small.settled());
  ConnectionRamp enough(4, 16);
  Link b{[](size_t n) { return n > 4 ? 11.5e6 : 10e6; }};
  b.Run(&enough, 2000);
  EXPECT_EQ(enough.limit(), 8u);
  EXPECT_TRUE(enough.settled());
}

// While slots stand idle (the run has no more to start) the rate says
// nothing about more connections: no step until they are busy again. A
// moment's gap (one turn with a slot free, as between two requests) does
// not count.
TEST(ConnectionRampTest, MeasuresOnlyWhileTheSlotsAreBusy) {
  ConnectionRamp ramp(4, 16);
  Link link{[](size_t n) { return 1e6 * double(n); }};
  link.busy = [](uint64_t, size_t n) { return n - 1; };  // 75 % busy
  link.Run(&ramp, 3000);
  EXPECT_EQ(ramp.limit(), 4u);
  EXPECT_FALSE(ramp.settled());
  link.busy = [](uint64_t now, size_t n) {
    return now % 10000 == 0 ? n - 1 : n;
  };
  link.Run(&ramp, 2 * ConnectionRamp::kMeasureUs / 1000 +
                      5);  // this window, a whole one
  EXPECT_EQ(ramp.limit(), 8u);
}

// Never above the maximum, never below one; a maximum at or under the start
// is the limit from the first turn.
TEST(ConnectionRampTest, StaysWithinOneAndTheMaximum) {
  ConnectionRamp few(4, 2);
  EXPECT_EQ(few.limit(), 2u);
  EXPECT_TRUE(few.settled());
  ConnectionRamp zero(0, 0);
  EXPECT_EQ(zero.limit(), 1u);
  ConnectionRamp odd(4, 6);
  Link link{[](size_t n) { return 1e6 * double(n); }};
  link.Run(&odd, 2000);
  EXPECT_EQ(odd.limit(), 6u);
}

}  // namespace
}  // namespace ferry::remote
