#include "remote/multi_loop.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace ferry::remote {

CurlMultiLoop::CurlMultiLoop(const HttpSettings& backend_settings,
                             const TransferOptions& options,
                             Options loop_options, TransferReport* report)
    : settings_(backend_settings),
      loop_options_(loop_options),
      report_(report),
      bucket_(options.bwlimit, NowMicros()),
      progress_(options, report),
      pacer_(size_t(std::max(1, options.connections)),
             options.pace_start && loop_options.pace_start,
             {.probe_us = options.pace_probe_ms * 1000}) {
  settings_.low_speed_limit = options.low_speed_limit;
  settings_.low_speed_time = options.low_speed_time;
  policy_.max_retries = options.max_retries;
  unreachable_ms_ = options.unreachable_ms;
  connections_ = size_t(std::max(1, options.connections));
  max_open_ = 2 * connections_ + 2;
}

CurlMultiLoop::~CurlMultiLoop() {
  for (auto& [r, owned] : reqs_) {
    if (r->easy) {
      curl_multi_remove_handle(multi_, r->easy);
      curl_easy_cleanup(r->easy);
    }
  }
  for (CURL* e : pool_) curl_easy_cleanup(e);
  if (multi_) curl_multi_cleanup(multi_);
}

Status CurlMultiLoop::Run(Client* client) {
  client_ = client;
  EnsureCurlGlobalInit();
  multi_ = curl_multi_init();
  if (multi_ == nullptr) return Status::IOError("curl_multi_init failed");
  curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, long(connections_ * 2));
  for (;;) {
    StartRipe();
    StartNew();
    if (active_ == 0 && waiting_.empty() && client_->OpenCount() == 0 &&
        !client_->MoreToOpen())
      break;
    int running = 0;
    CURLMcode mc = curl_multi_perform(multi_, &running);
    if (mc != CURLM_OK)
      return Status::IOError("curl_multi_perform", curl_multi_strerror(mc));
    int left = 0;
    while (CURLMsg* m = curl_multi_info_read(multi_, &left)) {
      if (m->msg != CURLMSG_DONE) continue;
      LoopRequest* r = nullptr;
      curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &r);
      Finish(r, m->data.result);
    }
    Unpause();
    client_->OnTurn();
    progress_.Tick(false);
    // Also while the pacer's probe holds the next start back (nothing in
    // flight after the first request failed unanswered). Once it paces it
    // lets a request start whenever none is in flight: no wait then.
    const bool idle = active_ == 0 && waiting_.empty() && client_->Held() == 0;
    if (!idle || pacer_.probing()) {
      if (idle) ++idle_waits_;
      curl_multi_poll(multi_, nullptr, 0, PollTimeoutMs(), nullptr);
    }
  }
  // The last buffers ran the bucket into debt: paid before the run ends,
  // so a small object does not beat the limit.
  while (uint64_t wait = bucket_.WaitMicros(NowMicros()))
    std::this_thread::sleep_for(std::chrono::microseconds(wait));
  return Status::OK();
}

// Retries whose time has come go first, while there is room.
void CurlMultiLoop::StartRipe() {
  // Given up: the retries waiting fail now, unsent (one that failed takes
  // the others of its object with it).
  while (unreachable_ && !waiting_.empty()) {
    LoopRequest* r = waiting_.back();
    waiting_.pop_back();
    Start(r);
  }
  uint64_t now = NowMicros();
  for (size_t i = 0; i < waiting_.size() && Room();) {
    LoopRequest* r = waiting_[i];
    if (r->not_before_us <= now) {
      waiting_.erase(waiting_.begin() + i);
      Start(r);
    } else {
      ++i;
    }
  }
}

// At the time the headers came: when the body comes in the same turn
// (a first part of 8 MiB on loopback) or late, the loop looks after the
// probe's time, and a short path passed for a long one.
void CurlMultiLoop::NoteAnswers() {
  if (!pacer_.probing()) return;
  for (auto& [r, owned] : reqs_)
    if (r->easy && r->ex.headers_done)
      pacer_.OnAnswer(r->ex.headers_us, report_->bytes);
}

// Requests of open objects, opening more objects while there is room (and
// the pacer allows).
void CurlMultiLoop::StartNew() {
  NoteAnswers();
  pacer_.Tick(NowMicros(), report_->bytes, active_);
  while (Room() && pacer_.Allows(NowMicros(), report_->bytes, active_)) {
    if (client_->StartRequest()) continue;
    if (client_->OpenCount() >= max_open_ || !client_->MoreToOpen()) break;
    client_->OpenNext();
  }
  LogPacer();
}

// -v: what the pacer decided (docs/remote.md "Starting gently"): a change
// of mode (pacing or not, holding or not), a hold at another limit, a limit
// lowered, or one that doubled since the last line; not each +1 while it
// grows (dozens of lines on many small objects).
void CurlMultiLoop::LogPacer() {
  const int now = !pacer_.pacing() ? -1 : int(pacer_.limit());
  const bool holding = pacer_.holding();
  if (now == logged_limit_ && holding == logged_holding_) return;
  const bool mode = (now < 0) != (logged_limit_ < 0) ||
                    holding != logged_holding_ || logged_limit_ == -2;
  if (!mode && !holding && now > logged_limit_ && now < 2 * logged_limit_)
    return;  // grown by less than a doubling: said when it doubles
  if (settings_.log && logged_limit_ != -2) {
    settings_.log(now < 0 ? "pacing: every connection in use"
                  : holding
                      ? "pacing: holding at " + std::to_string(now) +
                            " requests in flight (more did not raise the rate)"
                      : "pacing: up to " + std::to_string(now) +
                            " requests in flight");
  }
  logged_limit_ = now;
  logged_holding_ = holding;
}

void CurlMultiLoop::Start(LoopRequest* r) {
  r->ex = CurlExchange();
  r->paused = false;
  if (unreachable_) return client_->OnStartFailed(r, NotSent());
  Status s = client_->Prepare(r);
  if (!s.ok()) return client_->OnStartFailed(r, s);
  r->ex.request = &r->http;
  if (!bucket_.unlimited()) {
    r->ex.should_pause = [this, r](size_t n) {
      if (bucket_.Take(n, NowMicros())) return false;
      r->paused = true;
      return true;
    };
  }
  CURL* easy;
  if (!pool_.empty()) {
    easy = pool_.back();
    pool_.pop_back();
    curl_easy_reset(easy);
  } else {
    easy = curl_easy_init();
  }
  s = SetupEasy(easy, &r->ex, settings_);
  curl_easy_setopt(easy, CURLOPT_PRIVATE, r);
  if (loop_options_.buffer_size > 0)
    curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, loop_options_.buffer_size);
  if (loop_options_.upload_buffer_size > 0)
    curl_easy_setopt(easy, CURLOPT_UPLOAD_BUFFERSIZE,
                     loop_options_.upload_buffer_size);
  r->easy = easy;
  pacer_.OnStart(NowMicros());
  ++active_;
  peak_ = std::max(peak_, active_);
  ++report_->requests;
  if (!r->retry_cause.empty()) {
    ++report_->retries[r->retry_cause];
    r->retry_cause.clear();
  }
  if (!s.ok() || curl_multi_add_handle(multi_, easy) != CURLM_OK)
    client_->OnStartFailed(
        r, s.ok() ? Status::IOError("curl_multi_add_handle") : s);
}

void CurlMultiLoop::Finish(LoopRequest* r, CURLcode rc) {
  long status = 0;
  curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
  r->ex.response.status = status;
  LogRequest(settings_, r->http, status);
  if (r->ex.headers_done) pacer_.OnAnswer(r->ex.headers_us, report_->bytes);
  pacer_.OnEnd();
  const bool unreached = !ReachedServer(r->easy, rc);
  Release(r);
  r->last_unreached = unreached && !reached_;
  if (!unreached) {
    // The server is there: the retries waiting for it go now.
    if (!reached_)
      for (LoopRequest* w : waiting_) w->not_before_us = 0;
    reached_ = true;
  } else if (!reached_) {
    const uint64_t now = NowMicros();
    if (first_refused_us_ == 0) first_refused_us_ = now;
    if (now - first_refused_us_ >= unreachable_ms_ * 1000 && !unreachable_)
      GiveUp(r);
  }
  client_->OnDone(r, rc, status);
}

void CurlMultiLoop::GiveUp(const LoopRequest* r) {
  unreachable_ = true;
  server_ = UrlOrigin(r->http.url);
  report_->warnings.push_back(UnreachableMessage(server_, unreachable_ms_) +
                              ", nothing more is sent");
}

Status CurlMultiLoop::NotSent() const {
  return Status::Unavailable(server_, "not sent: the run gave up on it");
}

void CurlMultiLoop::Wakeup() {
  if (CURLM* m = multi_.load()) curl_multi_wakeup(m);
}

void CurlMultiLoop::Release(LoopRequest* r) {
  if (r->easy == nullptr) return;
  curl_multi_remove_handle(multi_, r->easy);
  pool_.push_back(r->easy);
  r->easy = nullptr;
  --active_;
}

void CurlMultiLoop::Retry(LoopRequest* r, std::string cause) {
  Release(r);
  r->retry_cause = std::move(cause);
  const uint64_t now = NowMicros();
  if (r->last_unreached && !reached_) {
    // No answer to honour; the backoff grows as for any retry, but the
    // window's end is when the run decides.
    ++r->unreached;
    r->not_before_us =
        std::min(now + uint64_t(policy_.BackoffMs(r->unreached)) * 1000,
                 UnreachableDeadline());
  } else {
    ++r->attempt;
    r->not_before_us =
        now + uint64_t(policy_.BackoffMs(r->attempt,
                                         RetryAfterSeconds(r->ex.response))) *
                  1000;
  }
  waiting_.push_back(r);
}

void CurlMultiLoop::Resend(LoopRequest* r) {
  Release(r);
  r->not_before_us = 0;
  waiting_.push_back(r);
}

void CurlMultiLoop::Delete(LoopRequest* r) {
  Release(r);
  auto w = std::find(waiting_.begin(), waiting_.end(), r);
  if (w != waiting_.end()) waiting_.erase(w);
  reqs_.erase(r);
}

void CurlMultiLoop::Cancel(const void* owner) {
  std::vector<LoopRequest*> mine;
  for (auto& [r, owned] : reqs_)
    if (r->owner == owner) mine.push_back(r);
  for (LoopRequest* r : mine) Delete(r);
}

void CurlMultiLoop::Unpause() {
  if (bucket_.unlimited()) return;
  uint64_t now = NowMicros();
  for (auto& [r, owned] : reqs_) {
    if (!r->paused || r->easy == nullptr) continue;
    if (bucket_.WaitMicros(now) > 0) return;
    r->paused = false;
    curl_easy_pause(r->easy, CURLPAUSE_CONT);
  }
}

int CurlMultiLoop::PollTimeoutMs() {
  uint64_t now = NowMicros();
  uint64_t wait = 100000;
  // Retries and the pacer's next start wait for room as well as for their
  // time: with every connection in use, the end of a request (or Wakeup)
  // is what can start them. A retry that was due then made the wait 0, and
  // the loop spun until a request ended.
  if (Room()) {
    for (LoopRequest* r : waiting_)
      wait =
          std::min(wait, r->not_before_us > now ? r->not_before_us - now : 0);
    // At least a millisecond: with nothing to start the pacer's clock is
    // not looked at, and its wait may stay 0.
    wait = std::min(wait, std::max<uint64_t>(pacer_.WaitMicros(now), 1000));
  }
  if (!bucket_.unlimited()) {
    for (auto& [r, owned] : reqs_)
      if (r->paused) wait = std::min(wait, bucket_.WaitMicros(now));
  }
  return int((wait + 999) / 1000);
}

}  // namespace ferry::remote
