// The fibnic HTTP/1.1 server (Boost.Beast) that serves a Router on the
// caller's io_context — the same single thread as the daemon's pipeline, so
// handlers may read the Fib directly and need no locks.
//
// Robustness: header and body size limits, a deadline for every read and
// write (slow clients are dropped, never waited on), connection and
// event-stream caps overall and per client, a throttle on wrong tokens, a
// Host allowlist (DNS rebinding), any 4xx/5xx answer closes its connection,
// and a 500 never shows the client what went wrong inside (it is logged under
// a request id). The server never throws into the io_context.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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
  // One client (an IPv4 address, an IPv6 /64) may hold no more than this many
  // connections, so one host cannot take every slot.
  size_t max_connections_per_client = 32;
  // Event streams (SSE) hold their connection for as long as the client reads.
  // When a token is configured a stream needs it too.
  size_t max_streams = 16;
  size_t max_streams_per_client = 4;
  // A client that sends this many wrong tokens within the window gets 429 for
  // any request carrying a token until the oldest failure leaves the window.
  size_t auth_failure_limit = 5;
  std::chrono::milliseconds auth_failure_window{60000};
  // Host header names served besides IP literals and "localhost" (DNS
  // rebinding: a browser sends the attacker's name); others get 421.
  std::vector<std::string> allowed_hosts;
  std::chrono::milliseconds read_timeout{10000};   // whole request, from its first byte
  std::chrono::milliseconds idle_timeout{30000};   // keep-alive wait for the next request
  std::chrono::milliseconds write_timeout{10000};
};

// Checks a config before use: address parses, limits are sane (per-client caps
// within the global ones), host names are names, TLS files both set or both
// empty. Errors name the key.
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
