// Test-side view of IPv6 TCAM correctness, built only on the independent
// reference LPM (tests/oracle/reference_lpm.h) and the spec's TCAM rule — none
// of the compiler's structures.
//
// Code k stands for a fake gateway fd00::k on port k%4 whose neighbour has MAC
// 02:00:00:00:00:k; a code-0 route is a to-host route (no neighbour: punt).
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/ip.h"
#include "device/fibnic_image.h"
#include "fib/tcam6/tcam6_compiler.h"
#include "tests/oracle/reference_lpm.h"

namespace fibnic::tcam6test {

using Routes = std::map<Prefix, Tcam6Route>;

class Reference {
 public:
  explicit Reference(const Routes& routes) {
    std::set<uint8_t> codes;
    for (const auto& [p, r] : routes) {
      lpm_.SetRoute(p, {r.code == 0 ? NextHop::ToHost() : Gateway(r.code)});
      if (r.code != 0) codes.insert(r.code);
    }
    for (uint8_t c : codes) {
      MacAddr mac;
      mac.b[5] = c;
      lpm_.SetNeighbor({*Gateway(c).gateway, mac, static_cast<PortId>(c % 4), NeighState::kReachable});
    }
  }
  struct Truth {
    uint8_t code = 0;                // the only code hardware may answer besides punt
    std::optional<Prefix> matched;   // the longest matching route
  };
  Truth Judge(const IpAddr& dst) const {
    auto m = lpm_.Match(dst);
    if (!m) return {};
    const NextHop& nh = m->second.front();
    return {nh.to_host() ? uint8_t{0} : static_cast<uint8_t>(nh.gateway->v6() & 0xff), m->first};
  }
  // Same answer through the oracle's neighbour resolution (slower).
  uint8_t Code(const IpAddr& dst) const {
    auto ok = lpm_.Acceptable(dst);
    return ok.empty() ? 0 : ok.begin()->first.b[5];
  }
  std::vector<Truth> JudgeAll(const std::vector<IpAddr>& dests) const {
    std::vector<Truth> out;
    out.reserve(dests.size());
    for (const auto& d : dests) out.push_back(Judge(d));
    return out;
  }

 private:
  static NextHop Gateway(uint8_t code) { return NextHop{IpAddr::V6((U128{0xfd00} << 112) | code), PortId(code % 4)}; }
  oracle::ReferenceLpm lpm_;
};

// The spec's TCAM: lowest-index VALID entry whose (dst & mask) == value wins.
inline uint8_t TcamAnswer(const std::vector<regs::Tcam6Entry>& slots, const IpAddr& dst) {
  for (const auto& e : slots) {
    if (e.Matches(dst.v6_hi())) return e.code;
  }
  return 0;
}

inline U128 EntryFirst(const regs::Tcam6Entry& e) { return U128{e.value} << 64; }
inline U128 EntryLast(const regs::Tcam6Entry& e) { return (U128{e.value | ~e.mask} << 64) | ~uint64_t{0}; }

// Both the reference LPM and any TCAM state are constant between consecutive
// range boundaries, so checking every range's first address and the address
// after its last (plus the ones either side) checks every destination.
inline void AddBoundaries(U128 first, U128 last, std::vector<IpAddr>& out) {
  out.push_back(IpAddr::V6(first));
  out.push_back(IpAddr::V6(last));
  if (first != 0) out.push_back(IpAddr::V6(first - 1));
  if (last != ~U128{0}) out.push_back(IpAddr::V6(last + 1));
}

inline U128 Random128(std::mt19937_64& rng) { return (U128{rng()} << 64) | rng(); }

// Every route's first / last / a random address and boundaries; for every
// valid entry its boundaries and `per_entry` random addresses under it.
inline std::vector<IpAddr> Destinations(const Routes& routes, const std::vector<const std::vector<regs::Tcam6Entry>*>& tcams,
                                        std::mt19937_64& rng, int per_entry) {
  std::vector<IpAddr> out;
  out.push_back(IpAddr::V6(0));
  for (const auto& [p, r] : routes) {
    const U128 first = p.addr().v6(), last = p.Last().v6();
    AddBoundaries(first, last, out);
    const U128 host = last - first;
    out.push_back(IpAddr::V6(first + (Random128(rng) & host)));
  }
  for (const auto* t : tcams) {
    for (const auto& e : *t) {
      if (!e.valid()) continue;
      AddBoundaries(EntryFirst(e), EntryLast(e), out);
      const U128 host = EntryLast(e) - EntryFirst(e);
      for (int i = 0; i < per_entry; ++i) out.push_back(IpAddr::V6(EntryFirst(e) + (Random128(rng) & host)));
    }
  }
  return out;
}

// Applies writes one at a time (a write onto a valid slot first passes through
// the slot being invalid, as hwif clears VALID first) and calls check(state)
// on every state the device can see, the old one included.
template <typename Fn>
void ForEachState(std::vector<regs::Tcam6Entry> slots, const std::vector<TcamWrite>& writes, Fn&& check) {
  check(slots, -1);
  for (size_t i = 0; i < writes.size(); ++i) {
    const auto& w = writes[i];
    if (slots.at(w.index).valid() && w.entry.valid() && !(slots[w.index] == w.entry)) {
      slots[w.index] = regs::Tcam6Entry{};
      check(slots, static_cast<int>(i));
    }
    slots[w.index] = w.entry;
    check(slots, static_cast<int>(i));
  }
}

inline std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}
inline std::string Dump(const std::vector<regs::Tcam6Entry>& slots) {
  std::string s;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (!slots[i].valid()) continue;
    s += "  [" + std::to_string(i) + "] " + Hex(slots[i].value) + "/" + Hex(slots[i].mask) + " code " +
         std::to_string(slots[i].code) + "\n";
  }
  return s;
}

}  // namespace fibnic::tcam6test
