// Route changes, Solve() and per-route states of tcam6::Optimizer; the DP
// itself is in tcam6_dp.cc.
#include "fib/tcam6/tcam6_optimizer.h"

#include <algorithm>
#include <optional>
#include <tuple>

namespace fibnic::tcam6 {

namespace {

// What a node's own region does for its governing route (Node::contrib()).
enum Contrib { kNoContrib = 0, kAnswered = 1, kUnanswered = 2, kMixedRegion = 3 };

// Scratch vectors may keep this many elements between Solve() calls.
constexpr size_t kKeptScratch = 4096;

// RouteRec::flags
constexpr uint8_t kLive = 1;
constexpr uint8_t kCovered = 2;
constexpr uint8_t kTouched = 4;
constexpr uint8_t kSettled = 8;  // has been through a Solve()

uint64_t Hi(const Prefix& p) { return static_cast<uint64_t>(p.addr().v6() >> 64); }

bool EntryLess(const OptEntry& a, const OptEntry& b) {
  return std::tie(a.value, a.len, a.code) < std::tie(b.value, b.len, b.code);
}

}  // namespace

// The code of the first entry of `es` on n's prefix.
std::optional<uint8_t> Optimizer::KeptCode(const std::vector<OptEntry>& es, const Node& n) {
  for (const auto& e : es) {
    if ((e.value & Mask64(e.len)) == n.value && e.len == n.len) return e.code;
  }
  return std::nullopt;
}

// The code of the last answer's entry at n, or -1 (entries_ is sorted and
// has at most one entry per prefix).
int Optimizer::EntryCode(const Node& n) const {
  const auto it = std::lower_bound(entries_.begin(), entries_.end(), OptEntry{n.value, n.len, 0}, EntryLess);
  return it != entries_.end() && it->value == n.value && it->len == n.len ? it->code : -1;
}

// Whether routes longer than /64 remain inside the /64 `hi`.
bool Optimizer::HasLong(uint64_t hi) const {
  const auto it = long_.lower_bound(Prefix::V6(U128{hi} << 64, 65));
  return it != long_.end() && Hi(it->first) == hi;
}

Optimizer::Optimizer(uint32_t budget, uint32_t light_nodes)
    : budget_(budget), light_nodes_(light_nodes), acc_(size_t{budget} + 1) {}
Optimizer::~Optimizer() = default;

void Optimizer::MarkPath() {
  for (int v : path_) Stale(v);
}

void Optimizer::Stale(int v) {
  trie_[v].Set(Node::kDirty, true);
  if (!fresh_.empty()) fresh_.erase(v);
}

bool Optimizer::Pending(int v) const { return trie_[v].Has(Node::kDirty) && !fresh_.contains(v); }

void Optimizer::CountCode(uint8_t code, int delta) {
  if (code == 0) return;
  const uint32_t before = code_count_[code];
  code_count_[code] += delta;
  if ((before == 0) != (code_count_[code] == 0)) colours_stale_ = true;
}

int Optimizer::NewRoute(uint8_t code, PuntReason reason, uint32_t weight) {
  int id;
  if (route_free_.empty()) {
    id = static_cast<int>(routes_.size());
    routes_.emplace_back();
  } else {
    id = route_free_.back();
    route_free_.pop_back();
  }
  RouteRec& r = routes_[id];
  r = RouteRec{};
  r.code = code;
  r.reason = reason;
  r.weight = weight;
  r.flags = kLive;
  weight_sum_ += weight;
  ++route_count_;
  CountCode(code, +1);
  Touch(id);
  return id;
}

// The route of the nearest route node above path_[i], or -1.
int Optimizer::GovAbove(size_t i) const {
  while (i-- > 0) {
    if (trie_[path_[i]].route >= 0) return trie_[path_[i]].route;
  }
  return -1;
}

// v's region (v and the nodes below it up to the next route nodes) changes
// governor or colour: take back what it credited to `credited_to`, give it
// the new colour, and leave it for Solve() to redo.
void Optimizer::Regovern(int v, int credited_to, uint8_t gc) {
  std::vector<int> stack{v};
  while (!stack.empty()) {
    const int u = stack.back();
    stack.pop_back();
    Node& n = trie_[u];
    if (n.contrib() != kNoContrib) {
      Credit(credited_to, n.contrib(), -1);
      n.set_contrib(kNoContrib);
    }
    n.gc = gc;
    Stale(u);
    for (int c : n.child) {
      if (c >= 0 && trie_[c].route < 0) stack.push_back(c);
    }
  }
}

// A node leaves the trie: its credit goes, and its table.
void Optimizer::Retire(int v) {
  Node& n = trie_[v];
  if (n.contrib() != kNoContrib) {
    const size_t at = static_cast<size_t>(std::find(path_.begin(), path_.end(), v) - path_.begin());
    Credit(GovAbove(at), n.contrib(), -1);
    n.set_contrib(kNoContrib);
  }
  FreeTable(v);
  pins_.erase(v);
  fresh_.erase(v);
}

bool Optimizer::Upsert(const Prefix& p, uint8_t code, PuntReason reason, uint32_t weight) {
  if (p.family() != Family::kV6) return false;
  const LongRoute want{code, reason, weight};
  if (p.len() > 64) {
    auto [it, inserted] = long_.try_emplace(p, want);
    if (!inserted) {
      if (it->second == want) return false;
      CountCode(it->second.code, -1);
      it->second = want;
    }
    CountCode(code, +1);
    finger_.clear();
    const int w = trie_.Insert(Hi(p), 64, path_);
    trie_[w].Set(Node::kLong, true);
    MarkPath();
    return true;
  }
  const int found = trie_.FindFrom(Hi(p), p.len(), finger_);
  if (found >= 0 && trie_[found].route >= 0) {
    const int id = trie_[found].route;
    RouteRec& r = routes_[id];
    if (r.code == code && r.reason == reason && r.weight == weight) return false;
    // Every dirty node's ancestors are dirty, so marking can stop at the
    // first dirty one: routes recoloured together share most of their path.
    // Not in an unfinished solve: a node above may have been redone since.
    for (auto it = finger_.rbegin(); it != finger_.rend() && (solving_ || !trie_[*it].Has(Node::kDirty)); ++it) {
      Stale(*it);
    }
    Uncredit(id);
    CountCode(r.code, -1);
    CountCode(code, +1);
    const bool recolour = r.code != code;
    weight_sum_ += uint64_t{weight} - r.weight;
    r.code = code;
    r.reason = reason;
    r.weight = weight;
    if (recolour) Regovern(found, id, code);
    return true;
  }
  finger_.clear();
  const int v = trie_.Insert(Hi(p), p.len(), path_);
  MarkPath();
  const int id = NewRoute(code, reason, weight);
  Regovern(v, GovAbove(path_.size() - 1), code);
  trie_[v].route = id;
  return true;
}

bool Optimizer::Erase(const Prefix& p) {
  if (p.family() != Family::kV6) return false;
  finger_.clear();
  if (p.len() > 64) {
    auto it = long_.find(p);
    if (it == long_.end()) return false;
    CountCode(it->second.code, -1);
    long_.erase(it);
    const int w = trie_.Find(Hi(p), 64, &path_);
    trie_[w].Set(Node::kLong, HasLong(Hi(p)));
    MarkPath();
    trie_.Prune(path_, [this](int u) { Retire(u); });
    return true;
  }
  const int v = trie_.Find(Hi(p), p.len(), &path_);
  if (v < 0 || trie_[v].route < 0) return false;
  MarkPath();
  const int id = trie_[v].route;
  Uncredit(id);
  CountCode(routes_[id].code, -1);
  const uint8_t gc_above = path_.size() > 1 ? trie_[path_[path_.size() - 2]].gc : 0;
  Regovern(v, id, gc_above);
  trie_[v].route = -1;
  weight_sum_ -= routes_[id].weight;
  routes_[id].flags = 0;
  route_free_.push_back(id);
  --route_count_;
  trie_.Prune(path_, [this](int u) { Retire(u); });
  return true;
}

// Colours are the codes in use, ascending (so ties break the same way however
// the routes arrived). A change of that set changes every table.
void Optimizer::RemapColours() {
  colours_stale_ = false;
  colour_of_.fill(0);
  codes_.assign(1, 0);
  for (int code = 1; code < 256; ++code) {
    if (code_count_[code] == 0) continue;
    colour_of_[code] = static_cast<uint8_t>(codes_.size());
    codes_.push_back(static_cast<uint8_t>(code));
  }
  ncol_ = static_cast<int>(codes_.size());
  MarkAllDirty();
}

// Everything is redone (colours or cell width changed).
void Optimizer::MarkAllDirty() {
  fresh_.clear();
  std::vector<int> stack{0};
  while (!stack.empty()) {
    Node& n = trie_[stack.back()];
    stack.pop_back();
    n.Set(Node::kDirty, true);
    for (int c : n.child) {
      if (c >= 0) stack.push_back(c);
    }
  }
}

// The TCAM's current entries give the DP its tie-break bonus: nodes whose
// kept entry changes are redone.
void Optimizer::UpdateKept(const std::vector<OptEntry>& prefer) {
  auto apply = [&](const OptEntry& e) {
    const int v = trie_.Find(e.value, e.len, &path_);
    if (v < 0) return;
    Node& n = trie_[v];
    // A node flagged kept has its code in prefer_ (nodes made since are not).
    const auto was = n.Has(Node::kHasKept) ? KeptCode(prefer_, n) : std::nullopt;
    const auto now = KeptCode(prefer, n);
    if (was == now) return;
    n.Set(Node::kHasKept, now.has_value());
    MarkPath();
  };
  for (const auto& e : prefer_) apply(e);
  for (const auto& e : prefer) apply(e);
  prefer_ = prefer;
}

const std::vector<OptEntry>& Optimizer::Solve(const std::vector<OptEntry>& prefer) {
  Solve(prefer, Clock::time_point::max());
  return entries_;
}

bool Optimizer::Solve(const std::vector<OptEntry>& prefer, Clock::time_point deadline) {
  if (colours_stale_) RemapColours();
  // Every DP value is at most the total weight (scaled by budget + 1, plus
  // the reuse bonus): narrow cells while that fits in 30 bits.
  const bool narrow =
      weight_sum_ < (uint64_t{1} << 30) && (weight_sum_ + 1) * (uint64_t{budget_} + 1) + budget_ < (uint64_t{1} << 30);
  if (narrow != narrow_) {
    narrow_ = narrow;
    tables_.clear();
    pins_.clear();
    MarkAllDirty();
  }
  // A solve resumed after its deadline keeps the preference it began with
  // (changing it would redo the tables already done for a tie-break); given
  // again, it flags the nodes made since on its prefixes.
  if (solving_) {
    const std::vector<OptEntry> kept = prefer_;
    UpdateKept(kept);
  } else {
    UpdateKept(prefer);
  }
  solving_ = true;
  deadline_ = deadline;
  computed_ = 0;
  if (Pending(0) && !Refresh(0)) return false;
  solving_ = false;
  fresh_.clear();

  std::vector<OptEntry> next;
  arena_top_ = 0;
  const TableRef root = TableOf(0);
  const int64_t best = F(root, 0, 0, root.len);
  uint32_t k = 0;
  while (F(root, 0, 0, k) < best) ++k;
  arena_top_ = 0;
  Descend(0, 0, 0, k, next);
  Repin();
  std::sort(next.begin(), next.end(), EntryLess);

  // The entries that came or went; then the new answer is the one nodes see.
  std::vector<OptEntry> changed;
  std::set_symmetric_difference(entries_.begin(), entries_.end(), next.begin(), next.end(),
                                std::back_inserter(changed), EntryLess);
  entries_ = std::move(next);
  if (trie_[0].Has(Node::kDirty)) Settle(0, -1, 0);
  for (const auto& e : changed) WalkColours(e);
  FinishTouched();
  ShrinkScratch();
  return true;
}

// Top-down over the dirty nodes: their own regions' contributions under the
// new entries; clears the dirty marks.
void Optimizer::Settle(int v, int gov, uint8_t code) {
  Node& n = trie_[v];
  if (const int e = EntryCode(n); e >= 0) code = static_cast<uint8_t>(e);
  if (n.route >= 0) gov = n.route;
  Recontrib(v, gov, code);
  n.Set(Node::kDirty, false);
  for (int c : n.child) {
    if (c >= 0 && trie_[c].Has(Node::kDirty)) Settle(c, gov, code);
  }
}

// An entry came or went: the nodes whose answering entry it is (or was) may
// answer differently now.
void Optimizer::WalkColours(const OptEntry& e) {
  const int t = trie_.Topmost(e.value, e.len, &path_);
  if (t < 0) return;
  int gov = -1;
  uint8_t code = 0;
  for (int u : path_) {
    if (u == t) break;
    if (trie_[u].route >= 0) gov = trie_[u].route;
    if (const int e = EntryCode(trie_[u]); e >= 0) code = static_cast<uint8_t>(e);
  }
  struct Item {
    int v, gov;
    uint8_t code;
  };
  std::vector<Item> stack{{t, gov, code}};
  while (!stack.empty()) {
    Item it = stack.back();
    stack.pop_back();
    const Node& n = trie_[it.v];
    if (const int e = EntryCode(n); e >= 0) it.code = static_cast<uint8_t>(e);
    if (n.route >= 0) it.gov = n.route;
    Recontrib(it.v, it.gov, it.code);
    for (int c : n.child) {
      // Below another entry nothing changed (or that entry is walked itself).
      if (c >= 0 && EntryCode(trie_[c]) < 0) stack.push_back({c, it.gov, it.code});
    }
  }
}

void Optimizer::Recontrib(int v, int gov, uint8_t code) {
  Node& n = trie_[v];
  int now = kNoContrib;
  if (n.Has(Node::kOwn) && n.gc != 0) {
    now = n.Has(Node::kMixed) ? kMixedRegion : code == n.gc ? kAnswered : kUnanswered;
  }
  if (now == n.contrib()) return;
  if (n.contrib() != kNoContrib) Credit(gov, n.contrib(), -1);
  if (now != kNoContrib) Credit(gov, now, +1);
  n.set_contrib(now);
}

void Optimizer::Credit(int route, int contrib, int delta) {
  routes_[route].count[contrib - 1] += delta;
  Touch(route);
}

void Optimizer::Touch(int route) {
  RouteRec& r = routes_[route];
  if (r.flags & kTouched) return;
  r.flags |= kTouched;
  touched_.push_back(route);
}

// Takes a route out of the covered totals until FinishTouched() looks again.
void Optimizer::Uncredit(int route) {
  RouteRec& r = routes_[route];
  if (r.flags & kCovered) {
    covered_weight_ -= r.weight;
    --covered_routes_;
    r.flags &= ~kCovered;
  }
  Touch(route);
}

void Optimizer::FinishTouched() {
  for (int id : touched_) {
    RouteRec& r = routes_[id];
    r.flags &= ~kTouched;
    if (!(r.flags & kLive)) continue;
    r.flags |= kSettled;
    const bool covered = r.code != 0 && r.count[kUnanswered - 1] == 0 && r.count[kAnswered - 1] > 0;
    if (covered == bool(r.flags & kCovered)) continue;
    r.flags ^= kCovered;
    if (covered) {
      covered_weight_ += r.weight;
      ++covered_routes_;
    } else {
      covered_weight_ -= r.weight;
      --covered_routes_;
    }
  }
  touched_.clear();
}

// A full compile touches every route and reads many light tables; the
// changes after it need far less scratch, so what a Solve leaves unused goes.
void Optimizer::ShrinkScratch() {
  if (arena_.capacity() > 2 * arena_top_) {
    arena_.resize(arena_top_);
    arena_.shrink_to_fit();
  }
  if (touched_.capacity() > kKeptScratch) touched_ = std::vector<int32_t>();
}

OptRouteState Optimizer::StateOf(const Prefix& p, std::vector<int>* walk) const {
  using S = OffloadState;
  using R = PuntReason;
  if (p.family() != Family::kV6) return {};
  if (p.len() > 64) {
    auto it = long_.find(p);
    if (it == long_.end()) return {};
    if (it->second.code == 0) return {S::kPunted, it->second.reason};
    std::vector<int> path;
    const int w = trie_.Find(Hi(p), 64, &path);
    const Node& n = trie_[w];
    if (n.Has(Node::kMixed)) return {S::kPunted, R::kLongerThan64};
    uint8_t code = 0;
    for (int u : path) {
      if (const int e = EntryCode(trie_[u]); e >= 0) code = static_cast<uint8_t>(e);
    }
    return code == n.gc ? OptRouteState{S::kOffloaded, R::kNone} : OptRouteState{S::kPunted, R::kTcamFull};
  }
  const int v = walk ? trie_.FindFrom(Hi(p), p.len(), *walk) : trie_.Find(Hi(p), p.len());
  if (v < 0 || trie_[v].route < 0) return {};
  const RouteRec& r = routes_[trie_[v].route];
  if (!(r.flags & kSettled)) return {};
  if (r.code == 0) return {S::kPunted, r.reason};
  const uint32_t answered = r.count[kAnswered - 1], unanswered = r.count[kUnanswered - 1];
  const bool mixed = r.count[kMixedRegion - 1] > 0;
  if (answered == 0 && unanswered == 0) return {S::kPunted, mixed ? R::kLongerThan64 : R::kShadowed};
  if (unanswered > 0) return {answered > 0 ? S::kPartial : S::kPunted, R::kTcamFull};
  // Everything the hardware can answer is answered; a mixed /64 inside still
  // punts (partial), but no entry could do better.
  return mixed ? OptRouteState{S::kPartial, R::kLongerThan64} : OptRouteState{S::kOffloaded, R::kNone};
}

// What malloc takes for a block of `bytes` (glibc: an 8-byte header, 16-byte
// granularity, 32 at least): per-node containers pay it once per element.
size_t Optimizer::HeapBlock(size_t bytes) { return std::max<size_t>(32, (bytes + 8 + 15) / 16 * 16); }

Optimizer::Memory Optimizer::memory() const {
  Memory m;
  m.trie = trie_.bytes() + (path_.capacity() + finger_.capacity()) * sizeof(int);
  // std::map nodes: the value plus three pointers and the colour.
  m.routes = routes_.size() * sizeof(RouteRec) + route_free_.capacity() * sizeof(int32_t) +
             long_.size() * HeapBlock(sizeof(std::pair<const Prefix, LongRoute>) + 4 * sizeof(void*)) +
             touched_.capacity() * sizeof(int32_t);
  m.tables = (full_.capacity() + g_.capacity() + best1_.capacity() + best2_.capacity()) *
                 sizeof(int64_t) +
             (arena_.capacity() + arg1_.capacity() + acc_.capacity()) * sizeof(int32_t);
  for (const auto& [v, t] : tables_) m.tables += HeapBlock(t.bytes());
  // Hash containers: a node (next pointer, value) per element plus the
  // bucket array.
  auto hashed = [](const auto& c, size_t value) {
    return c.size() * HeapBlock(value + sizeof(void*)) + c.bucket_count() * sizeof(void*);
  };
  m.tables += hashed(tables_, sizeof(std::pair<const int, PackedTable>)) + hashed(descend_reads_, sizeof(int)) +
              hashed(pins_, sizeof(int));
  return m;
}

}  // namespace fibnic::tcam6
