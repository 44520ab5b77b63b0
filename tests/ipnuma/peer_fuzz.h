// The pieces of the peer API fuzzer (tests/ipnuma/peer_fuzz_test.cc): the
// corpus of raw requests, a seeded mutator that works on a request's parts
// (method, target, headers, body, JSON, signature, timestamp, nonce,
// framing, TCP source), a raw TCP client, and the oracle's model of which
// requests are validly signed. The model is the protocol as peer_auth.h
// documents it, written again here with OpenSSL's HMAC — never the product's
// own Verify — so a request the server accepts that the model calls forged
// or replayed is a finding, and so is a valid one the server calls forged.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/fuzz.h"

namespace fibnic::ipnuma::fuzz {

// The fuzz nodes: B is the target; A and C its peers (see the corpus README).
inline constexpr const char* kNodeB = "10.0.0.2";
struct FuzzPeer {
  const char* nic;
  const char* source;
  const char* secret;
};
inline const FuzzPeer kPeerA{"10.0.0.1", "127.0.0.11", "fuzz-pair-secret-a-b-0123456789abcdef"};
inline const FuzzPeer kPeerC{"10.0.0.3", "127.0.0.13", "fuzz-pair-secret-b-c-0123456789abcdef"};
inline constexpr const char* kListenB = "127.0.0.12";
inline constexpr int64_t kWindow = 30;  // ±seconds, peer_auth.h

inline const FuzzPeer* PeerByNic(const std::string& nic) {
  for (const FuzzPeer* p : {&kPeerA, &kPeerC}) {
    if (nic == p->nic) return p;
  }
  return nullptr;
}

struct Req {
  std::string name;  // corpus file
  std::string method, target, version = "HTTP/1.1";
  std::vector<std::pair<std::string, std::string>> headers;  // as sent, in order
  std::string body;
  std::string source;  // TCP source address
  bool chunked = false;
  // Bytes sent in place of the serialised request (framing broken on purpose).
  std::optional<std::string> raw;
  // The server's reading of it is not modelled (broken framing, bytes flipped
  // in the head): only the model-free checks apply.
  bool exotic = false;

  std::string Serialise() const {
    if (raw) return *raw;
    std::string s = method + " " + target + " " + version + "\r\n";
    for (const auto& [k, v] : headers) s += k + ": " + v + "\r\n";
    if (chunked) {
      s += "Transfer-Encoding: chunked\r\n\r\n";
      for (size_t i = 0; i < body.size(); i += 7) {
        const std::string part = body.substr(i, 7);
        char len[16];
        std::snprintf(len, sizeof len, "%zx", part.size());
        s += std::string(len) + "\r\n" + part + "\r\n";
      }
      return s + "0\r\n\r\n";
    }
    return s + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  }
};

inline std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The first header of that name (case-insensitive), trimmed as HTTP trims.
inline std::optional<std::string> HeaderOf(const Req& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (Lower(k) != Lower(name)) continue;
    const size_t a = v.find_first_not_of(" \t"), b = v.find_last_not_of(" \t");
    return a == std::string::npos ? std::string() : v.substr(a, b - a + 1);
  }
  return std::nullopt;
}

inline void SetHeader(Req& r, const std::string& name, const std::string& value) {
  for (auto& [k, v] : r.headers) {
    if (Lower(k) == Lower(name)) {
      v = value;
      return;
    }
  }
  r.headers.emplace_back(name, value);
}

inline std::vector<Req> LoadCorpus(const std::filesystem::path& dir) {
  std::vector<Req> out;
  for (auto& file : fibnic::testing::ReadCorpus(dir)) {
    std::string& text = file.text;
    while (text.rfind("#", 0) == 0) text.erase(0, text.find('\n') + 1);
    const size_t blank = text.find("\n\n");
    if (blank == std::string::npos) continue;
    Req r;
    r.name = file.path.filename().string();
    r.body = text.substr(blank + 2);
    std::istringstream head(text.substr(0, blank));
    std::string line;
    std::getline(head, line);
    std::istringstream rl(line);
    rl >> r.method >> r.target >> r.version;
    while (std::getline(head, line)) {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      r.headers.emplace_back(line.substr(0, colon), line.substr(colon + 2));
    }
    const auto peer = HeaderOf(r, "X-Ipnuma-Peer");
    r.source = peer && PeerByNic(*peer) ? PeerByNic(*peer)->source : kPeerA.source;
    out.push_back(std::move(r));
  }
  return out;
}

// --- the model of a validly signed request (peer_auth.h) -------------------

inline std::string HexOf(const unsigned char* p, size_t n) {
  static const char* kDigits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) s += {kDigits[p[i] >> 4], kDigits[p[i] & 15]};
  return s;
}

inline std::string ModelHmac(const std::string& secret, const std::string& method, const std::string& path,
                             const std::string& sender, int64_t ts, const std::string& nonce, const std::string& body) {
  const std::string text = "ipnuma-peer-v1\n" + method + "\n" + path + "\n" + sender + "\n" + kNodeB + "\n" +
                           std::to_string(ts) + "\n" + nonce + "\n" + body;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), reinterpret_cast<const unsigned char*>(text.data()),
       text.size(), mac, &len);
  return HexOf(mac, len);
}

// The request path as the server decodes it (RFC 3986 percent-escapes; a NUL
// or a broken escape is refused).
inline std::optional<std::string> DecodedPath(const std::string& target) {
  const std::string p = target.substr(0, target.find('?'));
  std::string out;
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '%') {
      if (i + 2 >= p.size() || !std::isxdigit(static_cast<unsigned char>(p[i + 1])) ||
          !std::isxdigit(static_cast<unsigned char>(p[i + 2]))) {
        return std::nullopt;
      }
      c = static_cast<char>(std::stoi(p.substr(i + 1, 2), nullptr, 16));
      i += 2;
    }
    if (c == '\0') return std::nullopt;
    out += c;
  }
  return out;
}

// The peer endpoint a decoded path reaches: the router compares segments and
// skips empty ones ("//peer/v1/grant/" is the grant path too; the signature
// covers the path as sent, so that is no way around it).
inline std::string RoutedTo(const std::optional<std::string>& path) {
  if (!path) return "";
  std::vector<std::string> segs;
  std::istringstream in(*path);
  for (std::string s; std::getline(in, s, '/');) {
    if (!s.empty()) segs.push_back(s);
  }
  if (segs.size() != 3 || segs[0] != "peer" || segs[1] != "v1") return "";
  return segs[2] == "grant" || segs[2] == "revoke" ? segs[2] : "";
}

enum class Verdict { kInvalid, kValid, kUnknown };

struct Judgement {
  Verdict verdict = Verdict::kInvalid;
  std::string why;            // for invalid: the first reason
  std::string nonce_key;      // sender/nonce when the signature verifies
  bool signature_ok = false;
};

// Nonces the server has certainly seen verified, and ones it may have.
struct NonceHistory {
  std::set<std::string> sure, maybe;
};

inline Judgement Judge(const Req& r, int64_t now, const NonceHistory& h) {
  Judgement j;
  auto bad = [&](std::string why) {
    j.why = std::move(why);
    return j;
  };
  if (r.exotic) {
    j.verdict = Verdict::kUnknown;
    j.why = "framing or head bytes mutated";
    return j;
  }
  if (HeaderOf(r, "Authorization")) return bad("carries a bearer token");
  if (auto host = HeaderOf(r, "Host"); host && *host == "evil.example") return bad("foreign Host");
  if (r.method != "POST") return bad("method " + r.method);
  const auto path = DecodedPath(r.target);
  if (RoutedTo(path).empty()) return bad("path");
  if (r.target.find('?') != std::string::npos) {  // the router may refuse a query before the handler verifies
    j.verdict = Verdict::kUnknown;
    j.why = "query string";
    return j;
  }
  if (r.body.size() > 64 * 1024) return bad("body over the limit");
  const auto peer = HeaderOf(r, "X-Ipnuma-Peer"), ts_h = HeaderOf(r, "X-Ipnuma-Timestamp"),
             nonce = HeaderOf(r, "X-Ipnuma-Nonce"), sig = HeaderOf(r, "X-Ipnuma-Signature");
  if (!peer || !ts_h || !nonce || !sig) return bad("unsigned");
  in_addr a{};
  char canon[INET_ADDRSTRLEN] = {};
  if (::inet_pton(AF_INET, peer->c_str(), &a) != 1 || !::inet_ntop(AF_INET, &a, canon, sizeof canon)) {
    return bad("peer header");
  }
  const FuzzPeer* p = PeerByNic(canon);
  if (!p) return bad("not a peer");
  if (r.source != p->source) return bad("wrong source");
  if (ts_h->empty() || ts_h->size() > 18 || ts_h->find_first_not_of("0123456789") != std::string::npos) {
    return bad("timestamp");
  }
  const int64_t ts = std::stoll(*ts_h);
  if (nonce->size() != 32 || nonce->find_first_not_of("0123456789abcdef") != std::string::npos) return bad("nonce");
  if (*sig != ModelHmac(p->secret, r.method, *path, canon, ts, *nonce, r.body)) return bad("signature");
  j.signature_ok = true;
  j.nonce_key = std::string(canon) + "/" + *nonce;
  const int64_t off = ts > now ? ts - now : now - ts;
  if (off > kWindow + 2) return bad("stale");
  if (h.sure.count(j.nonce_key)) return bad("replayed nonce");
  // At the edge of the window (the clocks tick between send and check), or a
  // nonce the server may have taken from a request whose framing we broke.
  j.verdict = off >= kWindow - 2 || h.maybe.count(j.nonce_key) ? Verdict::kUnknown : Verdict::kValid;
  return j;
}

// --- the mutator ------------------------------------------------------------

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}
  size_t Pick(size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  bool OneIn(size_t n) { return Pick(n) == 0; }

  std::string Nonce() {
    unsigned char raw[16];
    for (auto& b : raw) b = static_cast<unsigned char>(Pick(256));
    return HexOf(raw, sizeof raw);
  }

  // Signs r as peer p with key's secret (p's own unless testing a wrong one).
  static void SignAs(Req& r, const FuzzPeer& p, const FuzzPeer& key, int64_t ts, const std::string& nonce) {
    const auto path = DecodedPath(r.target).value_or(r.target);
    SetHeader(r, "X-Ipnuma-Peer", p.nic);
    SetHeader(r, "X-Ipnuma-Timestamp", std::to_string(ts));
    SetHeader(r, "X-Ipnuma-Nonce", nonce);
    SetHeader(r, "X-Ipnuma-Signature", ModelHmac(key.secret, r.method, path, p.nic, ts, nonce, r.body));
    r.source = p.source;
  }

  // Signs r as its X-Ipnuma-Peer (or a random peer) at time ts; now and then
  // with the other pair's secret.
  void Sign(Req& r, int64_t ts, const std::string& nonce) {
    const auto claimed = HeaderOf(r, "X-Ipnuma-Peer");
    const FuzzPeer* p = claimed && PeerByNic(*claimed) ? PeerByNic(*claimed) : (OneIn(2) ? &kPeerA : &kPeerC);
    SignAs(r, *p, OneIn(20) ? (p == &kPeerA ? kPeerC : kPeerA) : *p, ts, nonce);
  }

  // What the request says before it is signed: method, target, body, JSON.
  void MutateContent(Req& r) {
    static const std::vector<std::string> kMethods = {"GET", "PUT", "DELETE", "PATCH", "OPTIONS", "post", "POSTX"};
    static const std::vector<std::string> kTargets = {
        "/peer/v1/grant", "/peer/v1/revoke", "/peer/v1/grant/", "/peer/v1/%67rant", "/peer/v1/grant?x=1",
        "/peer/v1/revoke?from=10.0.0.3", "/peer/v1/", "/peer/v2/grant", "/peer/v1/grant%00", "/peer/v1/gr%zzant",
        "//peer/v1/grant", "/peer/v1/../v1/grant", "/api/v1/ipnuma/status", "*", "/peer/v1/revoke#x"};
    switch (Pick(8)) {
      case 0: r.method = kMethods[Pick(kMethods.size())]; break;
      case 1: r.target = kTargets[Pick(kTargets.size())]; break;
      case 2: if (!r.body.empty()) r.body[Pick(r.body.size())] = static_cast<char>(Pick(256)); break;
      case 3: r.body.resize(Pick(r.body.size() + 1)); break;
      case 4: r.body = BodyFromJson(r.body); break;
      case 5: r.body = kBodies()[Pick(kBodies().size())]; break;
      case 6: r.body.insert(Pick(r.body.size() + 1), kTokens()[Pick(kTokens().size())]); break;
      default: r.body = BodyFromJson(BodyFromJson(r.body)); break;
    }
  }

  // After signing: headers, signature, timestamp, nonce, source, framing.
  void MutateEnvelope(Req& r, int64_t now) {
    static const std::vector<std::string> kPeers = {"10.0.0.1", "10.0.0.3", "10.0.0.2", "10.0.0.9", "010.0.0.3",
                                                    "10.0.0.3 ", "10.0.0.3,10.0.0.1", "::ffff:10.0.0.3", "",
                                                    "10.0.0.256", "0x0a000003", "167772163"};
    static const std::vector<std::string> kSources = {kPeerA.source, kPeerC.source, "127.0.0.1", "127.0.0.14"};
    static const std::vector<std::string> kHosts = {"127.0.0.12", "localhost", "evil.example", "[::1]:7470", ""};
    static const std::vector<std::string> kHeaders = {"X-Ipnuma-Peer", "X-Ipnuma-Timestamp", "X-Ipnuma-Nonce",
                                                      "X-Ipnuma-Signature"};
    const std::string h = kHeaders[Pick(kHeaders.size())];
    switch (Pick(18)) {
      case 0: SetHeader(r, "X-Ipnuma-Peer", kPeers[Pick(kPeers.size())]); break;
      case 1: {
        static const std::vector<int64_t> kOffsets = {-1000000000, -31, -30, -29, -1, 1, 29, 30, 31, 1000000000};
        SetHeader(r, "X-Ipnuma-Timestamp", std::to_string(now + kOffsets[Pick(kOffsets.size())]));
        break;
      }
      case 2: {
        static const std::vector<std::string> kTs = {"", "-1", "+" + std::to_string(now), std::to_string(now) + ".0",
                                                     "0x6b49d200", "99999999999999999999", "0" + std::to_string(now),
                                                     std::to_string(now) + " 1", "1e9"};
        SetHeader(r, "X-Ipnuma-Timestamp", kTs[Pick(kTs.size())]);
        break;
      }
      case 3: {
        std::string n = HeaderOf(r, "X-Ipnuma-Nonce").value_or(Nonce());
        switch (Pick(4)) {
          case 0: for (auto& c : n) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c))); break;
          case 1: n.pop_back(); break;
          case 2: n += "0"; break;
          default: n[Pick(n.size())] = 'g'; break;
        }
        SetHeader(r, "X-Ipnuma-Nonce", n);
        break;
      }
      case 4: {
        std::string s = HeaderOf(r, "X-Ipnuma-Signature").value_or(std::string(64, '0'));
        switch (Pick(5)) {
          case 0: if (!s.empty()) s[Pick(s.size())] ^= 1; break;
          case 1: for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c))); break;
          case 2: s.resize(Pick(s.size() + 1)); break;
          case 3: s += "00"; break;
          default: s = ""; break;
        }
        SetHeader(r, "X-Ipnuma-Signature", s);
        break;
      }
      case 5:  // drop one of the four
        std::erase_if(r.headers, [&](const auto& kv) { return Lower(kv.first) == Lower(h); });
        break;
      case 6: r.headers.insert(r.headers.begin() + static_cast<long>(Pick(r.headers.size() + 1)),
                               {h, HeaderOf(r, h).value_or("x")});
        break;
      case 7: r.headers.emplace_back(h, h == "X-Ipnuma-Nonce" ? Nonce() : "10.0.0.1"); break;  // a second, different
      case 8: for (auto& [k, v] : r.headers) k = OneIn(2) ? Lower(k) : k; break;  // header names' case
      case 9: r.source = kSources[Pick(kSources.size())]; break;
      case 10: SetHeader(r, "Host", kHosts[Pick(kHosts.size())]); break;
      case 11: SetHeader(r, "Authorization", OneIn(2) ? std::string("Bearer ") + kPeerC.secret : "Bearer x"); break;
      case 12: if (!r.body.empty()) r.body[Pick(r.body.size())] ^= static_cast<char>(1 + Pick(255)); break;
      case 13: r.body += OneIn(2) ? " " : "\n"; break;
      case 14: r.chunked = true; break;
      case 15: r.version = OneIn(2) ? "HTTP/1.0" : "HTTP/1.1"; break;
      case 16: SetHeader(r, "Content-Type", OneIn(2) ? "text/plain" : "application/json; charset=latin1"); break;
      default: {  // about the 64 KiB body limit: just under, just over, well over
        const size_t want = std::vector<size_t>{65536, 65537, 70 * 1024}[Pick(3)];
        if (r.body.size() < want) r.body.append(want - r.body.size(), ' ');
        break;
      }
    }
  }

  // Bytes of the finished request: lengths, encodings, bits in the head.
  void MutateFraming(Req& r) {
    std::string s = r.Serialise();
    const size_t head_end = s.find("\r\n\r\n");
    switch (Pick(8)) {
      case 0: s.resize(Pick(s.size() + 1)); break;  // cut short
      case 1: {  // a Content-Length that lies
        const size_t at = s.find("Content-Length: ");
        if (at == std::string::npos) break;
        const size_t eol = s.find("\r\n", at);
        static const std::vector<std::string> kLens = {"0", "1", "-1", "99999999", "18446744073709551616", "4 4",
                                                       "0x10", " 12", "1000000000000"};
        s = s.substr(0, at + 16) + kLens[Pick(kLens.size())] + s.substr(eol);
        break;
      }
      case 2: s.insert(head_end == std::string::npos ? 0 : head_end, "\r\nContent-Length: 3"); break;
      case 3: s.insert(head_end == std::string::npos ? 0 : head_end, "\r\nTransfer-Encoding: chunked"); break;
      case 4: if (!s.empty()) s[Pick(head_end == std::string::npos ? s.size() : head_end)] = static_cast<char>(Pick(256)); break;
      case 5: s += s; break;  // two requests in one go (pipelined)
      case 6: s.insert(head_end == std::string::npos ? 0 : head_end, "\r\nX-Long: " + std::string(9000, 'x')); break;
      default: {
        std::string lf;
        for (char c : s) if (c != '\r') lf += c;  // bare LF line ends
        s = lf;
        break;
      }
    }
    r.raw = s;
    r.exotic = true;
  }

 private:
  static const std::vector<std::string>& kTokens() {
    static const std::vector<std::string> t = {"\"", "{", "}", "[", "]", ",", ":", "\\u0000", "\xff", "\xc3\xa9",
                                               "null", "-0", "1e400", "0x", "\"from\":\"10.0.0.3\","};
    return t;
  }
  static const std::vector<std::string>& kBodies() {
    static const std::vector<std::string> b = {
        "", "{}", "[]", "null", "\"x\"", "{\"export\":\"rx\"}", std::string(3000, '[') + std::string(3000, ']'),
        "{\"export\":\"rx\",\"offset\":0,\"length\":4096,\"export\":\"rx-c\"}",
        "{\"export\":\"rx-c\",\"base\":12884918272,\"length\":16384,\"from\":\"10.0.0.1\"}",
        "{\"export\":\"rx-c\",\"base\":12884918272,\"length\":16384,\"from\":3}",
        "{\"export\":\"rx-c\",\"base\":0,\"length\":18446744073709551615}",
        "{\"export\":\"rx/../x\",\"offset\":0,\"length\":4096}", "{\"export\":\"" + std::string(100000, 'e') + "\"}"};
    return b;
  }

  // The body's JSON with one value changed, dropped or added.
  std::string BodyFromJson(const std::string& body) {
    auto j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return body;
    static const std::vector<nlohmann::json> kValues = {
        0, -1, 1, 4095, 4096, 4097, 16384, 16385, uint64_t(1) << 48, UINT64_MAX, 12884918272ull, 12884926464ull,
        0.5, "0x1000", "010", "0x", "-1", "1e3", "", "rx", "rx-c", "x", nullptr, true, nlohmann::json::array(),
        nlohmann::json::object(), "10.0.0.3", "10.0.0.1", std::string(300, 'n')};
    static const std::vector<std::string> kKeys = {"export", "offset", "length", "base", "from", "extra", "Export"};
    const std::string key = kKeys[Pick(kKeys.size())];
    if (OneIn(4)) {
      j.erase(key);
    } else {
      j[key] = kValues[Pick(kValues.size())];
    }
    return j.dump(OneIn(4) ? 1 : -1);
  }

  std::mt19937_64 rng_;
};

// --- a raw TCP client -------------------------------------------------------

// Sends bytes from source to host:port, half-closes (a request cut short then
// ends at EOF instead of waiting for the read deadline) and reads until the
// server closes. Empty string: no connection.
inline std::optional<std::string> Exchange(const std::string& source, const std::string& host, uint16_t port,
                                           const std::string& bytes, int timeout_ms) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
  sockaddr_in local{}, remote{};
  local.sin_family = remote.sin_family = AF_INET;
  ::inet_pton(AF_INET, source.c_str(), &local.sin_addr);
  ::inet_pton(AF_INET, host.c_str(), &remote.sin_addr);
  remote.sin_port = htons(port);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&remote), sizeof remote) != 0) {
    ::close(fd);
    return std::nullopt;
  }
  for (size_t off = 0; off < bytes.size();) {
    const ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may close early (431, 413): read its answer
    off += static_cast<size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  std::string out;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  char buf[8192];
  while (std::chrono::steady_clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

struct Answer {
  int status = 0;
  std::string body;
};

// The responses in raw bytes, or why they are not well formed: a status line,
// headers, a Content-Length body; an error is a JSON object naming its status
// and saying what was wrong.
inline std::vector<Answer> ParseAnswers(const std::string& raw, std::string* problem) {
  std::vector<Answer> out;
  size_t at = 0;
  while (at < raw.size()) {
    const size_t head_end = raw.find("\r\n\r\n", at);
    if (raw.compare(at, 9, "HTTP/1.1 ") != 0 && raw.compare(at, 9, "HTTP/1.0 ") != 0) {
      *problem = "not a status line: " + raw.substr(at, 40);
      return out;
    }
    if (head_end == std::string::npos) {
      *problem = "response head cut short";
      return out;
    }
    Answer a;
    a.status = std::atoi(raw.substr(at + 9, 3).c_str());
    const std::string head = Lower(raw.substr(at, head_end - at));
    const size_t cl = head.find("\r\ncontent-length: ");
    if (cl == std::string::npos) {
      *problem = "response without Content-Length";
      return out;
    }
    const size_t len = std::stoul(head.substr(cl + 18));
    a.body = raw.substr(head_end + 4, len);
    if (a.body.size() != len) {
      *problem = "response body cut short";
      return out;
    }
    at = head_end + 4 + len;
    if (a.status < 200 || a.status > 599) {
      *problem = "status " + std::to_string(a.status);
    } else if (a.status >= 400) {
      const auto j = nlohmann::json::parse(a.body, nullptr, false);
      if (!j.is_object() || !j.contains("error") || !j["error"].is_object() || j["error"]["status"] != a.status ||
          !j["error"]["message"].is_string() || j["error"]["message"].get<std::string>().empty()) {
        *problem = "error answer without a JSON error naming its status and cause: " + a.body.substr(0, 200);
      }
    } else if (!nlohmann::json::parse(a.body, nullptr, false).is_object()) {
      *problem = "success answer is not a JSON object: " + a.body.substr(0, 200);
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace fibnic::ipnuma::fuzz
