// Chooses what the IPv6 TCAM holds: at most `budget` prefix entries over the
// first 64 bits of the destination that never misforward and fully offload the
// greatest total weight of routes (docs/tcam6.md has the model and the proof).
//
// Method: a tree DP over the compressed binary trie of the route prefixes
// (truncated to /64) — the candidate entry positions are the trie's nodes
// (route prefixes and their branching points). Entries are nested prefixes
// ordered longest first, so the TCAM behaves as an LPM over the chosen
// entries; an entry's "colour" is a next-hop code or punt. The DP is exact for
// that entry model: no set of <= budget entries placed on trie nodes offloads
// more weight. Code-0 routes and non-uniform /64s are holes the DP must keep
// punting; ties prefer entries already in the TCAM (fewer writes), then fewer
// entries, then lower codes.
//
// Incremental: the trie and the DP tables of large subtrees persist across
// Solve() calls (packed; small subtrees' tables are recomputed when read, and
// those the last reconstruction read stay pinned). A route change marks the
// path from its node to the root (and, when the route's colour changes, the
// nodes it governs); Solve() recomputes only those tables, so a one-route
// change costs O(depth · kLightNodes · C² · budget²) instead of a full
// recompute. The answer is exactly what a fresh Optimizer with the same routes
// would give for the same `prefer` (tcam6_incremental_test checks it).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/ip.h"
#include "fib/offload_state.h"
#include "fib/tcam6/tcam6_table_pack.h"
#include "fib/tcam6/tcam6_trie.h"

namespace fibnic::tcam6 {

// A prefix entry over the first 64 bits: len <= 64, value has no host bits.
struct OptEntry {
  uint64_t value = 0;
  uint8_t len = 0;
  uint8_t code = 0;  // 0 = punt hole
  bool operator==(const OptEntry&) const = default;
};

struct OptRouteState {
  OffloadState state = OffloadState::kPunted;
  PuntReason reason = PuntReason::kNone;  // why not (fully) offloaded
};

class Optimizer {
 public:
  // Subtrees of at most this many nodes ("light") keep no DP table: it is
  // recomputed from the node annotations when a parent needs it. Most nodes
  // are light, so this is what keeps the real table's DP small; a change
  // recomputes at most about (trie depth) such subtrees.
  static constexpr uint32_t kLightNodes = 128;

  // light_nodes: the light-subtree bound (< 255, Node::size's cap); other
  // values than kLightNodes are for tests (the answers do not depend on it).
  explicit Optimizer(uint32_t budget, uint32_t light_nodes = kLightNodes);
  ~Optimizer();
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // An IPv6 route, any length 0..128 (code 0: its addresses must punt, for
  // `reason`). False when nothing changed (IPv4, same route, unknown prefix).
  // Many changes to existing routes are cheapest in ascending prefix order:
  // each walk starts where the previous one ended.
  bool Upsert(const Prefix& p, uint8_t code, PuntReason reason, uint32_t weight);
  bool Erase(const Prefix& p);

  // The best entries for the routes as they are now, sorted by (value, len).
  // `prefer`: what the TCAM holds now; among optimal answers, the one reusing
  // most of it wins.
  const std::vector<OptEntry>& Solve(const std::vector<OptEntry>& prefer);
  // Solve() in steps: false when `deadline` passed while the DP tables were
  // still being redone (after at least one, so every step gets on). Changes
  // may come between steps; the next step goes on from the tables done so
  // far and those changes, and the step that returns true gives exactly what
  // Solve() would (entries()). Everything else (states, covered counts,
  // entries()) stays as of the last finished solve until then.
  using Clock = std::chrono::steady_clock;
  bool Solve(const std::vector<OptEntry>& prefer, Clock::time_point deadline);
  const std::vector<OptEntry>& entries() const { return entries_; }

  // As of the last Solve(). Unknown prefixes: punted, kNone. `walk`: for
  // many questions in ascending prefix order, the trie path of the previous
  // one (Trie::FindFrom); each then walks from its neighbour, not the root.
  OptRouteState StateOf(const Prefix& p, std::vector<int>* walk = nullptr) const;
  // Routes (<= /64, code != 0) whose every address outside mixed /64s is
  // answered in hardware — the objective — and their total weight.
  uint64_t covered_weight() const { return covered_weight_; }
  uint64_t covered_routes() const { return covered_routes_; }
  size_t route_count() const { return route_count_ + long_.size(); }

  struct Memory {
    size_t trie = 0;    // nodes
    size_t routes = 0;  // route records and routes longer than /64
    size_t tables = 0;  // stored DP tables and scratch
    size_t total() const { return trie + routes + tables; }
  };
  Memory memory() const;

 private:
  struct RouteRec {
    uint32_t weight = 1;
    uint8_t code = 0;
    PuntReason reason = PuntReason::kNone;
    uint8_t flags = 0;  // kLive, kCovered, kTouched, kSettled
    uint32_t count[3] = {0, 0, 0};  // own-region nodes by contribution (answered, unanswered, mixed)
  };
  struct LongRoute {
    uint8_t code = 0;
    PuntReason reason = PuntReason::kNone;
    uint32_t weight = 1;
    bool operator==(const LongRoute&) const = default;
  };
  // A node's table as the DP reads it: none (no node: value 0) or in the
  // arena (by offset: the arena grows while references are held). Cells are
  // int32 while every value fits (narrow_), else int64 kept as two int32
  // words; k runs 0..len, beyond it nothing improves.
  struct TableRef {
    enum Kind : uint8_t { kAbsent, kArena };
    Kind kind = kAbsent;
    size_t off = 0;  // in words
    uint32_t len = 0;
    uint8_t vars = 1;
    uint32_t used() const { return kind == kAbsent ? 0 : len; }
  };

  // Changes.
  void MarkPath();
  void Stale(int v);           // v's table and annotations are to be redone
  bool Pending(int v) const;   // stale and not redone by an unfinished solve
  void CountCode(uint8_t code, int delta);
  int NewRoute(uint8_t code, PuntReason reason, uint32_t weight);
  void Regovern(int v, int credited_to, uint8_t gc);
  void Retire(int v);
  int GovAbove(size_t path_index) const;

  // DP.
  void RemapColours();
  void UpdateKept(const std::vector<OptEntry>& prefer);
  bool Refresh(int v);
  bool LongMixed(const Node& n) const;
  TableRef TableOf(int v);
  TableRef ReadTable(int v);
  TableRef Place(size_t at, uint32_t len, uint8_t vars);
  size_t Rows(uint8_t vars) const { return size_t(vars) * ncol_; }
  void ComputeNode(const Node& n, const TableRef& a, const TableRef& b, uint32_t& len, uint8_t& vars);
  const int32_t* Row(const TableRef& t, int need, int colour) const;
  int64_t Load(const int32_t* row, uint32_t k) const;
  void StoreFull(int32_t* dst) const;
  void MarkAllDirty();
  int64_t F(const TableRef& t, int need, int colour, uint32_t k) const;
  void Combine(const TableRef& a, const TableRef& b, int x, int need, int64_t* out, uint32_t kmax) const;
  void CombineNarrow(const int32_t* ra, uint32_t ca, const int32_t* rb, uint32_t cb, int64_t* out,
                     uint32_t kmax) const;
  template <typename Fn>
  void ForOptions(const Node& n, int x, int need_in, Fn&& fn) const;
  void G(const Node& n, const TableRef& a, const TableRef& b, int x, int need_in, int64_t* g, uint32_t kmax,
         std::vector<int64_t>& tmp) const;
  int Variants(const Node& n) const { return n.route >= 0 || n.gc == 0 ? 1 : 2; }
  bool Light(const Node& n) const { return n.size <= light_nodes_; }
  bool CanNeed(const Node& n) const { return n.route >= 0 && n.gc != 0 && n.Has(Node::kAns); }
  int KeptColour(const Node& n) const;
  void FreeTable(int v);
  void StoreTable(int v, const TableRef& t);
  void Repin();
  void Descend(int v, int need_in, int c, uint32_t k, std::vector<OptEntry>& out);

  // Route states.
  static std::optional<uint8_t> KeptCode(const std::vector<OptEntry>& es, const Node& n);
  int EntryCode(const Node& n) const;
  bool HasLong(uint64_t hi) const;
  void Settle(int v, int gov, uint8_t code);
  void WalkColours(const OptEntry& e);
  void Recontrib(int v, int gov, uint8_t code);
  void Credit(int route, int contrib, int delta);
  void Touch(int route);
  void Uncredit(int route);
  void FinishTouched();
  void ShrinkScratch();
  static size_t HeapBlock(size_t bytes);

  const uint32_t budget_;
  const uint32_t light_nodes_;
  Trie trie_;
  std::deque<RouteRec> routes_;
  std::vector<int32_t> route_free_;
  size_t route_count_ = 0;
  std::map<Prefix, LongRoute> long_;  // routes longer than /64, in address order
  std::array<uint32_t, 256> code_count_{};
  bool colours_stale_ = true;
  std::array<uint8_t, 256> colour_of_{};
  std::vector<uint8_t> codes_{0};  // colour -> code, ascending; colour 0 = punt
  int ncol_ = 1;

  std::unordered_map<int32_t, PackedTable> tables_;  // stored DP tables, by node
  uint64_t weight_sum_ = 0;  // routes up to /64: bounds every DP value
  bool narrow_ = true;
  std::vector<int32_t> arena_;  // tables being read: light ones computed, stored ones unpacked
  size_t arena_top_ = 0;
  std::unordered_set<int> descend_reads_;  // nodes whose tables the reconstruction read
  std::unordered_set<int> pins_;           // light nodes that keep a stored table (Repin)
  // An unfinished solve (Solve with a deadline): the dirty nodes whose tables
  // it has redone; a change under one makes it stale again.
  bool solving_ = false;
  std::unordered_set<int> fresh_;
  Clock::time_point deadline_;
  uint32_t computed_ = 0;  // tables redone by this step
  std::vector<int64_t> full_, g_, best1_, best2_;
  std::vector<int64_t> comb_;        // ComputeNode's Combine results, by (child need, colour)
  std::vector<uint8_t> comb_ready_;
  mutable std::vector<int32_t> acc_;  // CombineNarrow's sums (budget + 1 cells)
  std::vector<int> arg1_;

  std::vector<int> path_;
  // The path of the last Upsert's walk (cleared when the trie changes shape):
  // routes upserted in prefix order start from their neighbour's node.
  std::vector<int> finger_;
  std::vector<int32_t> touched_;
  std::vector<OptEntry> prefer_, entries_;
  uint64_t covered_weight_ = 0;
  uint64_t covered_routes_ = 0;
};

}  // namespace fibnic::tcam6
