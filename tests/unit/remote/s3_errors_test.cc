#include "remote/s3_errors.h"

#include <gtest/gtest.h>

namespace ferry::remote {
namespace {

HttpResponse Answer(long status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

S3ErrorContext Context() {
  S3ErrorContext c;
  c.what = "s3://b/k";
  c.bucket = "b";
  c.secrets = {"SECRETKEY"};
  return c;
}

// A request feature the server lacks (s3rver answers ListMultipartUploads
// with 501 NotImplemented): NotSupported, so that a caller can do without
// it (ferry put's cleanup of earlier uploads does), never retried.
TEST(S3ErrorsTest, NotImplementedIsNotSupported) {
  Status by_code = S3ErrorStatus(
      Context(), Answer(501,
                        "<Error><Code>NotImplemented</Code><Message>A "
                        "header you provided implies functionality that "
                        "is not implemented</Message></Error>"));
  EXPECT_EQ(by_code.code(), Status::Code::kNotSupported) << by_code.ToString();
  EXPECT_NE(by_code.ToString().find("NotImplemented"), std::string::npos);
  Status by_status = S3ErrorStatus(Context(), Answer(501, ""));
  EXPECT_EQ(by_status.code(), Status::Code::kNotSupported)
      << by_status.ToString();
  EXPECT_FALSE(by_status.IsRetryable());
  // The code alone, under another status (an S3-compatible server's 400).
  Status code_only = S3ErrorStatus(
      Context(), Answer(400, "<Error><Code>NotImplemented</Code></Error>"));
  EXPECT_EQ(code_only.code(), Status::Code::kNotSupported)
      << code_only.ToString();
}

TEST(S3ErrorsTest, OtherServerErrorsAreRetried) {
  for (long status : {500L, 503L}) {
    Status s = S3ErrorStatus(Context(), Answer(status, ""));
    EXPECT_TRUE(s.IsRetryable()) << status << ": " << s.ToString();
  }
  Status slow = S3ErrorStatus(
      Context(), Answer(503, "<Error><Code>SlowDown</Code></Error>"));
  EXPECT_TRUE(slow.IsRetryable()) << slow.ToString();
}

TEST(S3ErrorsTest, MessagesNeverCarryASecret) {
  Status s = S3ErrorStatus(
      Context(),
      Answer(403,
             "<Error><Code>AccessDenied</Code><Message>key SECRETKEY "
             "refused</Message></Error>"));
  EXPECT_EQ(s.ToString().find("SECRETKEY"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace ferry::remote
