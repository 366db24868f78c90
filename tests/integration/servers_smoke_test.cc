// Smoke tests of the test servers through libcurl, so later issues can rely
// on them: nginx answers Range requests with 206 and an ETag; s3rver (behind
// the signature proxy) stores an object with a SigV4-signed PUT and returns
// it on GET; the fault proxy's C++ driver works.
#include <curl/curl.h>
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "testutil/fault_proxy.h"
#include "testutil/test_servers.h"
#include "testutil/test_util.h"

namespace ferry {
namespace {

struct Response {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::string body;
  std::string headers;
};

size_t Collect(char* p, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(p, size * n);
  return size * n;
}

// One request; r.code is the libcurl result (not checked here).
Response Fetch(const std::string& url, const std::string& method,
               const std::string& body, const std::string& range,
               const std::string& sigv4_userpwd) {
  Response r;
  CURL* c = curl_easy_init();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, Collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.body);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, Collect);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &r.headers);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
  struct curl_slist* hdrs = nullptr;
  if (!range.empty()) curl_easy_setopt(c, CURLOPT_RANGE, range.c_str());
  if (method == "PUT") {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(body.size()));
  }
  if (!sigv4_userpwd.empty()) {
    // libcurl 7.88 signs but does not add the payload hash header S3 needs.
    curl_easy_setopt(c, CURLOPT_AWS_SIGV4, "aws:amz:us-east-1:s3");
    curl_easy_setopt(c, CURLOPT_USERPWD, sigv4_userpwd.c_str());
    hdrs = curl_slist_append(hdrs, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
  }
  r.code = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  curl_slist_free_all(hdrs);
  curl_easy_cleanup(c);
  return r;
}

class ServersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = test::TestServers::FromEnv();
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    servers_ = *s;
  }
  test::TestServers servers_;
};

TEST_F(ServersTest, NginxRangeGetReturns206WithTheRightBytesAndAnETag) {
  std::string data(100000, '\0');
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<char>(i * 13 + 1);
  test::WriteFile(Env::Default(), servers_.http_root + "/range.bin", data);

  Response r =
      Fetch(servers_.http_url + "/range.bin", "GET", "", "1000-1999", "");
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.body, data.substr(1000, 1000));
  EXPECT_NE(r.headers.find("Content-Range: bytes 1000-1999/100000"),
            std::string::npos)
      << r.headers;
  EXPECT_NE(r.headers.find("ETag: \""), std::string::npos) << r.headers;

  Response whole = Fetch(servers_.http_url + "/range.bin", "GET", "", "", "");
  EXPECT_EQ(whole.status, 200);
  EXPECT_EQ(whole.body, data);
}

TEST_F(ServersTest, AccessLogRecordsRangeStatusAndBytesSent) {
  test::WriteFile(Env::Default(), servers_.http_root + "/logged/a.bin",
                  std::string(5000, 'a'));
  Fetch(servers_.http_url + "/logged/a.bin?q=1", "GET", "", "10-109", "");
  // nginx logs a request when it finalizes it, which can be just after the
  // client has the answer; other tests share the log.
  std::optional<test::AccessLogEntry> found;
  for (int i = 0; i < 200 && !found; ++i) {
    auto log = test::ReadAccessLog(servers_.http_access_log);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    for (const test::AccessLogEntry& e : *log) {
      if (e.target == "/logged/a.bin?q=1") found = e;
    }
    if (!found) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_TRUE(found.has_value());
  const test::AccessLogEntry& e = *found;
  EXPECT_EQ(e.method, "GET");
  EXPECT_EQ(e.target, "/logged/a.bin?q=1");
  EXPECT_EQ(e.range, "bytes=10-109");
  EXPECT_EQ(e.status, 206);
  EXPECT_EQ(e.body_bytes_sent, 100);
  EXPECT_EQ(e.if_range, "");
  EXPECT_EQ(e.if_match, "");
  EXPECT_GT(e.connection, 0);
}

TEST_F(ServersTest, S3PutThenGetRoundTrips) {
  const std::string url =
      servers_.s3_url + "/" + servers_.s3_bucket + "/smoke/obj.bin";
  const std::string creds =
      servers_.s3_access_key + ":" + servers_.s3_secret_key;
  std::string payload(70000, 'p');
  payload += "end";
  Response put = Fetch(url, "PUT", payload, "", creds);
  EXPECT_EQ(put.status, 200) << put.body;
  Response get = Fetch(url, "GET", "", "", creds);
  EXPECT_EQ(get.status, 200) << get.body;
  EXPECT_EQ(get.body, payload);
  Response ranged = Fetch(url, "GET", "", "70000-70002", creds);
  EXPECT_EQ(ranged.status, 206);
  EXPECT_EQ(ranged.body, "end");
}

TEST_F(ServersTest, S3RejectsAnUnknownAccessKey) {
  const std::string url =
      servers_.s3_url + "/" + servers_.s3_bucket + "/smoke/denied";
  Response put = Fetch(url, "PUT", "x", "", "NOBODY:secret");
  EXPECT_EQ(put.status, 403) << put.body;
}

// The C++ driver of the fault proxy (testutil/fault_proxy.h) against the
// instance in front of nginx.
class FaultProxyTest : public ServersTest {
 protected:
  void SetUp() override {
    ServersTest::SetUp();
    auto p = test::FaultProxy::FromEnv(test::FaultProxy::kHttp);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    proxy_.emplace(*p);
    ASSERT_OK(proxy_->Reset());
    data_.assign(200000, '\0');
    for (size_t i = 0; i < data_.size(); ++i)
      data_[i] = static_cast<char>(i * 7 + 3);
    test::WriteFile(Env::Default(), servers_.http_root + "/fp/obj.bin", data_);
    url_ = proxy_->url() + "/fp/obj.bin";
  }
  void TearDown() override {
    if (proxy_) EXPECT_OK(proxy_->Reset());
  }
  std::optional<test::FaultProxy> proxy_;
  std::string data_;
  std::string url_;
};

TEST_F(FaultProxyTest, ForwardsAndCountsBytesPerPath) {
  Response r = Fetch(url_, "GET", "", "0-99", "");
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.body, data_.substr(0, 100));
  auto stats = proxy_->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->requests, 1);
  EXPECT_EQ(stats->faults, 0);
  EXPECT_EQ(stats->paths["/fp/obj.bin"].requests, 1);
  EXPECT_EQ(stats->paths["/fp/obj.bin"].bytes_sent, 100);
}

TEST_F(FaultProxyTest, IgnoreRangeAnswers200WithTheWholeObject) {
  ASSERT_TRUE(proxy_->Add(test::FaultRule::IgnoreRange().RangeOnly()).ok());
  Response r = Fetch(url_, "GET", "", "0-99", "");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, data_);
  EXPECT_EQ(proxy_->Stats()->faults, 1);
}

TEST_F(FaultProxyTest, RespondOnTheSecondRequestOnly) {
  ASSERT_TRUE(
      proxy_->Add(test::FaultRule::Respond(503, 7).Path("obj").Nth(2)).ok());
  EXPECT_EQ(Fetch(url_, "GET", "", "", "").status, 200);
  Response r = Fetch(url_, "GET", "", "", "");
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.headers.find("Retry-After: 7"), std::string::npos) << r.headers;
  EXPECT_NE(r.body.find("<Code>SlowDown</Code>"), std::string::npos);
  EXPECT_EQ(Fetch(url_, "GET", "", "", "").status, 200);
}

TEST_F(FaultProxyTest, ResetAndShortBodyCutTheTransfer) {
  for (const test::FaultRule& rule :
       {test::FaultRule::Reset(1000), test::FaultRule::ShortBody(1000)}) {
    ASSERT_TRUE(proxy_->Add(rule).ok());
    Response r = Fetch(url_, "GET", "", "", "");
    EXPECT_TRUE(r.code == CURLE_RECV_ERROR || r.code == CURLE_PARTIAL_FILE)
        << rule.action << ": " << curl_easy_strerror(r.code);
    EXPECT_LE(r.body.size(), 1000u) << rule.action;
  }
}

TEST_F(FaultProxyTest, MutateFileChangesTheETagForTheNextRequest) {
  ASSERT_TRUE(
      proxy_
          ->Add(test::FaultRule::MutateFile(servers_.http_root + "/fp/obj.bin"))
          .ok());
  Response first = Fetch(url_, "GET", "", "", "");
  Response second = Fetch(url_, "GET", "", "", "");
  EXPECT_EQ(first.body, data_);
  EXPECT_EQ(second.body.size(), data_.size());
  EXPECT_NE(second.body, data_);
  auto etag = [](const std::string& h) {
    size_t at = h.find("ETag: ");
    return at == std::string::npos ? "" : h.substr(at, h.find('\r', at) - at);
  };
  EXPECT_NE(etag(first.headers), "");
  EXPECT_NE(etag(first.headers), etag(second.headers));
}

}  // namespace
}  // namespace ferry
