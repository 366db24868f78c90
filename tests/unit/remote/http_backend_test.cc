#include "remote/http_backend.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

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

// An HTTP/1.1 server on one thread that serves many connections at once
// (poll): every GET gets `size` bytes of 'x' (a 206 for a Range), but the
// answer to the first request is held back `hold_ms` (with `headers_first`,
// only its body: the headers go at once). Counts the connections it
// accepted before it sent what it held.
class HoldingServer {
 public:
  HoldingServer(int hold_ms, size_t size, bool headers_first = false)
      : hold_ms_(hold_ms), size_(size), headers_first_(headers_first) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 64);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~HoldingServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/";
  }
  int accepted_before_first_answer() const { return before_first_; }

 private:
  std::string Answer(const std::string& head) const {
    size_t from = 0, to = size_ - 1;
    size_t p = head.find("Range: bytes=");
    const bool ranged = p != std::string::npos;
    if (ranged) {
      from = std::stoul(head.substr(p + 13));
      to = std::min(to, size_t(std::stoul(head.substr(head.find('-', p) + 1))));
    }
    std::string r =
        ranged ? "HTTP/1.1 206 Partial Content\r\n" : "HTTP/1.1 200 OK\r\n";
    r += "ETag: \"e1\"\r\nAccept-Ranges: bytes\r\nContent-Length: " +
         std::to_string(to - from + 1) + "\r\n";
    if (ranged)
      r += "Content-Range: bytes " + std::to_string(from) + "-" +
           std::to_string(to) + "/" + std::to_string(size_) + "\r\n";
    return r + "\r\n" + std::string(to - from + 1, 'x');
  }

  void Serve() {
    std::vector<pollfd> fds{{fd_, POLLIN, 0}};
    std::vector<std::string> bufs{""};
    int accepted = 0, held = -1;
    std::string held_answer;
    bool first_seen = false;
    auto deadline = std::chrono::steady_clock::now();
    while (!stop_) {
      ::poll(fds.data(), fds.size(), 5);
      if (held >= 0 && std::chrono::steady_clock::now() >= deadline) {
        before_first_ = accepted;
        (void)!::write(held, held_answer.data(), held_answer.size());
        held = -1;
      }
      if (fds[0].revents & POLLIN) {
        int c = ::accept(fd_, nullptr, nullptr);
        if (c >= 0) {
          ++accepted;
          fds.push_back({c, POLLIN, 0});
          bufs.emplace_back();
        }
      }
      for (size_t i = 1; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        char tmp[4096];
        ssize_t n = ::read(fds[i].fd, tmp, sizeof tmp);
        if (n <= 0) {
          ::close(fds[i].fd);
          fds[i].fd = -1;  // poll skips it
          continue;
        }
        bufs[i].append(tmp, size_t(n));
        for (size_t end;
             (end = bufs[i].find("\r\n\r\n")) != std::string::npos;) {
          const std::string answer = Answer(bufs[i].substr(0, end));
          bufs[i].erase(0, end + 4);
          if (!first_seen) {
            first_seen = true;
            held = fds[i].fd;
            held_answer = answer;
            if (headers_first_) {
              const size_t head = answer.find("\r\n\r\n") + 4;
              (void)!::write(held, answer.data(), head);
              held_answer.erase(0, head);
            }
            deadline = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(hold_ms_);
            continue;
          }
          (void)!::write(fds[i].fd, answer.data(), answer.size());
        }
      }
    }
    for (size_t i = 1; i < fds.size(); ++i)
      if (fds[i].fd >= 0) ::close(fds[i].fd);
  }

  const int hold_ms_;
  const size_t size_;
  const bool headers_first_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> before_first_{-1};
  std::thread thread_;
};

// Gets 16 objects of 1000 bytes from a server that holds its first answer
// (or only its body) `hold_ms`; returns how many connections it had
// accepted by then.
int ConnectionsBeforeTheFirstAnswer(int hold_ms, TransferOptions o,
                                    bool headers_first = false) {
  HoldingServer server(hold_ms, 1000, headers_first);
  test::ScratchDir dir;
  auto b = NewHttpBackend(server.url(), {});
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  std::vector<GetItem> items(16);
  for (size_t i = 0; i < items.size(); ++i) {
    items[i].key = "f" + std::to_string(i);
    items[i].dest = dir.Join(items[i].key);
  }
  o.fsync = false;
  auto r = GetObjects(b->get(), std::move(items), o, Env::Default());
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (r.ok()) EXPECT_EQ(r->files_done, 16u);
  return server.accepted_before_first_answer();
}

// docs/remote.md "Starting gently": on a short path (here: any answer in
// time counts as quick) the run's first request goes alone until it is
// answered, and more follow as the limit grows; on a long one (the answer
// takes longer than the probe's 10 ms) every connection is used at once,
// as when pacing is off.
TEST(HttpBackendTest, AShortPathStartsGently) {
  TransferOptions o;
  o.pace_probe_ms = 60000;
  EXPECT_EQ(ConnectionsBeforeTheFirstAnswer(300, o), 1);
}

// The probe is the time until the first answer's headers, not until the
// loop next looks: headers at once and a body 300 ms later is a short
// path. The requests in flight grow from 1 by one per 25 ms (nothing ends,
// no byte comes), so fewer than 16 have started when the body goes (all 16
// started at 90 ms when the loop first looked at the probe's deadline).
TEST(HttpBackendTest, AQuickAnswerWhoseBodyIsLateStartsGently) {
  TransferOptions o;
  o.pace_probe_ms = 90;
  EXPECT_LT(ConnectionsBeforeTheFirstAnswer(300, o, /*headers_first=*/true),
            16);
}

TEST(HttpBackendTest, ALongPathStartsEveryConnectionAtOnce) {
  EXPECT_GE(ConnectionsBeforeTheFirstAnswer(1000, TransferOptions()), 16);
  TransferOptions off;
  off.pace_start = false;
  EXPECT_GE(ConnectionsBeforeTheFirstAnswer(1000, off), 16);
}

}  // namespace
}  // namespace ferry::remote
