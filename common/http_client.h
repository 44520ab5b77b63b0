// A small blocking HTTP/1.1 client (Boost.Beast) for fibnicctl: one request
// to the daemon's REST API with a deadline, optional bearer token.
#pragma once

#include <chrono>
#include <string>

#include "common/status.h"
#include "common/config_yaml.h"

namespace fibnic {

struct HttpResult {
  int status = 0;
  std::string content_type;
  std::string body;
};

struct HttpRequestSpec {
  Endpoint server;
  std::string method = "GET";
  std::string target;  // "/api/v1/status?x=y", already percent-encoded
  std::string token;   // sent as "Authorization: Bearer <token>" when set
  std::string body;
  std::chrono::milliseconds timeout{5000};
};

StatusOr<HttpResult> HttpCall(const HttpRequestSpec& spec);

// Percent-encodes a query or path component (RFC 3986 unreserved kept).
std::string UrlEncode(const std::string& s);

}  // namespace fibnic
