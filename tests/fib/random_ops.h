// Test support: one random change at a time to a World and a Fib alike
// (routes added, changed, deleted; gateway neighbours changing MAC, failing,
// recovering, moving port or going) — the steps of the random sequences.
#pragma once

#include "tests/fib/random_world.h"

namespace fibnic::testing {

// The world holds one neighbour per address: one on another port is a move.
void SetNeighbor(World& w, Fib& fib, const Neighbor& n);
// A gateway's neighbour changes MAC, fails, recovers or moves port.
void ChangeGatewayNeighbor(RandomWorlds& gen, const NextHop& gateway, World& w, Fib& fib);
// One random IPv4 change (a route or a gateway's neighbour).
void RandomOp(RandomWorlds& gen, const WorldShape& shape, World& w, Fib& fib);
// One random IPv6 change.
void RandomOp6(RandomWorlds& gen, const WorldShape6& shape, World& w, Fib& fib);

// The random sequences' world: IPv4 routes inside 10.0.0.0/16 (probes see
// every route, and the default), few gateways so that IPv6 next-hops compete
// for the slots IPv4 leaves, and 15 IPv6 routes.
struct SequenceWorld {
  WorldShape v4;
  WorldShape6 v6;
  World world;
};
SequenceWorld MakeSequenceWorld(RandomWorlds& gen, int v4_routes, int v4_gateways);

}  // namespace fibnic::testing
