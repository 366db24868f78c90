#include "remote/http_backend.h"

#include <curl/curl.h>

#include <string>
#include <utility>

#include "remote/curl_util.h"
#include "remote/http_client.h"
#include "remote/http_read.h"
#include "remote/range_check.h"
#include "remote/remote_url.h"

namespace ferry::remote {
namespace {

bool Unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
         c == '~' || c == '/';
}

std::string EncodeKey(std::string_view key) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : key) {
    if (Unreserved(c)) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

class HttpBackendImpl final : public HttpBackend {
 public:
  HttpBackendImpl(std::string base, HttpSettings settings, RetryPolicy policy,
                  bool keys_as_written)
      : base_(std::move(base)),
        keys_as_written_(keys_as_written),
        settings_(settings),
        client_(std::move(settings), policy) {
    caps_.ranges = true;
    caps_.conditional_reads = true;
  }

  const BackendCaps& caps() const override { return caps_; }
  std::string Describe() const override { return base_; }
  const HttpSettings& settings() const override { return settings_; }

  Status List(std::string_view, const ListOptions&,
              const std::function<Status(const ObjectInfo&)>&) override {
    return Status::NotSupported(
        base_, "an http(s):// remote cannot be listed: name each object");
  }

  Result<ObjectInfo> Stat(std::string_view key) override {
    HttpRequest req;
    req.method = "HEAD";
    req.url = UrlFor(key);
    FERRY_ASSIGN_OR_RETURN(HttpResponse r,
                           client_.Perform([&] { return req; }));
    if (r.status != 200) return ErrorFor(key, r);
    return ObjectInfoFromHead(key, req.url, r);
  }

  Status Read(std::string_view key, const ByteRange& range,
              const ReadOptions& options, ByteSink* sink) override {
    return ReadObject(this, &client_, key, UrlFor(key), range, options, sink);
  }
  Result<SmallObject> ReadIfChanged(std::string_view key,
                                    std::string_view if_none_match,
                                    uint64_t max_bytes) override {
    return ReadSmallIfChanged(this, &client_, key, UrlFor(key), if_none_match,
                              max_bytes);
  }

  Result<ObjectInfo> Write(std::string_view key, ByteSource*,
                           const WriteOptions&) override {
    return ReadOnly(key);
  }
  Status Delete(std::string_view key) override { return ReadOnly(key); }

  Result<HttpRequest> MakeGet(std::string_view key,
                              const std::optional<ByteRange>& range,
                              std::string_view if_match) override {
    HttpRequest req;
    req.url = UrlFor(key);
    req.range = range;
    if (!range) return req;  // the answer's ETag is compared by the caller
    req.headers.emplace_back("Range", RangeHeader(*range));
    // HTTP has If-Match too, but nginx and most static servers ignore it on
    // GET; If-Range is what they honour: a changed object answers 200.
    if (!if_match.empty()) req.headers.emplace_back("If-Range", if_match);
    return req;
  }

  bool multi_range() const override { return true; }
  Result<HttpRequest> MakeMultiGet(std::string_view key,
                                   const std::vector<ByteRange>& ranges,
                                   std::string_view if_match) override {
    if (ranges.empty())
      return Status::InvalidArgument(UrlFor(key),
                                     "a multi-range GET without ranges");
    HttpRequest req;
    req.url = UrlFor(key);
    req.headers.emplace_back("Range", MultiRangeHeader(ranges));
    if (!if_match.empty()) req.headers.emplace_back("If-Range", if_match);
    return req;
  }

  Result<HttpRequest> MakeGetIfNoneMatch(
      std::string_view key, std::string_view if_none_match) override {
    HttpRequest req;
    req.url = UrlFor(key);
    if (!if_none_match.empty())
      req.headers.emplace_back("If-None-Match", if_none_match);
    return req;
  }

  Result<HttpRequest> MakePut(std::string_view key, ByteSource*) override {
    return ReadOnly(key);
  }
  Status ErrorFor(std::string_view key, const HttpResponse& r) override {
    return HttpStatusError(UrlFor(key), r.status);
  }
  Result<std::string> StartMultipart(std::string_view key, int64_t) override {
    return ReadOnly(key);
  }
  Result<HttpRequest> MakeUploadPart(std::string_view key, std::string_view,
                                     int, ByteSource*, uint64_t,
                                     uint64_t) override {
    return ReadOnly(key);
  }
  Result<ObjectInfo> CompleteMultipart(
      std::string_view key, std::string_view,
      const std::vector<std::string>&) override {
    return ReadOnly(key);
  }
  Status AbortMultipart(std::string_view key, std::string_view) override {
    return ReadOnly(key);
  }

 private:
  std::string UrlFor(std::string_view key) const {
    if (key.empty()) return base_;
    return base_ + "/" +
           (keys_as_written_ ? EncodeUrlAsWritten(key) : EncodeKey(key));
  }
  Status ReadOnly(std::string_view key) const {
    return Status::NotSupported(UrlFor(key),
                                "an http(s):// remote is read-only");
  }

  std::string base_;
  bool keys_as_written_;
  HttpSettings settings_;
  HttpClient client_;
  BackendCaps caps_;
};

}  // namespace

Result<HttpSettings> HttpSettingsFrom(const RemoteOptions& options) {
  HttpSettings s;
  s.ca_bundle = options.ca_bundle;
  s.low_speed_limit = options.low_speed_limit;
  s.low_speed_time = options.low_speed_time;
  s.connect_timeout_ms = options.connect_timeout_ms;
  s.log = options.log;
  for (const std::string& h : options.headers) {
    size_t colon = h.find(':');
    if (colon == std::string::npos || colon == 0 ||
        h.find_first_of("\r\n") != std::string::npos) {
      // The value may be a secret: name the header only.
      return Status::InvalidArgument(
          "--header", "expected 'Name: value', got a line starting '" +
                          h.substr(0, std::min<size_t>(colon, 20)) + "'");
    }
    std::string name = h.substr(0, colon);
    std::string value = h.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    s.extra_headers.emplace_back(std::move(name), std::move(value));
  }
  return s;
}

Result<std::unique_ptr<HttpBackend>> NewHttpBackend(
    std::string_view url, const RemoteOptions& options) {
  std::string u(url);
  size_t scheme_end = u.find("://");
  std::string scheme =
      scheme_end == std::string::npos ? std::string() : u.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https")
    return Status::InvalidArgument(u, "not an http:// or https:// URL");
  size_t host_start = scheme_end + 3;
  size_t path_start = u.find('/', host_start);
  std::string host = u.substr(host_start, path_start == std::string::npos
                                              ? std::string::npos
                                              : path_start - host_start);
  if (host.empty()) return Status::InvalidArgument(u, "no host in the URL");
  if (u.find_first_of("?#") != std::string::npos) {
    return Status::InvalidArgument(
        u,
        "a query or fragment in an http(s) remote is not supported "
        "(pass tokens with --header)");
  }
  while (u.size() > host_start + host.size() && u.back() == '/') u.pop_back();
  FERRY_ASSIGN_OR_RETURN(HttpSettings settings, HttpSettingsFrom(options));
  settings.follow_redirects = true;
  return std::unique_ptr<HttpBackend>(new HttpBackendImpl(
      EncodeUrlAsWritten(u), std::move(settings), RetryPolicyFrom(options),
      options.http_keys_as_written));
}

}  // namespace ferry::remote
