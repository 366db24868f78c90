// FaultProxy: drives a tests/integration/fault_proxy.py instance (started
// by servers.sh in front of nginx and of the S3 signature proxy) from a
// gtest: add a rule, read the counters, reset. Over its control port, with
// libcurl.
//
//   auto proxy = test::FaultProxy::FromEnv(test::FaultProxy::kHttp);
//   ASSERT_TRUE(proxy.ok());
//   ASSERT_OK(proxy->Reset());
//   ASSERT_TRUE(proxy->Add(test::FaultRule::Reset(65536).Path("/big")).ok());
//   ... fetch proxy->url() + "/big.bin" ...
//   EXPECT_EQ(proxy->Stats()->paths["/big.bin"].requests, 2);
#ifndef FERRY_TESTS_TESTUTIL_FAULT_PROXY_H_
#define FERRY_TESTS_TESTUTIL_FAULT_PROXY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "ferry/result.h"
#include "ferry/status.h"

namespace ferry::test {

// One rule; see fault_proxy.py's docstring for the exact semantics. Build
// with an action constructor, then narrow with the matchers.
struct FaultRule {
  std::string action;
  // Which requests: method ("" any), path substring (query included), only
  // requests with a Range header (or only those asking for several ranges,
  // or only those whose Range starts at byte range_start: a part by its
  // offset, whatever order the requests come in); fire from the nth match
  // on, `times` times (0 = every time).
  std::string method;
  std::string path;
  bool range_only = false;
  bool multi_range_only = false;
  int64_t range_start = -1;  // -1: any
  int nth = 1;
  int times = 1;
  // Action parameters.
  int64_t bytes = 0;   // reset, stall, short_body: body bytes first sent; flip
  double seconds = 0;  // stall
  int64_t rate = 0;    // throttle: body bytes a second
  bool then_close = false;    // stall: close afterwards instead of continuing
  int status = 0;             // status
  int retry_after = -1;       // status: Retry-After seconds, -1 none
  std::string code;           // status: S3 error code ("" by status)
  std::string content_range;  // wrong_content_range: "" = shifted range
  // wrong_content_range in a multipart answer: the first part's total
  // becomes "*" (its Content-Range keeps its length).
  bool star_total = false;
  int64_t total_delta = 0;  // first_range: the answer's total moved by it
  std::string command;      // mutate: sh -c COMMAND
  std::string file;         // mutate: overwrite this file...
  std::optional<std::string> content;  // ...with this (else flip a byte)
  std::string put_url;                 // mutate: PUT content here

  // Reset the connection (RST) after `bytes` body bytes.
  static FaultRule Reset(int64_t bytes);
  // Send nothing for `seconds` after `bytes` body bytes, then go on (or
  // close, with then_close).
  static FaultRule Stall(int64_t bytes, double seconds,
                         bool then_close = false);
  // Send the body at `rate` bytes a second (a slow connection).
  static FaultRule Throttle(int64_t rate);
  // Answer `status` (S3 error body) instead of forwarding.
  static FaultRule Respond(int status, int retry_after = -1);
  // Drop Range/If-Range: 200 with the whole object.
  static FaultRule IgnoreRange();
  // A GET of several ranges forwarded as a GET of its first range (a
  // server that serves only one); total_delta moves the total it tells.
  static FaultRule FirstRangeOnly(int64_t total_delta = 0);
  // A multipart/byteranges answer whose first part is a byte short of its
  // Content-Range (one byte added after the closing boundary keeps the
  // answer's length).
  static FaultRule ShortPart();
  // Upstream's Content-Length, but close after `bytes` body bytes.
  static FaultRule ShortBody(int64_t bytes);
  // A Content-Range for another range of the same length (in a
  // multipart/byteranges answer: its first part's, moved by one byte).
  static FaultRule WrongContentRange();
  // Invert the answer's body byte number `bytes` (the length is kept).
  static FaultRule Flip(int64_t bytes);
  // After answering, change the object.
  static FaultRule MutateFile(std::string file);
  static FaultRule MutateCommand(std::string command);
  static FaultRule MutatePut(std::string url, std::string content);

  FaultRule& Method(std::string m) {
    method = std::move(m);
    return *this;
  }
  FaultRule& Path(std::string p) {
    path = std::move(p);
    return *this;
  }
  FaultRule& RangeOnly() {
    range_only = true;
    return *this;
  }
  FaultRule& MultiRangeOnly() {
    multi_range_only = true;
    return *this;
  }
  // Only requests whose Range header asks for bytes from `offset` on
  // ("bytes=OFFSET-..."): one part, however the requests are ordered.
  FaultRule& RangeStart(int64_t offset) {
    range_start = offset;
    return *this;
  }
  FaultRule& Nth(int n) {
    nth = n;
    return *this;
  }
  FaultRule& Times(int n) {
    times = n;
    return *this;
  }

  std::string ToJson() const;
};

struct FaultStats {
  struct Path {
    int64_t requests = 0;
    int64_t bytes_sent = 0;  // body bytes sent to clients
  };
  int64_t requests = 0;
  int64_t faults = 0;                 // requests a rule fired on
  int64_t connections = 0;            // client connections accepted
  std::map<std::string, Path> paths;  // by request path, without query
};

class FaultProxy {
 public:
  enum Target { kHttp, kS3 };  // in front of nginx / of the S3 proxy

  FaultProxy(std::string url, std::string control_url)
      : url_(std::move(url)), control_(std::move(control_url)) {}

  // The instance servers.sh started in front of `target`.
  static Result<FaultProxy> FromEnv(Target target = kHttp);

  // Where clients connect (instead of the real server).
  const std::string& url() const { return url_; }

  // Adds a rule; returns its id.
  Result<int> Add(const FaultRule& rule);
  // Clears rules and counters (and wakes stalled transfers).
  ferry::Status Reset();
  Result<FaultStats> Stats();

 private:
  Result<std::string> Call(const std::string& method, const std::string& path,
                           const std::string& body);
  std::string url_;
  std::string control_;
};

}  // namespace ferry::test

#endif  // FERRY_TESTS_TESTUTIL_FAULT_PROXY_H_
