// StartPacer: how many new requests a run may have in flight during its
// first moments (docs/remote.md "Starting gently").
//
// Sixteen connections opened at once each send a first flight of segments
// (ten, of up to 64 KiB on a loopback-sized MTU), and each doubles its
// window every round trip: on a short path with a shallow queue at the
// bottleneck they overflow it together, and the losses cost more link time
// than one connection that fills the link alone. So the run's first
// request goes alone, and the time until its answer's headers is the probe
// of the path:
//  - an answer within `probe_us` (a server on the same host or LAN): the
//    limit starts at 1 and grows by one per `gap_us`, one per `bytes`
//    received and one per request that ends, up to the run's connections; after
//    `max_us` pacing ends whatever the limit. On such a path a connection
//    reaches its share in a few milliseconds, so this costs little.
//  - no answer by then (a cloud bucket, 20 ms or more away): the limit is
//    lifted at once, as if there were no pacing. There slow start takes many
//    round trips and parallel connections are what fill the link; the cost
//    is at most `probe_us`.
// Retries are not paced (the loop starts them as before).
//
// Thread-safety: one thread (the event loop).
#ifndef FERRY_LIB_REMOTE_START_PACER_H_
#define FERRY_LIB_REMOTE_START_PACER_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace ferry::remote {

class StartPacer {
 public:
  struct Options {
    uint64_t probe_us = 10000;
    uint64_t gap_us = 25000;
    uint64_t bytes = 1u << 20;
    uint64_t max_us = 1000000;
  };

  // connections: the run's limit; enabled false: never paces.
  StartPacer(size_t connections, bool enabled, Options options)
      : connections_(connections), options_(options) {
    if (!enabled || connections_ <= 1) state_ = State::kOff;
  }

  // A request was put in flight at now_us (the first one starts the probe).
  void OnStart(uint64_t now_us) {
    if (first_us_ == 0) first_us_ = last_us_ = std::max<uint64_t>(now_us, 1);
  }
  // A request's answer headers are in: the first of the run ends the probe.
  void OnAnswer(uint64_t now_us, uint64_t bytes) {
    if (state_ != State::kProbe || first_us_ == 0) return;
    if (now_us - first_us_ < options_.probe_us) {
      state_ = State::kPaced;
      last_us_ = now_us;
      last_bytes_ = bytes;
    } else {
      state_ = State::kOff;
    }
  }
  // A request ended (any way): one more may go.
  void OnEnd() {
    if (state_ == State::kPaced) ++limit_;
  }

  // Whether one more new request may start with `active` in flight, having
  // received `bytes` in the run so far.
  bool Allows(uint64_t now_us, uint64_t bytes, size_t active) {
    if (state_ == State::kOff || first_us_ == 0) return true;
    if (state_ == State::kProbe) {
      if (now_us - first_us_ < options_.probe_us) return false;
      state_ = State::kOff;
      return true;
    }
    if (now_us - last_us_ >= options_.gap_us) {
      const uint64_t k = (now_us - last_us_) / options_.gap_us;
      limit_ += size_t(k);
      last_us_ += k * options_.gap_us;
    }
    if (bytes > last_bytes_ && bytes - last_bytes_ >= options_.bytes) {
      const uint64_t k = (bytes - last_bytes_) / options_.bytes;
      limit_ += size_t(k);
      last_bytes_ += k * options_.bytes;
    }
    if (limit_ >= connections_ || now_us - first_us_ >= options_.max_us) {
      state_ = State::kOff;
      return true;
    }
    return active < limit_;
  }

  // How long the loop may wait before Allows could change its answer by
  // the clock alone (UINT64_MAX: never; an answer or a byte may change it
  // sooner, and those wake the loop).
  uint64_t WaitMicros(uint64_t now_us) const {
    if (state_ == State::kOff || first_us_ == 0) return UINT64_MAX;
    const uint64_t end =
        state_ == State::kProbe
            ? first_us_ + options_.probe_us
            : std::min(last_us_ + options_.gap_us, first_us_ + options_.max_us);
    return end > now_us ? end - now_us : 0;
  }

  bool pacing() const { return state_ != State::kOff; }
  bool probing() const { return state_ == State::kProbe && first_us_ != 0; }
  size_t limit() const { return limit_; }

 private:
  enum class State { kProbe, kPaced, kOff };
  size_t connections_;
  Options options_;
  State state_ = State::kProbe;
  uint64_t first_us_ = 0;    // the run's first request started
  uint64_t last_us_ = 0;     // the clock's share of the limit counts from
  uint64_t last_bytes_ = 0;  // the bytes' share counts from
  size_t limit_ = 1;
};

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_START_PACER_H_
