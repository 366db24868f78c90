// S3 answers that are not a success -> Status, in one place (private to
// lib/remote; docs/remote.md "Errors"):
//   NoSuchKey, 404            NotFound naming the object
//   NoSuchBucket              NotFound naming the bucket
//   AccessDenied, SignatureDoesNotMatch, InvalidAccessKeyId, 403, ...
//                             IOError with a "check the credentials" hint
//   PreconditionFailed, 412   FailedPrecondition (the object changed)
//   NotImplemented, 501       NotSupported (a feature the server lacks)
//   SlowDown, 5xx, 408, 429   Unavailable (retried)
//   PermanentRedirect, AuthorizationHeaderMalformed (wrong region)
//                             IOError naming the region to use
// Messages carry the S3 request id and never a secret: the server's message
// is cut short and any occurrence of a secret in it replaced.
//
// Thread-safety: pure function.
#ifndef FERRY_LIB_REMOTE_S3_ERRORS_H_
#define FERRY_LIB_REMOTE_S3_ERRORS_H_

#include <string>
#include <vector>

#include "ferry/status.h"
#include "remote/http.h"

namespace ferry::remote {

struct S3ErrorContext {
  std::string what;  // the object or listing, e.g. s3://bucket/key
  std::string bucket;
  bool signed_request = true;
  std::string profile, region;       // for the hints
  std::vector<std::string> secrets;  // never to appear in a message
};

Status S3ErrorStatus(const S3ErrorContext& context,
                     const HttpResponse& response);

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_S3_ERRORS_H_
