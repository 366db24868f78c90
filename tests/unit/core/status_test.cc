#include "ferry/status.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "ferry/result.h"

namespace ferry {
namespace {

TEST(StatusTest, DefaultIsOkAndPrintsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_EQ(s.message(), "");
}

TEST(StatusTest, ErrorCarriesCodeAndJoinedMessage) {
  Status s = Status::Corruption("a.tfrecord", "data CRC at offset 12");
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_EQ(s.ToString(), "Corruption: a.tfrecord: data CRC at offset 12");
}

TEST(StatusTest, CopyIsDeepAndMoveLeavesValue) {
  Status a = Status::IOError("x");
  Status b = a;
  EXPECT_EQ(b.ToString(), a.ToString());
  Status c = std::move(a);
  EXPECT_TRUE(c.IsIOError());
}

TEST(StatusTest, OnlyUnavailableIsRetryable) {
  EXPECT_TRUE(Status::Unavailable("503").IsRetryable());
  EXPECT_FALSE(Status::NotFound("404").IsRetryable());
  EXPECT_FALSE(Status::IOError("disk").IsRetryable());
}

TEST(StatusTest, PosixErrorMapsEnoentToNotFound) {
  EXPECT_TRUE(PosixError("f", ENOENT).IsNotFound());
  Status s = PosixError("f", ENOSPC);
  EXPECT_TRUE(s.IsIOError());
  EXPECT_NE(s.ToString().find("No space left"), std::string::npos);
}

TEST(StatusTest, WithContextPrefixesMessage) {
  EXPECT_EQ(Status::NotFound("b").WithContext("a").ToString(),
            "NotFound: a: b");
  EXPECT_TRUE(Status::OK().WithContext("a").ok());
}

Result<int> Half(int x) {
  if (x % 2) return Status::InvalidArgument("odd");
  return x / 2;
}

Result<int> Quarter(int x) {
  FERRY_ASSIGN_OR_RETURN(int h, Half(x));
  return Half(h);
}

TEST(ResultTest, AssignOrReturnPropagatesErrors) {
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_TRUE(Quarter(6).status().IsInvalidArgument());
  EXPECT_FALSE(Quarter(3).ok());
}

}  // namespace
}  // namespace ferry
