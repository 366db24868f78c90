// A token bucket: the one --bwlimit that all transfers of a run share
// (libcurl's own limit is per transfer). Tokens are bytes; a taker may run
// the bucket into debt by one buffer, so no read ever starves because it is
// larger than the bucket.
//
// Thread-safety: one thread (the event loop).
#ifndef FERRY_LIB_REMOTE_TOKEN_BUCKET_H_
#define FERRY_LIB_REMOTE_TOKEN_BUCKET_H_

#include <algorithm>
#include <cstdint>

namespace ferry::remote {

class TokenBucket {
 public:
  // rate: bytes per second (0: unlimited). Starts with a tenth of a second's
  // worth, holds at most that much.
  TokenBucket(uint64_t rate, uint64_t now_us)
      : rate_(rate),
        burst_(std::max<int64_t>(int64_t(rate / 10), 16 << 10)),
        tokens_(burst_),
        last_us_(now_us) {}

  bool unlimited() const { return rate_ == 0; }

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

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_TOKEN_BUCKET_H_
