// An HTTP/1.1 test server on one thread that serves many connections at
// once (poll), for tests of how the transfer engine spreads its requests
// over time (StubServer serves one connection at a time). Each request's
// head goes to `on_request`, which returns the answer to send now, or
// nothing to hold it: it keeps the connection and sends later from
// `on_tick` (run every turn, at least every 5 ms) with Send. Both run on the
// server's thread. Also RefusingPort: a port nothing listens on, and
// SilentPort: one that never completes a connection.
#ifndef FERRY_TESTS_TESTUTIL_POLL_SERVER_H_
#define FERRY_TESTS_TESTUTIL_POLL_SERVER_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace ferry::test {

class PollServer {
 public:
  using OnRequest = std::function<std::optional<std::string>(
      const std::string& head, int fd)>;
  // port 0: a free one; else that port (a server that comes up late on a
  // RefusingPort).
  explicit PollServer(OnRequest on_request,
                      std::function<void()> on_tick = nullptr, int port = 0)
      : on_request_(std::move(on_request)), on_tick_(std::move(on_tick)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(uint16_t(port));
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 64);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~PollServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  PollServer(const PollServer&) = delete;
  PollServer& operator=(const PollServer&) = delete;

  std::string url(const std::string& path = "/") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  // Connections accepted so far.
  int accepted() const { return accepted_; }
  // Sends an answer on a held connection (a peer gone is no signal).
  static void Send(int fd, const std::string& answer) {
    (void)!::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
  }

 private:
  void Serve() {
    std::vector<pollfd> fds{{fd_, POLLIN, 0}};
    std::vector<std::string> bufs{""};
    while (!stop_) {
      ::poll(fds.data(), fds.size(), 5);
      if (on_tick_) on_tick_();
      if (fds[0].revents & POLLIN) {
        int c = ::accept(fd_, nullptr, nullptr);
        if (c >= 0) {
          ++accepted_;
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
          if (auto answer = on_request_(head, fds[i].fd))
            Send(fds[i].fd, *answer);
        }
      }
    }
    for (size_t i = 1; i < fds.size(); ++i)
      if (fds[i].fd >= 0) ::close(fds[i].fd);
  }

  OnRequest on_request_;
  std::function<void()> on_tick_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

// A port nothing listens on (bound, then closed): connecting is refused.
inline int RefusingPort() {
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

// A port whose SYNs go unanswered, as behind a firewall's DROP rule (on
// loopback, without touching the machine's rules): a listening socket
// with a one-place accept queue, filled by a connection never accepted;
// the kernel drops every further SYN, and a connect times out.
class SilentPort {
 public:
  SilentPort() {
    listen_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(listen_, 0);
    socklen_t len = sizeof a;
    ::getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    filler_ = ::socket(AF_INET, SOCK_STREAM, 0);
    (void)!::connect(filler_, reinterpret_cast<sockaddr*>(&a), sizeof a);
  }
  ~SilentPort() {
    ::close(filler_);
    ::close(listen_);
  }
  SilentPort(const SilentPort&) = delete;
  SilentPort& operator=(const SilentPort&) = delete;
  int port() const { return port_; }

 private:
  int listen_ = -1, filler_ = -1, port_ = 0;
};

}  // namespace ferry::test

#endif  // FERRY_TESTS_TESTUTIL_POLL_SERVER_H_
