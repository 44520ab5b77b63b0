// What a routing daemon's restart costs the device: routes gone and back
// within seconds while the neighbours stay. The real Fib, fed as the kernel
// source feeds it, in an OSPF router's shape: neighbours that carry both
// families (IPv4 gateway and IPv6 link-local on one MAC and port), connected
// /24s on every port, routes from the neighbours. Two restarts:
//   ipv4   the IPv4 daemon (ospfd) restarts: its routes go and come back, the
//          IPv6 routes (ospf6d) stay;
//   both   every routing daemon restarts: every learnt route goes and comes
//          back (only connected routes stay).
// Printed per restart: device writes (SRAM words, TCAM entries, NEXTHOP and
// NEIGH entries) over the restart's commits; for the IPv4 restart, the IPv6
// destinations (one per route) that forwarded before and after but punted at
// some commit in between; codes whose owner differs after the restart. A
// restart that leaves
// every owner in place writes only what the routes' own coming and going
// needs, punts nothing that stayed, and renumbers nothing.
//   slot_restart_bench [code-bits]   (2 or 4; default: both)
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "device/fibnic_image_codec.h"
#include "device/fibnic_lookup.h"
#include "fib/fib.h"

namespace fibnic::bench {
namespace {

IpAddr A(const std::string& s) { return *IpAddr::Parse(s); }
Prefix P(const std::string& s) { return *Prefix::Parse(s); }

struct Shape {
  int code_bits = 2;
  int lan_routers = 0;  // routers on port 0's LAN besides the three point-to-point neighbours
};

struct World {
  std::vector<Route> v4_learnt, v6_learnt, connected;
  std::vector<Neighbor> neighbours;
  std::vector<IpAddr> v6_probe;  // one destination per learnt IPv6 route
};

// Neighbour k (0-based): a point-to-point link on port k+1 (k < 3), or a
// router on port 0's LAN. Its IPv4 routes are /24s of its own, its IPv6
// routes /64s of its own, and every tenth IPv4 route is equal-cost through
// it and the next neighbour.
World Build(const Shape& s) {
  World w;
  const int n = 3 + s.lan_routers;
  auto port_of = [](int k) { return static_cast<PortId>(k < 3 ? k + 1 : 0); };
  auto v4_gw = [](int k) { return k < 3 ? "10.0." + std::to_string(k + 1) + ".2" : "10.0.0." + std::to_string(k + 7); };
  for (int p = 0; p < 4; ++p) {
    w.connected.push_back(Route{P("10.0." + std::to_string(p) + ".0/24"), RouteSource::kKernel, 0,
                                {NextHop{std::nullopt, static_cast<PortId>(p)}}});
  }
  for (int k = 0; k < n; ++k) {
    const MacAddr mac{{0x02, 0, 0, 0, 1, static_cast<uint8_t>(k)}};
    const NextHop gw4{A(v4_gw(k)), port_of(k)};
    const NextHop gw6{A("fe80::" + std::to_string(k + 1)), port_of(k)};
    const NextHop next4{A(v4_gw((k + 1) % n)), port_of((k + 1) % n)};
    w.neighbours.push_back(Neighbor{*gw4.gateway, mac, gw4.port, NeighState::kReachable});
    w.neighbours.push_back(Neighbor{*gw6.gateway, mac, gw6.port, NeighState::kReachable});
    // Heavier neighbours first, so the slots have a clear order to keep.
    const int v4_routes = 200 - 4 * k, v6_routes = 270 - 5 * k;
    for (int i = 0; i < v4_routes; ++i) {
      const std::string net = std::to_string(20 + k) + "." + std::to_string(i) + ".0";
      Route r{P(net + ".0/24"), RouteSource::kKernel, 0, {gw4}};
      if (i % 10 == 0) r.paths = gw4 < next4 ? std::vector<NextHop>{gw4, next4} : std::vector<NextHop>{next4, gw4};
      w.v4_learnt.push_back(r);
    }
    for (int i = 0; i < v6_routes; ++i) {
      char net[64];
      std::snprintf(net, sizeof net, "2001:db8:%x:%x::", 0x100 + k, i);
      w.v6_learnt.push_back(Route{P(std::string(net) + "/64"), RouteSource::kKernel, 0, {gw6}});
      w.v6_probe.push_back(A(std::string(net) + "9"));
    }
  }
  w.neighbours.push_back(Neighbor{A("10.0.0.200"), MacAddr{{0x02, 0, 0, 0, 2, 0}}, 0, NeighState::kReachable});
  return w;
}

struct Cost {
  size_t sram_words = 0, tcam = 0, nexthop = 0, neigh = 0;
  size_t Total() const { return sram_words + tcam + nexthop + neigh; }
};

void Add(Cost& c, const std::vector<DeviceDelta>& ds) {
  for (const DeviceDelta& d : ds) {
    c.sram_words += d.sram_words.size();
    c.tcam += d.tcam.size();
    c.nexthop += d.nexthop_activate.size() + d.nexthop_retire.size();
    c.neigh += d.neigh_activate.size() + d.neigh_retire.size();
  }
}

std::vector<bool> Forwards(const Fib& fib, const std::vector<IpAddr>& probes) {
  const std::vector<uint8_t> bar = EncodeBar(fib.image());
  std::vector<bool> out;
  for (const IpAddr& a : probes) out.push_back(HwLookup(bar.data(), bar.size(), a).forward);
  return out;
}

std::vector<std::optional<Adjacency>> Owners(const Fib& fib) {
  std::vector<std::optional<Adjacency>> out;
  for (const SlotInfo& s : fib.Slots()) out.push_back(s.adjacency);
  return out;
}

void Run(const Shape& s, bool ipv4_only) {
  FibConfig cfg;
  cfg.caps = s.code_bits == 4 ? regs::Caps::Model4Bit() : regs::Caps::Model2Bit();
  Fib fib(cfg);
  const World w = Build(s);
  for (const Neighbor& n : w.neighbours) fib.UpsertNeighbor(n);
  for (const Route& r : w.connected) fib.UpsertRoute(r);
  for (const Route& r : w.v4_learnt) fib.UpsertRoute(r);
  for (const Route& r : w.v6_learnt) fib.UpsertRoute(r);
  fib.Commit();
  const auto owners0 = Owners(fib);
  const auto v6_before = Forwards(fib, w.v6_probe);

  // The daemon goes: zebra removes its routes as it notices, in a few
  // batches; then it comes back and its routes return the same way.
  Cost cost;
  std::vector<bool> v6_punted(w.v6_probe.size(), false);
  auto note = [&] {
    const auto v6 = Forwards(fib, w.v6_probe);
    for (size_t i = 0; i < v6.size(); ++i) v6_punted[i] = v6_punted[i] || !v6[i];
  };
  const int kBatches = 4;
  auto in_batches = [&](auto&& each) {
    for (int b = 0; b < kBatches; ++b) {
      for (size_t i = b; i < w.v4_learnt.size(); i += kBatches) each(w.v4_learnt[i]);
      if (!ipv4_only) {
        for (size_t i = b; i < w.v6_learnt.size(); i += kBatches) each(w.v6_learnt[i]);
      }
      Add(cost, fib.Commit());
      note();
    }
  };
  in_batches([&](const Route& r) { fib.DeleteRoute(r.prefix, r.source); });
  in_batches([&](const Route& r) { fib.UpsertRoute(r); });

  const auto owners1 = Owners(fib);
  const auto v6_after = Forwards(fib, w.v6_probe);
  size_t v6_n = 0, v6_kept = 0;
  for (size_t i = 0; i < v6_before.size(); ++i) {
    if (!v6_before[i] || !v6_after[i]) continue;
    ++v6_kept;
    v6_n += v6_punted[i];
  }
  size_t renumbered = 0, held = 0;
  for (size_t c = 0; c < owners0.size(); ++c) {
    held += owners0[c].has_value();
    renumbered += owners0[c].has_value() && owners0[c] != owners1[c];
  }
  std::printf("  %-5s restart: writes %6zu (SRAM words %zu, TCAM %zu, NEXTHOP %zu, NEIGH %zu); ", ipv4_only ? "ipv4" : "both",
              cost.Total(), cost.sram_words, cost.tcam, cost.nexthop, cost.neigh);
  if (ipv4_only) std::printf("IPv6 destinations punted while their routes stayed: %zu of %zu; ", v6_n, v6_kept);
  std::printf("codes renumbered %zu of %zu\n", renumbered, held);
}

}  // namespace
}  // namespace fibnic::bench

int main(int argc, char** argv) {
  using fibnic::bench::Shape;
  std::vector<Shape> shapes;
  const int only = argc > 1 ? std::atoi(argv[1]) : 0;
  if (only == 0 || only == 2) shapes.push_back(Shape{2, 0});
  if (only == 0 || only == 4) shapes.push_back(Shape{4, 17});
  for (const Shape& s : shapes) {
    std::printf("%d-bit codes (%d slots): %d neighbours carrying both families, 4 connected /24s\n", s.code_bits,
                (1 << s.code_bits) - 1, 3 + s.lan_routers);
    fibnic::bench::Run(s, true);
    fibnic::bench::Run(s, false);
  }
  return 0;
}
