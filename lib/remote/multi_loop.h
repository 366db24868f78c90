// CurlMultiLoop: the one libcurl-multi event loop of the transfer engine
// (private to lib/remote; docs/remote.md). GetObjects and PutObjects run
// their requests on it; it owns the requests, the multi handle and a pool of
// easy handles, keeps at most `connections` requests in flight, starts
// retries when their backoff has passed, meters received bodies through the
// run's one token bucket (--bwlimit), paces the run's first requests on a
// short path (StartPacer) and ticks the progress callback. What a
// request means (which object, which part, how to judge its answer) stays
// with the engine, the loop's Client.
//
// Thread-safety: one thread (the caller of Run).
#ifndef FERRY_LIB_REMOTE_MULTI_LOOP_H_
#define FERRY_LIB_REMOTE_MULTI_LOOP_H_

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ferry/status.h"
#include "ferry/transfer.h"
#include "remote/curl_util.h"
#include "remote/http.h"
#include "remote/retry.h"
#include "remote/start_pacer.h"
#include "remote/token_bucket.h"
#include "remote/transfer_util.h"

namespace ferry::remote {

// One request of a run, in flight or waiting for its retry. Engines derive
// their own request type from it.
struct LoopRequest {
  virtual ~LoopRequest() = default;
  const void* owner = nullptr;  // the object it belongs to (Cancel)
  int attempt = 0;              // retries so far
  // Tries that did not reach the server before any request of the run
  // had (CurlMultiLoop::Retry): not counted in attempt, only in the
  // backoff.
  int unreached = 0;
  bool last_unreached = false;  // the last try was one
  // Set when r is to be sent again: why (a TransferReport::retries cause),
  // counted when it is sent (Start), not when it is scheduled: a retry that
  // never goes (the run gave up, its object failed) is no retry.
  std::string retry_cause;
  uint64_t not_before_us = 0;  // a waiting retry starts at this time
  HttpRequest http;
  CurlExchange ex;
  CURL* easy = nullptr;  // while in flight
  bool paused = false;   // by the token bucket
};

class CurlMultiLoop {
 public:
  class Client {
   public:
    virtual ~Client() = default;
    // Starts one request of an open object (via Start); false when no open
    // object has one to start now.
    virtual bool StartRequest() = 0;
    // Objects open (being transferred), and whether more are waiting to be
    // opened; OpenNext opens the next (and may start or finish it).
    virtual size_t OpenCount() const = 0;
    virtual bool MoreToOpen() const = 0;
    virtual void OpenNext() = 0;
    // Builds r->http (a fresh request, signed anew) and sets r->ex.on_body.
    virtual Status Prepare(LoopRequest* r) = 0;
    // Prepare or the handle setup failed (r is still registered).
    virtual void OnStartFailed(LoopRequest* r, const Status& s) = 0;
    // The request ended: rc and the final HTTP status (r->ex.response
    // holds headers and the kept body). The handle is released already;
    // the client deletes r (Delete/Cancel) or retries it (Retry).
    virtual void OnDone(LoopRequest* r, CURLcode rc, long status) = 0;
    // Once per turn of the loop.
    virtual void OnTurn() {}
    // Connection slots held by work on another thread that will come back
    // to the loop (a finished part being synced: a kill loses it as it
    // would a request in flight). They count against `connections`, and
    // while any is held the loop waits for Wakeup (or its poll timeout)
    // rather than spin.
    virtual size_t Held() const { return 0; }
  };

  struct Options {
    long buffer_size = 0;         // CURLOPT_BUFFERSIZE when > 0
    long upload_buffer_size = 0;  // CURLOPT_UPLOAD_BUFFERSIZE when > 0
    // Downloads: pace the run's first requests (StartPacer), unless
    // TransferOptions::pace_start is false. Uploads start at once: the
    // bursts are the client's own, and their bytes count only when a
    // request ends.
    bool pace_start = false;
  };

  CurlMultiLoop(const HttpSettings& backend_settings,
                const TransferOptions& options, Options loop_options,
                TransferReport* report);
  ~CurlMultiLoop();
  CurlMultiLoop(const CurlMultiLoop&) = delete;
  CurlMultiLoop& operator=(const CurlMultiLoop&) = delete;

  // Runs until nothing is in flight, nothing waits, no object is open and
  // none is left to open. Not OK only when libcurl itself fails.
  Status Run(Client* client);

  // Registers a new request (owned by the loop until Delete/Cancel).
  template <class T>
  T* Add(std::unique_ptr<T> r) {
    T* raw = r.get();
    reqs_[raw] = std::move(r);
    return raw;
  }
  // Puts a registered request in flight (a retry_cause set is counted
  // then, once it is sent).
  void Start(LoopRequest* r);
  // Whether r may be tried again under the retry policy. A try that did
  // not reach the server (refused, not resolved, the connect timed out)
  // before any request of the run had is not counted (Retry): a server
  // that comes up late costs no request its retries. Not once the run has
  // given up (GaveUp).
  bool CanRetry(const LoopRequest* r) const {
    return r->attempt < policy_.max_retries && !unreachable_;
  }
  // Schedules r's next attempt after the backoff (Retry-After honoured),
  // counted in the report's retries under cause when it is sent. Before
  // any request has reached the server, no later than the end of the
  // unreachable window (and the first request that reaches it starts every
  // waiting retry at once).
  void Retry(LoopRequest* r, std::string cause);
  // Starts r again as soon as there is room, not counted as a retry (it
  // was redirected).
  void Resend(LoopRequest* r);
  void Delete(LoopRequest* r);
  // Deletes every request of owner, in flight or waiting.
  void Cancel(const void* owner);

  // Ends the loop's current wait at once; from any thread.
  void Wakeup();

  // Whether the run gave up on the server: no request of it has reached
  // the server, and connecting has failed for TransferOptions::
  // unreachable_ms since the first such failure. Nothing is sent from
  // then on: a request started fails at once (OnStartFailed, NotSent), as
  // do the retries waiting, and the report has one warning that says so.
  bool GaveUp() const { return unreachable_; }
  // Why an item was not sent after the run gave up.
  Status NotSent() const;

  // Requests in flight now.
  size_t Active() const { return active_; }
  // How often the loop waited with nothing in flight, waiting or held: only
  // while the pacer's probe holds the next start back.
  size_t IdleWaits() const { return idle_waits_; }
  // The most requests in flight at once since the last call (and now).
  size_t TakePeak() {
    const size_t peak = std::max(peak_, active_);
    peak_ = active_;
    return peak;
  }
  // Connection slots free for new requests now.
  size_t Free() const {
    return Room() ? connections_ - active_ - client_->Held() : 0;
  }

  const HttpSettings& settings() const { return settings_; }
  ProgressTicker& progress() { return progress_; }

 private:
  bool Room() const { return active_ + client_->Held() < connections_; }
  // The first request that has its answer's headers ends the pacer's probe.
  void NoteAnswers();
  void StartRipe();
  void StartNew();
  void LogPacer();
  void Finish(LoopRequest* r, CURLcode rc);
  void GiveUp(const LoopRequest* r);  // the warning, once
  void Release(LoopRequest* r);       // its easy handle back to the pool
  void Unpause();
  int PollTimeoutMs();

  HttpSettings settings_;
  Options loop_options_;
  TransferReport* report_;
  TokenBucket bucket_;
  RetryPolicy policy_;
  ProgressTicker progress_;
  size_t connections_ = 16;
  size_t max_open_ = 34;  // objects open at once: 2 * connections + 2
  StartPacer pacer_;
  Client* client_ = nullptr;
  std::atomic<CURLM*> multi_{nullptr};
  size_t active_ = 0;
  size_t peak_ = 0;  // TakePeak's
  size_t idle_waits_ = 0;
  int logged_limit_ = -2;  // LogPacer's last: -1 pacing over
  bool logged_holding_ = false;
  // Whether any request reached the server (connected); when the first
  // failed to connect before any did; and whether that went on for
  // unreachable_ms_ (GaveUp). Retries wait at most until then.
  uint64_t UnreachableDeadline() const {
    return first_refused_us_ + unreachable_ms_ * 1000;
  }
  bool reached_ = false;
  bool unreachable_ = false;
  uint64_t first_refused_us_ = 0;
  uint64_t unreachable_ms_ = 30000;
  std::string server_;  // scheme://host:port of the server given up on
  std::unordered_map<LoopRequest*, std::unique_ptr<LoopRequest>> reqs_;
  std::vector<LoopRequest*> waiting_;
  std::vector<CURL*> pool_;
};

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_MULTI_LOOP_H_
