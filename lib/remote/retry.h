// When to try a failed request again, and after how long (private to
// lib/remote): exponential backoff with full jitter (AWS Architecture Blog,
// "Exponential Backoff and Jitter"), a server's Retry-After taking
// precedence. Shared by the synchronous HttpClient and the transfer engine.
//
// Thread-safety: a RetryPolicy is immutable; Backoff() may be called from
// several threads.
#ifndef FERRY_LIB_REMOTE_RETRY_H_
#define FERRY_LIB_REMOTE_RETRY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "ferry/remote.h"
#include "ferry/status.h"
#include "remote/http.h"

namespace ferry::remote {

struct RetryPolicy {
  int max_retries = 8;     // after the first attempt
  int64_t base_ms = 200;   // first backoff ceiling
  int64_t cap_ms = 20000;  // no wait longer than this (bar Retry-After)
  int64_t max_retry_after_ms = 120000;  // a longer Retry-After is clamped
  // Tries that could not reach the server before any request had: none
  // counts against max_retries, and none waits past this long after the
  // first (docs/remote.md "A server that is not there").
  uint64_t unreachable_ms = 30000;

  // Whether an attempt that ended in s is worth another one.
  static bool IsRetryable(const Status& s) { return s.IsUnavailable(); }

  // Milliseconds to wait before retry number `retry` (1 = the first retry):
  // a uniform draw in [0, min(cap, base * 2^(retry-1))], or the server's
  // Retry-After (seconds) when it sent one, clamped.
  int64_t BackoffMs(int retry, int64_t retry_after_s = -1) const;
};

// The retry policy RemoteOptions ask for (--retries, the unreachable
// window).
RetryPolicy RetryPolicyFrom(const RemoteOptions& options);

// Why a run or a client gave up on a server no request reached in
// unreachable_ms: "server unreachable: no request reached ORIGIN in 30 s
// (connections refused or timed out): gave up".
std::string UnreachableMessage(std::string_view origin,
                               uint64_t unreachable_ms);

// The Retry-After header of a response in seconds (delta-seconds form), or
// -1. The HTTP-date form is rare for S3 and treated as absent.
int64_t RetryAfterSeconds(const HttpResponse& response);

// A short name of why an attempt failed, for the per-cause retry counts of
// a transfer report: the HTTP status ("503") when there was an answer, else
// from the CURLcode: "timeout" (incl. stalls), "reset", "short-body",
// "connect", "network"; "content" for an answer refused by our checks.
std::string RetryCause(int curl_code, long http_status);

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_RETRY_H_
