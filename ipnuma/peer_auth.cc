#include "ipnuma/peer_auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <charconv>

#include "device/ipnuma_regs.h"

namespace fibnic::ipnuma {
namespace {

using ipnuma_regs::Ipv4String;

std::string Hex(const unsigned char* p, size_t n) {
  static const char* kDigits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += kDigits[p[i] >> 4];
    s += kDigits[p[i] & 15];
  }
  return s;
}

bool IsLowerHex(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

const std::string* Header(const std::map<std::string, std::string>& h, const char* name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  auto it = h.find(lower);
  return it == h.end() ? nullptr : &it->second;
}

}  // namespace

int64_t SystemUnixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string PeerSignature(const std::string& secret, const SignedRequest& r) {
  // Every field on its own line, the body last: no field can absorb another.
  const std::string text = "ipnuma-peer-v1\n" + r.method + "\n" + r.path + "\n" + Ipv4String(r.sender) + "\n" +
                           Ipv4String(r.receiver) + "\n" + std::to_string(r.timestamp) + "\n" + r.nonce + "\n" +
                           r.body;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), reinterpret_cast<const unsigned char*>(text.data()),
       text.size(), mac, &len);
  return Hex(mac, len);
}

std::vector<std::pair<std::string, std::string>> SignPeerRequest(const std::string& secret, const std::string& method,
                                                                 const std::string& path, const std::string& body,
                                                                 uint32_t sender, uint32_t receiver, int64_t now) {
  unsigned char raw[16];
  if (RAND_bytes(raw, sizeof raw) != 1) std::abort();  // no randomness: no safe nonce, nothing sensible to send
  SignedRequest r{method, path, body, sender, receiver, now, Hex(raw, sizeof raw)};
  return {{kPeerHeader, Ipv4String(sender)},
          {kTimestampHeader, std::to_string(now)},
          {kNonceHeader, r.nonce},
          {kSignatureHeader, PeerSignature(secret, r)}};
}

PeerAuthenticator::PeerAuthenticator(uint32_t self_ip, const std::vector<PeerSpec>& peers, PeerAuthConfig config,
                                     UnixClock clock)
    : self_ip_(self_ip), config_(config), clock_(std::move(clock)) {
  for (const auto& p : peers) peers_[p.ip] = p;
}

StatusOr<uint32_t> PeerAuthenticator::Verify(const std::string& method, const std::string& path,
                                             const std::string& body, const std::map<std::string, std::string>& headers,
                                             const std::string& remote_address) {
  const std::string* peer_h = Header(headers, kPeerHeader);
  const std::string* ts_h = Header(headers, kTimestampHeader);
  const std::string* nonce_h = Header(headers, kNonceHeader);
  const std::string* sig_h = Header(headers, kSignatureHeader);
  if (!peer_h || !ts_h || !nonce_h || !sig_h) {
    return Unauthenticated(std::string("unsigned peer request: it needs the headers ") + kPeerHeader + ", " +
                           kTimestampHeader + ", " + kNonceHeader + " and " + kSignatureHeader +
                           " (HMAC-SHA256 with the secret this node shares with the peer); "
                           "an 'Authorization: Bearer' token is not accepted here");
  }
  auto claimed = IpAddr::Parse(*peer_h);
  if (!claimed.ok() || !claimed->is_v4()) {
    return Unauthenticated(std::string(kPeerHeader) + " is not an IPv4 address");
  }
  const uint32_t ip = claimed->v4();
  auto it = peers_.find(ip);
  if (it == peers_.end()) {
    return PermissionDenied("unauthorised peer " + Ipv4String(ip) + ": not a configured peer of " +
                            Ipv4String(self_ip_));
  }
  const PeerSpec& peer = it->second;
  const std::string who = "peer '" + peer.name + "' (" + Ipv4String(ip) + ")";
  auto remote = IpAddr::Parse(remote_address);
  if (!remote.ok() || !(*remote == peer.source)) {
    return PermissionDenied(who + ": request came from " + (remote.ok() ? remote->ToString() : "an unknown address") +
                            ", not from its configured source " + peer.source.ToString());
  }
  int64_t ts = 0;
  auto [end, ec] = std::from_chars(ts_h->data(), ts_h->data() + ts_h->size(), ts);
  if (ec != std::errc() || end != ts_h->data() + ts_h->size() || ts_h->empty() || (*ts_h)[0] == '-') {
    return Unauthenticated(who + ": " + kTimestampHeader + " is not a number of seconds");
  }
  const int64_t now = clock_();
  const int64_t window = config_.window.count();
  if (ts < now - window || ts > now + window) {
    return Unauthenticated(who + ": timestamp " + std::to_string(ts) + " is " + std::to_string(now - ts) +
                           " s off this node's clock (allowed: " + std::to_string(window) +
                           " s; replayed, or the clocks need NTP)");
  }
  if (nonce_h->size() != 32 || !IsLowerHex(*nonce_h)) {
    return Unauthenticated(who + ": " + kNonceHeader + " must be 32 lower-case hex digits");
  }
  const std::string want = PeerSignature(peer.secret, {method, path, body, ip, self_ip_, ts, *nonce_h});
  if (sig_h->size() != want.size() || CRYPTO_memcmp(sig_h->data(), want.data(), want.size()) != 0) {
    return Unauthenticated(who + ": signature does not verify with the secret shared with that peer");
  }
  std::lock_guard lock(mu_);
  const std::string key = Ipv4String(ip) + "/" + *nonce_h;
  if (nonces_.count(key)) return Unauthenticated(who + ": nonce already used (a replayed request)");
  if (nonces_.size() >= config_.nonce_capacity) {
    std::erase_if(nonces_, [&](const auto& n) { return n.second < now - window; });
    if (nonces_.size() >= config_.nonce_capacity) {
      return Unavailable(who + ": " + std::to_string(nonces_.size()) +
                               " requests within the replay window; try again shortly");
    }
  }
  nonces_.emplace(key, ts);
  return ip;
}

}  // namespace fibnic::ipnuma
