#include "remote/retry.h"

#include <curl/curl.h>
#include <gtest/gtest.h>

namespace ferry::remote {
namespace {

TEST(RetryPolicyTest, BackoffIsJitteredBelowAGrowingCeiling) {
  RetryPolicy p;
  p.base_ms = 100;
  p.cap_ms = 1000;
  int64_t max_seen[6] = {};
  for (int i = 0; i < 2000; ++i) {
    for (int retry = 1; retry <= 5; ++retry) {
      int64_t ms = p.BackoffMs(retry);
      int64_t ceiling = std::min<int64_t>(1000, 100 << (retry - 1));
      ASSERT_GE(ms, 0);
      ASSERT_LE(ms, ceiling) << "retry " << retry;
      max_seen[retry] = std::max(max_seen[retry], ms);
    }
  }
  // Full jitter: draws spread over the whole window, not pinned to it.
  EXPECT_GT(max_seen[1], 80);
  EXPECT_GT(max_seen[4], 700);
  EXPECT_GT(max_seen[5], 900);
}

TEST(RetryPolicyTest, ServersRetryAfterWinsAndIsClamped) {
  RetryPolicy p;
  p.max_retry_after_ms = 5000;
  EXPECT_EQ(p.BackoffMs(1, 2), 2000);
  EXPECT_EQ(p.BackoffMs(7, 0), 0);
  EXPECT_EQ(p.BackoffMs(1, 3600), 5000);
}

TEST(RetryPolicyTest, RetryAfterParsesDeltaSecondsOnly) {
  HttpResponse r;
  EXPECT_EQ(RetryAfterSeconds(r), -1);
  r.headers = {{"retry-after", "7"}};
  EXPECT_EQ(RetryAfterSeconds(r), 7);
  r.headers = {{"Retry-After", "12"}};
  EXPECT_EQ(RetryAfterSeconds(r), 12);
  r.headers = {{"retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"}};
  EXPECT_EQ(RetryAfterSeconds(r), -1);
  r.headers = {{"retry-after", "-3"}};
  EXPECT_EQ(RetryAfterSeconds(r), -1);
  r.headers = {{"retry-after", "5x"}};
  EXPECT_EQ(RetryAfterSeconds(r), -1);
}

TEST(RetryPolicyTest, OnlyTransientFailuresAreRetryable) {
  EXPECT_TRUE(RetryPolicy::IsRetryable(HttpStatusError("k", 503)));
  EXPECT_TRUE(RetryPolicy::IsRetryable(HttpStatusError("k", 500)));
  EXPECT_TRUE(RetryPolicy::IsRetryable(HttpStatusError("k", 429)));
  EXPECT_TRUE(RetryPolicy::IsRetryable(HttpStatusError("k", 408)));
  EXPECT_FALSE(RetryPolicy::IsRetryable(HttpStatusError("k", 403)));
  EXPECT_FALSE(RetryPolicy::IsRetryable(HttpStatusError("k", 404)));
  EXPECT_TRUE(HttpStatusError("k", 404).IsNotFound());
  EXPECT_TRUE(HttpStatusError("k", 412).IsFailedPrecondition());
  EXPECT_NE(
      HttpStatusError("bucket/key.png", 403).message().find("bucket/key.png"),
      std::string_view::npos);
}

TEST(RetryPolicyTest, CausesNameTheFailure) {
  EXPECT_EQ(RetryCause(CURLE_OK, 503), "503");
  EXPECT_EQ(RetryCause(CURLE_OPERATION_TIMEDOUT, 0), "timeout");
  EXPECT_EQ(RetryCause(CURLE_RECV_ERROR, 0), "reset");
  EXPECT_EQ(RetryCause(CURLE_PARTIAL_FILE, 206), "short-body");
  EXPECT_EQ(RetryCause(CURLE_COULDNT_CONNECT, 0), "connect");
}

TEST(HeadersTest, LookupIgnoresCase) {
  Headers h = {{"ETag", "\"abc\""}, {"content-length", "5"}};
  ASSERT_NE(FindHeader(h, "etag"), nullptr);
  EXPECT_EQ(*FindHeader(h, "ETAG"), "\"abc\"");
  EXPECT_EQ(*FindHeader(h, "Content-Length"), "5");
  EXPECT_EQ(FindHeader(h, "range"), nullptr);
}

TEST(HeadersTest, HeadAnswerGivesSizeEtagAndTimeAndRefusesALyingSize) {
  HttpResponse r;
  r.status = 200;
  r.headers = {{"content-length", "1234"},
               {"etag", "\"abc\""},
               {"last-modified", "Wed, 21 Oct 2015 07:28:00 GMT"}};
  auto info = ObjectInfoFromHead("a/b.bin", "http://h/a/b.bin", r);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->key, "a/b.bin");
  EXPECT_EQ(info->size, 1234u);
  EXPECT_EQ(info->etag, "\"abc\"");
  EXPECT_EQ(info->mtime_ns, int64_t{1445412480} * 1000000000);
  for (const char* bad : {"", "-1", "12x", "99999999999999999999999", " 5"}) {
    r.headers = {{"content-length", bad}};
    auto b = ObjectInfoFromHead("k", "http://h/k", r);
    EXPECT_FALSE(b.ok()) << "'" << bad << "'";
    EXPECT_NE(b.status().message().find("http://h/k"), std::string_view::npos);
  }
  r.headers.clear();
  EXPECT_FALSE(ObjectInfoFromHead("k", "http://h/k", r).ok());
}

}  // namespace
}  // namespace ferry::remote
