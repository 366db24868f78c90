// A scripted HTTP/1.1 server for tests that need answers no real server
// gives (an S3 listing that repeats a key, a server without
// ListMultipartUploads). Its thread serves one connection at a time.
#ifndef FERRY_TESTS_TESTUTIL_STUB_SERVER_H_
#define FERRY_TESTS_TESTUTIL_STUB_SERVER_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ferry::test {

// One HTTP/1.1 server thread, one connection at a time (close a backend
// before the next one connects): reads each request (headers, Content-Length
// body) and answers what `reply` says; records "METHOD target" lines (and
// the requests' heads).
class StubServer {
 public:
  struct Reply {
    int status = 200;
    std::string body;
    std::string headers;  // extra "Name: value\r\n" lines
  };
  // Listens at once; serves from Start() (here, unless `start` is false: a
  // test that forks starts it after, see test::ForkAlone; connections made
  // before wait in the listen queue).
  explicit StubServer(std::function<Reply(const std::string&)> reply,
                      bool start = true)
      : reply_(std::move(reply)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 8);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    if (start) Start();
  }
  ~StubServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    if (thread_.joinable()) thread_.join();
  }
  void Start() {
    if (!thread_.joinable()) thread_ = std::thread([this] { Serve(); });
  }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_);
  }
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  // Each request's whole head (request line and header lines).
  std::vector<std::string> heads() {
    std::lock_guard<std::mutex> lock(mu_);
    return heads_;
  }

 private:
  void Serve() {
    while (!stop_) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string buf;
      char tmp[65536];
      for (;;) {
        size_t end = buf.find("\r\n\r\n");
        if (end == std::string::npos) {
          ssize_t n = ::read(c, tmp, sizeof tmp);
          if (n <= 0) break;
          buf.append(tmp, size_t(n));
          continue;
        }
        std::string head = buf.substr(0, end);
        size_t body_len = 0;
        for (const char* name : {"Content-Length: ", "content-length: "}) {
          size_t p = head.find(name);
          if (p != std::string::npos)
            body_len = std::stoul(head.substr(p + strlen(name)));
        }
        while (buf.size() < end + 4 + body_len) {
          ssize_t n = ::read(c, tmp, sizeof tmp);
          if (n <= 0) break;
          buf.append(tmp, size_t(n));
        }
        std::string line = head.substr(0, head.find(' ', head.find(' ') + 1));
        buf.erase(0, std::min(buf.size(), end + 4 + body_len));
        {
          std::lock_guard<std::mutex> lock(mu_);
          requests_.push_back(line);
          heads_.push_back(head);
        }
        Reply r = reply_(line);
        std::string out =
            "HTTP/1.1 " + std::to_string(r.status) +
            " X\r\nContent-Length: " + std::to_string(r.body.size()) + "\r\n" +
            r.headers + "\r\n";
        if (line.rfind("HEAD ", 0) != 0) out += r.body;
        if (::write(c, out.data(), out.size()) < 0) break;
      }
      ::close(c);
    }
  }

  std::function<Reply(const std::string&)> reply_;
  int fd_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> requests_, heads_;
};

}  // namespace ferry::test

#endif  // FERRY_TESTS_TESTUTIL_STUB_SERVER_H_
