// Test support: seeded random routing worlds with the cases that break
// compilers — /0, /32, nesting, >/24 routes (uniform and not), more gateways
// than slots, unresolved gateways, connected routes with neighbours in and out
// of the CAM, ECMP, to-host routes.
#pragma once

#include <random>

#include "tests/fib/fib_check.h"

namespace fibnic::testing {

struct WorldShape {
  int gateways = 6;
  int routes = 400;
  bool default_route = true;
  // Routes live under these /8s (and, for sequences, inside 10.0.0.0/16).
  std::vector<uint32_t> regions = {10, 20, 172, 192};
  int min_len = 8;
  // If set, every random prefix lies inside this one instead.
  std::optional<Prefix> within;
};

// IPv6 part: routes under 2001:db8::/32 (lengths around /48../64, some
// longer than /64, a default route), gateways fd00:k::1.
struct WorldShape6 {
  int gateways = 5;
  int routes = 60;
  bool default_route = true;
};

class RandomWorlds {
 public:
  explicit RandomWorlds(uint64_t seed) : rng_(seed) {}
  std::mt19937_64& rng() { return rng_; }

  NextHop Gateway(int k) const { return NextHop{IpAddr::V4(0x64400001u + (uint32_t(k) << 8)), PortId(k % 4)}; }
  // Gateway k's neighbour: usable on its port, except every fifth (missing),
  // every seventh (FAILED) and every eleventh (on the wrong port).
  std::optional<Neighbor> GatewayNeighbor(int k);
  Prefix RandomPrefix(const WorldShape& s);
  std::vector<NextHop> RandomPaths(const WorldShape& s);
  // Connected routes get neighbours inside them (some on the wrong port).
  void AddConnectedNeighbors(World& w, const Prefix& p, PortId port);
  World Make(const WorldShape& s);

  NextHop Gateway6(int k) const {
    return NextHop{IpAddr::V6((U128{0xfd00} << 112) | (U128(k) << 96) | 1), PortId(k % 4)};
  }
  // Same pattern of missing / failed / wrong-port neighbours as IPv4.
  std::optional<Neighbor> GatewayNeighbor6(int k);
  Prefix RandomPrefix6();
  std::vector<NextHop> RandomPaths6(const WorldShape6& s);
  // Adds the IPv6 part (gateway neighbours, routes, neighbours inside
  // connected routes) to w.
  void AddV6(World& w, const WorldShape6& s);
  U128 RandomInside(const Prefix& p);
  MacAddr RandomMac();

 private:
  std::mt19937_64 rng_;
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
};

}  // namespace fibnic::testing
