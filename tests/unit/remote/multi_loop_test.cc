#include "remote/multi_loop.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "ferry/transfer.h"

namespace ferry::remote {
namespace {

// An HTTP/1.1 server on one thread (poll): the first GET /fail is answered
// 503 at once (the next ones 200); GET /hold waits until `hold_ms` after the
// first /hold came, then all held ones are answered 200 together; anything else
// 200 at once.
class SlowServer {
 public:
  explicit SlowServer(int hold_ms) : hold_ms_(hold_ms) {
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
  ~SlowServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

 private:
  static std::string Answer(int status) {
    const std::string body = status == 200 ? "hello" : "";
    return "HTTP/1.1 " + std::to_string(status) +
           (status == 200 ? " OK" : " Slow Down") +
           "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
           body;
  }

  void Serve() {
    std::vector<pollfd> fds{{fd_, POLLIN, 0}};
    std::vector<std::string> bufs{""};
    std::vector<int> held;
    bool holding = false, failed = false;
    auto release = std::chrono::steady_clock::now();
    while (!stop_) {
      ::poll(fds.data(), fds.size(), 5);
      if (holding && std::chrono::steady_clock::now() >= release) {
        for (int c : held) {
          const std::string a = Answer(200);
          (void)!::write(c, a.data(), a.size());
        }
        held.clear();
      }
      if (fds[0].revents & POLLIN) {
        int c = ::accept(fd_, nullptr, nullptr);
        if (c >= 0) {
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
          const std::string head = bufs[i].substr(0, end);
          bufs[i].erase(0, end + 4);
          if (head.rfind("GET /hold ", 0) == 0) {
            if (!holding) {
              holding = true;
              release = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(hold_ms_);
            }
            held.push_back(fds[i].fd);
            continue;
          }
          const bool fail = head.rfind("GET /fail ", 0) == 0 && !failed;
          failed = failed || fail;
          const std::string a = Answer(fail ? 503 : 200);
          (void)!::write(fds[i].fd, a.data(), a.size());
        }
      }
    }
    for (size_t i = 1; i < fds.size(); ++i)
      if (fds[i].fd >= 0) ::close(fds[i].fd);
  }

  const int hold_ms_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

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

// A client that GETs `urls` in order, one request each; a 503 is retried
// (after the loop's backoff), anything else ends the request. Counts the
// loop's turns.
class UrlClient : public CurlMultiLoop::Client {
 public:
  UrlClient(CurlMultiLoop* loop, std::vector<std::string> urls)
      : loop_(loop), urls_(std::move(urls)) {}

  bool StartRequest() override {
    if (next_ >= urls_.size()) return false;
    auto r = std::make_unique<LoopRequest>();
    r->owner = &urls_[next_++];
    loop_->Start(loop_->Add(std::move(r)));
    return true;
  }
  // The URLs not started yet count as open (the loop goes on while any is).
  size_t OpenCount() const override { return urls_.size() - next_; }
  bool MoreToOpen() const override { return false; }
  void OpenNext() override {}
  Status Prepare(LoopRequest* r) override {
    r->http.url = *static_cast<const std::string*>(r->owner);
    r->ex.on_body = [](CurlExchange&, std::string_view) { return true; };
    return Status::OK();
  }
  void OnStartFailed(LoopRequest* r, const Status&) override {
    loop_->Delete(r);
  }
  void OnDone(LoopRequest* r, CURLcode rc, long status) override {
    if (rc == CURLE_OK && status == 503 && loop_->CanRetry(r))
      return loop_->Retry(r);
    statuses.push_back(rc == CURLE_OK ? status : -long(rc));
    loop_->Delete(r);
  }
  void OnTurn() override { ++turns; }

  std::vector<long> statuses;  // of the requests that ended, in order
  size_t turns = 0;

 private:
  CurlMultiLoop* loop_;
  std::vector<std::string> urls_;
  size_t next_ = 0;
};

// A retry whose backoff has passed while every connection is busy waits
// for one to end; the loop sleeps meanwhile. Here the retry of /fail is
// due within 200 ms, and both connections are held for 1.5 s: the loop
// turns on its 100 ms timer and on the answers, a few dozen times (it
// spun, over 10,000 turns, a core at 100 %, while it had no room).
TEST(CurlMultiLoopTest, ARetryWithNoRoomWaitsAsleep) {
  SlowServer server(1500);
  TransferOptions o;
  o.connections = 2;
  TransferReport report;
  CurlMultiLoop loop(HttpSettings{}, o, {}, &report);
  UrlClient client(
      &loop, {server.url("/fail"), server.url("/hold"), server.url("/hold")});
  ASSERT_TRUE(loop.Run(&client).ok());
  EXPECT_EQ(client.statuses, (std::vector<long>{200, 200, 200}));
  EXPECT_LT(client.turns, 200u);
}

// The pacer's probe: while the run's first request goes alone it holds
// the others back; when that request ended without an answer (refused,
// not retried) the loop has nothing in flight and sleeps until the probe's
// time is up (it spun through it).
TEST(CurlMultiLoopTest, AProbeWithNothingInFlightWaitsAsleep) {
  SlowServer server(0);
  TransferOptions o;
  o.connections = 2;
  o.pace_probe_ms = 500;
  TransferReport report;
  CurlMultiLoop loop(HttpSettings{}, o, {.pace_start = true}, &report);
  UrlClient client(&loop,
                   {"http://127.0.0.1:" + std::to_string(RefusingPort()) + "/a",
                    server.url("/b"), server.url("/c")});
  ASSERT_TRUE(loop.Run(&client).ok());
  ASSERT_EQ(client.statuses.size(), 3u);
  EXPECT_EQ(client.statuses[0], -long(CURLE_COULDNT_CONNECT));
  EXPECT_EQ(client.statuses[1], 200);
  EXPECT_EQ(client.statuses[2], 200);
  EXPECT_LT(client.turns, 200u);
  EXPECT_GE(loop.IdleWaits(), 1u);
}

// Once the probe is answered in time the pacer lets one more start per
// request that ends: with nothing in flight it always lets one start, so
// the loop never waits idle. (It waited for the pacer's next 25 ms step
// each time a round of quick answers emptied it: an incremental sync's 66
// requests took 86 ms instead of 27.)
TEST(CurlMultiLoopTest, APacedRunNeverWaitsWithNothingInFlight) {
  SlowServer server(0);
  TransferOptions o;
  o.connections = 16;
  o.pace_probe_ms = 60000;  // any answer is quick
  TransferReport report;
  CurlMultiLoop loop(HttpSettings{}, o, {.pace_start = true}, &report);
  std::vector<std::string> urls;
  for (int i = 0; i < 40; ++i)
    urls.push_back(server.url("/f" + std::to_string(i)));
  UrlClient client(&loop, urls);
  ASSERT_TRUE(loop.Run(&client).ok());
  EXPECT_EQ(client.statuses, std::vector<long>(40, 200));
  EXPECT_EQ(loop.IdleWaits(), 0u);
}

}  // namespace
}  // namespace ferry::remote
