// Who may hold what on the HTTP server: per-client connection and event-stream
// counts beside the global caps, a failed-authentication throttle, and the Host
// header allowlist against DNS rebinding. Beast-free and socket-free, so the
// rules can be tested (and fuzzed) without a network.
//
// A client is its address for IPv4 and its /64 for IPv6 (one host holds a whole
// /64, so counting single IPv6 addresses would cap nothing).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace fibnic::web {

using ClientKey = std::array<uint8_t, 16>;  // IPv4 mapped into ::ffff:a.b.c.d; IPv6 keeps its /64

// From the peer's address as text ("127.0.0.1", "2001:db8::1"); unparsable text maps to all-zero.
ClientKey ClientKeyOf(const std::string& address);

struct AdmissionLimits {
  size_t max_connections_per_client = 32;
  size_t max_streams = 16;
  size_t max_streams_per_client = 4;
  size_t auth_failure_limit = 5;                       // wrong tokens per client ...
  std::chrono::milliseconds auth_failure_window{60000};  // ... within this window, then 429
};

class ClientTable {
 public:
  using Clock = std::chrono::steady_clock;
  explicit ClientTable(AdmissionLimits limits) : limits_(limits) {}

  // A new connection from key: false when the client already holds its share.
  bool TryConnect(const ClientKey& key);
  void Disconnect(const ClientKey& key);
  // An event stream: false when the global or the client's stream cap is reached.
  bool TryStream(const ClientKey& key);
  void EndStream(const ClientKey& key);
  size_t streams() const { return streams_total_; }

  // Failed-authentication throttle. A client that sent auth_failure_limit wrong
  // tokens within auth_failure_window is refused (429) for any request carrying
  // a token until the oldest of them leaves the window; the answer says when.
  void AuthFailed(const ClientKey& key, Clock::time_point now);
  // Zero when the client may try again now, else how long it must wait.
  std::chrono::milliseconds AuthRetryAfter(const ClientKey& key, Clock::time_point now) const;

 private:
  struct Counts {
    size_t connections = 0;
    size_t streams = 0;
  };
  void Forget(const ClientKey& key);
  void PruneFailures(Clock::time_point now);

  AdmissionLimits limits_;
  std::map<ClientKey, Counts> clients_;  // only clients with an open connection
  size_t streams_total_ = 0;
  std::map<ClientKey, std::deque<Clock::time_point>> failures_;  // the newest auth_failure_limit per client
};

// The Host header against DNS rebinding: a page from evil.example that rebinds
// its name to 127.0.0.1 still sends "Host: evil.example". Allowed: an IP
// literal (v4, or v6 in brackets), "localhost", or one of `allowed` (names
// compared case-insensitively; any port). A request without Host (HTTP/1.0)
// passes: browsers always send one.
bool HostAllowed(std::string_view host, const std::vector<std::string>& allowed);

}  // namespace fibnic::web
