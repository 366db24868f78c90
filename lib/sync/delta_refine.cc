// Publish: the old blocks around a delta's literals, read from the bucket.
#include "sync/delta_refine.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

namespace ferry::sync {
namespace {

struct Window {
  uint64_t first_block = 0, end_block = 0;  // [first, end)
  uint64_t offset = 0, length = 0;
  std::string bytes;
};

}  // namespace

Result<std::map<uint64_t, std::string>> ReadOldBlocks(
    Backend* backend, std::string_view key, uint64_t old_size,
    uint32_t block_len, const std::vector<uint64_t>& blocks, uint64_t max_bytes,
    RefineReads* reads) {
  auto block_end = [&](uint64_t i) {
    return std::min<uint64_t>((i + 1) * block_len, old_size);
  };
  // Runs of blocks merged across gaps below kRefineGap, up to max_bytes.
  std::vector<Window> windows;
  uint64_t total = 0;
  for (size_t k = 0; k < blocks.size(); ++k) {
    const uint64_t i = blocks[k];
    const uint64_t start = i * block_len;
    if (start >= old_size) continue;
    if (!windows.empty() &&
        start < windows.back().offset + windows.back().length + kRefineGap) {
      Window& w = windows.back();
      const uint64_t grow = block_end(i) - (w.offset + w.length);
      if (total + grow > max_bytes) {
        reads->blocks_left_out += blocks.size() - k;
        break;
      }
      total += grow;
      w.length += grow;
      w.end_block = i + 1;
      continue;
    }
    const uint64_t len = block_end(i) - start;
    if (total + len > max_bytes) {
      reads->blocks_left_out += blocks.size() - k;
      break;
    }
    total += len;
    windows.push_back(Window{i, i + 1, start, len, {}});
  }
  // Up to kRefineReaders GETs at once: one after another, a few dozen
  // windows would cost as many round trips.
  std::atomic<size_t> next{0};
  std::mutex mu;
  Status first_error;
  auto work = [&] {
    for (size_t w; (w = next.fetch_add(1)) < windows.size();) {
      Window& win = windows[w];
      CappedStringSink sink(std::string(key), win.length);
      Status s =
          backend->Read(key, ByteRange{win.offset, win.length}, {}, &sink);
      if (s.ok() && sink.out.size() != win.length)
        s = Status::Corruption(std::string(key),
                               "shorter than the manifest says");
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.ok()) first_error = s;
        next = windows.size();
        return;
      }
      win.bytes = std::move(sink.out);
    }
  };
  const int n =
      static_cast<int>(std::min<size_t>(kRefineReaders, windows.size()));
  std::vector<std::thread> threads;
  for (int t = 1; t < n; ++t) threads.emplace_back(work);
  if (n > 0) work();
  for (std::thread& t : threads) t.join();
  reads->requests += windows.size();
  FERRY_RETURN_IF_ERROR(first_error);
  std::map<uint64_t, std::string> out;
  for (const Window& w : windows) {
    reads->bytes += w.length;
    for (auto it =
             std::lower_bound(blocks.begin(), blocks.end(), w.first_block);
         it != blocks.end() && *it < w.end_block; ++it) {
      const uint64_t i = *it;
      const uint64_t at = i * block_len - w.offset;
      out.emplace(i, w.bytes.substr(at, block_end(i) - i * block_len));
    }
  }
  return out;
}

}  // namespace ferry::sync
