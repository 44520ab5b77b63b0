// What a hardware code names: an adjacency. The NEXTHOP entry is (destination
// MAC, port) or CONNECTED+port — no address family, no gateway address — so
// every next-hop that resolves to the same (MAC, port) (an IPv4 gateway, the
// same router's IPv6 global and link-local addresses, 169.254.0.1 onlink, an
// IPv4 route via an IPv6 next-hop) is one adjacency and shares one code
// (docs/fib.md "Adjacency codes").
#pragma once

#include <string>

#include "common/ip.h"
#include "rib/route.h"

namespace fibnic {

struct Adjacency {
  PortId port = 0;
  bool connected = false;  // CONNECTED: the destination's own neighbour (NEIGH CAM)
  MacAddr mac;             // a gateway adjacency's MAC (zero when connected)
  // The drop adjacency: every blackhole route's next-hop; its entry is
  // VALID|DROP (port and MAC zero). Always resolved: nothing to wait for.
  bool drop = false;

  static Adjacency Connected(PortId port) { return Adjacency{port, true, MacAddr{}, false}; }
  static Adjacency Gateway(PortId port, const MacAddr& mac) { return Adjacency{port, false, mac, false}; }
  static Adjacency Drop() { return Adjacency{0, false, MacAddr{}, true}; }
  std::string ToString() const {  // "02:00:00:00:00:01 port 1" / "connected port 2" / "drop"
    if (drop) return "drop";
    return (connected ? std::string("connected") : mac.ToString()) + " port " + std::to_string(port);
  }
  auto operator<=>(const Adjacency&) const = default;
  bool operator==(const Adjacency&) const = default;
};

}  // namespace fibnic
