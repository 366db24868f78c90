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

// A run on a simulated link: each step of 50 ms brings rate(n) bytes with
// n requests in flight (as many as the limit lets start); returns the
// limit after `steps` steps. `t`, `bytes` and `active` carry the run on.
template <typename Rate>
size_t RunSteps(StartPacer& p, int steps, Rate rate, uint64_t* t,
                uint64_t* bytes, size_t* active) {
  for (int i = 0; i < steps; ++i) {
    FillAt(p, *t, *bytes, active);
    p.Tick(*t, *bytes, *active);  // as the loop does every turn
    *bytes += rate(*active);
    *t += 50000;
    p.Tick(*t, *bytes, *active);
    *active = std::min(*active, p.limit());  // requests end, not replaced
  }
  return p.limit();
}

// A quick probe answer at t = 1 ms.
StartPacer Paced(uint64_t* t, size_t* active, StartPacer::Options o = {}) {
  StartPacer p(16, true, o);
  FillAt(p, 1000, 0, active);
  p.OnAnswer(2000, 0);
  *t = 2000;
  return p;
}

TEST(StartPacerTest, OffStartsEverythingAtOnce) {
  StartPacer p(16, /*enabled=*/false, {});
  size_t active = 0;
  EXPECT_EQ(FillAt(p, 1000, 0, &active), 16u);
  StartPacer one(1, true, {});
  EXPECT_FALSE(one.pacing());
}

// Until the first request is answered, nothing else starts; a quick answer
// (a short path) starts the pacing at one in flight, doubled per 50 ms.
TEST(StartPacerTest, AQuickAnswerStartsAtOneAndDoublesPerStep) {
  StartPacer p(16, true, {});
  size_t active = 0;
  EXPECT_EQ(FillAt(p, 1000, 0, &active), 1u);  // the probe goes alone
  EXPECT_EQ(FillAt(p, 5000, 0, &active), 1u);
  p.OnAnswer(4000, 0);  // 3 ms after it started
  EXPECT_TRUE(p.pacing());
  EXPECT_EQ(FillAt(p, 4000, 0, &active), 1u);
  EXPECT_EQ(p.WaitMicros(4000), 50000u);
  EXPECT_EQ(FillAt(p, 4000 + 49999, 1000, &active), 1u);
  EXPECT_EQ(p.WaitMicros(4000 + 49999), 1u);
  EXPECT_EQ(FillAt(p, 4000 + 50000, 1000, &active), 2u);
  EXPECT_EQ(FillAt(p, 4000 + 100000, 3000, &active), 4u);  // rate 2x
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

// Where each connection adds its own rate (a server that limits each one,
// or small objects a round trip each), the limit doubles to the run's
// connections in four steps, and the pacing ends.
TEST(StartPacerTest, ConnectionsThatEachAddRateReachAllInFourSteps) {
  uint64_t t = 0, bytes = 0;
  size_t active = 0;
  StartPacer p = Paced(&t, &active);
  auto per_connection = [](size_t limit) { return limit * 100000; };
  EXPECT_EQ(RunSteps(p, 3, per_connection, &t, &bytes, &active), 8u);
  EXPECT_EQ(RunSteps(p, 1, per_connection, &t, &bytes, &active), 16u);
  EXPECT_TRUE(p.pacing());
  RunSteps(p, 1, per_connection, &t, &bytes, &active);
  EXPECT_FALSE(p.pacing());
  EXPECT_EQ(FillAt(p, t, bytes, &active), 16u);
}

// A link one connection fills (200 Mbit/s): the doubling to two brings
// nothing, and the run holds at two (not one: small objects' round trips
// would leave one connection's link idle between them).
TEST(StartPacerTest, ALinkOneConnectionFillsHoldsAtTwo) {
  uint64_t t = 0, bytes = 0;
  size_t active = 0;
  StartPacer p = Paced(&t, &active);
  auto link = [](size_t) { return uint64_t(1250000); };
  EXPECT_EQ(RunSteps(p, 2, link, &t, &bytes, &active), 2u);
  EXPECT_TRUE(p.holding());
  EXPECT_EQ(RunSteps(p, 30, link, &t, &bytes, &active), 2u);  // 1.5 s
  EXPECT_EQ(FillAt(p, t, bytes, &active), 2u);
}

// Many small objects, a round trip each: every request that ends lets one
// more start, so the requests in flight double per round of answers
// within a step.
TEST(StartPacerTest, EndedRequestsGrowTheLimit) {
  uint64_t t = 0;
  size_t active = 0;
  StartPacer p = Paced(&t, &active);
  EXPECT_EQ(FillAt(p, 3000, 0, &active), 1u);
  p.OnEnd();
  --active;
  EXPECT_EQ(FillAt(p, 4000, 100, &active), 2u);
  for (int i = 0; i < 2; ++i) {
    p.OnEnd();
    --active;
  }
  EXPECT_EQ(FillAt(p, 5000, 300, &active), 4u);
}

// A step whose requests in flight did not grow (the run had no more to
// ask for, though the limit let it) says nothing about the link: the run
// does not hold on it.
TEST(StartPacerTest, AStepWithNoMoreInFlightDecidesNothing) {
  uint64_t t = 0, bytes = 0;
  size_t active = 0;
  StartPacer p = Paced(&t, &active);
  auto link = [](size_t) { return uint64_t(1000); };
  for (int i = 0; i < 3; ++i) {  // one request in flight, whatever the limit
    FillAt(p, t, bytes, &active, /*connections=*/1);
    bytes += link(active);
    t += 50000;
    p.Tick(t, bytes, active);
  }
  EXPECT_FALSE(p.holding());
  EXPECT_EQ(p.limit(), 8u);
}

// A link three connections fill: 1 -> 2 -> 4 pay, 4 -> 8 does not, and the
// run holds at 4.
TEST(StartPacerTest, ADoublingThatDoesNotPayIsUndone) {
  uint64_t t = 0, bytes = 0;
  size_t active = 0;
  StartPacer p = Paced(&t, &active);
  auto link = [](size_t limit) { return std::min<uint64_t>(limit, 3) * 1000; };
  EXPECT_EQ(RunSteps(p, 3, link, &t, &bytes, &active), 8u);
  EXPECT_EQ(RunSteps(p, 1, link, &t, &bytes, &active), 4u);
  EXPECT_TRUE(p.holding());
}

// Holding, the run tries a doubling again after 2 s, then after 4, 8, 16,
// 16 s ...: when the link has freed up (another transfer ended) it grows
// on; when not, it returns to what it held.
TEST(StartPacerTest, AHeldRunTriesAgainLater) {
  uint64_t t = 0, bytes = 0;
  size_t active = 0;
  StartPacer p = Paced(&t, &active);
  uint64_t capacity = 2;  // connections' worth the link carries
  auto link = [&capacity](size_t limit) {
    return std::min<uint64_t>(limit, capacity) * 1000;
  };
  RunSteps(p, 3, link, &t, &bytes, &active);  // 1, 2, 4: holds at 2
  ASSERT_TRUE(p.holding());
  ASSERT_EQ(p.limit(), 2u);
  const uint64_t held = t;
  size_t probes = 0;
  while (t < held + 2000000 + 4000000 + 100000) {
    RunSteps(p, 1, link, &t, &bytes, &active);
    if (p.limit() > 2) ++probes;
  }
  EXPECT_EQ(probes, 2u);  // at 2 s and at 6 s, one step each
  EXPECT_EQ(p.limit(), 2u);
  capacity = 16;
  while (p.pacing() && t < held + 30000000)
    RunSteps(p, 1, link, &t, &bytes, &active);
  EXPECT_FALSE(p.pacing());
  EXPECT_LT(t, held + 2000000 + 4000000 + 8000000 + 500000);
}

// A server that limits each connection but lets each new one send a burst
// first (nginx's limit_rate with sendfile: 2 MiB at once, then 4 MiB/s as
// 2 MiB every half second): the first steps' rates are the bursts', and the
// doubling to two looks as if it did not pay. Held, the two requests'
// rate falls far below what the hold was decided on: the run tries the
// doubling again at once (not 2 s later) and grows to every connection.
TEST(StartPacerTest, AHoldThatABurstDecidedIsRetriedWhenTheHeldRateFalls) {
  uint64_t t = 0, bytes = 0;
  size_t active = 0;
  StartPacer p = Paced(&t, &active);
  const uint64_t burst = 2 << 20, per_step = 200 << 10;  // 4 MiB/s
  size_t started = active;  // the probe's burst comes in the first step
  auto step = [&] {
    const size_t before = active;
    FillAt(p, t, bytes, &active);
    p.Tick(t, bytes, active);
    started += active - before;
    bytes += started * burst + active * per_step;
    started = 0;
    t += 50000;
    p.Tick(t, bytes, active);
    active = std::min(active, p.limit());
  };
  step();  // 1 in flight: its burst
  step();  // 2: one new burst, not 25 % more
  ASSERT_TRUE(p.holding());
  ASSERT_EQ(p.limit(), 2u);
  const uint64_t held = t;
  while (p.pacing() && t < held + 1000000) step();
  EXPECT_FALSE(p.pacing());
  EXPECT_EQ(FillAt(p, t, bytes, &active), 16u);
}

// Held at two, both requests stall (a server's hiccup): with the limit
// reached nothing else starts, not even the endgame's hand-over of a
// stalled part, so the run would wait for the re-probe (2 to 16 s) or the
// low-speed timeout. The held rate fell to nothing: more may start at once.
TEST(StartPacerTest, AHeldRunWhoseRequestsStallLetsMoreStartAtOnce) {
  uint64_t t = 0, bytes = 0;
  size_t active = 0;
  StartPacer p = Paced(&t, &active);
  uint64_t link = 1250000;
  auto rate = [&link](size_t) { return link; };
  RunSteps(p, 2, rate, &t, &bytes, &active);
  ASSERT_TRUE(p.holding());
  ASSERT_EQ(RunSteps(p, 10, rate, &t, &bytes, &active), 2u);
  link = 0;
  const uint64_t stalled = t;
  while (FillAt(p, t, bytes, &active) <= 2 && t < stalled + 1000000)
    RunSteps(p, 1, rate, &t, &bytes, &active);
  EXPECT_GT(active, 2u);
  EXPECT_LT(t, stalled + 600000);
}

// Held at two on a link two connections fill, each connection limited by
// its server: when the link frees up, the two held requests' rate rises,
// and the run tries a doubling at once rather than at the next re-probe.
TEST(StartPacerTest, AHeldRunWhoseRateRisesTriesAgainAtOnce) {
  uint64_t t = 0, bytes = 0;
  size_t active = 0;
  StartPacer p = Paced(&t, &active);
  uint64_t link = 1500;  // per step; each connection carries 1000
  auto rate = [&link](size_t n) { return std::min<uint64_t>(n * 1000, link); };
  RunSteps(p, 3, rate, &t, &bytes, &active);  // 1, 2 pay, 4 does not
  ASSERT_TRUE(p.holding());
  ASSERT_EQ(p.limit(), 2u);
  EXPECT_EQ(RunSteps(p, 10, rate, &t, &bytes, &active), 2u);  // 0.5 s
  EXPECT_TRUE(p.holding());
  link = 16000;
  const uint64_t freed = t;
  while (p.pacing() && t < freed + 1400000)
    RunSteps(p, 1, rate, &t, &bytes, &active);
  EXPECT_FALSE(p.pacing());
  EXPECT_LT(t, freed + 1000000);  // the re-probe was due at freed + 1.5 s
}

}  // namespace
}  // namespace ferry::remote
