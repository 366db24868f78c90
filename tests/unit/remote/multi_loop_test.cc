#include "remote/multi_loop.h"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ferry/transfer.h"
#include "testutil/poll_server.h"

namespace ferry::remote {
namespace {

// A server (test::PollServer): the first GET /fail is answered 503 at once
// (the next ones 200); GET /hold waits until `hold_ms` after the first /hold
// came, then all held ones are answered 200 together; anything else 200 at
// once.
class SlowServer {
 public:
  explicit SlowServer(int hold_ms) : hold_ms_(hold_ms) {}
  std::string url(const std::string& path) const { return server_.url(path); }

 private:
  static std::string Answer(int status) {
    const std::string body = status == 200 ? "hello" : "";
    return "HTTP/1.1 " + std::to_string(status) +
           (status == 200 ? " OK" : " Slow Down") +
           "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
           body;
  }

  // On the server's thread.
  std::optional<std::string> OnRequest(const std::string& head, int fd) {
    if (head.rfind("GET /hold ", 0) == 0) {
      if (!holding_) {
        holding_ = true;
        release_ = std::chrono::steady_clock::now() +
                   std::chrono::milliseconds(hold_ms_);
      }
      held_.push_back(fd);
      return std::nullopt;
    }
    const bool fail = head.rfind("GET /fail ", 0) == 0 && !failed_;
    failed_ = failed_ || fail;
    return Answer(fail ? 503 : 200);
  }
  void OnTick() {
    if (!holding_ || std::chrono::steady_clock::now() < release_) return;
    for (int c : held_) test::PollServer::Send(c, Answer(200));
    held_.clear();
  }

  const int hold_ms_;
  std::vector<int> held_;
  bool holding_ = false, failed_ = false;
  std::chrono::steady_clock::time_point release_;
  test::PollServer server_{
      // last: its thread uses the members above
      [this](const std::string& head, int fd) { return OnRequest(head, fd); },
      [this] { OnTick(); }};
};

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
      return loop_->Retry(r, "503");
    statuses.push_back(rc == CURLE_OK ? status : -long(rc));
    loop_->Delete(r);
  }
  void OnTurn() override { ++turns; }

  std::vector<long> statuses;  // of the requests that ended, in order
  size_t turns = 0;

 protected:
  CurlMultiLoop* loop_;

 private:
  std::vector<std::string> urls_;
  size_t next_ = 0;
};

// A UrlClient that also retries every request that ended unanswered, as
// long as the loop lets it. Notes when the first one failed, the latest
// time a retry was set to start at, and how many retries were set to start
// later than the run's first answer came.
class RetryingClient : public UrlClient {
 public:
  using UrlClient::UrlClient;
  void OnDone(LoopRequest* r, CURLcode rc, long status) override {
    const uint64_t now = NowMicros();
    waiting_.erase(r);
    if (rc != CURLE_OK && loop_->CanRetry(r)) {
      if (first_failure_us == 0) first_failure_us = now;
      loop_->Retry(r, "connect");
      latest_retry_us = std::max(latest_retry_us, r->not_before_us);
      waiting_.insert(r);
      return;
    }
    if (rc == CURLE_OK && !answered_) {
      answered_ = true;
      for (const LoopRequest* w : waiting_)
        if (w->not_before_us > now) ++later_than_first_answer;
    }
    UrlClient::OnDone(r, rc, status);
  }

  uint64_t first_failure_us = 0, latest_retry_us = 0;
  size_t later_than_first_answer = 0;

 private:
  bool answered_ = false;
  std::set<const LoopRequest*> waiting_;
};

std::string RefusingUrl(int port) {
  return "http://127.0.0.1:" + std::to_string(port) + "/a";
}

// Before any request has reached the server a retry waits no longer than
// the run's unreachable window (TransferOptions::unreachable_ms, counted
// from the first failure), so a dead endpoint is given up on when the
// window ends: the backoff of a request's later retries (up to 20 s) made
// a 30 s window 45 s.
TEST(CurlMultiLoopTest, RetriesBeforeAnyAnswerWaitNoLongerThanTheWindow) {
  TransferOptions o;
  o.connections = 8;
  o.max_retries = 100;
  o.unreachable_ms = 500;
  TransferReport report;
  CurlMultiLoop loop(HttpSettings{}, o, {}, &report);
  RetryingClient client(
      &loop, std::vector<std::string>(8, RefusingUrl(test::RefusingPort())));
  ASSERT_TRUE(loop.Run(&client).ok());
  EXPECT_EQ(client.statuses,
            std::vector<long>(8, -long(CURLE_COULDNT_CONNECT)));
  ASSERT_GT(client.first_failure_us, 0u);
  EXPECT_LE(client.latest_retry_us, client.first_failure_us + 500 * 1000);
}

// A server that comes up late: the first request that reaches it starts
// every retry that waits at once (they waited out their backoff, up to
// the window's end, though the server was there).
TEST(CurlMultiLoopTest, TheFirstAnswerStartsEveryWaitingRetry) {
  const int port = test::RefusingPort();
  std::optional<test::PollServer> server;
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    server.emplace(
        [](const std::string&, int) {
          return std::optional<std::string>(
              "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
        },
        nullptr, port);
  });
  TransferOptions o;
  o.connections = 8;
  o.max_retries = 100;
  TransferReport report;
  CurlMultiLoop loop(HttpSettings{}, o, {}, &report);
  RetryingClient client(&loop, std::vector<std::string>(8, RefusingUrl(port)));
  ASSERT_TRUE(loop.Run(&client).ok());
  late.join();
  EXPECT_EQ(client.statuses, std::vector<long>(8, 200));
  EXPECT_EQ(client.later_than_first_answer, 0u);
}

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
  UrlClient client(
      &loop, {"http://127.0.0.1:" + std::to_string(test::RefusingPort()) + "/a",
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
