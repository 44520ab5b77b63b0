// The Fib's front: routes into the RIB and on to the compilers (the IPv4 bulk
// queue), neighbours and port MACs. Commit() is in fib_commit.cc, the queries
// in fib_queries.cc, warm-start adoption in fib_adopt.cc (file map: fib_impl.h).
#include "fib/fib.h"

#include <algorithm>

#include "fib/fib_impl.h"

namespace fibnic {

void Fib::Impl::UpsertRoute(const Route& route) {
  ++edits;
  // Canonical paths (sorted, unique, never empty); copied only when the
  // caller's are not already canonical, the common case in a table load.
  const std::vector<NextHop>* paths = &route.paths;
  std::vector<NextHop> fixed;
  if (route.paths.empty() || !std::is_sorted(route.paths.begin(), route.paths.end()) ||
      std::adjacent_find(route.paths.begin(), route.paths.end()) != route.paths.end()) {
    fixed = route.paths;
    std::sort(fixed.begin(), fixed.end());
    fixed.erase(std::unique(fixed.begin(), fixed.end()), fixed.end());
    // A route without paths is still a route: the host decides, the hardware punts.
    if (fixed.empty()) fixed.push_back(NextHop::ToHost());
    paths = &fixed;
  }
  const NhgId g = nht.Acquire(*paths);
  const RibCand cand{route.source, route.distance, g};
  if (route.prefix.family() == Family::kV4) {
    pending_v4.push_back({route.prefix.addr().v4(), static_cast<uint8_t>(route.prefix.len()), false, cand});
    return;
  }
  Apply(route.prefix, rib.Upsert(route.prefix, cand));
  heap.Worked(1);
}

void Fib::Impl::DeleteRoute(const Prefix& prefix, RouteSource source) {
  ++edits;
  if (prefix.family() == Family::kV4) {
    pending_v4.push_back({prefix.addr().v4(), static_cast<uint8_t>(prefix.len()), true, RibCand{source, 0, kNoGroup}});
    return;
  }
  Settle();
  Apply(prefix, rib.Erase(prefix, source));
  heap.Worked(1);
}

// A large batch (a table load or flush) goes into the RIB with its slots
// prefetched a few routes ahead, in arrival order (address order for a
// sorted table, so the /24 cells are painted sequentially). Same end state as
// one by one.
void Fib::Impl::Settle() {
  if (pending_v4.empty()) return;
  constexpr size_t kAhead = 16;  // routes between a slot's prefetch and its use
  const size_t n = pending_v4.size();
  rib.ReserveV4(static_cast<size_t>(
      std::count_if(pending_v4.begin(), pending_v4.end(), [](const PendingV4& it) { return !it.erase; })));
  for (size_t k = 0; k < n; ++k) {
    if (k + kAhead < n) rib.PrefetchV4(pending_v4[k + kAhead].addr, pending_v4[k + kAhead].len);
    const auto& it = pending_v4[k];
    ApplyV4(it.addr, it.len, it.erase ? rib.EraseV4(it.addr, it.len, it.cand.source) : rib.UpsertV4(it.addr, it.len, it.cand));
  }
  heap.Worked(n);
  if (n > HeapTrim::kKeepScratch) {
    std::vector<PendingV4>().swap(pending_v4);
    heap.Request();
  } else {
    pending_v4.clear();  // a small queue keeps its capacity for the next batch
  }
}

// A best-route change reaches the compilers, then the dropped candidate's
// group reference is released (after no /24 can refer to it any more).
void Fib::Impl::Apply(const Prefix& p, const RibChange& ch) {
  if (p.family() == Family::kV4) {
    ApplyV4(p.addr().v4(), static_cast<uint8_t>(p.len()), ch);
    return;
  }
  if (ch.best_changed()) tcam6.BestChanged(p, ch.old_best, ch.new_best);
  if (ch.dropped != kNoGroup) nht.Release(ch.dropped);
}

void Fib::Impl::ApplyV4(uint32_t a, uint8_t len, const RibChange& ch) {
  if (ch.best_changed()) PaintV4(a, len, ch.new_best);
  if (ch.dropped != kNoGroup) nht.Release(ch.dropped);
}

void Fib::Impl::PaintV4(uint32_t a, uint8_t len, NhgId best) {
  if (len > 24) {
    if (best != kNoGroup) {
      sram.SetLonger(a, len, best);
    } else {
      sram.RemoveLonger(a, len);
    }
    return;
  }
  if (best != kNoGroup) {
    sram.SetShort(a, len, best);
    return;
  }
  if (auto parent = rib.ParentV4(a, len)) {
    sram.RemoveShort(a, len, parent->second.nhg, parent->first);
  } else {
    sram.RemoveShort(a, len, kNoGroup, -1);
  }
}

// --- Fib ------------------------------------------------------------------------

Fib::Fib(const FibConfig& config) : impl_(std::make_unique<Impl>(config)) {}
Fib::~Fib() = default;

const FibConfig& Fib::config() const { return impl_->cfg; }
void Fib::UpsertRoute(const Route& route) { impl_->UpsertRoute(route); }
void Fib::DeleteRoute(const Prefix& prefix, RouteSource source) { impl_->DeleteRoute(prefix, source); }
void Fib::UpsertNeighbor(const Neighbor& n) { impl_->UpsertNeighbor(n); }
void Fib::DeleteNeighbor(const IpAddr& addr, PortId port) { impl_->DeleteNeighbor(addr, port); }
RibSink& Fib::sink() { return *impl_; }
std::vector<DeviceDelta> Fib::Commit() {
  ++impl_->edits;
  return impl_->Commit();
}
std::vector<DeviceDelta> Fib::CommitSafe() {
  ++impl_->edits;
  return impl_->CommitSafe();
}
std::vector<DeviceDelta> Fib::CommitBest() {
  ++impl_->edits;
  return impl_->CommitBest();
}
std::vector<DeviceDelta> Fib::CommitBest(std::chrono::steady_clock::time_point deadline) {
  ++impl_->edits;
  return impl_->CommitBest(deadline);
}
bool Fib::best_pending() const { return !impl_->tcam6.compiler().settled(); }
bool Fib::choosing() const { return impl_->tcam6.compiler().choosing(); }

void Fib::CommitWhole() {
  ++impl_->edits;
  impl_->sram.set_record(false);
  impl_->Commit();
  impl_->sram.set_record(true);
}
void Fib::TrimAfterChurn() { impl_->heap.Quiet(); }
void Fib::TrimWhenIdle() { impl_->heap.Idle(); }
DeviceAdoption Fib::AdoptDevice(const DeviceImage& device) {
  ++impl_->edits;
  return impl_->AdoptDevice(device);
}
const DeviceImage& Fib::image() const { return impl_->image; }
uint64_t Fib::commits() const { return impl_->commits; }

std::optional<std::chrono::steady_clock::time_point> Fib::NextSlotReview() const {
  return impl_->resolver.NextReview();
}

void Fib::SetPortMac(PortId port, const MacAddr& mac) {
  auto& img = impl_->image;
  if (port >= img.port_macs.size() || img.port_macs[port] == mac) return;
  ++impl_->edits;
  img.port_macs[port] = mac;
  impl_->port_macs_changed.push_back(port);
}

}  // namespace fibnic
