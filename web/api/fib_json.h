// JSON forms of the routing model, shared by the REST API handlers (and by
// anything that wants to print what the API prints, e.g. fibnicctl --json).
#pragma once

#include <nlohmann/json.hpp>

#include "fib/fib.h"
#include "device/fibnic_lookup.h"
#include "device/fibnic_regs.h"

namespace fibnic::web {

nlohmann::json ToJson(const NextHop& nh);    // {"gateway": "10.0.0.1"|null, "port": 1, "connected": false, "to_host": false}
nlohmann::json ToJson(const RouteInfo& ri);  // prefix, family, source, distance, paths, best, state, reason, slash24s
nlohmann::json ToJson(const Neighbor& n);    // address, mac, port, state, usable
nlohmann::json ToJson(const RibAnswer& a);
nlohmann::json ToJson(const HwDecision& d);
nlohmann::json ToJson(const regs::NexthopEntry& e);
nlohmann::json ToJson(const regs::Tcam6Entry& e);  // value/mask as IPv6 text, prefix when the mask is one
nlohmann::json ToJson(const regs::Caps& c);

// A TCAM mask that is a prefix mask: its length; otherwise -1.
int TcamMaskLength(uint64_t mask);

}  // namespace fibnic::web
