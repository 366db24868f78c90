// The checks every GET answer passes before one byte of its body is kept
// (private to lib/remote; docs/remote.md): a ranged GET must be a 206 whose
// Content-Range is exactly the range asked, and carry the ETag the object had
// when the download started. Anything else is an error, never data.
#ifndef FERRY_LIB_REMOTE_RANGE_CHECK_H_
#define FERRY_LIB_REMOTE_RANGE_CHECK_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "ferry/remote.h"
#include "ferry/status.h"
#include "remote/http.h"

namespace ferry::remote {

// "bytes FIRST-LAST/TOTAL" (TOTAL may be "*") or "bytes */TOTAL".
struct ContentRange {
  bool unsatisfied = false;  // the "*/TOTAL" form (416)
  uint64_t first = 0, last = 0;
  std::optional<uint64_t> total;
};
std::optional<ContentRange> ParseContentRange(std::string_view value);

// What a checked answer says about the object.
struct GetAnswer {
  uint64_t offset = 0;            // first byte of the body in the object
  uint64_t length = 0;            // body bytes to expect
  std::optional<uint64_t> total;  // the object's size, when the answer says
  std::string etag;               // "" when the server sent none
};

// Checks the final answer to a GET of `range` (nullopt: the whole object)
// that was conditioned on `etag` ("" = no condition):
//  - 206 with exactly the asked Content-Range (a range asked "to the end",
//    or beyond the end when `clip_ok`, may come back shorter);
//  - 200 only when no range was asked;
//  - for a first request from offset 0 (`clip_ok`), an empty object may
//    answer 416 "bytes */0" or 206 "bytes 0-0/0" (s3rver; its
//    Content-Length 1 is a lie): total 0, length 0; and a 200 with a
//    Content-Length to such a request without a condition is the whole
//    object (a server that ignores Range; nginx for an empty file);
//  - the ETag unchanged. A 200 to a ranged GET whose ETag differs (If-Range
//    failed), or a 412 (If-Match failed), is FailedPrecondition: the object
//    changed. Any other mismatch is Unavailable (retryable, "content").
// Non-2xx answers are not judged here (the backend's ErrorFor does).
Result<GetAnswer> CheckGetAnswer(std::string_view what,
                                 const std::optional<ByteRange>& range,
                                 std::string_view etag, bool clip_ok,
                                 const HttpResponse& response);

// The Range header value for range ("bytes=A-B" or "bytes=A-").
std::string RangeHeader(const ByteRange& range);
// The Range header value for several ranges ("bytes=A-B,C-D").
std::string MultiRangeHeader(const std::vector<ByteRange>& ranges);

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_RANGE_CHECK_H_
