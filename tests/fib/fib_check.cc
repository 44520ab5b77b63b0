#include "tests/fib/fib_check.h"

#include "device/fibnic_lookup.h"

namespace fibnic::testing {
namespace {

// RFC 1812 5.3.7: a router forwards none of these, whatever its routes say
// (0/8, 127/8, 224/4 multicast, 240/4 reserved incl. 255.255.255.255): the
// hardware owes them nothing (punting them is what it must do).
bool NeverForwardedV4(uint32_t a) {
  const uint32_t top = a >> 24;
  return top == 0 || top == 127 || top >= 224;
}

// RFC 4291: multicast ff00::/8, link-local fe80::/10 and ::1. Owed nothing
// in fe00::/7 (the rest of it, fe00::/9 and fec0::/10, is unassigned or
// deprecated) and ::/64 (the TCAM sees 64 bits; nothing there is routable).
bool NeverForwardedV6(const IpAddr& a) {
  const uint64_t hi = a.v6_hi();
  return hi >> 57 == 0x7f || hi == 0;
}

}  // namespace

oracle::ReferenceLpm World::Oracle() const {
  oracle::ReferenceLpm lpm;
  for (const auto& [p, paths] : routes) lpm.SetRoute(p, paths);
  for (const auto& [a, n] : neigh) lpm.SetNeighbor(n);
  return lpm;
}

void World::LoadInto(Fib& fib) const {
  for (const auto& [p, paths] : routes) fib.UpsertRoute(Route{p, RouteSource::kStatic, 1, paths});
  for (const auto& [a, n] : neigh) fib.UpsertNeighbor(n);
}

std::set<NextHop> Owners(const Fib& fib) {
  std::set<NextHop> out;
  for (const auto& s : fib.Slots()) out.insert(s.next_hops.begin(), s.next_hops.end());
  return out;
}

CheckResult CheckAllSlash24(const std::vector<uint8_t>& bar, const World& world, const oracle::ReferenceLpm& lpm,
                            const std::set<NextHop>& owners, EcmpPolicy ecmp, uint32_t cam_entries) {
  // Per /24: bit0 = a longer route inside, bit1 = a neighbour inside.
  std::vector<uint8_t> special(size_t{1} << 24, 0);
  for (const auto& [p, paths] : world.routes) {
    if (p.family() == Family::kV4 && p.len() > 24) special[p.addr().v4() >> 8] |= 1;
  }
  uint32_t usable_neighbors = 0;
  for (const auto& [a, n] : world.neigh) {
    if (!a.is_v4()) continue;
    special[a.v4() >> 8] |= 2;
    usable_neighbors += NeighUsable(n.state);
  }
  auto usable = [&](const NextHop& nh, const IpAddr& dst) {
    if (!owners.count(nh)) return false;
    auto it = world.neigh.find(nh.connected() ? dst : *nh.gateway);
    if (it == world.neigh.end() || !NeighUsable(it->second.state) || it->second.port != nh.port) return false;
    return !nh.connected() || usable_neighbors <= cam_entries;
  };

  CheckResult r;
  auto check = [&](uint32_t addr, bool longer_inside) {
    const IpAddr dst = IpAddr::V4(addr);
    ++r.addresses;
    const HwDecision d = HwLookup(bar.data(), bar.size(), dst);
    const auto m = lpm.Match(dst);
    bool owed = false;
    if (m && !longer_inside && !NeverForwardedV4(addr)) {
      const auto& paths = m->second;
      if (paths.size() == 1 || ecmp == EcmpPolicy::kFirst) {
        for (const auto& nh : paths) owed |= usable(nh, dst);
      }
    }
    r.owed += owed;
    if (d.forward) {
      ++r.forwarded;
      // The oracle's acceptable set, from the one Match above (same rule as
      // ReferenceLpm::Acceptable: a path whose neighbour is usable on its port).
      bool accepted = false;
      if (m && !(m->second.size() > 1 && ecmp == EcmpPolicy::kPunt)) {
        for (const auto& nh : m->second) {
          auto it = world.neigh.find(nh.connected() ? dst : *nh.gateway);
          if (it == world.neigh.end() || !NeighUsable(it->second.state) || it->second.port != nh.port) continue;
          accepted |= it->second.mac == d.dst_mac && nh.port == d.port;
        }
      }
      if (!accepted) {
        ++r.misforwarded;
        if (r.first_error.empty()) r.first_error = dst.ToString() + " misforwarded: " + d.ToString();
      }
    } else if (owed) {
      ++r.owed_punted;
      if (r.first_error.empty()) r.first_error = dst.ToString() + " punted but owed: " + d.ToString();
    }
  };
  for (uint32_t i = 0; i < (1u << 24); ++i) {
    if (special[i]) {
      for (uint32_t x = 0; x < 256; ++x) check((i << 8) | x, special[i] & 1);
    } else {
      check((i << 8) | 0x2A, false);
    }
  }
  return r;
}

CheckResult CheckV6Sampled(const std::vector<uint8_t>& bar, const World& world, const oracle::ReferenceLpm& lpm,
                           const Fib& fib, std::mt19937_64& rng, int per_entry) {
  std::map<Prefix, OffloadState> state;
  fib.ForEachRoute(Family::kV6, [&](const RouteInfo& r) {
    state[r.route.prefix] = r.state;
    return true;
  });
  std::set<std::array<uint8_t, 16>> in_cam;
  for (uint32_t i = 0; i < fib.config().caps.neigh_entries; ++i) {
    const auto e = regs::NeighEntry::Decode(&bar[regs::NeighOffset(i)]);
    if (e.valid()) in_cam.insert(e.addr);
  }
  auto random_in = [&](const Prefix& p) {
    const U128 r = (U128(rng()) << 64) | rng();
    const U128 host = p.len() == 0 ? ~U128{0} : p.len() >= 128 ? U128{0} : (~U128{0} >> p.len());
    return IpAddr::V6(p.addr().v6() | (r & host));
  };
  CheckResult r;
  auto check = [&](const IpAddr& dst) {
    ++r.addresses;
    const HwDecision d = HwLookup(bar.data(), bar.size(), dst);
    const auto m = lpm.Match(dst);
    const auto ok = lpm.Acceptable(dst);
    bool owed = false;
    if (m && !ok.empty() && !NeverForwardedV6(dst)) {
      auto it = state.find(m->first);
      bool connected = false;
      for (const auto& nh : m->second) connected |= nh.connected();
      owed = it != state.end() && it->second == OffloadState::kOffloaded && (!connected || in_cam.count(dst.mapped16()));
    }
    r.owed += owed;
    if (d.forward) {
      ++r.forwarded;
      if (!ok.count({d.dst_mac, d.port})) {
        ++r.misforwarded;
        if (r.first_error.empty()) {
          r.first_error = dst.ToString() + " misforwarded: " + d.ToString() + " (route " +
                          (m ? m->first.ToString() : std::string("none")) + ")";
        }
      }
    } else if (owed) {
      ++r.owed_punted;
      if (r.first_error.empty()) r.first_error = dst.ToString() + " punted but owed (" + m->first.ToString() + "): " + d.ToString();
    }
  };
  for (const auto& [p, paths] : world.routes) {
    if (p.family() != Family::kV6) continue;
    const U128 host = p.len() == 0 ? ~U128{0} : p.len() >= 128 ? U128{0} : (~U128{0} >> p.len());
    check(p.addr());
    check(IpAddr::V6(p.addr().v6() | host));
    check(random_in(p));
  }
  for (const auto& [a, n] : world.neigh) {
    if (!a.is_v4()) check(a);
  }
  for (const auto& e : fib.image().tcam) {
    if (!e.valid()) continue;
    int len = 0;
    while (len < 64 && (e.mask >> (63 - len) & 1)) ++len;
    const Prefix p = *Prefix::Make(IpAddr::V6(U128(e.value) << 64), len);
    for (int i = 0; i < per_entry; ++i) check(random_in(p));
  }
  return r;
}

}  // namespace fibnic::testing
