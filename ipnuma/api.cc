#include "ipnuma/api.h"

#include <charconv>
#include <string_view>

namespace fibnic::ipnuma {
namespace {

using nlohmann::json;

web::HttpReply Error(const Status& st) {
  json j = ErrorJson(st);
  j["error"]["status"] = web::HttpStatusOf(st.code());
  return web::JsonReply(j, web::HttpStatusOf(st.code()));
}

StatusOr<json> ParseBody(const web::HttpRequest& r) {
  json j = json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgument(r.method + " " + r.path + ": body is not a JSON object");
  }
  return j;
}

// Field readers naming the request and the field on error.
StatusOr<std::string> Str(const json& j, const char* key, const std::string& what) {
  if (!j.contains(key) || !j[key].is_string() || j[key].get<std::string>().empty()) {
    return InvalidArgument(what + ": '" + key + "' must be a non-empty string");
  }
  return j[key].get<std::string>();
}

StatusOr<uint64_t> Num(const json& j, const char* key, const std::string& what, std::optional<uint64_t> def,
                       uint64_t max) {
  if (!j.contains(key)) {
    if (def) return *def;
    return InvalidArgument(what + ": '" + key + "' is required");
  }
  const json& v = j[key];
  uint64_t n = 0;
  if (v.is_number_unsigned()) {
    n = v.get<uint64_t>();
  } else if (v.is_number_integer() && v.get<int64_t>() >= 0) {
    n = static_cast<uint64_t>(v.get<int64_t>());
  } else if (v.is_string()) {  // "0x1806a0000": physical addresses read better in hex
    const std::string s = v.get<std::string>();
    // Decimal, or hex with 0x; never octal ("010" is ten).
    std::string_view d = s;
    int base = 10;
    if (d.starts_with("0x") || d.starts_with("0X")) {
      base = 16;
      d.remove_prefix(2);
    }
    auto [end, ec] = std::from_chars(d.data(), d.data() + d.size(), n, base);
    if (d.empty() || ec != std::errc() || end != d.data() + d.size()) {
      return InvalidArgument(what + ": '" + key + "' = '" + s + "' is not a number (decimal, or hex with 0x)");
    }
  } else {
    return InvalidArgument(what + ": '" + key + "' must be an unsigned integer");
  }
  if (n > max) return InvalidArgument(what + ": '" + key + "' = " + std::to_string(n) + " exceeds " + std::to_string(max));
  return n;
}

Status CheckKeys(const json& j, std::initializer_list<const char*> allowed, const std::string& what) {
  for (const auto& [k, v] : j.items()) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || k == a;
    if (!ok) {
      std::string names;
      for (const char* a : allowed) names += std::string(names.empty() ? "" : ", ") + a;
      return InvalidArgument(what + ": unknown field '" + k + "' (allowed: " + names + ")");
    }
  }
  return OkStatus();
}

json Responses(const char* ok) {
  return json{{"200", {{"description", ok}}}, {"400", {{"description", "bad request (names the field)"}}}};
}

web::Handler Wrap(std::function<StatusOr<json>(const web::HttpRequest&)> f) {
  return [f](const web::HttpRequest& r) -> StatusOr<web::HttpReply> {
    auto j = f(r);
    if (!j.ok()) return Error(j.status());
    return web::JsonReply(*j);
  };
}


}  // namespace

Status AddOperatorRoutes(web::Router& router, IpnumaService& svc) {
  auto get = [&](const char* path, const char* summary, const char* key) {
    return router.Add({"GET", path, Wrap([&svc, key](const web::HttpRequest&) -> StatusOr<json> {
                         json snap = svc.Snapshot();
                         if (std::string(key) == "status") {
                           return json{{"local", snap["local"]},     {"caps", snap["caps"]},
                                       {"pool", snap["pool"]},       {"pending", snap["pending"]},
                                       {"revocations", snap["revocations"]}, {"errors", snap["errors"]}};
                         }
                         return json{{key, snap[key]}};
                       }),
                       {{"summary", summary}, {"tags", {"ipnuma"}}, {"responses", Responses(summary)}}});
  };
  RETURN_IF_ERROR(get("/api/v1/ipnuma/status", "IP-NUMA NIC: local settings, tables, pool, pending work", "status"));
  RETURN_IF_ERROR(get("/api/v1/ipnuma/peers", "IP-NUMA peers (PC IDs)", "peers"));
  RETURN_IF_ERROR(get("/api/v1/ipnuma/exports", "IP-NUMA exports (shared regions)", "exports"));
  RETURN_IF_ERROR(get("/api/v1/ipnuma/mappings", "IP-NUMA mappings (page map)", "mappings"));
  RETURN_IF_ERROR(get("/api/v1/ipnuma/counters", "IP-NUMA NIC counters", "counters"));

  RETURN_IF_ERROR(router.Add(
      {"POST", "/api/v1/ipnuma/exports", Wrap([&svc](const web::HttpRequest& r) -> StatusOr<json> {
         ASSIGN_OR_RETURN(json b, ParseBody(r));
         const std::string what = "POST /api/v1/ipnuma/exports";
         RETURN_IF_ERROR(CheckKeys(b, {"name", "base", "length", "allow"}, what));
         ExportSpec e;
         ASSIGN_OR_RETURN(e.name, Str(b, "name", what));
         ASSIGN_OR_RETURN(e.base, Num(b, "base", what, std::nullopt, ipnuma_regs::kPaMask));
         ASSIGN_OR_RETURN(e.length, Num(b, "length", what, std::nullopt, ipnuma_regs::kPaMask + 1));
         ASSIGN_OR_RETURN(std::string allow, Str(b, "allow", what));
         auto p = Prefix::Parse(allow);
         if (!p.ok() || !p->addr().is_v4()) return InvalidArgument(what + ": 'allow' = '" + allow + "' is not an IPv4 prefix");
         e.allow = *p;
         RETURN_IF_ERROR(svc.AddExport(e));
         return json{{"added", e.name}};
       }),
       {{"summary", "Offer a receive buffer to peers (writes a REGION entry)"},
        {"tags", {"ipnuma"}},
        {"responses", Responses("added")}}}));
  RETURN_IF_ERROR(router.Add(
      {"DELETE", "/api/v1/ipnuma/exports/{name}", Wrap([&svc](const web::HttpRequest& r) -> StatusOr<json> {
         ASSIGN_OR_RETURN(std::vector<std::string> waiting, svc.RemoveExport(r.params.at("name")));
         return json{{"removed", r.params.at("name")}, {"unacknowledged", waiting}};
       }),
       {{"summary", "Revoke an export: the REGION is invalidated, then peers are told to unmap "
                    "(those that do not acknowledge are told again every reconcile)"},
        {"tags", {"ipnuma"}},
        {"parameters", {{{"name", "name"}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}}}}},
        {"responses", Responses("removed")}}}));
  RETURN_IF_ERROR(router.Add(
      {"POST", "/api/v1/ipnuma/mappings", Wrap([&svc](const web::HttpRequest& r) -> StatusOr<json> {
         ASSIGN_OR_RETURN(json b, ParseBody(r));
         const std::string what = "POST /api/v1/ipnuma/mappings";
         RETURN_IF_ERROR(CheckKeys(b, {"name", "peer", "export", "offset", "first_page", "pages"}, what));
         MappingSpec m;
         ASSIGN_OR_RETURN(m.name, Str(b, "name", what));
         ASSIGN_OR_RETURN(m.peer, Str(b, "peer", what));
         ASSIGN_OR_RETURN(m.export_name, Str(b, "export", what));
         ASSIGN_OR_RETURN(m.offset, Num(b, "offset", what, 0, ipnuma_regs::kPaMask));
         ASSIGN_OR_RETURN(uint64_t first, Num(b, "first_page", what, std::nullopt, UINT32_MAX));
         ASSIGN_OR_RETURN(uint64_t pages, Num(b, "pages", what, std::nullopt, UINT32_MAX));
         m.first_page = static_cast<uint32_t>(first);
         m.pages = static_cast<uint32_t>(pages);
         RETURN_IF_ERROR(svc.AddMapping(m));
         return json{{"added", m.name}};
       }),
       {{"summary", "Map local pages onto a peer's export (asks the peer, then writes the page map)"},
        {"tags", {"ipnuma"}},
        {"responses", Responses("added")}}}));
  RETURN_IF_ERROR(router.Add(
      {"DELETE", "/api/v1/ipnuma/mappings/{name}", Wrap([&svc](const web::HttpRequest& r) -> StatusOr<json> {
         RETURN_IF_ERROR(svc.RemoveMapping(r.params.at("name")));
         return json{{"removed", r.params.at("name")}};
       }),
       {{"summary", "Unmap a mapping's pages"},
        {"tags", {"ipnuma"}},
        {"parameters", {{{"name", "name"}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}}}}},
        {"responses", Responses("removed")}}}));
  return router.Add({"POST", "/api/v1/ipnuma/reconcile", Wrap([&svc](const web::HttpRequest&) -> StatusOr<json> {
                       RETURN_IF_ERROR(svc.Reconcile());
                       json snap = svc.Snapshot();
                       return json{{"pending", snap["pending"]}, {"errors", snap["errors"]}};
                     }),
                     {{"summary", "Retry pending mappings and confirmations now"},
                      {"tags", {"ipnuma"}},
                      {"responses", Responses("retried")}}});
}

Status AddPeerRoutes(web::Router& router, IpnumaService& svc, PeerAuthenticator& auth) {
  for (const char* path : {kPeerGrantPath, kPeerRevokePath}) {
    RETURN_IF_ERROR(router.Add(
        {"POST", path, Wrap([&svc, &auth, path](const web::HttpRequest& r) -> StatusOr<json> {
           ASSIGN_OR_RETURN(uint32_t from, auth.Verify(r.method, r.path, r.body, r.headers, r.remote_address));
           ASSIGN_OR_RETURN(json b, ParseBody(r));
           const std::string what = std::string("POST ") + path;
           // Older peers named themselves in the body: only their own name is accepted.
           if (b.contains("from")) {
             const json& f = b["from"];
             auto ip = f.is_string() ? IpAddr::Parse(f.get<std::string>()) : StatusOr<IpAddr>(InvalidArgument(""));
             if (!ip.ok() || !(*ip == IpAddr::V4(from))) {
               return PermissionDenied(what + ": 'from' = " + f.dump() + " is not the authenticated peer " +
                                       regs::Ipv4String(from));
             }
             b.erase("from");
           }
           return svc.HandlePeer(path, from, b);
         }),
         {{"summary", std::string("IP-NUMA peer protocol: ") + path},
          {"tags", {"ipnuma-peer"}},
          {"x-fibnic-auth", false},  // signed (peer_auth.h), checked by the handler
          {"responses", Responses("answer")}}}));
  }
  return OkStatus();
}

}  // namespace fibnic::ipnuma
