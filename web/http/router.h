// The HTTP routing table of a fibnic web server, free of Beast so that any
// service (fibnicd, ipnumad) can mount handlers without touching the transport.
//
// Every route carries its OpenAPI operation object; the router serves the
// merged document at /api/v1/openapi.json, and it also enforces what the
// document says: unknown query parameters are a 400, a route marked
// "x-fibnic-auth": true (and every non-GET route) needs the bearer token;
// "x-fibnic-auth": false leaves authentication to the handler (ipnumad's
// signed peer API).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace fibnic::web {

struct HttpRequest {
  std::string method;  // "GET", "PUT", ...
  std::string path;    // percent-decoded path, no query
  std::map<std::string, std::string> query;   // decoded; a repeated key is an error before dispatch
  std::map<std::string, std::string> params;  // {name} segments of the route pattern
  std::string body;
  std::string content_type;
  bool authenticated = false;  // carried the configured bearer token
  std::string remote_address;  // the TCP peer's IP address, as text
  std::map<std::string, std::string> headers;  // lower-case names; the first of a repeated one
};

// A long-lived response (Server-Sent Events). The server calls Poll() every
// interval; whatever text it returns (already in SSE framing) is sent. Poll
// runs on the server's io_context thread like any handler.
class EventStream {
 public:
  virtual ~EventStream() = default;
  virtual std::chrono::milliseconds interval() const { return std::chrono::milliseconds(1000); }
  virtual std::string Poll() = 0;
};

struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  std::shared_ptr<EventStream> stream;  // set: send headers, then stream until the client leaves
};

HttpReply JsonReply(const nlohmann::json& j, int status = 200);
// {"error": {"status": 404, "code": "NOT_FOUND", "message": "..."}}
HttpReply ErrorReply(int status, const std::string& message);
HttpReply ErrorReply(const Status& st);
int HttpStatusOf(StatusCode code);

using Handler = std::function<StatusOr<HttpReply>(const HttpRequest&)>;

struct RouteSpec {
  std::string method;   // GET, PUT, POST, DELETE
  std::string pattern;  // "/api/v1/lookup/{address}"
  Handler handler;
  nlohmann::json doc;   // OpenAPI operation object (summary, parameters, responses, ...)
};

class Router {
 public:
  Router();

  // Fails if the pattern is malformed, already registered for the method, or
  // the doc is not an object with "summary" and "responses".
  Status Add(RouteSpec spec);
  // A static file served on GET (dashboard pages, scripts, styles); not part
  // of the API document. body must outlive the router (embedded assets do).
  void AddAsset(std::string path, std::string content_type, std::string_view body);

  // Sets document-level parts: info, components.schemas (merged), tags.
  void MergeDocument(const nlohmann::json& base);

  // Resolves and runs a request: 404/405/400/401 as JSON errors when it does not fit.
  HttpReply Dispatch(HttpRequest req) const;

  // The OpenAPI 3.0 document of everything registered (plus /api/v1/openapi.json itself).
  nlohmann::json OpenApi() const;
  // (method, pattern) of every registered route, in registration order.
  std::vector<std::pair<std::string, std::string>> Routes() const;

 private:
  struct Route {
    RouteSpec spec;
    std::vector<std::string> segments;
    std::vector<std::string> query_names;  // documented query parameters
    bool needs_auth = false;
  };
  static std::optional<std::map<std::string, std::string>> Match(const Route& r,
                                                                  const std::vector<std::string>& segs);

  struct Asset {
    std::string content_type;
    std::string_view body;
  };
  std::vector<Route> routes_;
  std::map<std::string, Asset> assets_;
  nlohmann::json base_;
};

// Percent-decoding of one URL component; nullopt on a malformed escape or NUL.
std::optional<std::string> PercentDecode(std::string_view s, bool plus_is_space);
// Splits "a=1&b=x%20y" into a map; error on malformed escapes or repeated keys.
StatusOr<std::map<std::string, std::string>> ParseQuery(std::string_view q);

// Typed query accessors for handlers: absent → default; malformed → InvalidArgument
// naming the parameter and the allowed range.
StatusOr<uint64_t> QueryUint(const HttpRequest& r, const std::string& name, uint64_t def, uint64_t min,
                             uint64_t max);
std::optional<std::string> QueryString(const HttpRequest& r, const std::string& name);

}  // namespace fibnic::web
