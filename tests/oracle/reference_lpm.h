// The independent oracle: a plain longest-prefix match over a list of routes
// and neighbours, written without any of fib/'s data structures. For a
// destination it says which (MAC, port) results are correct; the hardware may
// give one of them or punt, nothing else.
//
// Deliberately naive: one hash map per prefix length, probed longest first.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/ip.h"
#include "rib/route.h"

namespace fibnic::oracle {

using Forward = std::pair<MacAddr, uint8_t>;  // rewritten dst MAC, egress port

class ReferenceLpm {
 public:
  // The winning route for a prefix (tests decide which source wins).
  void SetRoute(const Prefix& p, std::vector<NextHop> paths) { table(p.family())[p.len()][key(p.addr())] = std::move(paths); }
  void EraseRoute(const Prefix& p) { table(p.family())[p.len()].erase(key(p.addr())); }
  // A neighbour is an address on a port (the kernel resolves per interface):
  // the same link-local address on two ports is two neighbours.
  void SetNeighbor(const Neighbor& n) { neigh_[{n.addr, n.port}] = n; }
  void EraseNeighbor(const IpAddr& a, PortId port) { neigh_.erase({a, port}); }

  // Longest matching prefix and its paths, if any.
  std::optional<std::pair<Prefix, std::vector<NextHop>>> Match(const IpAddr& dst) const {
    const auto& t = table(dst.family());
    for (int len = FamilyBits(dst.family()); len >= 0; --len) {
      const auto& m = t[len];
      if (m.empty()) continue;
      auto p = *Prefix::Make(dst, len);
      auto it = m.find(key(p.addr()));
      if (it != m.end()) return std::make_pair(p, it->second);
    }
    return std::nullopt;
  }

  // Every forwarding result that is correct for dst (empty: only punt is).
  // Any path of an ECMP route is correct; a gateway path needs a usable
  // neighbour on the path's port; a connected path needs dst's own neighbour.
  std::set<Forward> Acceptable(const IpAddr& dst) const {
    std::set<Forward> out;
    auto m = Match(dst);
    if (!m) return out;
    for (const auto& nh : m->second) {
      auto it = neigh_.find({nh.connected() ? dst : *nh.gateway, nh.port});
      if (it == neigh_.end() || !NeighUsable(it->second.state)) continue;
      out.insert({it->second.mac, nh.port});
    }
    return out;
  }

  // True if some route longer than /24 lies inside this IPv4 /24 (index dst>>8).
  bool HasLongerInside24(uint32_t slash24) const {
    for (int len = 25; len <= 32; ++len) {
      for (const auto& [k, v] : table(Family::kV4)[len]) {
        if ((static_cast<uint32_t>(k) >> 8) == slash24) return true;
      }
    }
    return false;
  }

  // For every IPv4 /24 (index dst>>8), the path count of the longest route
  // of length <= 24 covering it (0: none) — painted shortest first, so a
  // table-wide question costs one pass over the routes, not 16M lookups.
  std::vector<uint8_t> PathsBy24() const {
    std::vector<uint8_t> out(1u << 24, 0);
    for (int len = 0; len <= 24; ++len) {
      for (const auto& [k, v] : table(Family::kV4)[len]) {
        const uint32_t first = static_cast<uint32_t>(k) >> 8;
        const uint32_t n = 1u << (24 - len);
        std::fill_n(out.begin() + first, n, static_cast<uint8_t>(std::min<size_t>(v.size(), 255)));
      }
    }
    return out;
  }

  // The /24s that contain longer prefixes (computed once; cheap for real tables).
  std::set<uint32_t> Slash24sWithLonger() const {
    std::set<uint32_t> out;
    for (int len = 25; len <= 32; ++len) {
      for (const auto& [k, v] : table(Family::kV4)[len]) out.insert(static_cast<uint32_t>(k) >> 8);
    }
    return out;
  }

 private:
  using Table = std::vector<std::unordered_map<U128, std::vector<NextHop>, U128Hash>>;
  static U128 key(const IpAddr& a) { return a.v6(); }
  Table& table(Family f) { return f == Family::kV4 ? v4_ : v6_; }
  const Table& table(Family f) const { return f == Family::kV4 ? v4_ : v6_; }

  Table v4_ = Table(33);
  Table v6_ = Table(129);
  std::map<std::pair<IpAddr, PortId>, Neighbor> neigh_;
};

}  // namespace fibnic::oracle
