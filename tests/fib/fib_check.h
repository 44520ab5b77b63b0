// Test support: a routing "world" fed both to a Fib and to the independent
// reference LPM, and a checker that decodes a BAR with HwLookup for every /24
// of IPv4 and compares it with the oracle.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "fib/fib.h"
#include "tests/oracle/reference_lpm.h"

namespace fibnic::testing {

struct World {
  std::map<Prefix, std::vector<NextHop>> routes;  // the best route per prefix
  std::map<IpAddr, Neighbor> neigh;

  oracle::ReferenceLpm Oracle() const;
  void LoadInto(Fib& fib) const;  // as static routes
};

struct CheckResult {
  uint64_t addresses = 0;     // destinations looked up
  uint64_t forwarded = 0;
  uint64_t misforwarded = 0;  // forwarded somewhere the oracle does not accept
  uint64_t owed = 0;          // destinations the hardware must forward
  uint64_t owed_punted = 0;   // ... that it punted
  std::string first_error;
  bool ok() const { return misforwarded == 0 && owed_punted == 0; }
};

// Every /24 of IPv4: one address each, all 256 where a longer route or a
// neighbour lives. `owners` are the next-hops that hold codes; a destination
// is owed forwarding when its route's usable path is among them.
CheckResult CheckAllSlash24(const std::vector<uint8_t>& bar, const World& world, const oracle::ReferenceLpm& lpm,
                            const std::set<NextHop>& owners, EcmpPolicy ecmp, uint32_t cam_entries);

// The next-hops whose space a code names (every next-hop of each owned
// adjacency: docs/fib.md "Adjacency codes").
std::set<NextHop> Owners(const Fib& fib);

// IPv6, sampled: every route's first, last and a random address, every
// neighbour's address, and `per_entry` random addresses under every valid
// TCAM entry of the Fib's image, looked up with HwLookup in `bar` against the
// oracle. A destination is owed forwarding when the Fib reports its
// longest-match route offloaded and the oracle accepts some answer for it
// (connected destinations only when their neighbour is in the BAR's CAM).
CheckResult CheckV6Sampled(const std::vector<uint8_t>& bar, const World& world, const oracle::ReferenceLpm& lpm,
                           const Fib& fib, std::mt19937_64& rng, int per_entry = 16);

}  // namespace fibnic::testing
