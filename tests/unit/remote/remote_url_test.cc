// URL forms of remotes: which are URLs, how each parses, and that a bad one
// is InvalidArgument naming it.
#include "remote/remote_url.h"

#include <gtest/gtest.h>

#include "ferry/remote.h"

namespace ferry::remote {
namespace {

TEST(RemoteUrlTest, SchemesAreRecognised) {
  EXPECT_TRUE(IsRemoteUrl("s3://bucket/prefix"));
  EXPECT_TRUE(IsRemoteUrl("https://host/x"));
  EXPECT_TRUE(IsRemoteUrl("HTTP://host/x"));
  EXPECT_TRUE(IsRemoteUrl("file:///tmp/x"));
  EXPECT_TRUE(IsRemoteUrl("gs://bucket"));  // a URL, if not one we know
  EXPECT_FALSE(IsRemoteUrl("/tmp/x"));
  EXPECT_FALSE(IsRemoteUrl("relative/dir"));
  EXPECT_FALSE(IsRemoteUrl("dir/x://y"));
  EXPECT_FALSE(IsRemoteUrl("://nothing"));
  EXPECT_FALSE(IsRemoteUrl("C:\\dir"));
}

TEST(RemoteUrlTest, S3BucketAndLiteralPrefix) {
  auto u = ParseRemoteUrl("s3://my-bucket/data/a b%20c+d/");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->kind, RemoteUrl::kS3);
  EXPECT_EQ(u->bucket, "my-bucket");
  EXPECT_EQ(u->prefix, "data/a b%20c+d/");  // keys are literal, as aws s3
  auto whole = ParseRemoteUrl("s3://b");
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->bucket, "b");
  EXPECT_EQ(whole->prefix, "");
}

TEST(RemoteUrlTest, FileUrlsAndPaths) {
  auto u = ParseRemoteUrl("file:///tmp/a%20b/%C3%BC");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->kind, RemoteUrl::kFile);
  EXPECT_EQ(u->path, "/tmp/a b/\xC3\xBC");
  EXPECT_EQ(ParseRemoteUrl("file://localhost/srv")->path, "/srv");
  EXPECT_EQ(ParseRemoteUrl("rel/dir")->path, "rel/dir");
  EXPECT_EQ(ParseRemoteUrl("/abs dir/x%41")->path, "/abs dir/x%41");
}

TEST(RemoteUrlTest, BadUrlsAreInvalidArgumentNamingTheUrl) {
  for (const char* bad :
       {"s3://", "s3:///key", "s3://bad?bucket/x", "s3://bu cket/x",
        "ftp://host/x", "file://otherhost/x", "file://relative",
        "file:///bad%zzescape", "file:///nul%00", "file:///trail%4",
        "http:///x", "https://", ""}) {
    auto u = ParseRemoteUrl(bad);
    ASSERT_FALSE(u.ok()) << bad;
    EXPECT_TRUE(u.status().IsInvalidArgument()) << bad;
    EXPECT_NE(u.status().ToString().find(bad), std::string::npos)
        << u.status().ToString();
    auto b = OpenBackend(bad, {}, Env::Default());
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_TRUE(b.status().IsInvalidArgument()) << b.status().ToString();
  }
}

// As curl sends a URL: escapes, reserved characters and the query kept;
// only what cannot be in a URL encoded.
TEST(RemoteUrlTest, HttpUrlUsedAsWritten) {
  EXPECT_EQ(EncodeUrlAsWritten("http://h/k/sp%20ace"), "http://h/k/sp%20ace");
  EXPECT_EQ(EncodeUrlAsWritten("http://h/k/plus+x?X-Amz-Signature=ab%2Fc&t=1"),
            "http://h/k/plus+x?X-Amz-Signature=ab%2Fc&t=1");
  EXPECT_EQ(EncodeUrlAsWritten("http://h/d i r/x y"),
            "http://h/d%20i%20r/x%20y");
  EXPECT_EQ(EncodeUrlAsWritten("a\xc3\xa9\x01\x7f"), "a%C3%A9%01%7F");
  EXPECT_EQ(EncodeUrlAsWritten("100%"), "100%25");
  EXPECT_EQ(EncodeUrlAsWritten("a%zz%4"), "a%25zz%254");
  EXPECT_EQ(EncodeUrlAsWritten("a\"<>\\^`{|}"), "a%22%3C%3E%5C%5E%60%7B%7C%7D");
  EXPECT_EQ(EncodeUrlAsWritten("x?q=1#frag ment"), "x?q=1");
}

TEST(RemoteUrlTest, RedactsUserinfoAndSignatures) {
  EXPECT_EQ(RedactUrls("GET http://alice:s3cretPW@127.0.0.1:8/k1/nope -> 404"),
            "GET http://<redacted>@127.0.0.1:8/k1/nope -> 404");
  EXPECT_EQ(RedactUrls("https://u@h/x"), "https://<redacted>@h/x");
  EXPECT_EQ(RedactUrls("x?X-Amz-Algorithm=AWS4&X-Amz-Credential=AK%2F1/2&"
                       "X-Amz-Signature=abc&X-Amz-Security-Token=t&a=b"),
            "x?X-Amz-Algorithm=AWS4&X-Amz-Credential=<redacted>&"
            "X-Amz-Signature=<redacted>&X-Amz-Security-Token=<redacted>&a=b");
  EXPECT_EQ(RedactUrls("'http://h/p?token=T1&Signature=S&sig=G&api_key=K' x"),
            "'http://h/p?token=<redacted>&Signature=<redacted>&sig=<redacted>&"
            "api_key=<redacted>' x");
  EXPECT_EQ(RedactUrls("NotFound: http://h/x?token=T: HTTP 404"),
            "NotFound: http://h/x?token=<redacted>: HTTP 404");
  // No secret: unchanged (an '@' after the authority is a path).
  for (const char* same :
       {"file:///tmp/a@b", "s3://bucket/k@x?y=1", "http://h/a?prefix=p&n=2",
        "NotFound: http://h/x: HTTP 404", "plain text ? & = @"})
    EXPECT_EQ(RedactUrls(same), same);
}

TEST(RemoteUrlTest, UrlWithoutSecretsDropsUserinfo) {
  EXPECT_EQ(UrlWithoutSecrets("http://alice:s3cretPW@h:8/ds"), "http://h:8/ds");
  EXPECT_EQ(UrlWithoutSecrets("https://u@h/x?token=T&n=1"),
            "https://h/x?token=<redacted>&n=1");
  for (const char* same : {"file:///tmp/a@b", "s3://b/k@x", "http://h/a"})
    EXPECT_EQ(UrlWithoutSecrets(same), same);
}

TEST(RemoteUrlTest, RemoteIdentityIgnoresUserinfoAndNamesTheS3Endpoint) {
  RemoteOptions o;
  auto id = [&](const char* url) {
    auto r = RemoteIdentity(url, o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::string();
  };
  // http(s): no userinfo, query or fragment; host and scheme lower-cased,
  // the port explicit.
  EXPECT_EQ(id("http://alice:s3cretPW@Host.Example/ds"),
            "http://host.example:80/ds");
  EXPECT_EQ(id("http://bob:other@host.example:80/ds?x=1#f"),
            "http://host.example:80/ds");
  EXPECT_EQ(id("HTTPS://h:8443/a/b"), "https://h:8443/a/b");
  EXPECT_NE(id("http://h:1/ds"), id("http://h:2/ds"));
  // s3: the endpoint, then bucket and prefix.
  o.no_sign_request = true;
  o.endpoint_url = "http://127.0.0.1:9000";
  const std::string a = id("s3://bkt/ep");
  EXPECT_EQ(a, "s3+http://127.0.0.1:9000/bkt/ep");
  o.endpoint_url = "http://127.0.0.1:9001/";
  EXPECT_EQ(id("s3://bkt/ep"), "s3+http://127.0.0.1:9001/bkt/ep");
  o.endpoint_url.clear();
  o.region = "eu-west-1";
  EXPECT_EQ(id("s3://bkt/ep"),
            "s3+https://s3.eu-west-1.amazonaws.com:443/bkt/ep");
  EXPECT_EQ(id("file:///tmp/x"), "file:///tmp/x");
}

}  // namespace
}  // namespace ferry::remote
