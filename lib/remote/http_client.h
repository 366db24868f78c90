// HttpClient: one HTTP request at a time, synchronously, retried (private to
// lib/remote). Backends use it for what is not bulk data: listing pages,
// HEAD, DELETE, small PUTs, multipart control, single reads. Bulk transfers
// go through the transfer engine's event loop instead (transfer.cc).
//
// Thread-safety: Perform may be called from several threads at once; each
// call takes an easy handle from a small pool, so connections are reused.
#ifndef FERRY_LIB_REMOTE_HTTP_CLIENT_H_
#define FERRY_LIB_REMOTE_HTTP_CLIENT_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "ferry/result.h"
#include "remote/curl_util.h"
#include "remote/http.h"
#include "remote/retry.h"

namespace ferry::remote {

class HttpClient {
 public:
  HttpClient(HttpSettings settings, RetryPolicy policy);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  const HttpSettings& settings() const { return settings_; }
  const RetryPolicy& policy() const { return policy_; }

  // Sends the request built by make() (called again for each attempt, so a
  // signature is fresh) and returns the final answer, whatever its status:
  // the caller maps a non-2xx answer to a Status (S3 error XML needs the
  // body). Network failures and 408/429/5xx answers are retried with
  // backoff (Retry-After honoured); when retries run out, a network failure
  // is returned as its Status and a 5xx as the last answer.
  //
  // Until a request of this client has reached the server, as the transfer
  // engine does (docs/remote.md "A server that is not there"): a try that
  // could not (refused, not resolved, the connect timed out) uses up no
  // retry, and waits no later than policy.unreachable_ms after the first
  // such try of the client (the first request to reach the server ends
  // every such wait); past that it fails at once, Unavailable "server
  // unreachable: ...".
  //
  // A 2xx body goes to body_sink when one is given, else into
  // response.body; any other body into response.body. response.body holds
  // at most max_body bytes (more is an IOError: a listing page or an error
  // document is never that large). Once a byte reached body_sink, a failure
  // is not retried here (the sink cannot take the bytes twice): the caller
  // resumes with a narrower range.
  //
  // check, when given with body_sink, judges a 2xx answer's status and
  // headers as soon as they are in, before the first byte of its body
  // reaches body_sink (a 200 to a Range request, a wrong Content-Range),
  // with or without a body to come: a non-OK status aborts the attempt and
  // is returned, retried only when it is Unavailable.
  using HeaderCheck = std::function<Status(const HttpResponse&)>;
  Result<HttpResponse> Perform(const std::function<Result<HttpRequest>()>& make,
                               ByteSink* body_sink = nullptr,
                               uint64_t max_body = 16u << 20,
                               const HeaderCheck& check = nullptr);

 private:
  // One attempt; *delivered tells whether body_sink got bytes, *reached
  // whether it got a connection to the server (ReachedServer).
  Result<HttpResponse> Attempt(const HttpRequest& req, ByteSink* body_sink,
                               uint64_t max_body, const HeaderCheck& check,
                               bool* delivered, bool* reached);
  CurlEasy Take();
  void Give(CurlEasy easy);
  // A try of url did not reach the server: until when its retry may wait
  // (0: the window is over, fail), or nullopt once the server has been
  // reached (an ordinary failure).
  std::optional<uint64_t> Unreached(uint64_t now_us);
  void Reached();
  // Sleeps until until_us, or until a request reaches the server.
  void WaitUnreached(uint64_t until_us);

  HttpSettings settings_;
  RetryPolicy policy_;
  std::mutex mu_;
  std::vector<CurlEasy> pool_;
  // The unreachable rule's state (under reach_mu_): whether a request has
  // reached the server, and when the first one could not before any had.
  std::mutex reach_mu_;
  std::condition_variable reach_cv_;
  bool reached_ = false;
  uint64_t first_unreached_us_ = 0;
};

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_HTTP_CLIENT_H_
