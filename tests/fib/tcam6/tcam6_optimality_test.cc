// The entry choice is optimal for its entry model: on small random tables, no
// set of at most `capacity` coloured entries on trie nodes (route prefixes cut
// to /64 and branching points of two of them) that never misforwards fully
// offloads more route weight than the compiler does. Brute force judged by the
// reference LPM on every range boundary (exhaustive).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <map>
#include <random>
#include <set>

#include "fib/tcam6/tcam6_compiler.h"
#include "tests/fib/tcam6/tcam6_checks.h"
#include "tests/fib/tcam6/tcam6_oracle.h"

namespace fibnic::tcam6test {
namespace {

struct Node64 {
  uint64_t value;
  int len;
  auto operator<=>(const Node64&) const = default;
};

uint64_t M(int len) { return len == 0 ? 0 : ~uint64_t{0} << (64 - len); }

class BruteForce {
 public:
  BruteForce(const Routes& routes, std::mt19937_64& rng) : routes_(routes) {
    std::set<Node64> nodes{{0, 0}};
    std::vector<Node64> cut;
    for (const auto& [p, r] : routes) {
      const uint64_t hi = static_cast<uint64_t>(p.addr().v6() >> 64);
      cut.push_back({hi & M(std::min(p.len(), 64)), std::min(p.len(), 64)});
      if (r.code != 0) codes_.insert(r.code);
    }
    for (const auto& a : cut) {
      nodes.insert(a);
      for (const auto& b : cut) {
        const int l = std::min({a.len, b.len, std::countl_zero(a.value ^ b.value)});
        nodes.insert({a.value & M(l), l});
      }
    }
    nodes_.assign(nodes.begin(), nodes.end());
    std::vector<const std::vector<regs::Tcam6Entry>*> none;
    dests_ = Destinations(routes, none, rng, 0);
    for (const auto& n : nodes_) {
      AddBoundaries(U128{n.value} << 64, (U128{n.value | ~M(n.len)} << 64) | ~uint64_t{0}, dests_);
    }
    for (const auto& c : cut) {  // every /64 a route touches, whole
      AddBoundaries(U128{c.value} << 64, (U128{c.value} << 64) | ~uint64_t{0}, dests_);
    }
    truth_ = Reference(routes).JudgeAll(dests_);
    std::map<uint64_t, std::set<uint8_t>> codes64;
    for (size_t i = 0; i < dests_.size(); ++i) codes64[dests_[i].v6_hi()].insert(truth_[i].code);
    for (size_t i = 0; i < dests_.size(); ++i) mixed_.push_back(codes64[dests_[i].v6_hi()].size() > 1);
  }

  // Best fully offloaded weight over every valid entry set of size <= budget.
  uint64_t Best(uint32_t budget) {
    best_ = 0;
    chosen_.clear();
    Enumerate(0, budget);
    return best_;
  }

 private:
  void Enumerate(size_t i, uint32_t left) {
    if (i == nodes_.size()) {
      Score();
      return;
    }
    Enumerate(i + 1, left);
    if (left == 0) return;
    std::vector<uint8_t> colours{0};
    colours.insert(colours.end(), codes_.begin(), codes_.end());
    for (uint8_t c : colours) {
      chosen_.push_back({nodes_[i], c});
      Enumerate(i + 1, left - 1);
      chosen_.pop_back();
    }
  }

  void Score() {
    std::vector<std::pair<Node64, uint8_t>> order = chosen_;
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first.len > b.first.len; });
    std::vector<regs::Tcam6Entry> tcam;
    for (const auto& [n, c] : order) tcam.push_back({n.value, M(n.len), c, regs::kTcamValid});
    std::map<Prefix, std::pair<int, int>> seen;  // answered, not answered (outside mixed /64s)
    for (size_t i = 0; i < dests_.size(); ++i) {
      const uint8_t hw = TcamAnswer(tcam, dests_[i]);
      if (hw != 0 && hw != truth_[i].code) return;  // misforwards: not a candidate
      if (!truth_[i].matched || mixed_[i]) continue;
      auto& s = seen[*truth_[i].matched];
      (hw != 0 ? s.first : s.second)++;
    }
    uint64_t w = 0;
    for (const auto& [p, counts] : seen) {
      const auto& r = routes_.at(p);
      if (r.code != 0 && p.len() <= 64 && counts.first > 0 && counts.second == 0) w += r.weight;
    }
    best_ = std::max(best_, w);
  }

  const Routes& routes_;
  std::set<uint8_t> codes_;
  std::vector<Node64> nodes_;
  std::vector<IpAddr> dests_;
  std::vector<Reference::Truth> truth_;
  std::vector<bool> mixed_;
  std::vector<std::pair<Node64, uint8_t>> chosen_;
  uint64_t best_ = 0;
};

TEST(Tcam6Optimality, MatchesBruteForceOnSmallTables) {
  const uint64_t seed = std::random_device{}();
  std::printf("MatchesBruteForceOnSmallTables seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  for (int t = 0; t < 60; ++t) {
    Routes routes;
    const int n = 2 + int(rng() % 5);
    for (int i = 0; i < n; ++i) {
      // Prefixes in 2001:db8::/32, bits 32..71 random, so they nest and
      // share branching points; a few are longer than /64.
      const U128 bits = (U128{0x20010db8} << 96) | ((U128{rng()} & ((U128{1} << 40) - 1)) << 56);
      const int len = rng() % 6 == 0 ? 65 + int(rng() % 8) : 32 + int(rng() % 33);
      const uint8_t code = uint8_t(rng() % 5 == 0 ? 0 : 1 + rng() % 2);
      // Every fourth table has traffic-sized weights: the DP runs on 64-bit cells.
      const uint32_t weight = uint32_t(1 + rng() % 3) * (t % 4 == 0 ? (1u << 29) : 1u);
      routes[Prefix::V6(bits, len)] = Tcam6Route{code, code ? PuntReason::kNone : PuntReason::kUnresolved, weight};
    }
    const uint32_t budget = 1 + uint32_t(rng() % 3);
    Tcam6Compiler comp(budget);
    for (const auto& [p, r] : routes) comp.Upsert(p, r);
    const Routes empty;
    CommitCheck c{&empty, &routes, comp.entries(), comp.Commit(), "seed " + std::to_string(seed) + " table " +
                                                                      std::to_string(t)};
    CheckCommit(c, comp, rng, 4);
    BruteForce brute(routes, rng);
    std::string table;
    for (const auto& [p, r] : routes) {
      table += "  " + p.ToString() + " code " + std::to_string(r.code) + " weight " + std::to_string(r.weight) + " " +
               OffloadStateName(comp.StateOf(p).state) + "\n";
    }
    ASSERT_EQ(comp.covered_weight(), brute.Best(budget))
        << c.label << " budget " << budget << "\nroutes:\n" << table << "entries:\n" << Dump(comp.entries());
  }
}

}  // namespace
}  // namespace fibnic::tcam6test
