#include "web/http/router.h"

#include <algorithm>
#include <charconv>

namespace fibnic::web {
namespace {

std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '/') {
      ++i;
      continue;
    }
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    out.emplace_back(path.substr(i, j - i));
    i = j;
  }
  return out;
}

bool IsParam(const std::string& seg) { return seg.size() > 2 && seg.front() == '{' && seg.back() == '}'; }

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

const char* ReasonCode(int status) {
  switch (status) {
    case 400: return "bad_request";
    case 401: return "unauthenticated";
    case 403: return "forbidden";
    case 404: return "not_found";
    case 405: return "method_not_allowed";
    case 408: return "request_timeout";
    case 409: return "conflict";
    case 413: return "payload_too_large";
    case 415: return "unsupported_media_type";
    case 429: return "too_many_requests";
    case 431: return "header_fields_too_large";
    case 503: return "unavailable";
    default: return status >= 500 ? "internal" : "error";
  }
}

}  // namespace

HttpReply JsonReply(const nlohmann::json& j, int status) {
  HttpReply r;
  r.status = status;
  // Replace invalid UTF-8 (names from the kernel or peers) instead of throwing.
  r.body = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

HttpReply ErrorReply(int status, const std::string& message) {
  return JsonReply({{"error", {{"status", status}, {"code", ReasonCode(status)}, {"message", message}}}}, status);
}

int HttpStatusOf(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return 200;
    case StatusCode::kInvalidArgument: return 400;
    case StatusCode::kOutOfRange: return 400;
    case StatusCode::kUnauthenticated: return 401;
    case StatusCode::kPermissionDenied: return 403;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kAlreadyExists: return 409;
    case StatusCode::kFailedPrecondition: return 409;
    case StatusCode::kResourceExhausted: return 507;
    case StatusCode::kUnavailable: return 503;
    case StatusCode::kIoError: return 500;
    case StatusCode::kInternal: return 500;
  }
  return 500;
}

HttpReply ErrorReply(const Status& st) { return ErrorReply(HttpStatusOf(st.code()), st.message()); }

std::optional<std::string> PercentDecode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      int hi = HexDigit(s[i + 1]), lo = HexDigit(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      c = static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      c = ' ';
    }
    if (c == '\0') return std::nullopt;
    out += c;
  }
  return out;
}

StatusOr<std::map<std::string, std::string>> ParseQuery(std::string_view q) {
  std::map<std::string, std::string> out;
  size_t i = 0;
  while (i <= q.size()) {
    size_t j = q.find('&', i);
    if (j == std::string_view::npos) j = q.size();
    std::string_view part = q.substr(i, j - i);
    i = j + 1;
    if (part.empty()) continue;
    size_t eq = part.find('=');
    auto key = PercentDecode(part.substr(0, eq), true);
    auto val = PercentDecode(eq == std::string_view::npos ? std::string_view() : part.substr(eq + 1), true);
    if (!key || !val) return InvalidArgument("query: malformed percent-escape in '" + std::string(part) + "'");
    if (key->empty()) return InvalidArgument("query: empty parameter name in '" + std::string(part) + "'");
    if (!out.emplace(*key, *val).second) return InvalidArgument("query: parameter '" + *key + "' given twice");
  }
  return out;
}

StatusOr<uint64_t> QueryUint(const HttpRequest& r, const std::string& name, uint64_t def, uint64_t min,
                             uint64_t max) {
  auto it = r.query.find(name);
  if (it == r.query.end()) return def;
  const std::string& s = it->second;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) {
    return InvalidArgument("query parameter '" + name + "': '" + s + "' is not a non-negative integer");
  }
  if (v < min || v > max) {
    return InvalidArgument("query parameter '" + name + "': " + s + " is outside " + std::to_string(min) + ".." +
                           std::to_string(max));
  }
  return v;
}

std::optional<std::string> QueryString(const HttpRequest& r, const std::string& name) {
  auto it = r.query.find(name);
  if (it == r.query.end()) return std::nullopt;
  return it->second;
}

Router::Router() {
  base_ = {{"openapi", "3.0.3"},
           {"info", {{"title", "fibnic"}, {"version", "1"}}},
           {"paths", nlohmann::json::object()}};
}

void Router::MergeDocument(const nlohmann::json& base) {
  for (const auto& [k, v] : base.items()) {
    if (k == "paths") continue;
    if (k == "components" && base_.contains("components")) {
      base_["components"].merge_patch(v);
    } else {
      base_[k] = v;
    }
  }
}

Status Router::Add(RouteSpec spec) {
  static const std::vector<std::string> kMethods = {"GET", "PUT", "POST", "DELETE", "PATCH"};
  if (std::find(kMethods.begin(), kMethods.end(), spec.method) == kMethods.end()) {
    return InvalidArgument("route " + spec.pattern + ": unsupported method '" + spec.method + "'");
  }
  if (spec.pattern.empty() || spec.pattern.front() != '/') {
    return InvalidArgument("route '" + spec.pattern + "': pattern must start with '/'");
  }
  if (!spec.handler) return InvalidArgument("route " + spec.pattern + ": no handler");
  if (!spec.doc.is_object() || !spec.doc.contains("summary") || !spec.doc.contains("responses")) {
    return InvalidArgument("route " + spec.method + " " + spec.pattern +
                           ": OpenAPI operation needs 'summary' and 'responses'");
  }
  Route r;
  r.segments = SplitPath(spec.pattern);
  std::vector<std::string> path_params;
  for (const auto& s : r.segments) {
    if (s.find_first_of("{}") != std::string::npos && !IsParam(s)) {
      return InvalidArgument("route " + spec.pattern + ": malformed segment '" + s + "'");
    }
    if (IsParam(s)) path_params.push_back(s.substr(1, s.size() - 2));
  }
  std::vector<std::string> documented_path_params;
  for (const auto& p : spec.doc.value("parameters", nlohmann::json::array())) {
    std::string in = p.value("in", ""), name = p.value("name", "");
    if (in == "query") r.query_names.push_back(name);
    if (in == "path") documented_path_params.push_back(name);
  }
  std::sort(path_params.begin(), path_params.end());
  std::sort(documented_path_params.begin(), documented_path_params.end());
  if (path_params != documented_path_params) {
    return InvalidArgument("route " + spec.method + " " + spec.pattern +
                           ": path parameters in the pattern and in the OpenAPI operation differ");
  }
  for (const auto& o : routes_) {
    if (o.spec.method == spec.method && o.segments == r.segments) {
      return AlreadyExists("route " + spec.method + " " + spec.pattern + " registered twice");
    }
  }
  r.needs_auth = spec.doc.value("x-fibnic-auth", spec.method != "GET");
  r.spec = std::move(spec);
  routes_.push_back(std::move(r));
  return OkStatus();
}

std::optional<std::map<std::string, std::string>> Router::Match(const Route& r,
                                                                const std::vector<std::string>& segs) {
  if (segs.size() != r.segments.size()) return std::nullopt;
  std::map<std::string, std::string> params;
  for (size_t i = 0; i < segs.size(); ++i) {
    const std::string& p = r.segments[i];
    if (IsParam(p)) {
      params[p.substr(1, p.size() - 2)] = segs[i];
    } else if (p != segs[i]) {
      return std::nullopt;
    }
  }
  return params;
}

void Router::AddAsset(std::string path, std::string content_type, std::string_view body) {
  assets_[std::move(path)] = Asset{std::move(content_type), body};
}

HttpReply Router::Dispatch(HttpRequest req) const {
  if (auto a = assets_.find(req.path); a != assets_.end()) {
    if (req.method != "GET") {
      HttpReply rep = ErrorReply(405, "method " + req.method + " is not allowed on " + req.path + " (allowed: GET)");
      rep.headers.emplace_back("Allow", "GET");
      return rep;
    }
    HttpReply rep;
    rep.content_type = a->second.content_type;
    rep.body.assign(a->second.body);
    rep.headers.emplace_back("Cache-Control", "no-cache");
    return rep;
  }
  const auto segs = SplitPath(req.path);
  if (req.method == "GET" && req.path == "/api/v1/openapi.json") {
    if (!req.query.empty()) return ErrorReply(400, "query parameter '" + req.query.begin()->first + "' is not accepted here");
    return JsonReply(OpenApi());
  }
  std::vector<std::string> allowed;
  for (const auto& r : routes_) {
    auto params = Match(r, segs);
    if (!params) continue;
    if (r.spec.method != req.method) {
      allowed.push_back(r.spec.method);
      continue;
    }
    for (const auto& [k, v] : req.query) {
      if (std::find(r.query_names.begin(), r.query_names.end(), k) == r.query_names.end()) {
        std::string names;
        for (const auto& n : r.query_names) names += (names.empty() ? "" : ", ") + n;
        return ErrorReply(400, "query parameter '" + k + "' is not accepted by " + r.spec.pattern +
                                   (names.empty() ? " (it takes none)" : " (allowed: " + names + ")"));
      }
    }
    if (r.needs_auth && !req.authenticated) {
      HttpReply rep = ErrorReply(401, req.method + " " + req.path + " changes state: it needs 'Authorization: Bearer <token>'");
      rep.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"fibnic\"");
      return rep;
    }
    req.params = std::move(*params);
    auto res = r.spec.handler(req);
    if (!res.ok()) return ErrorReply(res.status());
    return std::move(res).value();
  }
  if (!allowed.empty()) {
    std::string allow;
    for (const auto& m : allowed) allow += (allow.empty() ? "" : ", ") + m;
    HttpReply rep = ErrorReply(405, "method " + req.method + " is not allowed on " + req.path + " (allowed: " + allow + ")");
    rep.headers.emplace_back("Allow", allow);
    return rep;
  }
  return ErrorReply(404, "no such resource: " + req.path);
}

nlohmann::json Router::OpenApi() const {
  nlohmann::json doc = base_;
  auto& paths = doc["paths"];
  for (const auto& r : routes_) {
    std::string method = r.spec.method;
    std::transform(method.begin(), method.end(), method.begin(), ::tolower);
    paths[r.spec.pattern][method] = r.spec.doc;
  }
  paths["/api/v1/openapi.json"]["get"] = {
      {"summary", "This OpenAPI document (every route the server answers)"},
      {"tags", {"meta"}},
      {"responses", {{"200", {{"description", "OpenAPI 3.0 document"}}}}}};
  return doc;
}

std::vector<std::pair<std::string, std::string>> Router::Routes() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& r : routes_) out.emplace_back(r.spec.method, r.spec.pattern);
  out.emplace_back("GET", "/api/v1/openapi.json");
  return out;
}

}  // namespace fibnic::web
