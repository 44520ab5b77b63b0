// The Fib's counts: every best route's offload state, tallied in one pass
// that may be cut into steps (fib.h, CountStep). A pass holds no reference
// into the tables between steps, only positions and partial tallies, and the
// Fib's edit count voids it when anything changed in between.
#include <algorithm>
#include <tuple>

#include "fib/fib_impl.h"

namespace fibnic {

using Clock = std::chrono::steady_clock;

struct Fib::CountsPass {
  uint64_t edits = 0;  // the Fib's, when the pass began
  enum class Phase { kV4, kV6Gather, kV6 } phase = Phase::kV4;

  // IPv4: routes nest, so at each length only one route's cells are open at a
  // time: once a cell of another route of that length shows up, the open one
  // is done.
  struct Tally {
    uint32_t first = ~0u;  // the route's first /24
    uint32_t total = 0, punted = 0;
  };
  uint32_t cell = 0;  // the next /24 to look at
  std::array<bool, 16> forwards{};
  std::array<Tally, 25> open{};
  std::array<uint64_t, 3> v4{};
  uint64_t with_cells = 0, longer = 0;

  // IPv6: the best routes in prefix order, 24 bytes each (a Prefix and its
  // RibCand are 64: 10 MB at each pass over a full table, a peak of its own).
  struct V6Route {
    uint64_t hi, lo;
    NhgId nhg;
    uint8_t len, distance;
    RouteSource source;
  };
  std::vector<V6Route> v6;
  size_t next = 0;
  std::vector<int> walk;

  FibCounts counts;
};

void Fib::CountsPassDelete::operator()(CountsPass* p) const { delete p; }

// Offload states of the best IPv4 routes, as Info gives them. A <= /24
// route's state follows from its own /24s (the cells at depth len + 1 in its
// range), so one pass over all 2^24 cells tallies every route at once, where
// Info would walk each route's whole range (a /8 alone is 65536 cells).
bool Fib::Impl::CountV4(CountsPass& pass, Clock::time_point deadline) const {
  auto count = [&](OffloadState s) { ++pass.v4[static_cast<int>(s)]; };
  auto close = [&](CountsPass::Tally& t) {
    if (t.total == 0) return;
    ++pass.with_cells;
    count(t.punted == 0 ? OffloadState::kOffloaded
                        : t.punted == t.total ? OffloadState::kPunted : OffloadState::kPartial);
    t = CountsPass::Tally{};
  };
  constexpr uint32_t kCellsBetweenClocks = 1u << 16;
  uint32_t i = pass.cell;
  for (; i < Sram4Compiler::kSlash24s; ++i) {
    if (i % kCellsBetweenClocks == 0 && i != pass.cell && Clock::now() >= deadline) {
      pass.cell = i;
      return false;
    }
    if ((i & 3) == 0 && sram.EmptyWord(i >> 2)) {  // unrouted space: nothing opens or closes
      i += 3;
      continue;
    }
    const auto cell = sram.cell(i);
    if (cell.has_longer) {
      // Routes longer than /24 are few; Info answers each from its /24's code.
      for (const auto& l : *sram.LongerIn(i)) {
        count(Info(Prefix::V4(i << 8 | l.offset, l.len), RibCand{RouteSource::kStatic, 0, l.group}, true).state);
        ++pass.longer;
      }
    }
    if (cell.len_plus1 == 0) continue;
    const int shift = 25 - cell.len_plus1;
    CountsPass::Tally& t = pass.open[cell.len_plus1 - 1u];
    if (const uint32_t first = i >> shift << shift; first != t.first) {
      close(t);
      t.first = first;
    }
    ++t.total;
    t.punted += !pass.forwards[image.CodeOf24(i)];
  }
  pass.cell = i;
  for (CountsPass::Tally& t : pass.open) close(t);
  // Shadowed routes (more-specifics cover all their /24s) punt.
  const uint64_t shadowed = rib.size(Family::kV4) - pass.longer - pass.with_cells;
  pass.v4[static_cast<int>(OffloadState::kPunted)] += shadowed;
  std::copy(pass.v4.begin(), pass.v4.end(), pass.counts.routes[0]);
  pass.counts.shadowed[0] = shadowed;
  return true;
}

// IPv6 routes have no cells to walk: each one's state is a group and a TCAM
// trie probe, asked in prefix order so each walks from its neighbour.
bool Fib::Impl::CountV6(CountsPass& pass, Clock::time_point deadline) const {
  if (pass.phase == CountsPass::Phase::kV6Gather) {
    pass.v6.reserve(rib.size(Family::kV6));
    rib.ForEach(Family::kV6, [&](const Prefix& p, const RibCand& cand) {
      const U128 a = p.addr().v6();
      pass.v6.push_back({static_cast<uint64_t>(a >> 64), static_cast<uint64_t>(a), cand.nhg,
                         static_cast<uint8_t>(p.len()), cand.distance, cand.source});
    });
    std::sort(pass.v6.begin(), pass.v6.end(), [](const CountsPass::V6Route& a, const CountsPass::V6Route& b) {
      return std::tie(a.hi, a.lo, a.len) < std::tie(b.hi, b.lo, b.len);
    });
    pass.phase = CountsPass::Phase::kV6;
  }
  constexpr size_t kRoutesBetweenClocks = 1024;
  for (const size_t from = pass.next; pass.next < pass.v6.size(); ++pass.next) {
    if (pass.next != from && pass.next % kRoutesBetweenClocks == 0 && Clock::now() >= deadline) return false;
    const CountsPass::V6Route& r = pass.v6[pass.next];
    const Prefix p = Prefix::V6((U128{r.hi} << 64) | r.lo, r.len);
    const RouteInfo info = StateInfo(p, RibCand{r.source, r.distance, r.nhg}, true, &pass.walk);
    ++pass.counts.routes[1][static_cast<int>(info.state)];
    pass.counts.shadowed[1] += info.reason == PuntReason::kShadowed;
  }
  return true;
}

Fib::CountsPassPtr Fib::StartCounts() const {
  impl_->Settle();
  const Impl& m = *impl_;
  CountsPassPtr pass(new CountsPass);
  pass->edits = m.edits;
  for (size_t code = 1; code < pass->forwards.size() && code < m.image.nexthop.size(); ++code) {
    pass->forwards[code] = m.image.nexthop[code].valid();
  }
  return pass;
}

Fib::CountsProgress Fib::CountStep(CountsPass& pass, Clock::time_point deadline, FibCounts* out) const {
  impl_->Settle();  // applies only upserts made since the pass began, which void it
  const Impl& m = *impl_;
  if (pass.edits != m.edits) return CountsProgress::kVoid;
  if (pass.phase == CountsPass::Phase::kV4) {
    if (!m.CountV4(pass, deadline)) return CountsProgress::kMore;
    pass.phase = CountsPass::Phase::kV6Gather;
    if (Clock::now() >= deadline) return CountsProgress::kMore;
  }
  if (!m.CountV6(pass, deadline)) return CountsProgress::kMore;
  FibCounts& c = pass.counts;
  c.candidates = m.rib.candidates();
  c.neighbors = m.resolver.neighbors().size();
  c.slots_used = m.resolver.slots_used();
  c.commits = m.commits;
  *out = c;
  return CountsProgress::kDone;
}

FibCounts Fib::Counts() const {
  CountsPassPtr pass = StartCounts();
  FibCounts c;
  CountStep(*pass, Clock::time_point::max(), &c);
  return c;
}

}  // namespace fibnic
