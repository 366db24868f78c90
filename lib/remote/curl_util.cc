#include "remote/curl_util.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "remote/transfer_util.h"

namespace ferry::remote {

void EnsureCurlGlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

const std::string* FindHeader(const Headers& headers, std::string_view name) {
  for (const auto& [k, v] : headers) {
    if (k.size() == name.size() &&
        std::equal(k.begin(), k.end(), name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        }))
      return &v;
  }
  return nullptr;
}

Result<ObjectInfo> ObjectInfoFromHead(std::string_view key,
                                      std::string_view what,
                                      const HttpResponse& response) {
  ObjectInfo info;
  info.key = std::string(key);
  const std::string* len = FindHeader(response.headers, "content-length");
  if (len == nullptr || len->empty() || len->size() > 19 ||
      len->find_first_not_of("0123456789") != std::string::npos)
    return Status::IOError(what, "HEAD answered without a valid size");
  info.size = std::stoull(*len);
  if (const std::string* e = FindHeader(response.headers, "etag"))
    info.etag = *e;
  if (const std::string* lm = FindHeader(response.headers, "last-modified")) {
    time_t t = curl_getdate(lm->c_str(), nullptr);
    if (t > 0) info.mtime_ns = int64_t(t) * 1000000000;
  }
  return info;
}

Result<HttpRequest> HttpBackend::MakeMultiGet(std::string_view key,
                                              const std::vector<ByteRange>&,
                                              std::string_view) {
  return Status::NotSupported(std::string(key),
                              "this remote has no multi-range GET");
}

Status HttpStatusError(std::string_view what, long status) {
  std::string msg = std::string(what) + ": HTTP " + std::to_string(status);
  if (status == 404) return Status::NotFound(msg);
  if (status == 412) return Status::FailedPrecondition(msg, "object changed");
  if (status == 408 || status == 429 || status >= 500)
    return Status::Unavailable(msg);
  return Status::IOError(msg);
}

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' ||
                        s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

size_t HeaderCallback(char* data, size_t size, size_t n, void* user) {
  auto* ex = static_cast<CurlExchange*>(user);
  std::string_view line(data, size * n);
  if (line.substr(0, 5) == "HTTP/") {  // a new response (1xx, redirect, final)
    ex->response.headers.clear();
    ex->headers_done = false;
    // "HTTP/1.1 206 Partial Content": the status, so that on_body can judge
    // the answer before the first byte is kept.
    size_t sp = line.find(' ');
    ex->response.status =
        sp == std::string_view::npos
            ? 0
            : std::atol(std::string(line.substr(sp + 1, 3)).c_str());
    return size * n;
  }
  if (Trim(line).empty()) {
    ex->headers_done = true;
    ex->headers_us = NowMicros();
    // 1xx: an interim answer; the final one follows.
    if (ex->on_headers && ex->response.status >= 200 && !ex->on_headers(*ex))
      return 0;  // CURLE_WRITE_ERROR
    return size * n;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return size * n;
  std::string name(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) {
    return static_cast<char>(std::tolower(c));
  });
  ex->response.headers.emplace_back(std::move(name),
                                    std::string(Trim(line.substr(colon + 1))));
  return size * n;
}

size_t WriteCallback(char* data, size_t size, size_t n, void* user) {
  auto* ex = static_cast<CurlExchange*>(user);
  if (ex->should_pause && ex->headers_done && ex->should_pause(size * n))
    return CURL_WRITEFUNC_PAUSE;
  if (ex->on_body && !ex->on_body(*ex, std::string_view(data, size * n)))
    return 0;  // CURLE_WRITE_ERROR
  return size * n;
}

size_t ReadCallback(char* buf, size_t size, size_t n, void* user) {
  auto* ex = static_cast<CurlExchange*>(user);
  const HttpRequest& req = *ex->request;
  size_t want = size * n;
  // --bwlimit meters uploads too (the same bucket as bodies received).
  if (ex->should_pause &&
      ex->upload_pos <
          (req.body_source == nullptr ? req.body.size() : req.body_length)) {
    if (ex->should_pause(want)) return CURL_READFUNC_PAUSE;
  }
  if (req.body_source == nullptr) {
    size_t left = req.body.size() - ex->upload_pos;
    size_t k = std::min(want, left);
    std::memcpy(buf, req.body.data() + ex->upload_pos, k);
    ex->upload_pos += k;
    return k;
  }
  uint64_t left = req.body_length - ex->upload_pos;
  size_t k = static_cast<size_t>(std::min<uint64_t>(want, left));
  if (k == 0) return 0;
  size_t got = 0;
  Status s =
      req.body_source->ReadAt(req.body_offset + ex->upload_pos, k, buf, &got);
  if (!s.ok() || got != k) {  // the source shrank
    ex->source_error =
        s.ok() ? Status::IOError("the source ended early") : std::move(s);
    return CURL_READFUNC_ABORT;
  }
  ex->upload_pos += got;
  return got;
}

// Rewinding for a retried send (libcurl rewinds on redirects and auth).
int SeekCallback(void* user, curl_off_t offset, int origin) {
  auto* ex = static_cast<CurlExchange*>(user);
  if (origin != SEEK_SET || offset < 0) return CURL_SEEKFUNC_CANTSEEK;
  ex->upload_pos = static_cast<uint64_t>(offset);
  return CURL_SEEKFUNC_OK;
}

}  // namespace

Status SetupEasy(CURL* easy, CurlExchange* ex, const HttpSettings& settings) {
  const HttpRequest& req = *ex->request;
  curl_easy_setopt(easy, CURLOPT_URL, req.url.c_str());
  // Send the path exactly as built: libcurl would squash "/./" and "/../",
  // which are parts of S3 keys (and of the SigV4 canonical URI).
  curl_easy_setopt(easy, CURLOPT_PATH_AS_IS, 1L);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS,
                   long(settings.connect_timeout_ms));
  curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT,
                   long(settings.low_speed_limit));
  curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, long(settings.low_speed_time));
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, ex->error);
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, nullptr);  // bytes as stored
  if (!settings.ca_bundle.empty())
    curl_easy_setopt(easy, CURLOPT_CAINFO, settings.ca_bundle.c_str());
  // A proxy's "200 Connection established" is not the answer: keep it from
  // the header callback (on_headers judges the final answer).
  curl_easy_setopt(easy, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, HeaderCallback);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, ex);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, WriteCallback);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, ex);

  curl_slist* list = nullptr;
  auto add = [&](std::string_view name, std::string_view value) {
    std::string line(name);
    // "Name;" sends an empty header; "Name:" would remove it.
    if (value.empty()) {
      line += ";";
    } else {
      line += ": ";
      line += value;
    }
    list = curl_slist_append(list, line.c_str());
  };
  if (req.send_extra_headers)
    for (const auto& [k, v] : settings.extra_headers) add(k, v);
  for (const auto& [k, v] : req.headers) add(k, v);
  // libcurl would add "Expect: 100-continue" to large uploads: one more
  // round trip per request, and some proxies mishandle it.
  list = curl_slist_append(list, "Expect:");
  ex->header_list.reset(list);
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, list);

  ex->upload_pos = 0;
  if (req.method == "GET") {
    curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
  } else if (req.method == "HEAD") {
    curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
  } else if (req.method == "PUT" || req.method == "POST") {
    uint64_t len = req.body_source ? req.body_length : req.body.size();
    curl_easy_setopt(easy, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(easy, CURLOPT_INFILESIZE_LARGE, curl_off_t(len));
    curl_easy_setopt(easy, CURLOPT_READFUNCTION, ReadCallback);
    curl_easy_setopt(easy, CURLOPT_READDATA, ex);
    curl_easy_setopt(easy, CURLOPT_SEEKFUNCTION, SeekCallback);
    curl_easy_setopt(easy, CURLOPT_SEEKDATA, ex);
    if (req.method == "POST")
      curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, "POST");
  } else {
    curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  }
  return Status::OK();
}

Status CurlError(std::string_view what, CURLcode code, const char* errbuf) {
  std::string msg(what);
  msg += ": ";
  msg += (errbuf != nullptr && errbuf[0] != '\0') ? errbuf
                                                  : curl_easy_strerror(code);
  switch (code) {
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_AGAIN:
      return Status::Unavailable(msg);
    default:
      return Status::IOError(msg);
  }
}

bool ReachedServer(CURL* easy, CURLcode rc) {
  switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return false;
    case CURLE_OPERATION_TIMEDOUT: {
      curl_off_t connect_us = 0;
      curl_easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &connect_us);
      return connect_us > 0;
    }
    default:
      return true;
  }
}

std::string UrlOrigin(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  size_t end = url.find_first_of("/?#", scheme + 3);
  std::string_view authority = url.substr(scheme + 3, end - (scheme + 3));
  if (size_t at = authority.rfind('@'); at != std::string_view::npos)
    authority.remove_prefix(at + 1);
  return std::string(url.substr(0, scheme + 3)) + std::string(authority);
}

void LogRequest(const HttpSettings& settings, const HttpRequest& request,
                long status) {
  if (!settings.log) return;
  // SigV4 goes in headers; a URL's userinfo and a presigned URL's
  // signature and tokens are cut.
  std::string line = request.method + " " + RedactUrls(request.url);
  if (request.range) {
    line += " [" + std::to_string(request.range->offset) + "+" +
            (request.range->length == ByteRange::kToEnd
                 ? std::string("end")
                 : std::to_string(request.range->length)) +
            "]";
  }
  line += " -> " + (status ? std::to_string(status) : std::string("error"));
  settings.log(line);
}

}  // namespace ferry::remote
