// A small blocking HTTP/1.1 client (Boost.Beast) for fibnicctl, ipnumactl and
// ipnumad's peer protocol: one request with a deadline, optional bearer token
// or extra headers, an answer no larger than body_limit.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/config_yaml.h"

namespace fibnic {

struct HttpResult {
  int status = 0;
  std::string content_type;
  std::string body;
};

// Answers of the daemons' own REST APIs (a full route dump); peers of ipnumad
// get kPeerAnswerLimit.
inline constexpr size_t kDefaultAnswerLimit = 256 * 1024 * 1024;
inline constexpr size_t kPeerAnswerLimit = 64 * 1024;

struct HttpRequestSpec {
  Endpoint server;
  std::string method = "GET";
  std::string target;  // "/api/v1/status?x=y", already percent-encoded
  std::string token;   // sent as "Authorization: Bearer <token>" when set
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra request headers
  std::string bind_address;  // local source address of the connection; empty: the kernel picks
  size_t body_limit = kDefaultAnswerLimit;  // a larger answer is an error, never read whole
  std::chrono::milliseconds timeout{5000};
};

StatusOr<HttpResult> HttpCall(const HttpRequestSpec& spec);

// A daemon's address as an operator writes it: HOST:PORT, [IPV6]:PORT, or an
// http:// URL (a path of "/" or none), HOST an address or a name resolved
// here (the first address the resolver gives); without a port,
// default_port. https is refused: the daemons serve plain HTTP.
StatusOr<Endpoint> ParseServer(std::string_view text, uint16_t default_port);

// Percent-encodes a query or path component (RFC 3986 unreserved kept).
std::string UrlEncode(const std::string& s);

}  // namespace fibnic
