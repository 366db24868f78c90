// StartPacer: how many requests a download may have in flight on a short
// path (docs/remote.md "Starting gently, and holding at what fills the link").
//
// Sixteen connections opened at once each send a first flight of segments
// (ten, of up to 64 KiB on a loopback-sized MTU): on a short path with a
// shallow queue at the bottleneck they overflow it together. And on a link
// that one or two flows fill, sixteen cost more than they bring: smaller
// segments (more headers), spurious retransmissions, and a tail where the
// last flow, whose server still estimates its share as 1/16, takes a while
// to speed up. So the run's first request goes alone, and the time until its
// answer's headers is the probe of the path:
//  - an answer within `probe_us` (a server on the same host or LAN): the
//    limit starts at 1 and grows by one per request that ends (many small
//    objects double their requests in flight per round of answers) and
//    doubles every `step_us`, while each step's rate (body bytes received
//    over it) rises with the requests in flight: when their average over
//    a step grew by a factor k and the rate by less than 1 + (k - 1) / 4
//    (1.25 for a doubling), more connections no longer carry more. The
//    limit then holds at the previous step's average (rounded up; at least
//    two, since one connection's round trips between small objects leave
//    a link idle), and after `reprobe_us` a doubling is tried again (the
//    wait doubles after each that does not pay, up to `max_reprobe_us`):
//    the link or the server may have freed up. Sooner when the held rate,
//    taken over windows of `check_us`, is two windows in a row more than
//    25 % above or below the rate the hold was decided on: the link freed
//    up; or the steps it was decided on were bursts (each new connection's
//    first bytes, as nginx's limit_rate sends them) and the held requests
//    carry far less; or they stalled, and with the limit reached nothing
//    else could start, not even the endgame's hand-over of a stalled part.
//    A step at the run's connections that paid ends the pacing.
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
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace ferry::remote {

class StartPacer {
 public:
  struct Options {
    uint64_t probe_us = 10000;
    uint64_t step_us = 50000;
    uint64_t reprobe_us = 2000000;
    uint64_t max_reprobe_us = 16000000;
    uint64_t check_us = 200000;  // holding: the window its rate is taken over
  };

  // connections: the run's limit; enabled false: never paces.
  StartPacer(size_t connections, bool enabled, Options options)
      : connections_(connections),
        options_(options),
        reprobe_us_(options.reprobe_us) {
    if (!enabled || connections_ <= 1) state_ = State::kOff;
  }

  // A request was put in flight at now_us (the first one starts the probe).
  void OnStart(uint64_t now_us) {
    if (first_us_ == 0) first_us_ = std::max<uint64_t>(now_us, 1);
  }
  // A request's answer headers are in: the first of the run ends the probe.
  void OnAnswer(uint64_t now_us, uint64_t bytes) {
    if (state_ != State::kProbe || first_us_ == 0) return;
    if (now_us - first_us_ < options_.probe_us) {
      state_ = State::kGrow;
      NewStep(now_us, bytes);
    } else {
      state_ = State::kOff;
    }
  }

  // A request ended (any way): while growing, one more may go.
  void OnEnd() {
    if (state_ == State::kGrow) limit_ = std::min(limit_ + 1, connections_);
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
    Tick(now_us, bytes, active);
    return state_ == State::kOff || active < limit_;
  }

  // Counts `active` requests in flight since the last call and ends the
  // current step when its time is up. The loop calls it every turn (a step
  // must end even while every connection is busy), before requests start
  // or after they end.
  void Tick(uint64_t now_us, uint64_t bytes, size_t active) {
    if (state_ != State::kGrow && state_ != State::kHold) return;
    if (now_us > tick_us_) {
      active_us_ += double(active_) * double(now_us - tick_us_);
      tick_us_ = now_us;
    }
    active_ = active;
    if (now_us - step_us_ >= options_.step_us) EndStep(now_us, bytes);
  }

  // How long the loop may wait before Allows could change its answer by
  // the clock alone (UINT64_MAX: never).
  uint64_t WaitMicros(uint64_t now_us) const {
    if (state_ == State::kOff || first_us_ == 0) return UINT64_MAX;
    const uint64_t end = state_ == State::kProbe ? first_us_ + options_.probe_us
                                                 : step_us_ + options_.step_us;
    return end > now_us ? end - now_us : 0;
  }

  bool pacing() const { return state_ != State::kOff; }
  bool probing() const { return state_ == State::kProbe && first_us_ != 0; }
  // Holding at a limit below the run's connections (a doubling did not pay).
  bool holding() const { return state_ == State::kHold; }
  size_t limit() const { return limit_; }

 private:
  enum class State { kProbe, kGrow, kHold, kOff };

  void NewStep(uint64_t now_us, uint64_t bytes) {
    step_us_ = tick_us_ = now_us;
    step_bytes_ = bytes;
    active_us_ = 0;
  }

  // A step is over: its rate against the previous step's decides the limit.
  void EndStep(uint64_t now_us, uint64_t bytes) {
    const double span = double(now_us - step_us_);
    const double rate =
        bytes > step_bytes_ ? double(bytes - step_bytes_) / span : 0.0;
    const double active = active_us_ / span;
    if (state_ == State::kGrow) {
      const double k =
          have_prev_ && prev_active_ > 0 ? active / prev_active_ : 1;
      if (have_prev_ && k > 1.1 && rate < (1 + (k - 1) / 4) * prev_rate_) {
        Hold(now_us, prev_active_);
      } else {
        prev_rate_ = rate;
        prev_active_ = active;
        have_prev_ = true;
        if (limit_ >= connections_ && active >= double(connections_) - 0.5)
          state_ = State::kOff;
        else
          limit_ = std::min(2 * limit_, connections_);
      }
    } else {
      // Holding: the rate over windows of `check_us`; two in a row more
      // than 25 % off the rate the hold was decided on try the doubling at
      // once (two: one window's dip and catch-up may be this machine's
      // CPU, not the link).
      held_us_ += span;
      held_bytes_ += rate * span;
      held_active_us_ += active_us_;
      const double held = held_bytes_ / held_us_;
      const bool checked = held_us_ >= double(options_.check_us);
      if (checked) {
        const int dir = held > 1.25 * held_rate_   ? 1
                        : 1.25 * held < held_rate_ ? -1
                                                   : 0;
        held_moved_ = dir == 0 || (held_moved_ > 0) != (dir > 0)
                          ? dir
                          : held_moved_ + dir;
      }
      if (std::abs(held_moved_) >= 2 || now_us >= hold_until_us_) {
        state_ = State::kGrow;
        prev_rate_ = held;  // the held window's, not one step's
        prev_active_ = held_active_us_ / held_us_;
        have_prev_ = true;
        limit_ = std::min(2 * limit_, connections_);
      } else if (checked) {
        held_us_ = held_bytes_ = held_active_us_ = 0;
      }
    }
    NewStep(now_us, bytes);
  }

  void Hold(uint64_t now_us, double active) {
    limit_ =
        std::clamp<size_t>(size_t(std::ceil(active - 0.05)), 2, connections_);
    state_ = State::kHold;
    hold_until_us_ = now_us + reprobe_us_;
    reprobe_us_ = std::min(2 * reprobe_us_, options_.max_reprobe_us);
    held_rate_ = prev_rate_;
    held_us_ = held_bytes_ = held_active_us_ = 0;
    held_moved_ = 0;
  }

  size_t connections_;
  Options options_;
  State state_ = State::kProbe;
  uint64_t first_us_ = 0;    // the run's first request started
  uint64_t step_us_ = 0;     // the current step started, with
  uint64_t step_bytes_ = 0;  // this many bytes received
  size_t limit_ = 1;
  // This step: requests in flight (as last told) integrated over time.
  uint64_t tick_us_ = 0;
  size_t active_ = 0;
  double active_us_ = 0;
  // The previous step's rate and average requests in flight.
  bool have_prev_ = false;
  double prev_rate_ = 0;
  double prev_active_ = 0;
  uint64_t hold_until_us_ = 0;
  uint64_t reprobe_us_;
  // Holding: the rate it was decided on (the held level's), and this
  // window's time, bytes and requests in flight integrated over time.
  double held_rate_ = 0;
  double held_us_ = 0;
  double held_bytes_ = 0;
  double held_active_us_ = 0;
  int held_moved_ = 0;  // windows in a row above (> 0) or below (< 0) it
};

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_START_PACER_H_
