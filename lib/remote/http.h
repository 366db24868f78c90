// HTTP requests as the remote layer passes them around (private to
// lib/remote). A backend builds them (URL, signed headers); the synchronous
// HttpClient (http_client.cc) or the transfer engine's event loop
// (transfer.cc) executes them with libcurl. docs/remote.md.
#ifndef FERRY_LIB_REMOTE_HTTP_H_
#define FERRY_LIB_REMOTE_HTTP_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/remote.h"
#include "ferry/result.h"
#include "ferry/status.h"

namespace ferry::remote {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method = "GET";
  std::string url;  // fully encoded
  Headers headers;  // sent as given (Host is set by libcurl from the URL)
  // The body: none, bytes in memory, or a range of a ByteSource.
  std::string body;
  ByteSource* body_source = nullptr;  // not owned
  uint64_t body_offset = 0, body_length = 0;
  // Set on ranged GETs: the engine checks the answer against it.
  std::optional<ByteRange> range;
  // false after a redirect to another origin: HttpSettings::extra_headers
  // (--header, tokens) are not sent (remote/redirect.h).
  bool send_extra_headers = true;
};

// Case-insensitive lookup; nullptr when absent.
const std::string* FindHeader(const Headers& headers, std::string_view name);

struct HttpResponse {
  long status = 0;
  Headers headers;   // names lower-cased, values trimmed
  std::string body;  // kept only up to HttpClient's cap (error XML, pages)
};

// Settings every request of one backend shares (from RemoteOptions).
struct HttpSettings {
  std::string ca_bundle;  // "" = the system CA store
  Headers extra_headers;  // --header, never logged
  uint64_t low_speed_limit = 1024;
  int low_speed_time = 30;
  int connect_timeout_ms = 20000;
  // Redirects are followed (http(s):// remotes; remote/redirect.h); other
  // backends see a 3xx as an answer.
  bool follow_redirects = false;
  std::function<void(std::string_view)> log;  // -v; secrets redacted
};

// What an HTTP-speaking backend offers the transfer engine on top of the
// Backend calls: the requests themselves, so that one event loop can run
// many of them at once, and the reading of failed answers.
class HttpBackend : public Backend {
 public:
  virtual const HttpSettings& settings() const = 0;
  // A GET of range, or of the whole object (nullopt: no Range header).
  // if_match: the ETag the object must still have (S3 If-Match; HTTP
  // If-Range with a range — without one the caller compares the answer's
  // ETag).
  virtual Result<HttpRequest> MakeGet(std::string_view key,
                                      const std::optional<ByteRange>& range,
                                      std::string_view if_match) = 0;
  // Whether MakeMultiGet works: the server answers a GET of several ranges
  // with one multipart/byteranges body (http(s)://; S3 has no such GET).
  virtual bool multi_range() const { return false; }
  // A GET of several ranges of the object at once ("Range: bytes=A-B,C-D",
  // sorted, apart), with If-Range if_match (none when empty: the first
  // request for an object, whose answer tells its ETag). NotSupported where
  // multi_range() is false.
  virtual Result<HttpRequest> MakeMultiGet(std::string_view key,
                                           const std::vector<ByteRange>& ranges,
                                           std::string_view if_match);
  // A GET of the whole object that answers 304 (no body) while its ETag is
  // still if_none_match.
  virtual Result<HttpRequest> MakeGetIfNoneMatch(
      std::string_view key, std::string_view if_none_match) = 0;
  // A PUT of the whole object from source (single request).
  virtual Result<HttpRequest> MakePut(std::string_view key,
                                      ByteSource* source) = 0;
  // The Status for an answer that is not a success (S3 error XML, status
  // code), naming the key and the request id.
  virtual Status ErrorFor(std::string_view key,
                          const HttpResponse& response) = 0;
  // Multipart upload (S3). NotSupported elsewhere. StartMultipart first
  // aborts the key's incomplete uploads that killed runs left, all but
  // those initiated within keep_younger_s seconds.
  virtual Result<std::string> StartMultipart(std::string_view key,
                                             int64_t keep_younger_s = 0) = 0;
  virtual Result<HttpRequest> MakeUploadPart(
      std::string_view key, std::string_view upload_id, int part_number,
      ByteSource* source, uint64_t offset, uint64_t length) = 0;
  virtual Result<ObjectInfo> CompleteMultipart(
      std::string_view key, std::string_view upload_id,
      const std::vector<std::string>& part_etags) = 0;
  virtual Status AbortMultipart(std::string_view key,
                                std::string_view upload_id) = 0;

  // Whether the server has answered a ranged Backend::Read with a 206: a
  // 200 with the whole object to a Range before that means it ignores
  // Range (NotSupported, not retried); after it, a glitch (retried).
  bool ranges_seen() const { return ranges_seen_.load(); }
  void set_ranges_seen() { ranges_seen_.store(true); }

 private:
  std::atomic<bool> ranges_seen_{false};
};

// The object a successful HEAD answer describes: size from Content-Length
// (digits only, else IOError naming `what`: a lying server must not crash
// us), ETag, Last-Modified.
Result<ObjectInfo> ObjectInfoFromHead(std::string_view key,
                                      std::string_view what,
                                      const HttpResponse& response);

// Status for a response that is not a success, when the backend has nothing
// better: 404 NotFound, 412 FailedPrecondition, 408/429/5xx Unavailable
// (retryable), other 4xx IOError. `what` names the object.
Status HttpStatusError(std::string_view what, long status);

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_HTTP_H_
