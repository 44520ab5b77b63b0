// Warm start: Fib::AdoptDevice seeds the slot owners, the NEIGH CAM and the
// TCAM6 entries from what the device holds (docs/fib.md "Answers and
// slots"). Which failed next-hops a kept VALID=0 entry held, the neighbours
// no longer tell (the kernel reports a FAILED neighbour without its MAC):
// the device does, by what its SRAM and TCAM answer their routes' space with.
#include <algorithm>

#include "fib/fib_impl.h"
#include "fib/tcam6/tcam6_trie.h"

namespace fibnic {
namespace {

// Addresses (their first 64 bits, all the TCAM sees) answered with one code.
struct TcamSpan {
  uint64_t first = 0, last = 0;
  uint8_t code = 0;
};

// The TCAM's answer over the whole 64-bit space: between two entry edges
// the first matching entry stays the same.
std::vector<TcamSpan> AnswerSpans(const std::vector<regs::Tcam6Entry>& tcam) {
  std::vector<uint64_t> starts = {0};
  for (const auto& e : tcam) {
    if (!e.valid()) continue;
    starts.push_back(e.value);
    if ((e.value | ~e.mask) != ~uint64_t{0}) starts.push_back((e.value | ~e.mask) + 1);
  }
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  std::vector<TcamSpan> spans;
  for (size_t i = 0; i < starts.size(); ++i) {
    const uint64_t last = i + 1 < starts.size() ? starts[i + 1] - 1 : ~uint64_t{0};
    spans.push_back({starts[i], last, Tcam6Code(tcam, starts[i])});
  }
  return spans;
}

// The first 64 bits of the addresses in an IPv6 prefix: [first, last].
std::pair<uint64_t, uint64_t> High64Range(const Prefix& p) {
  const auto first = static_cast<uint64_t>(p.addr().v6() >> 64);
  return {first, first | ~tcam6::Mask64(std::min(p.len(), 64))};
}

}  // namespace

DeviceAdoption Fib::Impl::AdoptDevice(const DeviceImage& device) {
  Settle();  // live next-hops as after every queued upsert (replaced paths released)
  DeviceAdoption got;
  if (commits > 0 || !(device.caps == cfg.caps)) return got;
  // The previous daemon's TCAM6 is one optimal entry set among several (its
  // ties went to the entries it already held); a scratch compile would pick
  // another and rewrite an unchanged table.
  got.tcam6 = tcam6.AdoptDevice(device.tcam);
  got.slots = resolver.Adopt(device.nexthop, ShownByDevice(device, resolver.AskAboutKeptEntries(device.nexthop)));
  // CAM entries stay where they are; the first Commit() retires the unwanted.
  image.neigh = device.neigh;
  for (const auto& e : image.neigh) got.neighbors += e.valid();
  return got;
}

Resolver::ShownCodes Fib::Impl::ShownByDevice(const DeviceImage& device, const Resolver::KeptEntryQuestion& q) const {
  Resolver::ShownCodes shown;
  if (q.groups.empty()) return shown;  // the usual restart: nothing to look at
  ShownInSram(device, q, shown);
  ShownInTcam(q, shown);
  return shown;
}

// A /24 a group answers whole holds its code (the same in all such /24s).
void Fib::Impl::ShownInSram(const DeviceImage& device, const Resolver::KeptEntryQuestion& q,
                            Resolver::ShownCodes& shown) const {
  std::vector<bool> wanted(nht.group_bound(), false);
  for (NhgId g : q.groups) wanted[g] = true;
  const std::vector<uint32_t> whole = sram.WholeSlash24s(wanted);
  for (NhgId g : q.groups) {
    if (whole[g] == Sram4Compiler::kSlash24s) continue;
    const int code = device.CodeOf24(whole[g]);
    if (q.codes.count(code)) shown.insert({g, code});
  }
}

// With few entries the TCAM answers a route in part or not at all, and one
// entry answers several routes: so each route of the groups is looked at
// wherever the TCAM answers with a kept code. The TCAM as the compiler
// adopted it: one holding an entry no compiler writes is not, and shows
// nothing.
void Fib::Impl::ShownInTcam(const Resolver::KeptEntryQuestion& q, Resolver::ShownCodes& shown) const {
  std::vector<TcamSpan> kept;
  for (const TcamSpan& s : AnswerSpans(tcam6.compiler().entries())) {
    if (q.codes.count(s.code)) kept.push_back(s);
  }
  if (kept.empty()) return;
  rib.ForEach(Family::kV6, [&](const Prefix& p, const RibCand& best) {
    if (!q.groups.count(best.nhg)) return;
    const auto [first, last] = High64Range(p);
    for (const TcamSpan& s : kept) {
      if (s.last < first || s.first > last || shown.count({best.nhg, s.code})) continue;
      if (OwnAddressIn(p.len(), std::max(first, s.first), std::min(last, s.last))) shown.insert({best.nhg, s.code});
    }
  });
}

// Walks [first, last] from its start over the longer routes inside (each
// outermost one at once) to the first address left, if any.
bool Fib::Impl::OwnAddressIn(int len, uint64_t first, uint64_t last) const {
  for (uint64_t a = first;;) {
    const std::optional<int> inner = ShortestRouteAt(a, len + 1);
    if (!inner) return true;
    const uint64_t inner_last = a | ~tcam6::Mask64(*inner);
    if (inner_last >= last) return false;
    a = inner_last + 1;
  }
}

std::optional<int> Fib::Impl::ShortestRouteAt(uint64_t high64, int min_len) const {
  for (int len = min_len; len <= 64; ++len) {
    if (rib.HasLength(Family::kV6, len) && rib.Best(Prefix::V6(U128{high64} << 64, len))) return len;
  }
  return std::nullopt;
}

}  // namespace fibnic
