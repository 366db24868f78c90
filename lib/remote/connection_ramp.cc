#include "remote/connection_ramp.h"

#include <algorithm>

namespace ferry::remote {

ConnectionRamp::ConnectionRamp(size_t start, size_t max)
    : limit_(std::min(std::max<size_t>(1, start), std::max<size_t>(1, max))),
      max_(std::max<size_t>(1, max)),
      settled_(limit_ >= max_) {}

void ConnectionRamp::Phase(uint64_t now_us, uint64_t bytes) {
  phase_us_ = now_us;
  phase_bytes_ = bytes;
  slot_us_ = 0;
}

void ConnectionRamp::Observe(uint64_t now_us, uint64_t bytes, size_t busy) {
  if (settled_) return;
  if (!started_) {  // the first turn: the first connections settle
    started_ = true;
    last_us_ = now_us;
    last_busy_ = busy;
    Phase(now_us, bytes);
    return;
  }
  slot_us_ += double(std::min(last_busy_, limit_)) * double(now_us - last_us_);
  last_us_ = now_us;
  last_busy_ = busy;
  const uint64_t elapsed = now_us - phase_us_;
  if (!measuring_) {
    if (elapsed < kSettleUs) return;
    measuring_ = true;
    return Phase(now_us, bytes);
  }
  if (elapsed < kMeasureUs) return;
  if (slot_us_ < kBusy * double(limit_) * double(elapsed))
    return Phase(now_us, bytes);  // idle slots: the limit held nothing back
  const double rate = double(bytes - phase_bytes_) * 1e6 / double(elapsed);
  if (prev_limit_ > 0 && rate < prev_rate_ * kGain) {
    limit_ = prev_limit_;  // the doubling only shared the link
    settled_ = true;
    return;
  }
  if (limit_ >= max_) {
    settled_ = true;
    return;
  }
  prev_rate_ = rate;
  prev_limit_ = limit_;
  limit_ = std::min(max_, 2 * limit_);
  measuring_ = false;
  Phase(now_us, bytes);
}

}  // namespace ferry::remote
