#include "web/api/fib_json.h"

namespace fibnic::web {

using nlohmann::json;

json ToJson(const NextHop& nh) {
  return {{"gateway", nh.gateway ? json(nh.gateway->ToString()) : json(nullptr)},
          {"port", nh.to_host() || nh.drop() ? json(nullptr) : json(nh.port)},
          {"connected", nh.connected()},
          {"to_host", nh.to_host()},
          {"drop", nh.drop()},
          {"text", nh.ToString()}};
}

json ToJson(const RouteInfo& ri) {
  json paths = json::array();
  for (const auto& p : ri.route.paths) paths.push_back(ToJson(p));
  json j = {{"prefix", ri.route.prefix.ToString()},
            {"family", FamilyName(ri.route.prefix.family())},
            {"source", RouteSourceName(ri.route.source)},
            {"distance", ri.route.distance},
            {"paths", std::move(paths)},
            {"best", ri.best},
            {"state", OffloadStateName(ri.state)},
            {"reason", PuntReasonName(ri.reason)}};
  if (!ri.why.empty()) j["why"] = ri.why;
  if (ri.route.prefix.family() == Family::kV4) {
    j["slash24_total"] = ri.slash24_total;
    j["slash24_punted"] = ri.slash24_punted;
  }
  return j;
}

json ToJson(const Neighbor& n) {
  return {{"address", n.addr.ToString()},
          {"mac", n.mac.ToString()},
          {"port", n.port},
          {"state", NeighStateName(n.state)},
          {"usable", NeighUsable(n.state)}};
}

json ToJson(const RibAnswer& a) {
  json j = {{"matched", a.matched ? json(a.matched->ToString()) : json(nullptr)},
            {"path", a.path ? ToJson(*a.path) : json(nullptr)},
            {"reason", PuntReasonName(a.reason)},
            {"neighbor", a.neighbor ? ToJson(*a.neighbor) : json(nullptr)}};
  if (!a.why.empty()) j["why"] = a.why;
  // What a correct forwarder does: the neighbour's MAC out of the path's port.
  const bool forward = a.path && !a.path->to_host() && !a.path->drop() && a.neighbor && NeighUsable(a.neighbor->state);
  j["forward"] = forward;
  j["drop"] = a.path && a.path->drop();
  j["expected"] = forward ? json{{"mac", a.neighbor->mac.ToString()}, {"port", a.path->port}} : json(nullptr);
  return j;
}

json ToJson(const HwDecision& d) {
  return {{"forward", d.forward},
          {"drop", d.drop},
          {"code", d.code},
          {"tcam_index", d.tcam_index},
          {"port", d.forward ? json(d.port) : json(nullptr)},
          {"mac", d.forward ? json(d.dst_mac.ToString()) : json(nullptr)},
          {"why", d.why}};
}

json ToJson(const regs::NexthopEntry& e) {
  return {{"valid", e.valid()},
          {"connected", e.connected()},
          {"drop", e.drop()},
          {"mac", e.dst_mac.ToString()},
          {"port", e.port}};
}

int TcamMaskLength(uint64_t mask) {
  int len = 0;
  while (len < 64 && (mask >> (63 - len) & 1)) ++len;
  const uint64_t expect = len == 0 ? 0 : ~uint64_t{0} << (64 - len);
  return mask == expect ? len : -1;
}

json ToJson(const regs::Tcam6Entry& e) {
  const IpAddr value = IpAddr::V6(U128{e.value} << 64);
  const IpAddr mask = IpAddr::V6(U128{e.mask} << 64);
  const int len = TcamMaskLength(e.mask);
  return {{"valid", e.valid()},
          {"value", value.ToString()},
          {"mask", mask.ToString()},
          {"prefix", len >= 0 ? json(value.ToString() + "/" + std::to_string(len)) : json(nullptr)},
          {"code", e.code}};
}

json ToJson(const regs::Caps& c) {
  return {{"sram_addr_bits", c.sram_addr_bits}, {"code_bits", c.code_bits},   {"ports", c.ports},
          {"nexthop_entries", c.nexthop_entries}, {"tcam_entries", c.tcam_entries}, {"neigh_entries", c.neigh_entries},
          {"slots", c.slots()}, {"drop", c.drop}};
}

}  // namespace fibnic::web
