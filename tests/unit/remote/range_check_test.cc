#include "remote/range_check.h"

#include <gtest/gtest.h>

namespace ferry::remote {
namespace {

HttpResponse Answer(long status, Headers h) {
  HttpResponse r;
  r.status = status;
  r.headers = std::move(h);
  return r;
}

const ByteRange kRange{1000, 500};

TEST(RangeCheckTest, ExactPartialAnswerPasses) {
  auto a =
      CheckGetAnswer("k", kRange, "\"e\"", false,
                     Answer(206, {{"content-range", "bytes 1000-1499/9000"},
                                  {"content-length", "500"},
                                  {"etag", "\"e\""}}));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->offset, 1000u);
  EXPECT_EQ(a->length, 500u);
  EXPECT_EQ(a->total, 9000u);
}

TEST(RangeCheckTest, WholeObjectForARangeIsAnError) {
  auto a = CheckGetAnswer("k", kRange, "", false,
                          Answer(200, {{"content-length", "9000"}}));
  EXPECT_TRUE(a.status().IsUnavailable());
}

TEST(RangeCheckTest, WholeObjectWithAnotherETagMeansChanged) {
  // If-Range failed: the server sends the new object whole.
  auto a = CheckGetAnswer("k", kRange, "\"e\"", false,
                          Answer(200, {{"etag", "\"f\""}}));
  EXPECT_TRUE(a.status().IsFailedPrecondition());
}

TEST(RangeCheckTest, WrongContentRangeIsAnError) {
  for (const char* cr :
       {"bytes 1001-1500/9000", "bytes 1000-1498/9000", "bytes 0-499/9000",
        "bytes */9000", "bytes 1000-1499", "garbage"}) {
    auto a = CheckGetAnswer("k", kRange, "", false,
                            Answer(206, {{"content-range", cr}}));
    EXPECT_TRUE(a.status().IsUnavailable()) << cr;
  }
  EXPECT_TRUE(CheckGetAnswer("k", kRange, "", false, Answer(206, {}))
                  .status()
                  .IsUnavailable());
}

TEST(RangeCheckTest, ChangedETagAndPreconditionFailedMeanChanged) {
  EXPECT_TRUE(
      CheckGetAnswer("k", kRange, "\"e\"", false,
                     Answer(206, {{"content-range", "bytes 1000-1499/9000"},
                                  {"etag", "\"g\""}}))
          .status()
          .IsFailedPrecondition());
  EXPECT_TRUE(CheckGetAnswer("k", kRange, "\"e\"", false, Answer(412, {}))
                  .status()
                  .IsFailedPrecondition());
}

TEST(RangeCheckTest, ClippedAnswerOnlyWhenAllowedAndAtTheEnd) {
  HttpResponse r = Answer(206, {{"content-range", "bytes 1000-1199/1200"}});
  EXPECT_FALSE(CheckGetAnswer("k", kRange, "", false, r).ok());
  auto a = CheckGetAnswer("k", kRange, "", true, r);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->length, 200u);
  HttpResponse mid = Answer(206, {{"content-range", "bytes 1000-1199/9000"}});
  EXPECT_FALSE(CheckGetAnswer("k", kRange, "", true, mid).ok());
}

TEST(RangeCheckTest, EmptyObjectAnswers416) {
  auto a = CheckGetAnswer("k", ByteRange{0, 100}, "", true,
                          Answer(416, {{"content-range", "bytes */0"}}));
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->total, 0u);
}

TEST(RangeCheckTest, EmptyObjectAnswers200WithoutABody) {
  // nginx: a range of an empty file is answered 200, Content-Length 0.
  HttpResponse r = Answer(200, {{"content-length", "0"}});
  auto a = CheckGetAnswer("k", ByteRange{0, 100}, "", true, r);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->total, 0u);
  EXPECT_FALSE(CheckGetAnswer("k", ByteRange{0, 100}, "", false, r).ok());
}

TEST(RangeCheckTest, FirstRequestAnswered200IsTheWholeObject) {
  // A server that ignores Range: the first unconditional request from 0
  // gets the whole object, which is used (its size must be said).
  HttpResponse r = Answer(200, {{"content-length", "500"}});
  auto a = CheckGetAnswer("k", ByteRange{0, 100}, "", true, r);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->total, 500u);
  EXPECT_EQ(a->length, 500u);
  // Never for a later request, a conditional one, or without a size.
  EXPECT_FALSE(CheckGetAnswer("k", ByteRange{0, 100}, "", false, r).ok());
  EXPECT_FALSE(CheckGetAnswer("k", ByteRange{100, 100}, "", true, r).ok());
  EXPECT_FALSE(CheckGetAnswer("k", ByteRange{0, 100}, "\"e\"", true, r).ok());
  EXPECT_FALSE(
      CheckGetAnswer("k", ByteRange{0, 100}, "", true, Answer(200, {})).ok());
}

TEST(RangeCheckTest, EmptyObjectAnswers206ZeroToZeroOfZero) {
  // s3rver: 206 "bytes 0-0/0" with Content-Length 1 and no body.
  HttpResponse r =
      Answer(206, {{"content-range", "bytes 0-0/0"}, {"content-length", "1"}});
  auto a = CheckGetAnswer("k", ByteRange{0, 100}, "", true, r);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->total, 0u);
  EXPECT_EQ(a->length, 0u);
  // Only a first request from 0 may learn "empty" that way.
  EXPECT_FALSE(CheckGetAnswer("k", ByteRange{0, 100}, "", false, r).ok());
  EXPECT_FALSE(CheckGetAnswer("k", ByteRange{5, 100}, "", true, r).ok());
}

TEST(RangeCheckTest, ParsesContentRangeForms) {
  auto cr = ParseContentRange("bytes 0-0/1");
  ASSERT_TRUE(cr);
  EXPECT_EQ(cr->last, 0u);
  EXPECT_FALSE(ParseContentRange("bytes 5-4/10"));
  EXPECT_FALSE(ParseContentRange("bytes 0-10/10"));
  EXPECT_FALSE(ParseContentRange("bytes -1-5/10"));
  EXPECT_EQ(RangeHeader({10, 5}), "bytes=10-14");
  EXPECT_EQ(RangeHeader({10, ByteRange::kToEnd}), "bytes=10-");
}

}  // namespace
}  // namespace ferry::remote
