#include "remote/http_backend.h"

#include <gtest/gtest.h>

namespace ferry::remote {
namespace {

TEST(HttpBackendTest, RangedGetCarriesRangeAndIfRange) {
  RemoteOptions o;
  o.headers = {"Authorization: Bearer secret"};
  auto b = NewHttpBackend("https://example.com/data/", o);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  auto req = (*b)->MakeGet("dir/a b+%.bin", ByteRange{100, 50}, "\"e1\"");
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->url, "https://example.com/data/dir/a%20b%2B%25.bin");
  ASSERT_NE(FindHeader(req->headers, "Range"), nullptr);
  EXPECT_EQ(*FindHeader(req->headers, "Range"), "bytes=100-149");
  ASSERT_NE(FindHeader(req->headers, "If-Range"), nullptr);
  EXPECT_EQ(*FindHeader(req->headers, "If-Range"), "\"e1\"");
  ASSERT_EQ((*b)->settings().extra_headers.size(), 1u);
  EXPECT_EQ((*b)->settings().extra_headers[0].second, "Bearer secret");
  auto plain = (*b)->MakeGet("k", ByteRange{0, 10}, "");
  EXPECT_EQ(FindHeader(plain->headers, "If-Range"), nullptr);
  // The whole object: no Range, and so no If-Range either.
  auto whole = (*b)->MakeGet("k", std::nullopt, "\"e1\"");
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(FindHeader(whole->headers, "Range"), nullptr);
  EXPECT_EQ(FindHeader(whole->headers, "If-Range"), nullptr);
  EXPECT_FALSE(whole->range.has_value());
}

TEST(HttpBackendTest, ReadOnlyAndNoListing) {
  auto b = NewHttpBackend("http://127.0.0.1:1", RemoteOptions{});
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE((*b)->caps().ranges);
  EXPECT_TRUE((*b)->caps().conditional_reads);
  EXPECT_FALSE((*b)->caps().writes);
  EXPECT_FALSE((*b)->caps().listing);
  Status s = (*b)->List("", ListOptions{},
                        [](const ObjectInfo&) { return Status::OK(); });
  EXPECT_EQ(s.code(), Status::Code::kNotSupported);
  EXPECT_NE(s.ToString().find("cannot be listed"), std::string::npos);
  EXPECT_EQ((*b)->MakePut("k", nullptr).status().code(),
            Status::Code::kNotSupported);
}

TEST(HttpBackendTest, BadUrlsAndHeadersAreRefused) {
  EXPECT_TRUE(NewHttpBackend("ftp://x/y", {}).status().IsInvalidArgument());
  EXPECT_TRUE(NewHttpBackend("http:///y", {}).status().IsInvalidArgument());
  EXPECT_TRUE(
      NewHttpBackend("http://h/y?token=1", {}).status().IsInvalidArgument());
  RemoteOptions o;
  o.headers = {"no colon here"};
  EXPECT_TRUE(NewHttpBackend("http://h/", o).status().IsInvalidArgument());
}

}  // namespace
}  // namespace ferry::remote
