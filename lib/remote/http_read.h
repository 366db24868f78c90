// Backend::Read for the HTTP-speaking backends (private to lib/remote;
// docs/remote.md): one code path for S3 and plain HTTP(S), with the same
// retry policy as the transfer engine.
//
// Thread-safety: as the backend and client it is given.
#ifndef FERRY_LIB_REMOTE_HTTP_READ_H_
#define FERRY_LIB_REMOTE_HTTP_READ_H_

#include <string_view>

#include "ferry/remote.h"
#include "ferry/status.h"
#include "remote/http.h"
#include "remote/http_client.h"

namespace ferry::remote {

// Appends exactly the bytes of range of the object `key` to sink: a GET
// (backend->MakeGet; no Range for the whole object) whose answer is judged
// when its headers are in, before a byte reaches sink (status,
// Content-Range, ETag: CheckGetAnswer), sent through client's retry policy
// (network failures, stalls, 408/429/5xx with Retry-After, answers refused
// by the check). A failure after bytes reached sink resumes with the rest of
// the range, after the policy's backoff, on the ETag of the first answer
// (options.if_match when given). A range ending past the object's end is an
// IOError; a range "to the end" from the end is empty. A 200 to a Range is
// taken when it is the whole object of exactly the length asked from 0;
// otherwise, before any 206 came from this backend, it is NotSupported (the
// server ignores Range: not retried); after one, a glitch (retried).
// `what` names the object in messages.
Status ReadObject(HttpBackend* backend, HttpClient* client,
                  std::string_view key, const std::string& what,
                  const ByteRange& range, const ReadOptions& options,
                  ByteSink* sink);

// Backend::ReadIfChanged for the HTTP-speaking backends: one GET with
// If-None-Match (retried by client's policy); 304 is `unchanged`, 200 the
// whole object and its ETag. A server that ignores the condition answers
// 200: the same ETag still counts as unchanged.
Result<SmallObject> ReadSmallIfChanged(HttpBackend* backend, HttpClient* client,
                                       std::string_view key,
                                       const std::string& what,
                                       std::string_view if_none_match,
                                       uint64_t max_bytes);

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_HTTP_READ_H_
