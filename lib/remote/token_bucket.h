// A token bucket: the one --bwlimit that all transfers of a run share
// (libcurl's own limit is per transfer). Tokens are bytes; a taker may run
// the bucket into debt by one buffer, so no read ever starves because it is
// larger than the bucket. The burst is at most a second of the rate: a small
// object does not slip through faster than the limit. BlockingBucket is the
// same limit for callers that may sleep (file:// transfers).
//
// Thread-safety: one thread (the event loop, or the one caller).
#ifndef FERRY_LIB_REMOTE_TOKEN_BUCKET_H_
#define FERRY_LIB_REMOTE_TOKEN_BUCKET_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string_view>
#include <thread>
#include <utility>

#include "ferry/env.h"
#include "ferry/remote.h"

namespace ferry::remote {

class TokenBucket {
 public:
  // rate: bytes per second (0: unlimited). Starts with a tenth of a second's
  // worth (at least 16 KiB, at most a second's), holds at most that much.
  TokenBucket(uint64_t rate, uint64_t now_us)
      : rate_(rate),
        burst_(std::max<int64_t>(int64_t(rate / 10),
                                 std::min<int64_t>(int64_t(rate), 16 << 10))),
        tokens_(burst_),
        last_us_(now_us) {}

  bool unlimited() const { return rate_ == 0; }
  uint64_t burst() const { return uint64_t(burst_); }

  // Takes n bytes when any token is left (true); false: wait.
  bool Take(uint64_t n, uint64_t now_us) {
    if (rate_ == 0) return true;
    Refill(now_us);
    if (tokens_ <= 0) return false;
    tokens_ -= int64_t(n);
    return true;
  }

  // Microseconds until Take can succeed again (0: now).
  uint64_t WaitMicros(uint64_t now_us) {
    if (rate_ == 0) return 0;
    Refill(now_us);
    if (tokens_ > 0) return 0;
    return uint64_t((-tokens_ + 1) * 1000000 / int64_t(rate_)) + 1;
  }

 private:
  __extension__ typedef unsigned __int128 U128;  // GCC/Clang; not ISO

  void Refill(uint64_t now_us) {
    if (now_us <= last_us_) return;
    // 128 bits: a long pause times a high rate overflows 64.
    U128 add = U128(now_us - last_us_) * rate_ / 1000000;
    last_us_ = now_us;
    int64_t room = burst_ - tokens_;
    tokens_ = room <= 0 || add >= U128(room) ? std::max(tokens_, burst_)
                                             : tokens_ + int64_t(add);
  }

  uint64_t rate_;
  int64_t burst_;
  int64_t tokens_;
  uint64_t last_us_;
};

// The run's limit for a caller that may block: Take sleeps until the bucket
// has the bytes, taken in pieces of at most a burst; Settle waits out the
// last debt, so a run never moves more than a burst beyond rate x its time.
// The clock is env's; sleep is std::this_thread::sleep_for unless given.
class BlockingBucket {
 public:
  BlockingBucket(uint64_t rate, Env* env,
                 std::function<void(uint64_t)> sleep_micros = nullptr)
      : bucket_(rate, env->NowMicros()),
        env_(env),
        sleep_(sleep_micros ? std::move(sleep_micros) : [](uint64_t us) {
          std::this_thread::sleep_for(std::chrono::microseconds(us));
        }) {}

  void Take(uint64_t n) {
    if (bucket_.unlimited()) return;
    while (n > 0) {
      const uint64_t piece = std::min(n, bucket_.burst());
      for (;;) {
        const uint64_t now = env_->NowMicros();
        if (bucket_.Take(piece, now)) break;
        sleep_(bucket_.WaitMicros(now));
      }
      n -= piece;
    }
  }

  void Settle() {
    if (bucket_.unlimited()) return;
    while (uint64_t wait = bucket_.WaitMicros(env_->NowMicros())) sleep_(wait);
  }

 private:
  TokenBucket bucket_;
  Env* env_;
  std::function<void(uint64_t)> sleep_;
};

// A sink and a source that pass their bytes through a BlockingBucket.
class ThrottledSink final : public ByteSink {
 public:
  ThrottledSink(ByteSink* sink, BlockingBucket* bucket)
      : sink_(sink), bucket_(bucket) {}
  Status Append(std::string_view data) override {
    bucket_->Take(data.size());
    return sink_->Append(data);
  }

 private:
  ByteSink* sink_;
  BlockingBucket* bucket_;
};

class ThrottledSource final : public ByteSource {
 public:
  ThrottledSource(ByteSource* source, BlockingBucket* bucket)
      : source_(source), bucket_(bucket) {}
  uint64_t size() const override { return source_->size(); }
  Status ReadAt(uint64_t offset, size_t n, char* scratch,
                size_t* got) override {
    *got = 0;
    Status s = source_->ReadAt(offset, n, scratch, got);
    bucket_->Take(*got);
    return s;
  }

 private:
  ByteSource* source_;
  BlockingBucket* bucket_;
};

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_TOKEN_BUCKET_H_
