#include "remote/transfer_util.h"

#include <chrono>

namespace ferry::remote {

uint64_t NowMicros() {
  return uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

void ProgressTicker::Tick(bool last) {
  if (!cb_) return;
  uint64_t now = NowMicros();
  if (!last && now - last_us_ < 200000) return;
  last_us_ = now;
  cb_(p_);
}

}  // namespace ferry::remote
