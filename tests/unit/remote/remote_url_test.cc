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

}  // namespace
}  // namespace ferry::remote
