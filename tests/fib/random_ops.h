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

}  // namespace fibnic::testing
