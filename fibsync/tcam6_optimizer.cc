#include "fibsync/tcam6_optimizer.h"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <map>
#include <utility>

namespace fibnic::tcam6 {

uint64_t Mask64(int len) { return len == 0 ? 0 : ~uint64_t{0} << (64 - len); }

namespace {

constexpr int64_t kNeg = std::numeric_limits<int64_t>::min() / 4;
constexpr uint8_t kPunt = 0;  // colour 0: punt (code-0 entry or no match)

int BitAt(uint64_t v, int pos) { return static_cast<int>((v >> (63 - pos)) & 1); }

struct Node {
  uint64_t value = 0;
  uint8_t len = 0;
  int32_t child[2] = {-1, -1};
  int32_t route = -1;     // route with exactly this prefix (len <= 64)
  int32_t gov = -1;       // governing route: nearest route at or above
  uint8_t gc = kPunt;     // colour the governing route asks for
  bool own = false;       // part of the prefix lies outside every child
  bool mixed = false;     // a /64 whose longer routes disagree with gc: must punt
  uint32_t size = 1;      // nodes in the subtree
  uint32_t cap = 0;       // min(budget, size): longest useful entry count
  uint64_t off = 0;       // first DP cell in the pool
  int16_t kept = -1;      // colour of the entry the TCAM holds here now, if any
};

// Compressed binary trie over 64-bit prefixes; node 0 is ::/0.
class Trie {
 public:
  Trie() { nodes_.emplace_back(); }
  std::vector<Node>& nodes() { return nodes_; }

  int Insert(uint64_t v, int len) {
    int cur = 0;
    while (true) {
      if (nodes_[cur].len == len) return cur;
      const int b = BitAt(v, nodes_[cur].len);
      const int c = nodes_[cur].child[b];
      if (c < 0) {
        const int id = Add(v, len);
        nodes_[cur].child[b] = id;
        return id;
      }
      const uint64_t cv = nodes_[c].value;
      const int clen = nodes_[c].len;
      const int common = std::min({clen, len, std::countl_zero(cv ^ v)});
      if (common == clen) {
        cur = c;
        continue;
      }
      if (common == len) {  // the new prefix sits between cur and c
        const int id = Add(v, len);
        nodes_[id].child[BitAt(cv, len)] = c;
        nodes_[cur].child[b] = id;
        return id;
      }
      const int mid = Add(v & Mask64(common), common);
      const int id = Add(v, len);
      nodes_[mid].child[BitAt(cv, common)] = c;
      nodes_[mid].child[BitAt(v, common)] = id;
      nodes_[cur].child[b] = mid;
      return id;
    }
  }

 private:
  int Add(uint64_t v, int len) {
    Node n;
    n.value = v & Mask64(len);
    n.len = static_cast<uint8_t>(len);
    nodes_.push_back(n);
    return static_cast<int>(nodes_.size() - 1);
  }
  std::vector<Node> nodes_;
};

// Whether colour x may answer an own region whose governing colour is gc.
// need: the governing route must be fully offloaded, so punting is not enough.
bool Allowed(uint8_t x, uint8_t gc, bool need, bool mixed) {
  if (mixed || gc == kPunt) return x == kPunt;
  return need ? x == gc : (x == gc || x == kPunt);
}

class Solver {
 public:
  Solver(const std::vector<OptRoute>& routes, uint32_t budget, const std::vector<OptEntry>& prefer)
      : routes_(routes), budget_(budget) {
    for (const auto& e : prefer) prefer_[{e.value & Mask64(e.len), e.len}] = e.code;
  }

  OptResult Run() {
    MapColours();
    Build();
    Annotate();
    Dp();
    OptResult out;
    Reconstruct(out.entries);
    Evaluate(out);
    return out;
  }

 private:
  void MapColours() {
    colour_of_.fill(0);
    codes_.assign(1, 0);
    for (const auto& r : routes_) {
      if (r.code != 0 && colour_of_[r.code] == 0) {
        colour_of_[r.code] = static_cast<uint8_t>(codes_.size());
        codes_.push_back(r.code);
      }
    }
    ncol_ = static_cast<int>(codes_.size());
  }

  void Build() {
    route_node_.assign(routes_.size(), -1);
    for (size_t i = 0; i < routes_.size(); ++i) {
      const Prefix& p = routes_[i].prefix;
      const uint64_t hi = static_cast<uint64_t>(p.addr().v6() >> 64);
      if (p.len() <= 64) {
        const int n = trie_.Insert(hi, p.len());
        trie_.nodes()[n].route = static_cast<int32_t>(i);
        route_node_[i] = n;
      } else {
        const int n = trie_.Insert(hi, 64);
        route_node_[i] = n;
        long_.push_back(static_cast<int32_t>(i));
      }
    }
  }

  // Preorder: governing route and colour, own region; postorder: sizes.
  void Annotate() {
    auto& nodes = trie_.nodes();
    order_.clear();
    order_.reserve(nodes.size());
    std::vector<int> stack{0};
    while (!stack.empty()) {
      const int v = stack.back();
      stack.pop_back();
      order_.push_back(v);
      Node& n = nodes[v];
      if (n.route >= 0) {
        n.gov = n.route;
        n.gc = colour_of_[routes_[n.route].code];
      }
      bool full_sides = true;
      for (int b = 0; b < 2; ++b) {
        const int c = n.child[b];
        if (c < 0 || nodes[c].len != n.len + 1) full_sides = false;
        if (c >= 0) {
          nodes[c].gov = n.gov;
          nodes[c].gc = n.gc;
          stack.push_back(c);
        }
      }
      n.own = n.len == 64 || !full_sides;
      auto it = prefer_.find({n.value, n.len});
      if (it != prefer_.end() && (it->second == 0 || colour_of_[it->second] != 0)) n.kept = colour_of_[it->second];
    }
    for (int32_t i : long_) {
      Node& n = nodes[route_node_[i]];
      if (colour_of_[routes_[i].code] != n.gc) n.mixed = true;
    }
    answerable_.assign(routes_.size(), false);
    for (const Node& n : nodes) {
      if (n.own && !n.mixed && n.gc != kPunt) answerable_[n.gov] = true;
    }
    uint64_t cells = 0;
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      Node& n = nodes[*it];
      n.size = 1;
      for (int c : n.child) {
        if (c >= 0) n.size += nodes[c].size;
      }
      n.cap = std::min<uint32_t>(budget_, n.size);
      n.off = cells;
      cells += uint64_t(Variants(n)) * ncol_ * (n.cap + 1);
    }
    pool_.assign(cells, kNeg);
  }

  static int Variants(const Node& n) { return n.route >= 0 ? 1 : 2; }

  // F[v](need, colour)[k]: best value in v's subtree with at most k entries
  // there, given the colour in force above v and whether the governing route
  // (above v) must be fully offloaded. Route nodes decide their own need.
  int64_t* Cells(const Node& n, int need, int colour) {
    const int var = n.route >= 0 ? 0 : need;
    return &pool_[n.off + (uint64_t(var) * ncol_ + colour) * (n.cap + 1)];
  }
  int64_t F(int v, int need, int colour, uint32_t k) {
    if (v < 0) return 0;
    const Node& n = trie_.nodes()[v];
    return Cells(n, need, colour)[std::min(k, n.cap)];
  }

  int64_t Gain(const Node& n, bool need_v) const {
    if (!need_v) return 0;
    return int64_t(routes_[n.route].weight) * int64_t(budget_ + 1);
  }
  bool CanNeed(const Node& n) const { return n.route >= 0 && n.gc != kPunt && answerable_[n.route]; }
  static int64_t Bonus(const Node& n, int colour) { return n.kept == colour ? 1 : 0; }

  // G: best value with colour x in force at v (v's own entry not counted),
  // for child-need `need`, at most k entries in the children.
  void Combine(const Node& n, int x, int need, int64_t* out, uint32_t kmax) {
    std::fill(out, out + kmax + 1, kNeg);
    const int a = n.child[0], b = n.child[1];
    const uint32_t ca = a < 0 ? 0 : trie_.nodes()[a].cap;
    const uint32_t cb = b < 0 ? 0 : trie_.nodes()[b].cap;
    for (uint32_t i = 0; i <= std::min(ca, kmax); ++i) {
      const int64_t fa = F(a, need, x, i);
      if (fa <= kNeg) continue;
      for (uint32_t j = 0; j <= cb && i + j <= kmax; ++j) {
        const int64_t fb = F(b, need, x, j);
        if (fb <= kNeg) continue;
        out[i + j] = std::max(out[i + j], fa + fb);
      }
    }
    for (uint32_t k = 1; k <= kmax; ++k) out[k] = std::max(out[k], out[k - 1]);
  }

  // Options at v: (child need, gain) pairs valid for colour x in force at v.
  template <typename Fn>
  void ForOptions(const Node& n, int x, int need_in, Fn&& fn) {
    if (n.route >= 0) {
      for (int nv = 0; nv <= (CanNeed(n) ? 1 : 0); ++nv) {
        if (n.own && !Allowed(static_cast<uint8_t>(x), n.gc, nv, n.mixed)) continue;
        fn(nv, Gain(n, nv));
      }
    } else {
      if (n.own && !Allowed(static_cast<uint8_t>(x), n.gc, need_in, n.mixed)) return;
      fn(need_in, 0);
    }
  }

  void G(const Node& n, int x, int need_in, int64_t* g, std::vector<int64_t>& tmp) {
    std::fill(g, g + n.cap + 1, kNeg);
    ForOptions(n, x, need_in, [&](int cn, int64_t gain) {
      Combine(n, x, cn, tmp.data(), n.cap);
      for (uint32_t k = 0; k <= n.cap; ++k) {
        if (tmp[k] > kNeg) g[k] = std::max(g[k], tmp[k] + gain);
      }
    });
  }

  void Dp() {
    auto& nodes = trie_.nodes();
    std::vector<int64_t> g(size_t(ncol_) * (budget_ + 1)), tmp(budget_ + 1);
    std::vector<int64_t> best1(budget_ + 1), best2(budget_ + 1);
    std::vector<int> arg1(budget_ + 1);
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      const Node& n = nodes[*it];
      const uint32_t L = n.cap;
      for (int need = 0; need < Variants(n); ++need) {
        for (int x = 0; x < ncol_; ++x) G(n, x, need, &g[size_t(x) * (L + 1)], tmp);
        // Best and second-best "entry with colour x here" per k (k-1 below).
        for (uint32_t k = 0; k <= L; ++k) {
          best1[k] = best2[k] = kNeg;
          arg1[k] = -1;
          if (k == 0) continue;
          for (int x = 0; x < ncol_; ++x) {
            const int64_t gx = g[size_t(x) * (L + 1) + k - 1];
            if (gx <= kNeg) continue;
            const int64_t val = gx + Bonus(n, x);
            if (val > best1[k]) {
              best2[k] = best1[k];
              best1[k] = val;
              arg1[k] = x;
            } else if (val > best2[k]) {
              best2[k] = val;
            }
          }
        }
        for (int c = 0; c < ncol_; ++c) {
          int64_t* f = Cells(n, need, c);
          for (uint32_t k = 0; k <= L; ++k) {
            const int64_t with_entry = arg1[k] == c ? best2[k] : best1[k];
            f[k] = std::max(g[size_t(c) * (L + 1) + k], with_entry);
            if (k > 0) f[k] = std::max(f[k], f[k - 1]);
          }
        }
      }
    }
  }

  void Reconstruct(std::vector<OptEntry>& entries) {
    entry_colour_.assign(trie_.nodes().size(), -1);
    const Node& root = trie_.nodes()[0];
    const int64_t best = F(0, 0, kPunt, root.cap);
    uint32_t k = 0;
    while (F(0, 0, kPunt, k) < best) ++k;
    Descend(0, 0, kPunt, k);
    for (size_t v = 0; v < trie_.nodes().size(); ++v) {
      if (entry_colour_[v] < 0) continue;
      const Node& n = trie_.nodes()[v];
      entries.push_back({n.value, n.len, codes_[entry_colour_[v]]});
    }
  }

  // Finds a choice at v that attains F(v, need_in, c)[k] and recurses.
  void Descend(int v, int need_in, int c, uint32_t k) {
    if (v < 0) return;
    const Node n = trie_.nodes()[v];
    k = std::min(k, n.cap);
    if (k == 0) return;
    const int64_t target = F(v, need_in, c, k);
    if (target <= kNeg) return;
    std::vector<int64_t> g(n.cap + 1), tmp(budget_ + 1);
    int colour = -1;
    uint32_t kk = k;
    G(n, c, need_in, g.data(), tmp);
    if (g[k] == target) {
      colour = c;
    } else {
      for (int x = 0; x < ncol_ && colour < 0; ++x) {
        if (x == c) continue;
        G(n, x, need_in, g.data(), tmp);
        if (g[k - 1] > kNeg && g[k - 1] + Bonus(n, x) == target) colour = x;
      }
      kk = k - 1;
      entry_colour_[v] = colour;
    }
    const int64_t want = g[kk];
    bool done = false;
    ForOptions(n, colour, need_in, [&](int cn, int64_t gain) {
      if (done) return;
      for (uint32_t i = 0; i <= kk && !done; ++i) {
        const int64_t fa = F(n.child[0], cn, colour, i);
        const int64_t fb = F(n.child[1], cn, colour, kk - i);
        if (fa <= kNeg || fb <= kNeg || fa + fb + gain != want) continue;
        done = true;
        Descend(n.child[0], cn, colour, i);
        Descend(n.child[1], cn, colour, kk - i);
      }
    });
  }

  // What the chosen entries actually do to each route (independent of the DP's
  // bookkeeping): walk the trie with the colour in force.
  void Evaluate(OptResult& out) {
    const auto& nodes = trie_.nodes();
    std::vector<uint32_t> answered(routes_.size()), unanswered(routes_.size());
    std::vector<bool> has_mixed(routes_.size());
    std::vector<uint8_t> colour_at(nodes.size(), kPunt);
    for (int v : order_) {  // preorder: parents first
      const Node& n = nodes[v];
      if (entry_colour_[v] >= 0) colour_at[v] = static_cast<uint8_t>(entry_colour_[v]);
      for (int c : n.child) {
        if (c >= 0) colour_at[c] = colour_at[v];
      }
      if (!n.own || n.gov < 0 || n.gc == kPunt) continue;
      if (n.mixed) {
        has_mixed[n.gov] = true;
      } else if (colour_at[v] == n.gc) {
        ++answered[n.gov];
      } else {
        ++unanswered[n.gov];
      }
    }
    out.states.resize(routes_.size());
    for (size_t i = 0; i < routes_.size(); ++i) {
      OptRouteState& s = out.states[i];
      const OptRoute& r = routes_[i];
      if (r.code == 0) continue;
      if (r.prefix.len() > 64) {
        const int v = route_node_[i];
        const Node& n = nodes[v];
        if (n.mixed) {
          s.reason = PuntReason::kLongerThan64;
        } else if (colour_at[v] == n.gc) {
          s.state = OffloadState::kOffloaded;
        } else {
          s.reason = PuntReason::kTcamFull;
        }
        continue;
      }
      if (answered[i] == 0 && unanswered[i] == 0) {
        s.reason = has_mixed[i] ? PuntReason::kLongerThan64 : PuntReason::kShadowed;
      } else if (unanswered[i] > 0) {
        s.state = answered[i] > 0 ? OffloadState::kPartial : OffloadState::kPunted;
        s.reason = PuntReason::kTcamFull;
      } else {
        // Everything the hardware can answer is answered; a mixed /64 inside
        // still punts (partial), but no entry could do better.
        s.state = has_mixed[i] ? OffloadState::kPartial : OffloadState::kOffloaded;
        s.reason = has_mixed[i] ? PuntReason::kLongerThan64 : PuntReason::kNone;
        out.covered_weight += r.weight;
        ++out.covered_routes;
      }
    }
  }

  const std::vector<OptRoute>& routes_;
  const uint32_t budget_;
  std::map<std::pair<uint64_t, int>, uint8_t> prefer_;  // prefix -> code
  std::array<uint8_t, 256> colour_of_{};
  std::vector<uint8_t> codes_;  // colour -> code
  int ncol_ = 1;
  Trie trie_;
  std::vector<int> route_node_;
  std::vector<int32_t> long_;
  std::vector<int> order_;  // preorder
  std::vector<bool> answerable_;
  std::vector<int64_t> pool_;
  std::vector<int> entry_colour_;
};

}  // namespace

OptResult Optimize(const std::vector<OptRoute>& routes, uint32_t budget, const std::vector<OptEntry>& prefer) {
  return Solver(routes, budget, prefer).Run();
}

}  // namespace fibnic::tcam6
