#include "fibnicd/update_queue.h"

#include <algorithm>

namespace fibnic {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint32_t kNoSet = UINT32_MAX;
constexpr size_t kMinSlots = 64;

}  // namespace

size_t UpdateQueue::PathsHash::operator()(const std::vector<NextHop>& v) const noexcept {
  size_t h = v.size();
  for (const NextHop& n : v) {
    h = h * 0x9E3779B97F4A7C15ull + (n.gateway ? std::hash<IpAddr>()(*n.gateway) : 0x51ed27u) * 31 + n.port;
  }
  return h;
}

UpdateQueue::UpdateQueue(std::function<void()> wake) : wake_(std::move(wake)) {}

uint32_t UpdateQueue::InternPaths(const std::vector<NextHop>& paths) {
  auto [it, inserted] = set_ids_.try_emplace(paths, kNoSet);
  if (inserted) {
    if (free_sets_.empty()) {
      it->second = static_cast<uint32_t>(sets_.size());
      sets_.emplace_back();
    } else {
      it->second = free_sets_.back();
      free_sets_.pop_back();
    }
    sets_[it->second].paths = &it->first;
  }
  ++sets_[it->second].refs;
  return it->second;
}

void UpdateQueue::ReleasePaths(uint32_t id) {
  PathSet& s = sets_[id];
  if (--s.refs != 0) return;
  set_ids_.erase(*s.paths);
  s = PathSet{};
  free_sets_.push_back(id);
}

size_t UpdateQueue::Probe(const PackedUpdate& e) const {
  const size_t mask = index_.size() - 1;
  size_t i = e.KeyHash() & mask;
  while (index_[i] != 0 && !At(index_[i] - 1).SameKey(e)) i = (i + 1) & mask;
  return i;
}

void UpdateQueue::IndexInsert(const PackedUpdate& e, uint64_t pos) {
  const size_t mask = index_.size() - 1;
  size_t i = e.KeyHash() & mask;
  while (index_[i] != 0) i = (i + 1) & mask;
  index_[i] = pos + 1;
}

void UpdateQueue::IndexGrow() {
  std::vector<uint64_t> old = std::move(index_);
  index_.assign(std::max(kMinSlots, old.size() * 2), 0);
  for (uint64_t slot : old) {
    if (slot != 0) IndexInsert(At(slot - 1), slot - 1);
  }
}

// Linear probing's backward-shift deletion: later slots of the cluster move
// up unless that would put them before their home slot.
void UpdateQueue::IndexErase(const PackedUpdate& e) {
  const size_t mask = index_.size() - 1;
  size_t hole = Probe(e);
  for (size_t j = (hole + 1) & mask; index_[j] != 0; j = (j + 1) & mask) {
    const size_t home = At(index_[j] - 1).KeyHash() & mask;
    const bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (stays) continue;
    index_[hole] = index_[j];
    hole = j;
  }
  index_[hole] = 0;
}

void UpdateQueue::Put(PackedUpdate u, const std::vector<NextHop>* paths) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++received_;
    const uint64_t seq = next_seq_++;
    if ((entries_.size() + 1) * 4 > index_.size() * 3) IndexGrow();
    const size_t slot = Probe(u);
    if (paths) u.paths = InternPaths(*paths);
    if (index_[slot] != 0) {
      // Keep the first arrival's position and time: latency is measured from
      // the first change the operator made, not the last.
      PackedUpdate& e = entries_[index_[slot] - 1 - front_pos_];
      if (e.kind == PendingUpdate::Kind::kUpsertRoute) ReleasePaths(e.paths);
      u.seq = e.seq;
      u.last_seq = seq;
      u.first_arrival = e.first_arrival;
      e = u;
      ++coalesced_;
      return;
    }
    wake = entries_.empty() || entries_.size() + 1 == wake_threshold_;
    u.seq = u.last_seq = seq;
    u.first_arrival = Clock::now().time_since_epoch().count();
    index_[slot] = front_pos_ + entries_.size() + 1;
    entries_.push_back(u);
    max_depth_ = std::max(max_depth_, entries_.size());
  }
  if (wake && wake_) wake_();
}

void UpdateQueue::set_wake_threshold(size_t depth) {
  std::lock_guard<std::mutex> lock(mu_);
  wake_threshold_ = depth;
}

void UpdateQueue::UpsertRoute(const Route& route) {
  Put(PackRoute(PendingUpdate::Kind::kUpsertRoute, route.prefix, route.source, route.distance), &route.paths);
}

void UpdateQueue::DeleteRoute(const Prefix& prefix, RouteSource source) {
  Put(PackRoute(PendingUpdate::Kind::kDeleteRoute, prefix, source, 1), nullptr);
}

void UpdateQueue::UpsertNeighbor(const Neighbor& n) {
  Put(PackNeighbor(PendingUpdate::Kind::kUpsertNeighbor, n.addr, n.port, n.mac, n.state), nullptr);
}

void UpdateQueue::DeleteNeighbor(const IpAddr& addr, PortId port) {
  Put(PackNeighbor(PendingUpdate::Kind::kDeleteNeighbor, addr, port, MacAddr{}, NeighState::kReachable), nullptr);
}

UpdateBatch UpdateQueue::Take(size_t max) {
  UpdateBatch b;
  std::deque<PackedUpdate>& out = b.updates.entries_;
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<uint32_t> local;  // by the queue's set id: its index in the batch
  // until: the latest arrival among the values taken. A pending key that
  // first arrived before it must come too, or the batch would be a state
  // that never existed.
  uint64_t until = 0;
  while (!entries_.empty()) {
    const PackedUpdate& e = entries_.front();
    if (out.size() >= max && (out.empty() || e.seq > until)) break;
    IndexErase(e);
    until = std::max(until, e.last_seq);
    out.push_back(e);
    if (e.kind == PendingUpdate::Kind::kUpsertRoute) {
      if (local.size() <= e.paths) local.resize(sets_.size(), kNoSet);
      uint32_t& mine = local[e.paths];
      if (mine == kNoSet) {
        mine = static_cast<uint32_t>(b.updates.paths_.size());
        b.updates.paths_.push_back(*sets_[e.paths].paths);
      }
      ReleasePaths(e.paths);
      out.back().paths = mine;
    }
    entries_.pop_front();
    ++front_pos_;
  }
  if (!out.empty()) b.oldest = b.updates.first_arrival(0);
  // A drained queue gives back the index of its deepest moment (8-16 MB
  // after a full table arrived faster than it was applied).
  if (entries_.empty() && index_.size() > kKeepSlots) {
    std::vector<uint64_t>().swap(index_);
    std::deque<PackedUpdate>().swap(entries_);
  }
  return b;
}

size_t UpdateQueue::depth() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

std::optional<std::chrono::steady_clock::time_point> UpdateQueue::OldestArrival() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (entries_.empty()) return std::nullopt;
  return Clock::time_point(Clock::duration(entries_.front().first_arrival));
}

uint64_t UpdateQueue::OldestSeq() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (entries_.empty()) return UINT64_MAX;
  return entries_.front().seq;
}

uint64_t UpdateQueue::NextSeq() const {
  std::lock_guard<std::mutex> lock(mu_);
  return next_seq_;
}

uint64_t UpdateQueue::received() const {
  std::lock_guard<std::mutex> lock(mu_);
  return received_;
}

uint64_t UpdateQueue::coalesced() const {
  std::lock_guard<std::mutex> lock(mu_);
  return coalesced_;
}

size_t UpdateQueue::max_depth() const {
  std::lock_guard<std::mutex> lock(mu_);
  return max_depth_;
}

size_t UpdateQueue::path_sets() const {
  std::lock_guard<std::mutex> lock(mu_);
  return set_ids_.size();
}

size_t UpdateQueue::memory() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t bytes = entries_.size() * sizeof(PackedUpdate) + index_.capacity() * sizeof(uint64_t) +
                 sets_.capacity() * sizeof(PathSet);
  for (const auto& [paths, id] : set_ids_) bytes += paths.capacity() * sizeof(NextHop) + 64;  // + the node
  return bytes;
}

}  // namespace fibnic
