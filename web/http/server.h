// The fibnic HTTP/1.1 server (Boost.Beast) that serves a Router on the
// caller's io_context — the same single thread as the daemon's pipeline, so
// handlers may read the Fib directly and need no locks.
//
// Robustness: header and body size limits, a deadline for every read and
// write (slow clients are dropped, never waited on), a connection cap, and
// any malformed request answered with a JSON 4xx and closed. The server
// never throws into the io_context.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "common/status.h"
#include "web/http/router.h"
#include "web/http/telemetry.h"

namespace fibnic::web {

struct WebConfig {
  std::string listen_address = "127.0.0.1";  // loopback unless the operator says otherwise
  uint16_t port = 8080;                      // 0 = pick a free port (tests)
  // Bearer token that state-changing requests must carry. Empty: every such
  // request is refused (401), reads stay open.
  std::string token;
  // TLS when both are set (PEM files).
  std::string tls_cert_file;
  std::string tls_key_file;
  size_t header_limit = 8 * 1024;
  size_t body_limit = 64 * 1024;
  size_t max_connections = 256;
  std::chrono::milliseconds read_timeout{10000};   // whole request, from its first byte
  std::chrono::milliseconds idle_timeout{30000};   // keep-alive wait for the next request
  std::chrono::milliseconds write_timeout{10000};
};

// Checks a config before use: address parses, limits are sane, TLS files
// both set or both empty. Errors name the key.
Status ValidateWebConfig(const WebConfig& config);

class WebServer {
 public:
  // Binds and starts accepting. telemetry (optional) gets request counters,
  // a latency histogram and an event per rejected connection burst.
  static StatusOr<std::unique_ptr<WebServer>> Start(boost::asio::io_context& io, const WebConfig& config,
                                                    const Router& router, Telemetry* telemetry = nullptr);
  ~WebServer();
  WebServer(const WebServer&) = delete;
  WebServer& operator=(const WebServer&) = delete;

  uint16_t port() const;  // the bound port
  bool tls() const;
  size_t open_connections() const;
  // Stops accepting and closes every connection (outstanding operations end
  // with operation_aborted); the io_context may then run out of work.
  void Stop();

  struct Impl;

 private:
  explicit WebServer(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace fibnic::web
