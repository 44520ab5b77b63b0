// Runs a WebServer on its own io_context thread for a test; the test talks to
// it over real sockets. Handlers run on the server thread, as in fibnicd.
#pragma once

#include <sys/socket.h>
#include <sys/time.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "tests/support/on_loop.h"
#include "web/http/router.h"
#include "web/http/server.h"

namespace fibnic::web::testing {

class ServerThread {
 public:
  // setup runs on the server thread before Start (mount APIs that need the io_context there).
  ServerThread(WebConfig cfg, std::function<void(boost::asio::io_context&, Router&)> setup, Telemetry* telemetry = nullptr)
      : work_(io_.get_executor()) {
    std::promise<Status> started;
    auto fut = started.get_future();
    thread_ = std::thread([&, cfg] {
      if (setup) setup(io_, router_);
      auto s = WebServer::Start(io_, cfg, router_, telemetry);
      if (s.ok()) server_ = std::move(*s);
      started.set_value(s.status());
      io_.run();
    });
    status_ = fut.get();
    if (server_) port_ = server_->port();
  }
  ~ServerThread() {
    boost::asio::post(io_, [this] {
      if (before_stop_) before_stop_();
      if (server_) server_->Stop();
      work_.reset();
    });
    thread_.join();
    server_.reset();
  }
  const Status& status() const { return status_; }
  uint16_t port() const { return port_; }
  // Runs fn on the server thread and waits for it.
  template <typename F>
  auto OnServer(F fn) {
    return fibnic::testing::OnLoop(io_, std::move(fn));
  }
  WebServer* server() { return server_.get(); }
  const Router& router() const { return router_; }
  // Runs on the server thread at teardown: stop what keeps the io_context
  // busy besides the server (e.g. the Fib API's rate sampler).
  void BeforeStop(std::function<void()> fn) { before_stop_ = std::move(fn); }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  Router router_;
  std::unique_ptr<WebServer> server_;
  std::thread thread_;
  std::function<void()> before_stop_;
  Status status_;
  uint16_t port_ = 0;
};

// A raw TCP connection for sending arbitrary bytes. source: the local
// address to connect from (another 127.x address is another client).
class RawConn {
 public:
  explicit RawConn(uint16_t port, int timeout_ms = 3000, const char* source = nullptr) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (source) {
      sockaddr_in local{};
      local.sin_family = AF_INET;
      ::inet_pton(AF_INET, source, &local.sin_addr);
      ::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local);
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~RawConn() { ::close(fd_); }
  bool connected() const { return connected_; }
  bool Send(const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      ssize_t n = ::send(fd_, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }
  // Reads until the peer closes, the timeout expires, or max bytes.
  // closed is set when the peer closed (read returned 0 or reset).
  std::string ReadAll(bool* closed, size_t max = 1 << 20) {
    std::string out;
    char buf[4096];
    *closed = false;
    while (out.size() < max) {
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n == 0 || (n < 0 && errno == ECONNRESET)) {
        *closed = true;
        break;
      }
      if (n < 0) break;  // timeout
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }
  void ShutdownWrite() { ::shutdown(fd_, SHUT_WR); }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

// Status code of the first response in raw bytes, 0 if none.
inline int FirstStatus(const std::string& raw) {
  if (raw.rfind("HTTP/1.", 0) != 0 || raw.size() < 12) return 0;
  return std::atoi(raw.substr(9, 3).c_str());
}

}  // namespace fibnic::web::testing
