#include "remote/http_backend.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ferry/transfer.h"
#include "testutil/test_util.h"

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

// A port nothing listens on (bound, then closed): connecting is refused.
int RefusingPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// A wrong or dead endpoint: once no request has reached it for
// unreachable_ms, nothing is retried and every item fails at once (each
// one's 8 retries took 1,000 files half an hour).
TEST(HttpBackendTest, AServerNoRequestReachesIsNotRetriedForEver) {
  test::ScratchDir dir;
  auto b = NewHttpBackend(
      "http://127.0.0.1:" + std::to_string(RefusingPort()) + "/", {});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  std::vector<GetItem> items(40);
  for (size_t i = 0; i < items.size(); ++i) {
    items[i].key = "f" + std::to_string(i);
    items[i].dest = dir.Join(items[i].key);
  }
  TransferOptions o;
  o.max_retries = 8;
  o.unreachable_ms = 200;
  o.fsync = false;
  auto r = GetObjects(b->get(), std::move(items), o, Env::Default());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->files_failed, 40u);
  // The first connections' retries until the 200 ms had passed, not 8
  // for each of the 40 items (320). Loose: a loaded machine (ASan, -j2)
  // spreads the first refusals out.
  EXPECT_LT(r->retries["connect"], 200u);
}

}  // namespace
}  // namespace ferry::remote
