#include "remote/transfer_util.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>

#include "remote/opener.h"
#include "remote/publisher.h"

namespace ferry::remote {

uint64_t NowMicros() {
  return uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

DescriptorPlan PlanDescriptors(uint64_t nofile_limit, int connections) {
  const uint64_t b = nofile_limit > 64 ? nofile_limit - 32 : nofile_limit / 2;
  DescriptorPlan plan;
  plan.connections = int(std::clamp<uint64_t>(
      uint64_t(std::max(1, connections)), 1, std::max<uint64_t>(1, b / 10)));
  plan.ahead = size_t(std::clamp<uint64_t>(b / 8, 1, Opener::kAhead));
  plan.publish = size_t(std::clamp<uint64_t>(b / 4, 1, Publisher::kMaxOpen));
  return plan;
}

DescriptorPlan PlanDescriptors(int connections) {
  struct rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY)
    return PlanDescriptors(uint64_t{1} << 20, connections);
  return PlanDescriptors(uint64_t(lim.rlim_cur), connections);
}

TransferOptions WithinDescriptors(TransferOptions options) {
  options.connections = PlanDescriptors(options.connections).connections;
  return options;
}

int ConnectionsForWork(const std::vector<GetItem>& items, int connections) {
  connections = std::max(1, connections);
  if (items.size() >= kItemsPerConnection * uint64_t(connections))
    return connections;
  const uint64_t enough = kBytesPerConnection * uint64_t(connections);
  uint64_t bytes = 0;  // < enough
  auto add = [&](uint64_t n) {
    if (n >= enough - bytes) return false;
    bytes += n;
    return true;
  };
  for (const GetItem& item : items) {
    bool under = true;
    if (!item.ranges.empty()) {
      for (const ByteRange& r : item.ranges) under = under && add(r.length);
    } else if (item.have_info) {
      under = add(item.info.size);
    } else if (item.have_expected_size) {
      under = add(item.expected_size);
    } else {
      under = false;  // unknown size
    }
    if (!under) return connections;
  }
  const uint64_t by_bytes =
      (bytes + kBytesPerConnection - 1) / kBytesPerConnection;
  const uint64_t by_items =
      (items.size() + kItemsPerConnection - 1) / kItemsPerConnection;
  return int(std::clamp<uint64_t>(std::max(by_bytes, by_items),
                                  std::min(2, connections),
                                  uint64_t(connections)));
}

void ProgressTicker::Tick(bool last) {
  if (!cb_) return;
  uint64_t now = NowMicros();
  if (!last && now - last_us_ < 200000) return;
  last_us_ = now;
  cb_(p_);
}

}  // namespace ferry::remote
