// OrderedParallelMap: runs work(i) for i in [0, n) on up to `jobs` threads and
// hands each result to done(i, result) on one thread at a time, strictly in
// index order. So output never depends on the thread count, and at most a
// bounded number of results (4 per thread) are held at once: memory stays flat
// whatever n is. Built on oneTBB's parallel_pipeline.
//
// Private to libferry (it exposes oneTBB types in its body).
#ifndef FERRY_CORE_ORDERED_PIPELINE_H_
#define FERRY_CORE_ORDERED_PIPELINE_H_

#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_pipeline.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cstddef>
#include <utility>

namespace ferry::core {

template <typename T, typename Work, typename Done>
void OrderedParallelMap(size_t n, int jobs, Work&& work, Done&& done) {
  // The work is CPU-bound: more threads than oneTBB's concurrency would not
  // run anyway (and oneTBB warns about the request).
  jobs = std::min(jobs, oneapi::tbb::info::default_concurrency());
  if (jobs <= 1 || n <= 1) {
    for (size_t i = 0; i < n; ++i) done(i, work(i));
    return;
  }
  struct Item {
    size_t index = 0;
    T value{};
  };
  size_t next = 0;
  oneapi::tbb::task_arena arena(jobs);
  arena.execute([&] {
    oneapi::tbb::parallel_pipeline(
        static_cast<size_t>(jobs) * 4,
        oneapi::tbb::make_filter<void, size_t>(
            oneapi::tbb::filter_mode::serial_in_order,
            [&](oneapi::tbb::flow_control& fc) -> size_t {
              if (next >= n) {
                fc.stop();
                return 0;
              }
              return next++;
            }) &
            oneapi::tbb::make_filter<size_t, Item>(
                oneapi::tbb::filter_mode::parallel,
                [&](size_t i) {
                  return Item{i, work(i)};
                }) &
            oneapi::tbb::make_filter<Item, void>(
                oneapi::tbb::filter_mode::serial_in_order,
                [&](Item item) { done(item.index, std::move(item.value)); }));
  });
}

}  // namespace ferry::core

#endif  // FERRY_CORE_ORDERED_PIPELINE_H_
