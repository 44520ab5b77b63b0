// The DP half of tcam6::Optimizer: per-node tables, their incremental refresh,
// and the reconstruction of the chosen entries (docs/tcam6.md, "Which entries").
#include <algorithm>
#include <cstring>
#include <limits>

#include "fib/tcam6/tcam6_optimizer.h"

namespace fibnic::tcam6 {

namespace {

constexpr int64_t kNeg = std::numeric_limits<int64_t>::min() / 4;
constexpr int32_t kNeg32 = std::numeric_limits<int32_t>::min() / 2;  // kNeg in a narrow cell
constexpr uint8_t kPunt = 0;  // colour 0: punt (code-0 entry or no match)

// Whether colour x may answer an own region whose governing colour is gc.
// need: the governing route must be fully offloaded, so punting is not enough.
bool Allowed(int x, int gc, bool need, bool mixed) {
  if (mixed || gc == kPunt) return x == kPunt;
  return need ? x == gc : (x == gc || x == kPunt);
}

}  // namespace

const int32_t* Optimizer::Row(const TableRef& t, int need, int colour) const {
  const int32_t* base = arena_.data() + t.off;
  const int var = need < t.vars ? need : 0;
  return base + (size_t(var) * ncol_ + colour) * (t.len + 1) * (narrow_ ? 1 : 2);
}

int64_t Optimizer::Load(const int32_t* row, uint32_t k) const {
  if (narrow_) return row[k] <= kNeg32 ? kNeg : row[k];
  int64_t v;
  std::memcpy(&v, row + 2 * size_t(k), sizeof v);
  return v;
}

void Optimizer::StoreFull(int32_t* dst) const {
  if (narrow_) {
    for (size_t i = 0; i < full_.size(); ++i) dst[i] = full_[i] <= kNeg ? kNeg32 : static_cast<int32_t>(full_[i]);
  } else {
    std::memcpy(dst, full_.data(), full_.size() * sizeof(int64_t));
  }
}

int64_t Optimizer::F(const TableRef& t, int need, int colour, uint32_t k) const {
  if (t.kind == TableRef::kAbsent) return 0;
  return Load(Row(t, need, colour), std::min(k, t.len));
}

// The colour of the entry the TCAM holds at n now, or -1 (none, or a code no
// route uses: keeping it gains nothing).
int Optimizer::KeptColour(const Node& n) const {
  if (!n.Has(Node::kHasKept)) return -1;
  const uint8_t code = KeptCode(prefer_, n).value_or(0);
  if (code != 0 && colour_of_[code] == 0) return -1;
  return colour_of_[code];
}

// Best value of the two children with colour x in force and child-need
// `need`, at most k entries in them (k <= kmax).
void Optimizer::Combine(const TableRef& a, const TableRef& b, int x, int need, int64_t* out, uint32_t kmax) const {
  if (narrow_ && a.kind != TableRef::kAbsent && b.kind != TableRef::kAbsent) {
    CombineNarrow(Row(a, need, x), std::min(a.used(), kmax), Row(b, need, x), b.used(), out, kmax);
    return;
  }
  static constexpr int32_t kZero[2] = {0, 0};  // an absent child: 0 whatever k
  const int32_t* ra = a.kind == TableRef::kAbsent ? kZero : Row(a, need, x);
  const int32_t* rb = b.kind == TableRef::kAbsent ? kZero : Row(b, need, x);
  const uint32_t ca = a.used(), cb = b.used();
  std::fill(out, out + kmax + 1, kNeg);
  for (uint32_t i = 0; i <= std::min(ca, kmax); ++i) {
    const int64_t fa = Load(ra, i);
    if (fa <= kNeg) continue;
    for (uint32_t j = 0; j <= cb && i + j <= kmax; ++j) {
      const int64_t fb = Load(rb, j);
      if (fb <= kNeg) continue;
      out[i + j] = std::max(out[i + j], fa + fb);
    }
  }
  for (uint32_t k = 1; k <= kmax; ++k) out[k] = std::max(out[k], out[k - 1]);
}

// Combine over two narrow rows, in int32 lanes the compiler can vectorise:
// every value the DP keeps is >= 0 and fits 30 bits (narrow_), an infeasible
// cell is kNeg32, so a sum with one is negative and no sum overflows.
void Optimizer::CombineNarrow(const int32_t* __restrict ra, uint32_t ca, const int32_t* __restrict rb, uint32_t cb,
                              int64_t* out, uint32_t kmax) const {
  int32_t* __restrict acc = acc_.data();
  std::fill(acc, acc + kmax + 1, std::numeric_limits<int32_t>::min());
  for (uint32_t i = 0; i <= ca; ++i) {
    const int32_t fa = ra[i];
    if (fa < 0) continue;
    const uint32_t m = std::min(cb, kmax - i);
    int32_t* __restrict at = acc + i;
    for (uint32_t j = 0; j <= m; ++j) at[j] = std::max(at[j], fa + rb[j]);
  }
  int64_t best = kNeg;
  for (uint32_t k = 0; k <= kmax; ++k) {
    best = std::max(best, acc[k] < 0 ? kNeg : int64_t{acc[k]});
    out[k] = best;
  }
}

// Options at v: (child need, gain) pairs valid for colour x in force at v.
template <typename Fn>
void Optimizer::ForOptions(const Node& n, int x, int need_in, Fn&& fn) const {
  const bool own = n.Has(Node::kOwn), mixed = n.Has(Node::kMixed);
  const int gc = colour_of_[n.gc];
  if (n.route >= 0) {
    for (int nv = 0; nv <= (CanNeed(n) ? 1 : 0); ++nv) {
      if (own && !Allowed(x, gc, nv, mixed)) continue;
      fn(nv, nv ? int64_t(routes_[n.route].weight) * int64_t(budget_ + 1) : 0);
    }
  } else {
    if (own && !Allowed(x, gc, need_in, mixed)) return;
    fn(need_in, 0);
  }
}

// Best value with colour x in force at v (v's own entry not counted), at most
// k entries in the children, for k <= kmax.
void Optimizer::G(const Node& n, const TableRef& a, const TableRef& b, int x, int need_in, int64_t* g,
                  uint32_t kmax, std::vector<int64_t>& tmp) const {
  std::fill(g, g + kmax + 1, kNeg);
  tmp.resize(kmax + 1);
  ForOptions(n, x, need_in, [&](int cn, int64_t gain) {
    Combine(a, b, x, cn, tmp.data(), kmax);
    for (uint32_t k = 0; k <= kmax; ++k) {
      if (tmp[k] > kNeg) g[k] = std::max(g[k], tmp[k] + gain);
    }
  });
}

// F[need][colour][k] of one node into full_, rows cut to the shortest length
// after which no row improves.
void Optimizer::ComputeNode(const Node& n, const TableRef& a, const TableRef& b, uint32_t& len, uint8_t& vars) {
  const uint32_t bound = std::min<uint32_t>(budget_, 1 + a.used() + b.used());
  const uint32_t L = bound;
  vars = static_cast<uint8_t>(Variants(n));
  full_.assign(size_t(vars) * ncol_ * (L + 1), kNeg);
  g_.resize(size_t(ncol_) * (L + 1));
  best1_.resize(L + 1);
  best2_.resize(L + 1);
  arg1_.resize(L + 1);
  const int kept = KeptColour(n);
  // The children's combination for each (colour, child need), made once: both
  // of this node's variants and both of a route's options read the same ones,
  // and with children of one variant need 1 reads need 0's rows.
  const int child_needs = a.vars > 1 || b.vars > 1 ? 2 : 1;
  comb_.resize(size_t(child_needs) * ncol_ * (L + 1));
  comb_ready_.assign(size_t(child_needs) * ncol_, 0);
  auto combined = [&](int x, int cn) {
    const size_t at = size_t(cn < child_needs ? cn : 0) * ncol_ + x;
    int64_t* out = &comb_[at * (L + 1)];
    if (!comb_ready_[at]) {
      Combine(a, b, x, cn, out, L);
      comb_ready_[at] = 1;
    }
    return static_cast<const int64_t*>(out);
  };
  for (int need = 0; need < vars; ++need) {
    for (int x = 0; x < ncol_; ++x) {
      int64_t* g = &g_[size_t(x) * (L + 1)];
      std::fill(g, g + L + 1, kNeg);
      ForOptions(n, x, need, [&](int cn, int64_t gain) {
        const int64_t* c = combined(x, cn);
        for (uint32_t k = 0; k <= L; ++k) {
          if (c[k] > kNeg) g[k] = std::max(g[k], c[k] + gain);
        }
      });
    }
    // Best and second-best "entry with colour x here" per k (k-1 below).
    for (uint32_t k = 0; k <= L; ++k) {
      best1_[k] = best2_[k] = kNeg;
      arg1_[k] = -1;
      if (k == 0) continue;
      for (int x = 0; x < ncol_; ++x) {
        const int64_t gx = g_[size_t(x) * (L + 1) + k - 1];
        if (gx <= kNeg) continue;
        const int64_t val = gx + (x == kept);
        if (val > best1_[k]) {
          best2_[k] = best1_[k];
          best1_[k] = val;
          arg1_[k] = x;
        } else if (val > best2_[k]) {
          best2_[k] = val;
        }
      }
    }
    for (int c = 0; c < ncol_; ++c) {
      int64_t* f = &full_[(size_t(need) * ncol_ + c) * (L + 1)];
      for (uint32_t k = 0; k <= L; ++k) {
        const int64_t with_entry = arg1_[k] == c ? best2_[k] : best1_[k];
        f[k] = std::max(g_[size_t(c) * (L + 1) + k], with_entry);
        if (k > 0) f[k] = std::max(f[k], f[k - 1]);
      }
    }
  }
  // Cut every row at the first k from which no row changes any more.
  const size_t rows = size_t(vars) * ncol_;
  uint32_t cut = 0;
  for (size_t r = 0; r < rows; ++r) {
    const int64_t* f = &full_[r * (L + 1)];
    uint32_t k = L;
    while (k > cut && f[k - 1] == f[L]) --k;
    cut = std::max(cut, k);
  }
  if (cut < L) {
    for (size_t r = 0; r < rows; ++r) {
      std::copy_n(&full_[r * (L + 1)], cut + 1, &full_[r * (cut + 1)]);
    }
    full_.resize(rows * (cut + 1));
  }
  len = cut;
}

Optimizer::TableRef Optimizer::TableOf(int v) {
  if (v < 0) return {};
  TableRef t;
  if (auto it = tables_.find(v); it != tables_.end()) {
    const PackedTable& p = it->second;
    t = Place(arena_top_, p.len, p.vars);
    Unpack(p, Rows(p.vars), kNeg32, arena_.data() + t.off);
  } else {
    // A light subtree: computed bottom-up in the arena, the result moved
    // down to where this call started, so the arena only holds one path's
    // tables.
    const Node& n = trie_[v];
    const size_t start = arena_top_;
    const TableRef a = TableOf(n.child[0]);
    const TableRef b = TableOf(n.child[1]);
    uint32_t len = 0;
    uint8_t vars = 0;
    ComputeNode(n, a, b, len, vars);
    t = Place(start, len, vars);
    StoreFull(arena_.data() + t.off);
  }
  return t;
}

// The table of v for the reconstruction. A light node's is stored (pinned)
// once computed: the reconstruction reads it again one level down, and the
// next Solve() most likely reads it too.
Optimizer::TableRef Optimizer::ReadTable(int v) {
  if (v < 0) return {};
  descend_reads_.insert(v);
  const TableRef t = TableOf(v);
  if (!tables_.contains(v)) StoreTable(v, t);
  return t;
}

// Room for a table at `at` in the arena, which then ends after it.
Optimizer::TableRef Optimizer::Place(size_t at, uint32_t len, uint8_t vars) {
  const size_t words = Rows(vars) * (len + 1) * (narrow_ ? 1 : 2);
  if (arena_.size() < at + words) arena_.resize(at + words);
  arena_top_ = at + words;
  return {TableRef::kArena, at, len, vars};
}

bool Optimizer::LongMixed(const Node& n) const {
  const U128 base = U128{n.value} << 64;
  for (auto it = long_.lower_bound(Prefix::V6(base, 65));
       it != long_.end() && static_cast<uint64_t>(it->first.addr().v6() >> 64) == n.value; ++it) {
    if (it->second.code != n.gc) return true;
  }
  return false;
}

void Optimizer::FreeTable(int v) { tables_.erase(v); }

void Optimizer::StoreTable(int v, const TableRef& t) {
  tables_[v] = Pack(arena_.data() + t.off, Rows(t.vars), t.len, t.vars, narrow_, kNeg32);
}

// Bottom-up over the pending nodes: annotations, then the table (stored for
// heavy nodes and for pinned ones). False when the deadline passed first
// (after at least one table, so each step gets on): the nodes done so far are
// fresh_ and the next call goes on from them.
bool Optimizer::Refresh(int v) {
  {
    const Node& n = trie_[v];
    for (int c : n.child) {
      if (c >= 0 && Pending(c) && !Refresh(c)) return false;
    }
  }
  Node& n = trie_[v];
  uint32_t size = 1;
  bool full_sides = true, ans = false;
  for (int c : n.child) {
    if (c < 0) {
      full_sides = false;
      continue;
    }
    const Node& cn = trie_[c];
    size += cn.size;
    if (cn.len != n.len + 1) full_sides = false;
    if (cn.route < 0 && cn.Has(Node::kAns)) ans = true;
  }
  n.size = static_cast<uint8_t>(std::min<uint32_t>(size, 255));
  n.Set(Node::kOwn, n.len == 64 || !full_sides);
  n.Set(Node::kMixed, n.Has(Node::kLong) && LongMixed(n));
  n.Set(Node::kAns, ans || (n.Has(Node::kOwn) && !n.Has(Node::kMixed)));
  if (Light(n) && !pins_.contains(v)) {
    FreeTable(v);
    return true;  // its parent reads it from the annotations, redone cheaply if that waits
  }
  if (computed_ > 0 && Clock::now() >= deadline_) return false;
  ++computed_;
  arena_top_ = 0;
  const TableRef a = TableOf(n.child[0]);
  const TableRef b = TableOf(n.child[1]);
  uint32_t len = 0;
  uint8_t vars = 0;
  ComputeNode(n, a, b, len, vars);
  const TableRef t = Place(arena_top_, len, vars);
  StoreFull(arena_.data() + t.off);
  StoreTable(v, t);
  arena_top_ = 0;
  fresh_.insert(v);
  return true;
}

// Light nodes whose tables the last reconstruction read keep them stored
// until a reconstruction no longer reads them: the next one (after a change
// elsewhere) then finds them ready instead of recomputing their subtrees.
void Optimizer::Repin() {
  for (int v : pins_) {
    if (!descend_reads_.contains(v) && Light(trie_[v])) FreeTable(v);
  }
  pins_.clear();
  for (int v : descend_reads_) {
    if (Light(trie_[v])) pins_.insert(v);
  }
  descend_reads_.clear();
}

// Finds a choice at v that attains F(v, need_in, c)[k] and recurses; entries
// go to `out`.
void Optimizer::Descend(int v, int need_in, int c, uint32_t k, std::vector<OptEntry>& out) {
  if (v < 0 || k == 0) return;
  // Nothing here is read after the children are done: their tables go where
  // these were.
  const size_t mark = arena_top_;
  const Node n = trie_[v];
  const TableRef self = ReadTable(v);
  k = std::min(k, self.len);
  const int64_t target = F(self, need_in, c, k);
  if (k == 0 || target <= kNeg) {
    arena_top_ = mark;
    return;
  }
  const TableRef a = ReadTable(n.child[0]);
  const TableRef b = ReadTable(n.child[1]);
  std::vector<int64_t> g(k + 1), tmp;
  int colour = -1;
  uint32_t kk = k;
  G(n, a, b, c, need_in, g.data(), k, tmp);
  const int kept = KeptColour(n);
  if (g[k] == target) {
    colour = c;
  } else {
    for (int x = 0; x < ncol_ && colour < 0; ++x) {
      if (x == c) continue;
      G(n, a, b, x, need_in, g.data(), k, tmp);
      if (g[k - 1] > kNeg && g[k - 1] + (x == kept) == target) colour = x;
    }
    kk = k - 1;
    out.push_back({n.value, n.len, codes_[colour]});
  }
  const int64_t want = g[kk];
  bool done = false;
  ForOptions(n, colour, need_in, [&](int cn, int64_t gain) {
    for (uint32_t i = 0; i <= kk && !done; ++i) {
      const int64_t fa = F(a, cn, colour, i);
      const int64_t fb = F(b, cn, colour, kk - i);
      if (fa <= kNeg || fb <= kNeg || fa + fb + gain != want) continue;
      done = true;
      Descend(n.child[0], cn, colour, i, out);
      Descend(n.child[1], cn, colour, kk - i, out);
    }
  });
  arena_top_ = mark;
}

}  // namespace fibnic::tcam6
