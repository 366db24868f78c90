// ConnectionRamp: how many bulk requests (parts of big objects) a download
// keeps in flight, following the link (private to lib/remote; docs/remote.md
// "Connections follow the link"). A run starts with two and doubles them
// while that raises the rate at which bodies arrive; when a doubling does
// not, it goes back to the count before and stays there. On a link that one
// flow fills (200 Mbit/s) more flows only share it and send smaller packets
// (more header bytes); on a machine whose CPU is the limit they only cost
// more; behind latency, or against a server that limits each connection,
// the rate grows with every doubling up to --connections.
//
// Thread-safety: one thread (the event loop's).
#ifndef FERRY_LIB_REMOTE_CONNECTION_RAMP_H_
#define FERRY_LIB_REMOTE_CONNECTION_RAMP_H_

#include <cstddef>
#include <cstdint>

namespace ferry::remote {

class ConnectionRamp {
 public:
  // Where a download starts (when --connections allows as many).
  static constexpr size_t kStart = 2;
  // After a change the new connections get kSettleUs to open and leave
  // slow start; the rate is then measured over kMeasureUs.
  static constexpr uint64_t kSettleUs = 100000;
  static constexpr uint64_t kMeasureUs = 200000;
  // A doubling is kept when the rate grew by this fraction (10 %).
  static constexpr double kGain = 1.10;
  // A measurement counts when the slots were this busy on average (90 %):
  // a run with less to do than its limit says nothing about more.
  static constexpr double kBusy = 0.9;

  // Starts with min(start, max) connections; max >= 1.
  ConnectionRamp(size_t start, size_t max);

  size_t limit() const { return limit_; }
  bool settled() const { return settled_; }

  // Once per turn of the loop: the time, the body bytes received so far,
  // and how many slots are busy (requests in flight) after the turn's
  // starts. A measurement in which the slots stood idle more than a tenth
  // of the time is begun again.
  void Observe(uint64_t now_us, uint64_t bytes, size_t busy);

 private:
  void Phase(uint64_t now_us, uint64_t bytes);

  size_t limit_;
  size_t max_;
  size_t prev_limit_ = 0;  // the limit before the last doubling
  bool settled_;
  bool started_ = false;
  bool measuring_ = false;
  uint64_t phase_us_ = 0;     // when settling or measuring began
  uint64_t phase_bytes_ = 0;  // bytes then
  uint64_t last_us_ = 0;      // the previous turn
  size_t last_busy_ = 0;      // slots busy since then
  double slot_us_ = 0;        // busy slot-microseconds since phase_us_
  double prev_rate_ = 0;      // bytes/s at the limit before (0: none yet)
};

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_CONNECTION_RAMP_H_
