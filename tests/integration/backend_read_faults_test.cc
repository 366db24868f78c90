// Backend::Read of the HTTP and S3 backends under the faults the transfer
// engine survives (the fault proxy in front of nginx and of the S3 signature
// proxy): a 503 with Retry-After, a connection reset mid-body, a stall, a
// short body, a 200 to a Range. Each read completes with exactly the bytes
// asked, through the same retry policy as the engine; a fault that does not
// go away ends in Unavailable once the retries are spent, and a server that
// ignores Range in NotSupported at once.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "ferry/remote.h"
#include "testutil/byte_io.h"
#include "testutil/fault_proxy.h"
#include "testutil/test_servers.h"
#include "testutil/test_util.h"

namespace ferry {
namespace {

using test::FaultRule;

class BackendReadFaultsTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto s = test::TestServers::FromEnv();
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    servers_ = *s;
    bool s3 = GetParam() == "s3";
    auto p = test::FaultProxy::FromEnv(s3 ? test::FaultProxy::kS3
                                          : test::FaultProxy::kHttp);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    proxy_ = std::make_unique<test::FaultProxy>(*p);
    ASSERT_OK(proxy_->Reset());
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    dir_ = "read-faults-" + std::to_string(::getpid()) + "-" + GetParam() +
           "-" + std::string(info->name()).substr(0, 40);
    data_ = test::RandomBytes(300000, 11);
    options_.max_retries = 3;
    options_.low_speed_limit = 1024;
    options_.low_speed_time = 1;
    if (getenv("FERRY_TEST_LOG"))
      options_.log = [](std::string_view l) {
        fprintf(stderr, "%.*s\n", int(l.size()), l.data());
      };
    std::string url;
    if (s3) {
      setenv("AWS_ACCESS_KEY_ID", servers_.s3_access_key.c_str(), 1);
      setenv("AWS_SECRET_ACCESS_KEY", servers_.s3_secret_key.c_str(), 1);
      unsetenv("AWS_SESSION_TOKEN");
      unsetenv("AWS_PROFILE");
      setenv("AWS_CONFIG_FILE", "/nonexistent/ferry-test", 1);
      setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/ferry-test", 1);
      setenv("AWS_REGION", "us-east-1", 1);
      url = "s3://" + servers_.s3_bucket + "/" + dir_;
      // The object goes in without faults; reads go through the proxy.
      RemoteOptions direct = options_;
      direct.endpoint_url = servers_.s3_url;
      auto w = OpenBackend(url, direct, Env::Default());
      ASSERT_TRUE(w.ok()) << w.status().ToString();
      test::StringSource src(data_);
      auto put = (*w)->Write("obj.bin", &src, {});
      ASSERT_TRUE(put.ok()) << put.status().ToString();
      options_.endpoint_url = proxy_->url();
    } else {
      test::WriteFile(Env::Default(),
                      servers_.http_root + "/" + dir_ + "/obj.bin", data_);
      url = proxy_->url() + "/" + dir_;
    }
    auto b = OpenBackend(url, options_, Env::Default());
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    backend_ = std::move(*b);
  }
  void TearDown() override {
    if (proxy_) (void)proxy_->Reset();
  }

  void AddRule(FaultRule rule) {
    auto id = proxy_->Add(rule.Method("GET").Path(dir_ + "/obj.bin"));
    ASSERT_TRUE(id.ok()) << id.status().ToString();
  }

  Result<std::string> Read(ByteRange range = {}) {
    test::StringSink sink;
    FERRY_RETURN_IF_ERROR(backend_->Read("obj.bin", range, {}, &sink));
    return sink.out;
  }

  int64_t Requests() {
    auto st = proxy_->Stats();
    EXPECT_TRUE(st.ok());
    int64_t n = 0;
    if (st.ok())
      for (const auto& [path, p] : st->paths)
        if (path.find(dir_ + "/obj.bin") != std::string::npos) n += p.requests;
    return n;
  }

  // The whole object and a range in the middle, each under `rule` (fired
  // once per read).
  void ExpectReadsSurvive(FaultRule rule) {
    AddRule(rule);
    auto whole = Read();
    ASSERT_TRUE(whole.ok()) << whole.status().ToString();
    EXPECT_TRUE(*whole == data_) << "whole object differs";
    AddRule(rule.RangeOnly());
    auto part = Read(ByteRange{1000, 250000});
    ASSERT_TRUE(part.ok()) << part.status().ToString();
    EXPECT_TRUE(*part == data_.substr(1000, 250000)) << "range differs";
    EXPECT_GE(Requests(), 4);
  }

  test::TestServers servers_;
  std::unique_ptr<test::FaultProxy> proxy_;
  std::string dir_, data_;
  RemoteOptions options_;
  std::unique_ptr<Backend> backend_;
};

TEST_P(BackendReadFaultsTest, ServerBusyWithRetryAfterIsWaitedOut) {
  ExpectReadsSurvive(FaultRule::Respond(503, /*retry_after=*/1));
}

TEST_P(BackendReadFaultsTest, ConnectionResetMidBodyResumes) {
  ExpectReadsSurvive(FaultRule::Reset(20000));
}

TEST_P(BackendReadFaultsTest, StallIsAbortedAndResumed) {
  ExpectReadsSurvive(FaultRule::Stall(1000, 8, /*then_close=*/true));
}

TEST_P(BackendReadFaultsTest, ShortBodyResumes) {
  ExpectReadsSurvive(FaultRule::ShortBody(20000));
}

TEST_P(BackendReadFaultsTest, WholeObjectForARangeAfterA206IsRetried) {
  // The server has answered a range: a 200 now is a glitch.
  auto first = Read(ByteRange{0, 1000});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  AddRule(FaultRule::IgnoreRange().RangeOnly());
  auto part = Read(ByteRange{1000, 250000});
  ASSERT_TRUE(part.ok()) << part.status().ToString();
  EXPECT_TRUE(*part == data_.substr(1000, 250000)) << "range differs";
  EXPECT_GE(Requests(), 3);
}

TEST_P(BackendReadFaultsTest, AServerThatIgnoresRangeFailsAtOnce) {
  // 200 with the whole object to every Range, before any 206: asking again
  // would get the same (it was retried max_retries times).
  AddRule(FaultRule::IgnoreRange().RangeOnly().Times(0));
  auto part = Read(ByteRange{1000, 250000});
  ASSERT_FALSE(part.ok());
  EXPECT_EQ(part.status().code(), Status::Code::kNotSupported)
      << part.status().ToString();
  EXPECT_NE(part.status().ToString().find("ignores Range"), std::string::npos)
      << part.status().ToString();
  EXPECT_EQ(Requests(), 1);
}

TEST_P(BackendReadFaultsTest, TheWholeObjectOfTheLengthAskedFromZeroIsTheRange) {
  AddRule(FaultRule::IgnoreRange().RangeOnly().Times(0));
  auto all = Read(ByteRange{0, data_.size()});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_TRUE(*all == data_) << "differs";
  EXPECT_EQ(Requests(), 1);
}

TEST_P(BackendReadFaultsTest, LastingOutageFailsAsUnavailable) {
  AddRule(FaultRule::Respond(503).Times(0));
  auto r = Read();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsUnavailable()) << r.status().ToString();
  EXPECT_EQ(Requests(), 1 + options_.max_retries);
}

INSTANTIATE_TEST_SUITE_P(Backends, BackendReadFaultsTest,
                         testing::Values("http", "s3"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ferry
