#include "tests/fib/random_ops.h"

namespace fibnic::testing {

// A neighbour is its address on its port: a move takes the old one away.
void SetNeighbor(World& w, Fib& fib, const Neighbor& n) {
  if (auto it = w.neigh.find(n.addr); it != w.neigh.end() && it->second.port != n.port) {
    fib.DeleteNeighbor(n.addr, it->second.port);
  }
  w.neigh[n.addr] = n;
  fib.UpsertNeighbor(n);
}

void ChangeGatewayNeighbor(RandomWorlds& gen, const NextHop& gateway, World& w, Fib& fib) {
  auto& rng = gen.rng();
  Neighbor n{*gateway.gateway, gen.RandomMac(), gateway.port, NeighState::kReachable};
  const int how = static_cast<int>(rng() % 4);
  if (how == 1) n.state = NeighState::kFailed;
  if (how == 2) n.port = static_cast<PortId>((n.port + 1) % 4);
  if (how == 3 && w.neigh.count(n.addr)) n.mac = w.neigh[n.addr].mac;
  SetNeighbor(w, fib, n);
}

// One random change to the world and the Fib alike.
void RandomOp(RandomWorlds& gen, const WorldShape& shape, World& w, Fib& fib) {
  auto& rng = gen.rng();
  const int op = static_cast<int>(rng() % 100);
  if (op < 45 || w.routes.size() < 3) {
    const Prefix p = gen.RandomPrefix(shape);
    auto paths = gen.RandomPaths(shape);
    w.routes[p] = paths;
    fib.UpsertRoute(Route{p, RouteSource::kStatic, 1, paths});
    if (paths.size() == 1 && paths[0].connected() && !paths[0].to_host() && p.len() >= 16) {
      World extra;
      gen.AddConnectedNeighbors(extra, p, paths[0].port);
      for (const auto& [a, n] : extra.neigh) {
        SetNeighbor(w, fib, n);
      }
    }
  } else if (op < 75) {
    auto it = std::next(w.routes.begin(), static_cast<long>(rng() % w.routes.size()));
    fib.DeleteRoute(it->first, RouteSource::kStatic);
    w.routes.erase(it);
  } else if (op < 90) {
    ChangeGatewayNeighbor(gen, gen.Gateway(static_cast<int>(rng() % static_cast<uint64_t>(shape.gateways))), w, fib);
  } else if (!w.neigh.empty()) {
    auto it = std::next(w.neigh.begin(), static_cast<long>(rng() % w.neigh.size()));
    fib.DeleteNeighbor(it->first, it->second.port);
    w.neigh.erase(it);
  }
}

// One random IPv6 change: a route added/changed/deleted or a gateway
// neighbour changing MAC, failing, recovering or moving port.
void RandomOp6(RandomWorlds& gen, const WorldShape6& shape, World& w, Fib& fib) {
  auto& rng = gen.rng();
  const int op = static_cast<int>(rng() % 100);
  std::vector<Prefix> v6;
  for (const auto& [p, paths] : w.routes) {
    if (p.family() == Family::kV6) v6.push_back(p);
  }
  if (op < 45 || v6.size() < 3) {
    const Prefix p = gen.RandomPrefix6();
    auto paths = gen.RandomPaths6(shape);
    w.routes[p] = paths;
    fib.UpsertRoute(Route{p, RouteSource::kStatic, 1, paths});
    if (paths.size() == 1 && paths[0].connected() && !paths[0].to_host()) {
      const IpAddr a = IpAddr::V6(gen.RandomInside(p));
      const Neighbor n{a, gen.RandomMac(), paths[0].port, NeighState::kReachable};
      SetNeighbor(w, fib, n);
    }
  } else if (op < 75) {
    const Prefix p = v6[rng() % v6.size()];
    fib.DeleteRoute(p, RouteSource::kStatic);
    w.routes.erase(p);
  } else {
    ChangeGatewayNeighbor(gen, gen.Gateway6(static_cast<int>(rng() % static_cast<uint64_t>(shape.gateways))), w, fib);
  }
}

SequenceWorld MakeSequenceWorld(RandomWorlds& gen, int v4_routes, int v4_gateways) {
  SequenceWorld s;
  s.v4.regions = {10};
  s.v4.min_len = 16;
  s.v4.gateways = v4_gateways;
  s.v4.routes = v4_routes;
  s.v4.within = Prefix::V4(0x0A000000u, 16);
  s.world = gen.Make(s.v4);
  s.v6.routes = 15;
  gen.AddV6(s.world, s.v6);
  return s;
}

}  // namespace fibnic::testing
