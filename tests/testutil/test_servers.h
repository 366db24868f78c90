// Where the integration servers started by tests/integration/servers.sh
// listen. ctest passes the env file's path in FERRY_TEST_SERVERS_ENV.
#ifndef FERRY_TESTS_TESTUTIL_TEST_SERVERS_H_
#define FERRY_TESTS_TESTUTIL_TEST_SERVERS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/result.h"

namespace ferry::test {

struct TestServers {
  std::string dir;  // servers.sh's state directory (logs, configs)

  // nginx, plain HTTP and HTTPS (same root). The access logs have one line
  // per request, tab-separated: request line, Range, status, body bytes
  // sent, If-Range, If-Match, connection serial ("-" when absent); read
  // them with ReadAccessLog().
  std::string http_url;          // http://127.0.0.1:PORT
  std::string http_root;         // the directory nginx serves
  std::string http_access_log;   // the HTTP server's access log
  std::string https_url;         // https://127.0.0.1:PORT (cert also for
                                 // localhost), signed by ca_bundle
  std::string https_access_log;  // the HTTPS server's access log
  std::string ca_bundle;         // the test CA's certificate (PEM)
  // Under <root>/private/ nginx wants "Authorization: Bearer <token>".
  std::string http_token;
  std::string http_private_path;  // "/private/"

  // S3: s3_url is the signature-checking proxy in front of s3rver (a wrong
  // signature or key gets 403); s3_public_url also forwards unsigned
  // requests; s3rver_url is s3rver itself (accepts any signature).
  std::string s3_url;
  std::string s3_public_url;
  std::string s3rver_url;
  std::string s3_root;  // s3rver's data directory
  std::string s3_bucket;
  std::string s3_access_key;
  std::string s3_secret_key;
  std::string s3_session_token;  // the one token the proxy accepts

  // Fault proxies (tests/integration/fault_proxy.py; drive them with
  // testutil/fault_proxy.h): in front of nginx (HTTP) and of s3_url.
  std::string fault_http_url;
  std::string fault_http_control;
  std::string fault_s3_url;
  std::string fault_s3_control;

  static Result<TestServers> FromEnv();
};

// One request in an nginx access log written by servers.sh.
struct AccessLogEntry {
  std::string method;  // "GET"
  std::string target;  // "/dir/obj.bin?x=1"
  std::string range;   // the Range header, "" when absent
  int status = 0;
  int64_t body_bytes_sent = 0;
  std::string if_range;  // "" when absent (quotes are logged as \x22)
  std::string if_match;
  std::string if_none_match;
  int64_t connection = 0;  // nginx's connection serial number
};

// The entries of the access log at path, oldest first. nginx writes an
// entry when it finalizes the request, which can be a moment after the
// client has the whole answer (or, for a client that died, when nginx
// notices): poll for the entries you expect.
Result<std::vector<AccessLogEntry>> ReadAccessLog(const std::string& path);

}  // namespace ferry::test

#endif  // FERRY_TESTS_TESTUTIL_TEST_SERVERS_H_
