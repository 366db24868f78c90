#include "core/ordered_pipeline.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace ferry::core {
namespace {

class OrderedPipelineTest : public ::testing::TestWithParam<int> {};

TEST_P(OrderedPipelineTest, ResultsArriveInIndexOrderWhateverTheTiming) {
  const size_t n = 500;
  std::vector<size_t> order;
  std::atomic<int> in_flight{0}, max_in_flight{0};
  OrderedParallelMap<size_t>(
      n, GetParam(),
      [&](size_t i) {
        int now = ++in_flight;
        int prev = max_in_flight.load();
        while (now > prev && !max_in_flight.compare_exchange_weak(prev, now)) {
        }
        // Uneven work so later items often finish first.
        if (i % 7 == 0)
          std::this_thread::sleep_for(std::chrono::microseconds(300));
        --in_flight;
        return i * i;
      },
      [&](size_t i, size_t v) {
        EXPECT_EQ(v, i * i);
        order.push_back(i);
      });
  ASSERT_EQ(order.size(), n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(order[i], i);
  EXPECT_LE(max_in_flight.load(), std::max(1, GetParam()));
}

TEST_P(OrderedPipelineTest, EmptyInputCallsNothing) {
  int calls = 0;
  OrderedParallelMap<int>(
      0, GetParam(), [&](size_t) { return ++calls; },
      [&](size_t, int) { ++calls; });
  EXPECT_EQ(calls, 0);
}

INSTANTIATE_TEST_SUITE_P(Jobs, OrderedPipelineTest,
                         ::testing::Values(1, 2, 3, 8));

TEST(OrderedPipelineBoundTest, HoldsABoundedNumberOfResults) {
  // Results not yet consumed never exceed the token count (4 per thread).
  std::atomic<int> produced{0};
  int consumed = 0, max_pending = 0;
  OrderedParallelMap<int>(
      2000, 2, [&](size_t) { return ++produced; },
      [&](size_t, int) {
        ++consumed;
        max_pending = std::max(max_pending, produced.load() - consumed);
      });
  EXPECT_LE(max_pending, 8);
}

}  // namespace
}  // namespace ferry::core
