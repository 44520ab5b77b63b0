// A resolver over its own next-hop table, with neighbours and weights set by
// the test: the resolver alone, no Fib and no /24 cell table, so a test's
// expectations are the slot policy itself.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "fib/resolver.h"
#include "tests/support/parse.h"

namespace fibnic::testing {

inline NextHop Gw(const char* addr, PortId port) { return NextHop{A(addr), port}; }

class ResolverHarness {
 public:
  explicit ResolverHarness(const FibConfig& c) : res(c, nht) {}

  // One group per set of paths, whatever their order.
  NhgId Group(const std::vector<NextHop>& paths) {
    std::vector<NextHop> sorted = paths;
    std::sort(sorted.begin(), sorted.end());
    auto it = groups_.find(sorted);
    if (it != groups_.end()) return it->second;
    return groups_[sorted] = nht.Acquire(sorted);
  }
  // A usable neighbour for gateway nh (on its port), with MAC 02:00:00:00:00:mac.
  void SetNeighbor(const NextHop& nh, uint8_t mac, NeighState state = NeighState::kReachable) {
    res.UpsertNeighbor(Neighbor{*nh.gateway, Mac(mac), nh.port, state});
  }
  void Weigh(NhgId g, uint64_t slash24s, uint64_t v6_routes = 0) {
    if (weights_.size() <= g) weights_.resize(g + 1);
    weights_[g] = {slash24s, v6_routes};
  }
  CommitCodes Commit() { return res.Resolve(weights_); }
  // By code - 1: the next-hop whose space the code names, for tests where
  // every next-hop is its own adjacency (its own MAC or port).
  std::vector<std::optional<NextHop>> OwnerNextHops() const {
    std::vector<std::optional<NextHop>> out;
    for (size_t c = 1; c <= res.owners().size(); ++c) {
      const auto nhs = res.NextHopsOf(static_cast<int>(c));
      out.push_back(nhs.empty() ? std::nullopt : std::optional<NextHop>(nhs.front()));
    }
    return out;
  }
  std::set<NextHop> Owners() const {
    std::set<NextHop> s;
    for (const auto& o : OwnerNextHops()) {
      if (o) s.insert(*o);
    }
    return s;
  }

  NexthopTable nht;
  Resolver res;

 private:
  std::map<std::vector<NextHop>, NhgId> groups_;
  std::vector<Resolver::GroupWeight> weights_;
};

}  // namespace fibnic::testing
