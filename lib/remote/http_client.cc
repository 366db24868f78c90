#include "remote/http_client.h"

#include <chrono>
#include <thread>

#include "remote/redirect.h"
#include "remote/transfer_util.h"

namespace ferry::remote {

namespace {
constexpr size_t kPoolMax = 8;
}

HttpClient::HttpClient(HttpSettings settings, RetryPolicy policy)
    : settings_(std::move(settings)), policy_(policy) {
  EnsureCurlGlobalInit();
}

HttpClient::~HttpClient() = default;

CurlEasy HttpClient::Take() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!pool_.empty()) {
      CurlEasy e = std::move(pool_.back());
      pool_.pop_back();
      curl_easy_reset(e.get());  // keeps the connection and DNS caches
      return e;
    }
  }
  return CurlEasy(curl_easy_init());
}

void HttpClient::Give(CurlEasy easy) {
  std::lock_guard<std::mutex> lock(mu_);
  if (pool_.size() < kPoolMax) pool_.push_back(std::move(easy));
}

Result<HttpResponse> HttpClient::Attempt(const HttpRequest& req,
                                         ByteSink* body_sink, uint64_t max_body,
                                         const HeaderCheck& check,
                                         bool* delivered, bool* reached) {
  CurlEasy easy = Take();
  if (!easy) return Status::IOError("curl_easy_init failed");
  CurlExchange ex;
  ex.request = &req;
  Status sink_error;
  bool too_large = false, checked = false;
  // A success is judged as soon as its headers are in: before its first
  // body byte, and also when no body comes.
  ex.on_headers = [&](CurlExchange& x) {
    long code = x.response.status;
    if (body_sink == nullptr || !check || code < 200 || code >= 300)
      return true;
    checked = true;
    sink_error = check(x.response);
    return sink_error.ok();
  };
  ex.on_body = [&](CurlExchange& x, std::string_view data) {
    long code = 0;
    curl_easy_getinfo(easy.get(), CURLINFO_RESPONSE_CODE, &code);
    if (body_sink != nullptr && code >= 200 && code < 300) {
      if (check && !checked) {
        x.response.status = code;
        checked = true;
        sink_error = check(x.response);
        if (!sink_error.ok()) return false;
      }
      sink_error = body_sink->Append(data);
      if (!sink_error.ok()) return false;
      *delivered = true;
      return true;
    }
    if (x.response.body.size() + data.size() > max_body) {
      too_large = true;
      return false;
    }
    x.response.body.append(data);
    return true;
  };
  FERRY_RETURN_IF_ERROR(SetupEasy(easy.get(), &ex, settings_));
  CURLcode rc = curl_easy_perform(easy.get());
  *reached = ReachedServer(easy.get(), rc);
  long code = 0;
  curl_easy_getinfo(easy.get(), CURLINFO_RESPONSE_CODE, &code);
  LogRequest(settings_, req, rc == CURLE_OK ? code : 0);
  Give(std::move(easy));
  if (!sink_error.ok()) return sink_error;
  if (too_large)
    return Status::IOError(
        req.url, "answer larger than " + std::to_string(max_body) + " bytes");
  if (rc != CURLE_OK)
    return CurlError(req.method + " " + req.url, rc, ex.error);
  ex.response.status = code;
  return std::move(ex.response);
}

std::optional<uint64_t> HttpClient::Unreached(uint64_t now_us) {
  std::lock_guard<std::mutex> lock(reach_mu_);
  if (reached_) return std::nullopt;
  if (first_unreached_us_ == 0) first_unreached_us_ = now_us;
  const uint64_t deadline = first_unreached_us_ + policy_.unreachable_ms * 1000;
  return now_us >= deadline ? 0 : deadline;
}

void HttpClient::Reached() {
  std::lock_guard<std::mutex> lock(reach_mu_);
  if (reached_) return;
  reached_ = true;
  reach_cv_.notify_all();
}

void HttpClient::WaitUnreached(uint64_t until_us) {
  const uint64_t now = NowMicros();
  if (until_us <= now) return;
  std::unique_lock<std::mutex> lock(reach_mu_);
  reach_cv_.wait_for(lock, std::chrono::microseconds(until_us - now),
                     [this] { return reached_; });
}

Result<HttpResponse> HttpClient::Perform(
    const std::function<Result<HttpRequest>()>& make, ByteSink* body_sink,
    uint64_t max_body, const HeaderCheck& check) {
  RedirectState redirect;  // the same for every attempt once met
  std::string origin;
  int unreached = 0;  // tries that did not reach the server, before any had
  for (int attempt = 0;; ++attempt) {
    Result<HttpRequest> req = make();
    if (!req.ok()) return req.status();
    if (origin.empty()) origin = req->url;
    ApplyRedirect(redirect, &*req);
    bool delivered = false, reached = true;
    Result<HttpResponse> r =
        Attempt(*req, body_sink, max_body, check, &delivered, &reached);
    if (reached) {
      Reached();
    } else if (!r.ok() && RetryPolicy::IsRetryable(r.status())) {
      const uint64_t now = NowMicros();
      if (std::optional<uint64_t> until = Unreached(now)) {
        if (*until == 0)
          return Status::Unavailable(
              UnreachableMessage(UrlOrigin(req->url), policy_.unreachable_ms));
        // Not a retry of the request: the server is not there (yet).
        --attempt;
        WaitUnreached(std::min(
            now + uint64_t(policy_.BackoffMs(++unreached)) * 1000, *until));
        continue;
      }
    }
    if (r.ok() && settings_.follow_redirects) {
      FERRY_ASSIGN_OR_RETURN(bool moved,
                             FollowRedirect(origin, req->url, *r, &redirect));
      if (moved) {  // not an attempt: the next request, at once
        --attempt;
        continue;
      }
    }
    bool retry = false;
    int64_t retry_after = -1;
    if (!r.ok()) {
      retry = RetryPolicy::IsRetryable(r.status()) && !delivered;
    } else {
      long s = r->status;
      // 501 Not Implemented is an answer, not a hiccup.
      retry = (s == 408 || s == 429 || (s >= 500 && s != 501)) && !delivered;
      retry_after = RetryAfterSeconds(*r);
    }
    if (!retry || attempt >= policy_.max_retries) return r;
    std::this_thread::sleep_for(
        std::chrono::milliseconds(policy_.BackoffMs(attempt + 1, retry_after)));
  }
}

}  // namespace ferry::remote
