// SignV4 end to end: requests signed by ferry's signer, sent by HttpClient
// (libcurl) to the signature-checking proxy (botocore recomputes every
// signature from what it decodes; a mismatch is 403) in front of s3rver.
// Keys with every class of byte, ListObjectsV2 pages with continuation
// tokens, a session token, and a wrong secret.
#include <gtest/gtest.h>

#include <ctime>
#include <set>
#include <string>
#include <vector>

#include "remote/http_client.h"
#include "remote/sigv4.h"
#include "testutil/test_servers.h"

namespace ferry::remote {
namespace {

class SigV4ProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<test::TestServers> s = test::TestServers::FromEnv();
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    servers_ = *s;
    host_ = servers_.s3_url.substr(servers_.s3_url.find("//") + 2);
    creds_ = {servers_.s3_access_key, servers_.s3_secret_key, ""};
  }

  HttpResponse Send(SigV4Request req, const std::string& body = "",
                    const AwsCredentials* creds = nullptr) {
    req.host = host_;
    if (req.payload_sha256.empty()) req.payload_sha256 = Sha256Hex(body);
    SigV4Result signed_req = SignV4(req, creds ? *creds : creds_, "us-east-1",
                                    "s3", std::time(nullptr));
    HttpRequest http;
    http.method = req.method;
    http.url = servers_.s3_url + signed_req.url_path_and_query;
    http.headers = signed_req.headers;
    http.body = body;
    Result<HttpResponse> r =
        client_.Perform([&]() -> Result<HttpRequest> { return http; });
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : HttpResponse{};
  }
  std::string Object(const std::string& key) {
    return "/" + servers_.s3_bucket + "/" + key;
  }

  test::TestServers servers_;
  std::string host_;
  AwsCredentials creds_;
  HttpClient client_{HttpSettings{}, RetryPolicy{.max_retries = 1}};
};

TEST_F(SigV4ProxyTest, OddKeysRoundTrip) {
  // ("a//b" is left out: s3rver answers 404 to an empty path segment.)
  const std::vector<std::string> keys = {
      "sigv4/plain.txt",     "sigv4/a b+c/%.png",
      "sigv4/x~y=z&q?#",     "sigv4/\xc3\xa9t\xc3\xa9/\xe6\x97\xa5.jpg",
      "sigv4/semi;c,$@:",    "sigv4/(p)'q'!*[]{}^`|\\<>\"",
      "sigv4/dots/./x/../y", "sigv4/trailing-slash/"};
  for (const std::string& key : keys) {
    std::string body = "body of " + key;
    SigV4Request put{.method = "PUT", .path = Object(key)};
    put.headers = {{"Content-Type", "text/plain"},
                   {"x-amz-meta-note", "  spaced    value "}};
    HttpResponse r = Send(put, body);
    EXPECT_EQ(r.status, 200) << key << "\n" << r.body;
    SigV4Request get{.method = "GET", .path = Object(key)};
    get.headers = {{"Range", "bytes=0-6"}};
    get.payload_sha256 = std::string(kUnsignedPayload);
    r = Send(get);
    EXPECT_EQ(r.status, 206) << key << "\n" << r.body;
    EXPECT_EQ(r.body, body.substr(0, 7)) << key;
  }
}

TEST_F(SigV4ProxyTest, ListObjectsV2PagesWithContinuationTokens) {
  const std::string prefix = "sigv4-list/p q+\xc3\xa9=/";
  std::set<std::string> want;
  for (int i = 0; i < 5; ++i) {
    std::string key = prefix + "k" + std::to_string(i) + " ~%";
    ASSERT_EQ(Send({.method = "PUT", .path = Object(key)}, "x").status, 200);
    want.insert("<Key>" + AwsUriEncode(key, true));
  }
  std::string token;
  int pages = 0, keys = 0;
  do {
    SigV4Request list{.method = "GET", .path = "/" + servers_.s3_bucket};
    list.query = {{"list-type", "2"},
                  {"prefix", prefix},
                  {"max-keys", "2"},
                  {"encoding-type", "url"}};
    if (!token.empty()) list.query.emplace_back("continuation-token", token);
    list.payload_sha256 = std::string(kUnsignedPayload);
    HttpResponse r = Send(list);
    ASSERT_EQ(r.status, 200) << r.body;
    ++pages;
    for (size_t at = r.body.find("<Key>"); at != std::string::npos;
         at = r.body.find("<Key>", at + 1))
      ++keys;
    size_t a = r.body.find("<NextContinuationToken>");
    token.clear();
    if (a != std::string::npos) {
      a += 23;
      token = r.body.substr(a, r.body.find('<', a) - a);
    }
  } while (!token.empty() && pages < 10);
  EXPECT_EQ(keys, 5);
  EXPECT_EQ(pages, 3);
}

TEST_F(SigV4ProxyTest, SessionTokenIsSignedAndAccepted) {
  AwsCredentials with_token = creds_;
  with_token.session_token = servers_.s3_session_token;
  ASSERT_FALSE(with_token.session_token.empty());
  HttpResponse r =
      Send({.method = "PUT", .path = Object("sigv4/token")}, "t", &with_token);
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(SigV4ProxyTest, WrongSecretIsRefused) {
  AwsCredentials wrong = creds_;
  wrong.secret_access_key += "x";
  HttpResponse r =
      Send({.method = "PUT", .path = Object("sigv4/wrong")}, "w", &wrong);
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(r.body.find("SignatureDoesNotMatch"), std::string::npos) << r.body;
}

}  // namespace
}  // namespace ferry::remote
