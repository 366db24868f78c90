#include "remote/retry.h"

#include <curl/curl.h>

#include <algorithm>
#include <charconv>
#include <random>

namespace ferry::remote {

int64_t RetryPolicy::BackoffMs(int retry, int64_t retry_after_s) const {
  if (retry_after_s >= 0)
    return std::min(retry_after_s * 1000, max_retry_after_ms);
  int shift = std::clamp(retry - 1, 0, 30);
  int64_t ceiling = std::min(cap_ms, base_ms << shift);
  thread_local std::minstd_rand rng(std::random_device{}());
  return std::uniform_int_distribution<int64_t>(0, ceiling)(rng);
}

RetryPolicy RetryPolicyFrom(const RemoteOptions& options) {
  RetryPolicy p;
  p.max_retries = options.max_retries;
  p.unreachable_ms = options.unreachable_ms;
  return p;
}

std::string UnreachableMessage(std::string_view origin,
                               uint64_t unreachable_ms) {
  const uint64_t ms = unreachable_ms;
  const std::string window = ms % 1000 == 0 ? std::to_string(ms / 1000) + " s"
                                            : std::to_string(ms) + " ms";
  return "server unreachable: no request reached " + std::string(origin) +
         " in " + window + " (connections refused or timed out): gave up";
}

int64_t RetryAfterSeconds(const HttpResponse& response) {
  const std::string* v = FindHeader(response.headers, "retry-after");
  if (v == nullptr || v->empty()) return -1;
  int64_t s = -1;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), s);
  if (ec != std::errc() || p != v->data() + v->size() || s < 0) return -1;
  return s;
}

std::string RetryCause(int curl_code, long http_status) {
  if (http_status >= 400) return std::to_string(http_status);
  switch (curl_code) {
    case CURLE_OK:
      return "content";
    case CURLE_OPERATION_TIMEDOUT:
      return "timeout";
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
      return "reset";
    case CURLE_PARTIAL_FILE:
      return "short-body";
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return "connect";
    default:
      return "network";
  }
}

}  // namespace ferry::remote
