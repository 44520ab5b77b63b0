#include "tests/fib/random_world.h"

namespace fibnic::testing {

MacAddr RandomWorlds::RandomMac() {
  MacAddr m;
  for (auto& b : m.b) b = static_cast<uint8_t>(rng_());
  m.b[0] = static_cast<uint8_t>((m.b[0] & 0xFE) | 0x02);
  return m;
}

std::optional<Neighbor> RandomWorlds::GatewayNeighbor(int k) {
  if (k % 5 == 4) return std::nullopt;
  Neighbor n{*Gateway(k).gateway, RandomMac(), Gateway(k).port, NeighState::kReachable};
  if (k % 7 == 6) n.state = NeighState::kFailed;
  if (k % 11 == 10) n.port = static_cast<PortId>((n.port + 1) % 4);
  if (k % 3 == 1) n.state = NeighState::kStale;  // stale is still usable
  return n;
}

Prefix RandomWorlds::RandomPrefix(const WorldShape& s) {
  const uint32_t region = s.regions[static_cast<size_t>(Uniform(0, int(s.regions.size()) - 1))];
  // Most lengths near the /24 boundary, where the compiler's cases meet.
  static constexpr int kLens[] = {8, 12, 16, 18, 20, 22, 23, 24, 24, 24, 25, 26, 28, 30, 32};
  int len = kLens[Uniform(0, int(std::size(kLens)) - 1)];
  len = std::max(len, s.min_len);
  if (s.within) {
    const uint32_t host = static_cast<uint32_t>(rng_()) & ~MaskV4(s.within->len());
    return Prefix::V4(s.within->addr().v4() | host, std::max(len, s.within->len()));
  }
  return Prefix::V4((region << 24) | static_cast<uint32_t>(rng_() & 0x00FFFFFF), len);
}

std::vector<NextHop> RandomWorlds::RandomPaths(const WorldShape& s) {
  const int kind = Uniform(0, 99);
  if (kind < 60) return {Gateway(Uniform(0, s.gateways - 1))};
  if (kind < 72) return {NextHop{std::nullopt, PortId(Uniform(0, 3))}};
  if (kind < 87) {
    std::vector<NextHop> p;
    for (int i = Uniform(2, 3); i > 0; --i) p.push_back(Gateway(Uniform(0, s.gateways - 1)));
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
    return p;
  }
  return {NextHop::ToHost()};
}

void RandomWorlds::AddConnectedNeighbors(World& w, const Prefix& p, PortId port) {
  const uint32_t span = p.len() >= 32 ? 1 : (uint32_t{1} << (32 - p.len()));
  for (int i = Uniform(1, 3); i > 0 && w.neigh.size() < 200; --i) {
    const IpAddr a = IpAddr::V4(p.addr().v4() + static_cast<uint32_t>(rng_() % span));
    const PortId on = Uniform(0, 3) == 0 ? PortId((port + 1) % 4) : port;
    w.neigh[a] = Neighbor{a, RandomMac(), on, Uniform(0, 5) == 0 ? NeighState::kIncomplete : NeighState::kReachable};
  }
}

World RandomWorlds::Make(const WorldShape& s) {
  World w;
  for (int k = 0; k < s.gateways; ++k) {
    if (auto n = GatewayNeighbor(k)) w.neigh[n->addr] = *n;
  }
  if (s.default_route) w.routes[Prefix::V4(0, 0)] = {Gateway(0)};
  for (int i = 0; i < s.routes; ++i) {
    const Prefix p = RandomPrefix(s);
    auto paths = RandomPaths(s);
    if (p.len() >= 25 && Uniform(0, 2) == 0) {
      // A uniform /24: both halves via the same next-hop.
      const Prefix lo = Prefix::V4(p.addr().v4() & 0xFFFFFF00u, 25), hi = Prefix::V4(lo.addr().v4() | 0x80, 25);
      w.routes[lo] = paths;
      w.routes[hi] = paths;
      continue;
    }
    w.routes[p] = paths;
    if (paths.size() == 1 && paths[0].connected() && !paths[0].to_host() && p.len() >= 16) {
      AddConnectedNeighbors(w, p, paths[0].port);
    }
  }
  return w;
}

std::optional<Neighbor> RandomWorlds::GatewayNeighbor6(int k) {
  auto n = GatewayNeighbor(k);
  if (!n) return n;
  n->addr = *Gateway6(k).gateway;
  n->mac = RandomMac();
  return n;
}

U128 RandomWorlds::RandomInside(const Prefix& p) {
  const U128 r = (U128(rng_()) << 64) | rng_();
  const U128 host = p.len() == 0 ? ~U128{0} : p.len() >= 128 ? U128{0} : (~U128{0} >> p.len());
  return p.addr().v6() | (r & host);
}

Prefix RandomWorlds::RandomPrefix6() {
  static constexpr int kLens[] = {32, 36, 40, 44, 48, 48, 48, 52, 56, 56, 60, 62, 64, 64, 64, 72, 96, 128};
  const int len = kLens[Uniform(0, int(std::size(kLens)) - 1)];
  // A few /44s so that prefixes nest and collide.
  const U128 base = (U128{0x20010db8} << 96) | (U128(Uniform(0, 3)) << 84);
  return *Prefix::Make(IpAddr::V6(RandomInside(*Prefix::Make(IpAddr::V6(base), 44))), len);
}

std::vector<NextHop> RandomWorlds::RandomPaths6(const WorldShape6& s) {
  const int kind = Uniform(0, 99);
  if (kind < 60) return {Gateway6(Uniform(0, s.gateways - 1))};
  if (kind < 72) return {NextHop{std::nullopt, PortId(Uniform(0, 3))}};
  if (kind < 87) {
    std::vector<NextHop> p;
    for (int i = Uniform(2, 3); i > 0; --i) p.push_back(Gateway6(Uniform(0, s.gateways - 1)));
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
    return p;
  }
  return {NextHop::ToHost()};
}

void RandomWorlds::AddV6(World& w, const WorldShape6& s) {
  for (int k = 0; k < s.gateways; ++k) {
    if (auto n = GatewayNeighbor6(k)) w.neigh[n->addr] = *n;
  }
  if (s.default_route) w.routes[*Prefix::Parse("::/0")] = {Gateway6(0)};
  int v6_neigh = 0;
  for (int i = 0; i < s.routes; ++i) {
    const Prefix p = RandomPrefix6();
    auto paths = RandomPaths6(s);
    w.routes[p] = paths;
    if (paths.size() == 1 && paths[0].connected() && !paths[0].to_host() && v6_neigh < 30) {
      for (int j = Uniform(1, 3); j > 0; --j, ++v6_neigh) {
        const IpAddr a = IpAddr::V6(RandomInside(p));
        const PortId on = Uniform(0, 3) == 0 ? PortId((paths[0].port + 1) % 4) : paths[0].port;
        w.neigh[a] = Neighbor{a, RandomMac(), on, Uniform(0, 5) == 0 ? NeighState::kIncomplete : NeighState::kReachable};
      }
    }
  }
}

}  // namespace fibnic::testing
