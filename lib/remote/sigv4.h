// AWS Signature Version 4 (header authentication) for S3 requests.
//
// libcurl 7.88's CURLOPT_AWS_SIGV4 signs the raw URL, so ListObjectsV2
// queries and keys with spaces, '+' or non-ASCII bytes fail against a strict
// server. SignV4 builds the canonical request itself and returns the URL path
// and query in exactly that canonical encoding, so the server decodes what was
// signed. Tested against AWS's documentation vectors and botocore's signer
// (tests/unit/remote/sigv4_test.cc, sigv4_botocore_oracle.py).
//
// Thread-safety: all functions are safe to call from several threads at once
// (the derived-key cache is guarded by a mutex).
#ifndef FERRY_REMOTE_SIGV4_H_
#define FERRY_REMOTE_SIGV4_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ferry::remote {

struct AwsCredentials {
  std::string access_key_id, secret_access_key;
  std::string session_token;  // may be empty
};

// Percent-encodes per SigV4: the unreserved bytes A-Za-z0-9-._~ are kept,
// every other byte becomes %XX (upper-case hex), '/' is kept when
// keep_slash. Bytes are encoded as bytes, UTF-8 or not.
std::string AwsUriEncode(std::string_view s, bool keep_slash);

struct SigV4Request {
  std::string method;  // "GET", "PUT", ...
  // Host header value, e.g. "127.0.0.1:9000". Not among the result's
  // headers: the URL the caller connects to must have exactly this authority
  // (libcurl sends it as Host).
  std::string host;
  // DECODED, e.g. "/bucket/a b+c/%.png"; a leading "/" is added if missing.
  std::string path;
  // DECODED (key, value) pairs in any order; a key without a value has "".
  std::vector<std::pair<std::string, std::string>> query;
  // Extra headers to send AND sign (range, if-match, content-type, x-amz-*).
  // Names may repeat (values are joined by ',' as a server joins them). A
  // Host, Authorization, x-amz-date, x-amz-content-sha256 or
  // x-amz-security-token given here is replaced by the signer's own.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string payload_sha256;  // lower-case hex, or "UNSIGNED-PAYLOAD"
};

struct SigV4Result {
  // Canonical encoded path and query to put in the URL, e.g.
  // "/bucket/a%20b%2Bc/%25.png?list-type=2&prefix=x". Send it as is:
  // libcurl needs CURLOPT_PATH_AS_IS, or it squashes "/./" and "/../"
  // (curl_util.cc sets it; sigv4_proxy_test has such a key).
  std::string url_path_and_query;
  // ALL headers to send: the request's (values trimmed and inner whitespace
  // collapsed, as signed) + x-amz-date, x-amz-content-sha256,
  // x-amz-security-token (if any), Authorization.
  std::vector<std::pair<std::string, std::string>> headers;
};

// Signs req for (region, service) at unix_time (seconds since the epoch).
SigV4Result SignV4(const SigV4Request& req, const AwsCredentials& creds,
                   std::string_view region, std::string_view service,
                   std::int64_t unix_time);

// s with A-Z lower-cased (header names, INI keys); other bytes as they are.
std::string AsciiLower(std::string_view s);

// Lower-case hex SHA-256 of data (OpenSSL EVP).
std::string Sha256Hex(std::string_view data);

// "UNSIGNED-PAYLOAD": x-amz-content-sha256 for a body that is streamed.
inline constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";

}  // namespace ferry::remote

#endif  // FERRY_REMOTE_SIGV4_H_
