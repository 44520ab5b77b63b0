// Authentication of ipnumad's peer protocol. Every pair of ipnumad shares
// one secret (each peer its own, >= 32 bytes); a request carries
//   X-Ipnuma-Peer: <sender's NIC IPv4>   X-Ipnuma-Timestamp: <unix seconds>
//   X-Ipnuma-Nonce: <32 hex digits>      X-Ipnuma-Signature: <HMAC-SHA256, hex>
// signed over method, path, sender, receiver, timestamp, nonce and body. The
// receiver takes the caller's identity from the key that verifies, never from
// the body: the claimed peer must be configured, the TCP source must be that
// peer's configured source address, the timestamp within the window and the
// nonce unseen within it (a bounded cache: a full cache refuses, it never
// forgets a nonce early).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "ipnuma/model.h"

namespace fibnic::ipnuma {

inline constexpr size_t kMinPeerSecretBytes = 32;
inline constexpr const char* kPeerHeader = "X-Ipnuma-Peer";
inline constexpr const char* kTimestampHeader = "X-Ipnuma-Timestamp";
inline constexpr const char* kNonceHeader = "X-Ipnuma-Nonce";
inline constexpr const char* kSignatureHeader = "X-Ipnuma-Signature";

// Seconds since the epoch; injectable so tests can move time.
using UnixClock = std::function<int64_t()>;
int64_t SystemUnixSeconds();

struct SignedRequest {
  std::string method, path, body;
  uint32_t sender = 0, receiver = 0;  // NIC IPv4 addresses, host order
  int64_t timestamp = 0;
  std::string nonce;
};

// Lower-case hex HMAC-SHA256 of the request's canonical form under secret.
std::string PeerSignature(const std::string& secret, const SignedRequest& r);
// The four headers for a request from sender to receiver, signed now with a fresh nonce.
std::vector<std::pair<std::string, std::string>> SignPeerRequest(const std::string& secret, const std::string& method,
                                                                 const std::string& path, const std::string& body,
                                                                 uint32_t sender, uint32_t receiver,
                                                                 int64_t now);

struct PeerAuthConfig {
  std::chrono::seconds window{30};  // |now - timestamp| allowed
  size_t nonce_capacity = 16384;    // nonces remembered within the window
};

class PeerAuthenticator {
 public:
  PeerAuthenticator(uint32_t self_ip, const std::vector<PeerSpec>& peers, PeerAuthConfig config = {},
                    UnixClock clock = SystemUnixSeconds);

  // The NIC address of the peer that sent the request, or why not:
  // Unauthenticated (missing/bad headers, stale, bad signature, replay),
  // PermissionDenied (unknown peer, wrong source address), Unavailable
  // (nonce cache full of live nonces). headers: lower-case names.
  StatusOr<uint32_t> Verify(const std::string& method, const std::string& path, const std::string& body,
                            const std::map<std::string, std::string>& headers, const std::string& remote_address);

 private:
  uint32_t self_ip_;
  std::map<uint32_t, PeerSpec> peers_;
  PeerAuthConfig config_;
  UnixClock clock_;
  std::mutex mu_;
  std::map<std::string, int64_t> nonces_;  // nonce → timestamp it came with
};

}  // namespace fibnic::ipnuma
