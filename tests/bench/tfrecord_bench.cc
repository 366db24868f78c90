// Microbenchmark: TFRecord framing + CRC32C of 256 KiB records into a
// buffer, with memcpy of the same bytes as the anchor (the floor). Prints
// GB/s of each and the ratio. Target (issue #5): framing >= 2 GB/s.
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>

#include "formats/tfrecord/tfrecord.h"

namespace {

const std::string& Payload() {
  static const std::string p = [] {
    std::string s(256 * 1024, '\0');
    for (size_t i = 0; i < s.size(); ++i)
      s[i] = static_cast<char>(i * 2654435761u >> 13);
    return s;
  }();
  return p;
}

void BM_TfRecordFraming(benchmark::State& state) {
  std::string out;
  out.reserve(64 << 20);
  for (auto _ : state) {
    out.clear();
    for (int i = 0; i < 64; ++i) ferry::tfrecord::AppendRecord(Payload(), &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * 64 * Payload().size());
}
BENCHMARK(BM_TfRecordFraming);

void BM_MemcpyAnchor(benchmark::State& state) {
  std::string out;
  out.reserve(64 << 20);
  for (auto _ : state) {
    out.clear();
    for (int i = 0; i < 64; ++i) out.append(Payload());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * 64 * Payload().size());
}
BENCHMARK(BM_MemcpyAnchor);

}  // namespace

BENCHMARK_MAIN();
