// The libcurl adapter of the remote layer (private): CURLcode → Status in one
// place, and the setup every easy handle gets (request, TLS, timeouts,
// headers, body upload, response header parsing). Used by the synchronous
// HttpClient and by the transfer engine's event loop alike.
#ifndef FERRY_LIB_REMOTE_CURL_UTIL_H_
#define FERRY_LIB_REMOTE_CURL_UTIL_H_

#include <curl/curl.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "ferry/status.h"
#include "remote/http.h"

namespace ferry::remote {

// curl_global_init once per process (thread-safe).
void EnsureCurlGlobalInit();

struct CurlEasyDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
using CurlEasy = std::unique_ptr<CURL, CurlEasyDeleter>;
struct CurlSlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using CurlSlist = std::unique_ptr<curl_slist, CurlSlistDeleter>;

// One request/response exchange on an easy handle. Owns what libcurl points
// at while the transfer runs (header list, error buffer, upload cursor) and
// collects the response status line and headers. The body goes to
// `on_body`; it is called only after the status and all headers of the
// final response are in `response` (1xx answers and redirects are discarded).
struct CurlExchange {
  const HttpRequest* request = nullptr;
  HttpResponse response;
  CurlSlist header_list;
  char error[CURL_ERROR_SIZE] = {};
  uint64_t upload_pos = 0;
  // Called once the status and all headers of the final response are in
  // `response` (the blank line after them; not for 1xx answers), before
  // any body byte, and also for an answer without a body. Returns false to
  // abort the transfer (CURLE_WRITE_ERROR).
  std::function<bool(CurlExchange&)> on_headers;
  // Returns false to abort the transfer (CURLE_WRITE_ERROR).
  std::function<bool(CurlExchange&, std::string_view)> on_body;
  // Asked before on_body with the size of the data: true pauses the
  // transfer (CURL_WRITEFUNC_PAUSE; the same data comes again once the
  // caller unpauses). The engine's shared bandwidth limit.
  std::function<bool(size_t)> should_pause;
  bool headers_done = false;
  // When headers_done was set (NowMicros): the time of the answer, however
  // late the loop looks at it.
  uint64_t headers_us = 0;
  // Why the upload's source failed a read (the transfer was aborted).
  Status source_error;
};

// Configures easy for ex->request and settings: URL, method, headers
// (settings.extra_headers first), body upload from memory or the source,
// CA bundle, connect timeout, low-speed (stall) limit, no signals, TCP
// keep-alive, HTTP/1.1, and the callbacks that fill ex->response. The
// caller keeps ex alive until the transfer ends.
Status SetupEasy(CURL* easy, CurlExchange* ex, const HttpSettings& settings);

// The one CURLcode adapter: timeouts, resets, refused connections and
// partial bodies are Unavailable (retryable); TLS verification failures,
// bad URLs and local write aborts are IOError. `what` names the object.
Status CurlError(std::string_view what, CURLcode code, const char* errbuf);

// Whether the request that ended with rc on easy got a connection to the
// server: not when connecting was refused, the name was not resolved, or
// the connect timed out (a port whose SYNs are dropped; "timed out" with
// no connection made), which all say nothing of the server but that it is
// not there (yet): docs/remote.md "A server that is not there".
bool ReachedServer(CURL* easy, CURLcode rc);

// "scheme://host:port" of a URL: what names a server in a message (no
// userinfo, path or query).
std::string UrlOrigin(std::string_view url);

// "GET https://host/key -> 206" lines for -v, secrets redacted.
void LogRequest(const HttpSettings& settings, const HttpRequest& request,
                long status);

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_CURL_UTIL_H_
