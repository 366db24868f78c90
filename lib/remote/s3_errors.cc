#include "remote/s3_errors.h"

#include "remote/s3_xml.h"

namespace ferry::remote {
namespace {

constexpr size_t kMaxServerMessage = 200;

std::string Scrub(std::string text, const std::vector<std::string>& secrets) {
  for (const std::string& s : secrets) {
    if (s.empty()) continue;
    for (size_t pos; (pos = text.find(s)) != std::string::npos;)
      text.replace(pos, s.size(), "<redacted>");
  }
  if (text.size() > kMaxServerMessage) {
    text.resize(kMaxServerMessage);
    text += "...";
  }
  return text;
}

bool OneOf(const std::string& code, std::initializer_list<const char*> list) {
  for (const char* c : list)
    if (code == c) return true;
  return false;
}

}  // namespace

Status S3ErrorStatus(const S3ErrorContext& c, const HttpResponse& r) {
  S3Error e;
  if (auto parsed = ParseS3Error(r.body); parsed.ok()) e = std::move(*parsed);
  if (e.request_id.empty()) {
    if (const std::string* id = FindHeader(r.headers, "x-amz-request-id"))
      e.request_id = *id;
  }
  // "HTTP 403 AccessDenied: <server message> (request id X)"
  std::string detail = "HTTP " + std::to_string(r.status);
  if (!e.code.empty()) detail += " " + e.code;
  if (!e.message.empty()) detail += ": " + Scrub(e.message, c.secrets);
  if (!e.request_id.empty())
    detail += " (request id " + Scrub(e.request_id, c.secrets) + ")";

  const std::string& code = e.code;
  if (code == "NoSuchBucket") {
    return Status::NotFound(c.what,
                            "no such bucket '" + c.bucket + "'; " + detail);
  }
  if (code == "NoSuchKey" || code == "NoSuchUpload" ||
      (code.empty() && r.status == 404)) {
    return Status::NotFound(
        c.what, code.empty()
                    ? "no such key (or no bucket '" + c.bucket + "'); " + detail
                    : "no such key; " + detail);
  }
  if (code == "PreconditionFailed" || r.status == 412) {
    return Status::FailedPrecondition(c.what,
                                      "object changed (ETag); " + detail);
  }
  if (OneOf(code, {"PermanentRedirect", "AuthorizationHeaderMalformed",
                   "IllegalLocationConstraintException"}) ||
      r.status == 301) {
    std::string hint = "the bucket '" + c.bucket + "' is in another region";
    if (const std::string* region =
            FindHeader(r.headers, "x-amz-bucket-region"))
      hint += " (" + *region + ")";
    hint += " than " + c.region + ": set --region or AWS_REGION; ";
    return Status::IOError(c.what, hint + detail);
  }
  if (OneOf(code,
            {"AccessDenied", "SignatureDoesNotMatch", "InvalidAccessKeyId",
             "InvalidToken", "ExpiredToken", "TokenRefreshRequired",
             "InvalidSecurity", "RequestTimeTooSkewed", "AllAccessDisabled"}) ||
      r.status == 401 || r.status == 403) {
    std::string hint;
    if (code == "RequestTimeTooSkewed") {
      hint = "this machine's clock is off; ";
    } else if (c.signed_request) {
      hint =
          "check the credentials (AWS_ACCESS_KEY_ID and "
          "AWS_SECRET_ACCESS_KEY, or profile '" +
          (c.profile.empty() ? std::string("default") : c.profile) +
          "' in ~/.aws/credentials): access denied or the credentials "
          "are wrong; ";
    } else {
      hint =
          "unsigned request (--no-sign-request) refused: the bucket is "
          "not public, give credentials; ";
    }
    return Status::IOError(c.what, hint + detail);
  }
  // S3's error code for a request feature the server lacks (e.g. a
  // conditional write sent to an older S3-compatible server).
  if (code == "NotImplemented" || r.status == 501)
    return Status::NotSupported(
        c.what, "the server does not implement this; " + detail);
  if (OneOf(code, {"SlowDown", "InternalError", "ServiceUnavailable",
                   "RequestTimeout", "OperationAborted"}) ||
      r.status == 408 || r.status == 429 || r.status >= 500) {
    return Status::Unavailable(c.what, detail);
  }
  if (code == "InvalidRange" || r.status == 416) {
    return Status::IOError(c.what,
                           "range beyond the end of the object; " + detail);
  }
  return Status::IOError(c.what, detail);
}

}  // namespace ferry::remote
