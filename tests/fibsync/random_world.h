// Test support: seeded random routing worlds with the cases that break
// compilers — /0, /32, nesting, >/24 routes (uniform and not), more gateways
// than slots, unresolved gateways, connected routes with neighbours in and out
// of the CAM, ECMP, to-host routes.
#pragma once

#include <random>

#include "tests/fibsync/fib_check.h"

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
  MacAddr RandomMac();

 private:
  std::mt19937_64 rng_;
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
};

}  // namespace fibnic::testing
