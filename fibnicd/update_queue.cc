#include "fibnicd/update_queue.h"

#include <algorithm>

namespace fibnic {

UpdateQueue::UpdateQueue(std::function<void()> wake) : wake_(std::move(wake)) {}

void UpdateQueue::Put(const Key& key, PendingUpdate u) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++received_;
    uint64_t seq = next_seq_++;
    auto it = pending_.find(key);
    if (it != pending_.end()) {
      // Keep the first arrival's position and time: latency is measured from
      // the first change the operator made, not the last.
      u.seq = it->second.seq;
      u.last_seq = seq;
      u.first_arrival = it->second.first_arrival;
      it->second = std::move(u);
      ++coalesced_;
      return;
    }
    wake = pending_.empty() || pending_.size() + 1 == wake_threshold_;
    u.seq = u.last_seq = seq;
    u.first_arrival = std::chrono::steady_clock::now();
    pending_.emplace(key, std::move(u));
    order_.push_back(key);
    max_depth_ = std::max(max_depth_, pending_.size());
  }
  if (wake && wake_) wake_();
}

void UpdateQueue::set_wake_threshold(size_t depth) {
  std::lock_guard<std::mutex> lock(mu_);
  wake_threshold_ = depth;
}

void UpdateQueue::UpsertRoute(const Route& route) {
  PendingUpdate u;
  u.kind = PendingUpdate::Kind::kUpsertRoute;
  u.route = route;
  Put(Key{0, route.source, route.prefix}, std::move(u));
}

void UpdateQueue::DeleteRoute(const Prefix& prefix, RouteSource source) {
  PendingUpdate u;
  u.kind = PendingUpdate::Kind::kDeleteRoute;
  u.route.prefix = prefix;
  u.route.source = source;
  Put(Key{0, source, prefix}, std::move(u));
}

void UpdateQueue::UpsertNeighbor(const Neighbor& n) {
  PendingUpdate u;
  u.kind = PendingUpdate::Kind::kUpsertNeighbor;
  u.neighbor = n;
  Put(Key{1, RouteSource::kStatic, *Prefix::Make(n.addr, FamilyBits(n.addr.family())), n.port}, std::move(u));
}

void UpdateQueue::DeleteNeighbor(const IpAddr& addr, PortId port) {
  PendingUpdate u;
  u.kind = PendingUpdate::Kind::kDeleteNeighbor;
  u.neighbor.addr = addr;
  u.neighbor.port = port;
  Put(Key{1, RouteSource::kStatic, *Prefix::Make(addr, FamilyBits(addr.family())), port}, std::move(u));
}

UpdateBatch UpdateQueue::Take(size_t max) {
  UpdateBatch b;
  std::lock_guard<std::mutex> lock(mu_);
  b.updates.reserve(std::min(max, order_.size()));
  // until: the latest arrival among the values taken. A pending key that
  // first arrived before it must come too, or the batch would be a state
  // that never existed.
  uint64_t until = 0;
  while (!order_.empty()) {
    auto it = pending_.find(order_.front());
    if (b.updates.size() >= max && (b.updates.empty() || it->second.seq > until)) break;
    order_.pop_front();
    if (b.updates.empty()) b.oldest = it->second.first_arrival;
    until = std::max(until, it->second.last_seq);
    b.updates.push_back(std::move(it->second));
    pending_.erase(it);
  }
  // A drained queue keeps the bucket array of its deepest moment (8 B per
  // pending key: 8-16 MB after a full table arrived faster than it was
  // applied); unordered_map never shrinks it by itself.
  if (pending_.empty() && pending_.bucket_count() > kKeepBuckets) {
    decltype(pending_)().swap(pending_);
    std::deque<Key>().swap(order_);
  }
  return b;
}

size_t UpdateQueue::depth() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_.size();
}

std::optional<std::chrono::steady_clock::time_point> UpdateQueue::OldestArrival() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (order_.empty()) return std::nullopt;
  return pending_.at(order_.front()).first_arrival;
}

uint64_t UpdateQueue::OldestSeq() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (order_.empty()) return UINT64_MAX;
  return pending_.at(order_.front()).seq;
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

}  // namespace fibnic
