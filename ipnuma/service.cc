#include "ipnuma/service.h"

#include <algorithm>

namespace fibnic::ipnuma {
namespace {

using nlohmann::json;
using regs::Ipv4String;

// Whether a peer's refusal is final (the peer decided) rather than transient.
bool PeerRefused(const Status& st) {
  switch (st.code()) {
    case StatusCode::kNotFound:
    case StatusCode::kPermissionDenied:
    case StatusCode::kOutOfRange:
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
      return true;
    default:
      return false;
  }
}

// Reads an unsigned integer field of a peer's JSON, naming it when absent.
StatusOr<uint64_t> U64Field(const json& j, const char* key, const std::string& what) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer() ||
      (!j[key].is_number_unsigned() && j[key].get<int64_t>() < 0)) {
    return InvalidArgument(what + ": field '" + key + "' missing or not an unsigned integer");
  }
  return j[key].get<uint64_t>();
}

StatusOr<std::string> StringField(const json& j, const char* key, const std::string& what) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) {
    return InvalidArgument(what + ": field '" + key + "' missing or not a string");
  }
  return j[key].get<std::string>();
}

}  // namespace

json ErrorJson(const Status& st) {
  return json{{"error", {{"code", StatusCodeName(st.code())}, {"message", st.message()}}}};
}

Status StatusFromErrorJson(const json& j, const std::string& context) {
  static const StatusCode kAll[] = {
      StatusCode::kInvalidArgument,   StatusCode::kNotFound,         StatusCode::kAlreadyExists,
      StatusCode::kResourceExhausted, StatusCode::kFailedPrecondition, StatusCode::kPermissionDenied,
      StatusCode::kUnauthenticated,   StatusCode::kUnavailable,      StatusCode::kOutOfRange,
      StatusCode::kIoError,           StatusCode::kInternal};
  std::string code, message = "(no message)";
  if (j.is_object() && j.contains("error") && j["error"].is_object()) {
    const json& e = j["error"];
    if (e.contains("code") && e["code"].is_string()) code = e["code"].get<std::string>();
    if (e.contains("message") && e["message"].is_string()) message = e["message"].get<std::string>();
  }
  for (StatusCode c : kAll) {
    if (code == StatusCodeName(c)) return Status(c, context + ": " + message);
  }
  // An error of the HTTP layer itself (no such route, body too large, ...).
  const int http = j.is_object() && j.contains("error") && j["error"].is_object() && j["error"].contains("status") &&
                           j["error"]["status"].is_number_integer()
                       ? j["error"]["status"].get<int>()
                       : 0;
  switch (http) {
    case 400: return InvalidArgument(context + ": " + message);
    case 401: return Unauthenticated(context + ": " + message);
    case 403: return PermissionDenied(context + ": " + message);
    case 404: return NotFound(context + ": " + message);
    case 409: return FailedPrecondition(context + ": " + message);
    case 503: return Unavailable(context + ": " + message);
    default: return Internal(context + ": unexpected error answer " + j.dump());
  }
}

Status IpnumaService::ResolveAll() {
  const LocalNic& local = prov_->local();
  for (const auto& [name, p] : prov_->peers()) {
    const bool via_gw = !local.OnSegment(p.spec.ip);
    const uint32_t target = via_gw ? local.gateway : p.spec.ip;
    std::optional<MacAddr> mac = lookup_ ? lookup_(target) : std::nullopt;
    if (mac) RETURN_IF_ERROR(prov_->ResolvePeer(name, *mac, via_gw));
  }
  return OkStatus();
}

Status IpnumaService::Start(const DesiredState& desired) {
  AdoptPlan plan;
  {
    std::lock_guard lock(mu_);
    ASSIGN_OR_RETURN(plan, prov_->Adopt(desired.peers, desired.exports, desired.mappings));
    RETURN_IF_ERROR(ResolveAll());
    unconfirmed_ = plan.mappings_to_confirm;
    last_errors_.clear();
  }
  // Leftover REGIONs (not in the config): invalid at once — memory outside
  // the config must not stay open — then the peers are told (and told again
  // on every reconcile until they acknowledge).
  for (const auto& name : plan.leftover_exports) {
    auto st = RemoveExport(name);
    if (!st.ok()) return st.status().WithContext("retiring leftover REGION " + name);
  }
  for (const auto& e : plan.exports_to_add) RETURN_IF_ERROR(AddExport(e));
  {
    std::lock_guard lock(mu_);
    pending_ = plan.mappings_to_add;
  }
  return Reconcile();
}

Status IpnumaService::Reconcile() {
  std::vector<MappingSpec> pending;
  std::vector<std::string> unconfirmed;
  std::vector<PendingRevoke> revokes;
  {
    std::lock_guard lock(mu_);
    RETURN_IF_ERROR(ResolveAll());
    // A peer whose stream went down is asked to grant its mappings again;
    // once it answers, ConfirmMapping resets the stream (a peer still away
    // stays unconfirmed and is asked again next time).
    ASSIGN_OR_RETURN(std::vector<std::string> in_doubt, prov_->MappingsOfDownPeers());
    for (auto& name : in_doubt) {
      if (std::find(unconfirmed_.begin(), unconfirmed_.end(), name) == unconfirmed_.end()) {
        unconfirmed_.push_back(std::move(name));
      }
    }
    pending.swap(pending_);
    unconfirmed.swap(unconfirmed_);
    revokes = revokes_;
    last_errors_.clear();
  }
  std::vector<std::string> errors;
  for (const auto& r : revokes) {
    auto failed = TellRevoke(r);
    errors.insert(errors.end(), failed.begin(), failed.end());
  }
  std::vector<MappingSpec> still_pending;
  std::vector<std::string> still_unconfirmed;
  for (const auto& name : unconfirmed) {
    Status st = ConfirmMapping(name);
    if (st.ok()) continue;
    errors.push_back(st.ToString());
    if (!PeerRefused(st)) still_unconfirmed.push_back(name);
  }
  for (const auto& m : pending) {
    Status st = CreateMapping(m);
    if (st.ok()) continue;
    errors.push_back(st.ToString());
    if (st.code() != StatusCode::kAlreadyExists) still_pending.push_back(m);
  }
  std::lock_guard lock(mu_);
  // A refused confirmation unmapped the pages; the configured mapping is retried.
  pending_.insert(pending_.end(), still_pending.begin(), still_pending.end());
  unconfirmed_.insert(unconfirmed_.end(), still_unconfirmed.begin(), still_unconfirmed.end());
  last_errors_ = errors;
  return OkStatus();
}

StatusOr<Grant> IpnumaService::AskGrant(const PeerSpec& peer, const std::string& export_name, uint64_t offset,
                                        uint64_t length) {
  const std::string what = "peer '" + peer.name + "' (" + peer.api + ")";
  ASSIGN_OR_RETURN(json answer, transport_.Post(peer, kPeerGrantPath,
                                                json{{"export", export_name}, {"offset", offset}, {"length", length}}));
  Grant g;
  ASSIGN_OR_RETURN(g.export_base, U64Field(answer, "export_base", what));
  ASSIGN_OR_RETURN(g.export_length, U64Field(answer, "export_length", what));
  ASSIGN_OR_RETURN(g.window_base, U64Field(answer, "window_base", what));
  // The answer is only written to the page map if it is the window asked for
  // inside a well-formed export: a refusal otherwise (the pages stay unmapped).
  const std::string bad = what + ": grant for export '" + export_name + "' [" + Hex64(offset) + ", +" +
                          Hex64(length) + ") answered export_base " + Hex64(g.export_base) + ", export_length " +
                          Hex64(g.export_length) + ", window_base " + Hex64(g.window_base) + ": ";
  if (g.export_base % regs::kBufferAlign || g.export_length == 0 || g.export_length % regs::kBufferAlign ||
      g.export_base > regs::kPaMask || g.export_length > regs::kPaMask + 1 - g.export_base) {
    return InvalidArgument(bad + "not a 64-byte aligned export below 2^48");
  }
  if (offset > g.export_length || length > g.export_length - offset) {
    return InvalidArgument(bad + "the window does not fit the export");
  }
  if (g.window_base != g.export_base + offset || g.window_base % regs::kPageBytes) {
    return InvalidArgument(bad + "window_base is not the 4 KiB aligned export_base + offset");
  }
  return g;
}

Status IpnumaService::ConfirmMapping(const std::string& name) {
  MappingSpec m;
  PeerSpec peer;
  {
    std::lock_guard lock(mu_);
    auto it = prov_->mappings().find(name);
    if (it == prov_->mappings().end()) return NotFound("unknown mapping '" + name + "'");
    m = it->second.spec;
    peer = prov_->peers().at(m.peer).spec;
  }
  auto g = AskGrant(peer, m.export_name, m.offset, uint64_t{m.pages} * regs::kPageBytes);
  std::lock_guard lock(mu_);
  if (!prov_->mappings().count(name)) return NotFound("mapping '" + name + "' was removed meanwhile");
  if (!g.ok()) {
    if (PeerRefused(g.status())) {
      RETURN_IF_ERROR(prov_->RemoveMapping(name));
      pending_.push_back(m);
    }
    return g.status().WithContext("confirming mapping '" + name + "'");
  }
  return prov_->ConfirmMapping(name, g->window_base);
}

Status IpnumaService::CreateMapping(const MappingSpec& m) {
  PeerSpec peer;
  {
    std::lock_guard lock(mu_);
    RETURN_IF_ERROR(prov_->ReserveMapping(m));
    peer = prov_->peers().at(m.peer).spec;
  }
  auto g = AskGrant(peer, m.export_name, m.offset, uint64_t{m.pages} * regs::kPageBytes);
  std::lock_guard lock(mu_);
  if (!g.ok()) {
    prov_->CancelReservation(m.name);
    return g.status().WithContext("mapping '" + m.name + "'");
  }
  return prov_->CommitMapping(m.name, g->window_base);
}

Status IpnumaService::AddMapping(const MappingSpec& m) { return CreateMapping(m); }

Status IpnumaService::RemoveMapping(const std::string& name) {
  std::lock_guard lock(mu_);
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(), [&](const MappingSpec& m) { return m.name == name; }),
                 pending_.end());
  return prov_->RemoveMapping(name);
}

Status IpnumaService::AddExport(const ExportSpec& e) {
  std::lock_guard lock(mu_);
  return prov_->AddExport(e);
}

StatusOr<std::vector<std::string>> IpnumaService::RemoveExport(const std::string& name) {
  PendingRevoke r;
  {
    std::lock_guard lock(mu_);
    auto it = prov_->exports().find(name);
    if (it == prov_->exports().end()) return NotFound("unknown export '" + name + "'");
    const ExportSpec e = it->second.spec;
    ASSIGN_OR_RETURN(r.peers, prov_->Revoke(name));  // the REGION is invalid from here on
    r.id = next_revoke_id_++;
    r.notice = json{{"export", name}, {"base", e.base}, {"length", e.length}};
    if (!r.peers.empty()) revokes_.push_back(r);
  }
  TellRevoke(r);
  std::lock_guard lock(mu_);
  for (const auto& p : revokes_) {
    if (p.id == r.id) return p.peers;
  }
  return std::vector<std::string>{};
}

std::vector<std::string> IpnumaService::TellRevoke(const PendingRevoke& r) {
  std::vector<std::string> acked, errors;
  for (const auto& name : r.peers) {
    std::optional<PeerSpec> peer;
    {
      std::lock_guard lock(mu_);
      auto it = prov_->peers().find(name);
      if (it != prov_->peers().end()) peer = it->second.spec;
    }
    if (!peer) {  // no longer a peer: nobody left to tell
      acked.push_back(name);
      continue;
    }
    auto answer = transport_.Post(*peer, kPeerRevokePath, r.notice);
    if (answer.ok()) {
      acked.push_back(name);
    } else {
      errors.push_back("revocation of export '" + r.notice["export"].get<std::string>() +
                       "' not acknowledged by peer '" + name + "' (told again every reconcile): " +
                       answer.status().ToString());
    }
  }
  std::lock_guard lock(mu_);
  for (auto it = revokes_.begin(); it != revokes_.end(); ++it) {
    if (it->id != r.id) continue;
    std::erase_if(it->peers,
                  [&](const std::string& p) { return std::find(acked.begin(), acked.end(), p) != acked.end(); });
    if (it->peers.empty()) revokes_.erase(it);
    break;
  }
  return errors;
}

StatusOr<bool> IpnumaService::OnNeighbour(uint32_t ip, const MacAddr& mac) {
  std::lock_guard lock(mu_);
  const LocalNic& local = prov_->local();
  bool first = false;
  for (const auto& [name, p] : prov_->peers()) {
    const bool via_gw = !local.OnSegment(p.spec.ip);
    if ((via_gw ? local.gateway : p.spec.ip) != ip) continue;
    first = first || !p.resolved;
    RETURN_IF_ERROR(prov_->ResolvePeer(name, mac, via_gw));
  }
  return first;
}

std::optional<PeerSpec> IpnumaService::PeerByIp(uint32_t ip) {
  std::lock_guard lock(mu_);
  const PeerState* p = prov_->FindPeerByIp(ip);
  if (!p) return std::nullopt;
  return p->spec;
}

StatusOr<json> IpnumaService::HandlePeer(const std::string& path, uint32_t from_ip, const json& body) {
  const std::string what = "request " + path + " from " + Ipv4String(from_ip);
  if (path == kPeerGrantPath) {
    ASSIGN_OR_RETURN(std::string export_name, StringField(body, "export", what));
    ASSIGN_OR_RETURN(uint64_t offset, U64Field(body, "offset", what));
    ASSIGN_OR_RETURN(uint64_t length, U64Field(body, "length", what));
    std::lock_guard lock(mu_);
    ASSIGN_OR_RETURN(Grant g, prov_->CheckGrant(from_ip, export_name, offset, length));
    return json{{"export_base", g.export_base}, {"export_length", g.export_length}, {"window_base", g.window_base}};
  }
  if (path == kPeerRevokePath) {
    ASSIGN_OR_RETURN(std::string export_name, StringField(body, "export", what));
    ASSIGN_OR_RETURN(uint64_t base, U64Field(body, "base", what));
    ASSIGN_OR_RETURN(uint64_t length, U64Field(body, "length", what));
    std::lock_guard lock(mu_);
    const PeerState* peer = prov_->FindPeerByIp(from_ip);
    if (!peer) return PermissionDenied("unauthorised peer " + Ipv4String(from_ip) + ": not a configured peer");
    json unmapped = json::array();
    for (const auto& name : prov_->MappingsInto(peer->spec.name, export_name, base, length)) {
      RETURN_IF_ERROR(prov_->RemoveMapping(name));
      unmapped.push_back(name);
    }
    return json{{"unmapped", unmapped}};
  }
  return NotFound("no peer endpoint " + path);
}

std::vector<std::string> IpnumaService::TakeNotices() {
  std::lock_guard lock(mu_);
  return prov_->TakeNotices();
}

json IpnumaService::Counters() {
  std::lock_guard lock(mu_);
  json out = json::object();
  auto c = prov_->Counters();
  if (!c.ok()) return ErrorJson(c.status());
  for (int i = 0; i < regs::kCounterCount; ++i) out[regs::kCounterNames[i]] = c->v[i];
  // The wire protocol's counters (EXT_COUNTERS; 0 on a NIC that predates
  // them), the reserved sixteenth left out.
  for (int i = 0; i < regs::kExtReserved15; ++i) {
    auto v = ReadCounter64(prov_->bar(), regs::kOffExtCounters + 8 * i);
    if (!v.ok()) return ErrorJson(v.status());
    out[regs::kExtCounterNames[i]] = *v;
  }
  return out;
}

json IpnumaService::Snapshot() {
  json counters = Counters();
  std::lock_guard lock(mu_);
  const LocalNic& l = prov_->local();
  const regs::Caps& caps = prov_->caps();
  json j;
  j["local"] = {{"address", Ipv4String(l.ip)},       {"netmask", Ipv4String(l.netmask)},
                {"gateway", Ipv4String(l.gateway)},  {"mac", l.mac.ToString()},
                {"udp_port", l.udp_port},            {"retransmit_timeout_ns", l.retx_timeout_ns}};
  j["caps"] = {{"pages", caps.pages}, {"pcid_entries", caps.pcid_entries}, {"region_entries", caps.region_entries}};
  const BufferPool& pool = prov_->pool();
  j["pool"] = {{"phys_base", pool.phys_base}, {"size", pool.size}, {"source", pool.source}};
  j["peers"] = json::array();
  for (const auto& [n, p] : prov_->peers()) {
    auto down = prov_->PeerDown(n);
    j["peers"].push_back({{"name", n},
                          {"down", down.ok() && *down},
                          {"stream_resets", p.stream_resets},
                          {"address", Ipv4String(p.spec.ip)},
                          {"api", p.spec.api},
                          {"pcid", p.pcid},
                          {"resolved", p.resolved},
                          {"mac", p.resolved ? p.mac.ToString() : ""},
                          {"via_gateway", p.via_gateway}});
  }
  j["exports"] = json::array();
  for (const auto& [n, e] : prov_->exports()) {
    j["exports"].push_back({{"name", n},
                            {"base", e.spec.base},
                            {"length", e.spec.length},
                            {"allow", e.spec.allow.ToString()},
                            {"region", e.slot}});
  }
  j["mappings"] = json::array();
  for (const auto& [n, m] : prov_->mappings()) {
    j["mappings"].push_back({{"name", n},
                             {"peer", m.spec.peer},
                             {"export", m.spec.export_name},
                             {"offset", m.spec.offset},
                             {"first_page", m.spec.first_page},
                             {"pages", m.spec.pages},
                             {"remote_base", m.remote_base},
                             {"confirmed", m.confirmed}});
  }
  j["pending"] = json::array();
  for (const auto& m : pending_) j["pending"].push_back(m.name);
  j["revocations"] = json::array();
  for (const auto& r : revokes_) {
    j["revocations"].push_back({{"export", r.notice["export"]},
                                {"base", r.notice["base"]},
                                {"length", r.notice["length"]},
                                {"unacknowledged", r.peers}});
  }
  j["errors"] = last_errors_;
  j["counters"] = counters;
  return j;
}

}  // namespace fibnic::ipnuma
