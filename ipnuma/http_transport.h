// The peer protocol's client side: HTTP/1.1 POST of a JSON body to the peer
// ipnumad's peer API, authenticated with the peer's shared secret as a bearer
// token, with one deadline for connect + request + answer. The body carries
// this NIC's address ("from") so the peer can apply the export's ACL.
#pragma once

#include <chrono>
#include <cstdint>

#include "ipnuma/service.h"

namespace fibnic::ipnuma {

class HttpPeerTransport : public PeerTransport {
 public:
  HttpPeerTransport(uint32_t self_ip, std::chrono::milliseconds timeout) : self_ip_(self_ip), timeout_(timeout) {}
  StatusOr<nlohmann::json> Post(const PeerSpec& peer, const std::string& path, const nlohmann::json& body) override;

 private:
  uint32_t self_ip_;
  std::chrono::milliseconds timeout_;
};

}  // namespace fibnic::ipnuma
