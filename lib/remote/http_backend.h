// The read-only plain HTTP(S) backend: a "bucket" is a URL prefix on a web
// server (nginx, a CDN, a presigned mirror). Stat is a HEAD (size from
// Content-Length, ETag, Last-Modified); reads are ranged GETs that carry
// If-Range with the ETag when one is known, so a changed object answers 200
// and is refused instead of mixing two versions. No listing, no writes.
//
// Thread-safety: as every Backend, safe to use from several threads.
#ifndef FERRY_LIB_REMOTE_HTTP_BACKEND_H_
#define FERRY_LIB_REMOTE_HTTP_BACKEND_H_

#include <memory>
#include <string_view>

#include "ferry/remote.h"
#include "ferry/result.h"
#include "remote/http.h"

namespace ferry::remote {

// url: http://host[:port][/prefix] or https://...; keys are appended to the
// prefix with one '/' and percent-encoded (a key's '/' are kept).
// InvalidArgument for another scheme, a missing host, a malformed --header.
Result<std::unique_ptr<HttpBackend>> NewHttpBackend(
    std::string_view url, const RemoteOptions& options);

// HttpSettings from the command line's options: --header lines parsed
// ("Name: value"; InvalidArgument otherwise), CA bundle, stall limit, log.
Result<HttpSettings> HttpSettingsFrom(const RemoteOptions& options);

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_HTTP_BACKEND_H_
