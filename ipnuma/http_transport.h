// The peer protocol's client side: HTTP/1.1 POST of a JSON body to the peer
// ipnumad's peer API, signed with the secret shared with that peer (see
// peer_auth.h), sent from this node's peer API address (the source the peer
// checks), with one deadline for connect + request + answer. The answer is
// bounded (kPeerAnswerLimit); whatever text of it reaches an error (and so
// the log and /status) is escaped and truncated.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "ipnuma/peer_auth.h"
#include "ipnuma/service.h"

namespace fibnic::ipnuma {

class HttpPeerTransport : public PeerTransport {
 public:
  // source: local address to send from (empty: the kernel picks).
  HttpPeerTransport(uint32_t self_ip, std::string source, std::chrono::milliseconds timeout,
                    UnixClock clock = SystemUnixSeconds)
      : self_ip_(self_ip), source_(std::move(source)), timeout_(timeout), clock_(std::move(clock)) {}
  StatusOr<nlohmann::json> Post(const PeerSpec& peer, const std::string& path, const nlohmann::json& body) override;

 private:
  uint32_t self_ip_;
  std::string source_;
  std::chrono::milliseconds timeout_;
  UnixClock clock_;
};

// Peer-supplied text made safe for one log line: control characters,
// backslashes and non-ASCII bytes escaped (\n, \x1b, ...), cut to max bytes
// with the original length named.
std::string EscapePeerText(std::string_view text, size_t max = 256);

}  // namespace fibnic::ipnuma
