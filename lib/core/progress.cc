#include "ferry/progress.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>

namespace ferry {

Progress::~Progress() = default;

namespace {

class NoProgress final : public Progress {
 public:
  void Begin(std::string_view, uint64_t, uint64_t) override {}
  void Advance(uint64_t, uint64_t) override {}
  void End() override {}
};

class TerminalProgress final : public Progress {
 public:
  void Begin(std::string_view what, uint64_t total_items,
             uint64_t total_bytes) override {
    std::lock_guard<std::mutex> l(mu_);
    what_ = what;
    total_items_ = total_items;
    total_bytes_ = total_bytes;
    items_ = bytes_ = 0;
    start_ = last_ = Clock::now();
  }

  void Advance(uint64_t items, uint64_t bytes) override {
    std::lock_guard<std::mutex> l(mu_);
    items_ += items;
    bytes_ += bytes;
    auto now = Clock::now();
    if (now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    Draw(now);
  }

  void End() override {
    std::lock_guard<std::mutex> l(mu_);
    Draw(Clock::now());
    std::fputc('\n', stderr);
  }

 private:
  using Clock = std::chrono::steady_clock;

  void Draw(Clock::time_point now) {
    double secs = std::chrono::duration<double>(now - start_).count();
    double mbps = secs > 0 ? bytes_ / secs / 1e6 : 0;
    constexpr int kWidth = 30;
    std::string bar;
    if (total_items_ > 0) {
      int filled = static_cast<int>(kWidth * items_ / total_items_);
      bar = "[" + std::string(filled, '#') + std::string(kWidth - filled, ' ') +
            "] ";
    }
    std::fprintf(stderr, "\r%s %s%llu/%llu files  %.1f MB/s   ", what_.c_str(),
                 bar.c_str(), static_cast<unsigned long long>(items_),
                 static_cast<unsigned long long>(total_items_), mbps);
    std::fflush(stderr);
  }

  std::mutex mu_;
  std::string what_;
  uint64_t total_items_ = 0, total_bytes_ = 0, items_ = 0, bytes_ = 0;
  Clock::time_point start_, last_;
};

}  // namespace

Progress* NullProgress() {
  static NoProgress* p = new NoProgress();
  return p;
}

std::unique_ptr<Progress> NewTerminalProgress(bool quiet) {
  if (quiet || !::isatty(STDERR_FILENO)) return std::make_unique<NoProgress>();
  return std::make_unique<TerminalProgress>();
}

}  // namespace ferry
