#include "fib/tcam6/tcam6_compiler.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/fib/tcam6/tcam6_checks.h"
#include "tests/fib/tcam6/tcam6_oracle.h"
#include "tests/fib/tcam6/tcam6_random.h"
#include "tests/support/parse.h"

namespace fibnic::tcam6test {

using testing::A;
using testing::P;
namespace {

// Drives a compiler and a mirror of its routes; every Commit is checked.
class Harness {
 public:
  explicit Harness(uint32_t capacity, uint64_t seed = 1) : comp_(capacity), rng_(seed) {}
  void Set(const Prefix& p, Tcam6Route r) {
    routes_[p] = r;
    comp_.Upsert(p, r);
  }
  void Set(const char* p, uint8_t code, PuntReason why = PuntReason::kNone) { Set(P(p), Tcam6Route{code, why, 1}); }
  void Erase(const Prefix& p) {
    routes_.erase(p);
    comp_.Erase(p);
  }
  std::vector<TcamWrite> Commit(const std::string& label) {
    CommitCheck c{&before_, &routes_, comp_.entries(), {}, label};
    c.writes = comp_.Commit();
    CheckCommit(c, comp_, rng_, 8);
    size_t valid = 0;
    for (const auto& e : comp_.entries()) valid += e.valid();
    EXPECT_LE(valid, comp_.capacity());
    EXPECT_EQ(comp_.entries().size(), comp_.capacity());
    before_ = routes_;
    return c.writes;
  }
  const Routes& routes() const { return routes_; }
  Tcam6Compiler& comp() { return comp_; }
  std::mt19937_64& rng() { return rng_; }

 private:
  Tcam6Compiler comp_;
  Routes routes_, before_;
  std::mt19937_64 rng_;
};

// A fabric leaf: default route, /48 per pod, /56 per rack, a few /64 links;
// well under 32 routes, three uplinks/downlinks as codes.
TEST(Tcam6Compiler, DataCentreTableOffloadedCompletely) {
  Harness h(32);
  h.Set("::/0", 1);
  const char* pods[] = {"2001:db8:10::/48", "2001:db8:11::/48", "2001:db8:20::/48", "2001:db8:21::/48"};
  uint8_t code = 2;
  for (const char* pod : pods) {
    h.Set(pod, code);
    code = code == 3 ? 1 : code + 1;
  }
  h.Set("2001:db8:10:100::/56", 3);
  h.Set("2001:db8:10:200::/56", 1);
  h.Set("2001:db8:11:100::/56", 2);
  h.Set("2001:db8:20:300::/56", 1);
  h.Set("2001:db8:21:400::/56", 3);
  h.Set("2001:db8:21:500::/56", 2);
  h.Set("2001:db8:10:101::/64", 1);
  h.Set("2001:db8:10:102::/64", 2);
  h.Set("2001:db8:20:305::/64", 3);
  h.Set("2001:db8:ff:1::/64", 2);
  h.Set("2001:db8:ff:2::/64", 3);
  h.Set("2001:db8:ff:3::/64", 2);
  h.Set("fd00:1::/48", 3);
  h.Set("fd00:2::/56", 2);
  h.Commit("dc");
  ASSERT_LE(h.routes().size(), 32u);
  const Reference ref(h.routes());
  for (const auto& [p, r] : h.routes()) {
    const auto st = h.comp().StateOf(p);
    EXPECT_EQ(st.state, OffloadState::kOffloaded) << p.ToString() << " " << PuntReasonName(st.reason);
  }
  // Every sampled destination forwards, with the reference code.
  for (const auto& d : Destinations(h.routes(), {&h.comp().entries()}, h.rng(), 16)) {
    const uint8_t want = ref.Code(d);
    EXPECT_NE(want, 0) << d.ToString();
    EXPECT_EQ(TcamAnswer(h.comp().entries(), d), want) << d.ToString();
  }
  EXPECT_EQ(h.comp().covered_routes(), h.routes().size());
}

TEST(Tcam6Compiler, SameCodeSiblingsAggregate) {
  Harness h(2);
  // Four /50s with code 2 under a /32 with code 1: one /48 entry for all four.
  h.Set("2001:db8::/32", 1);
  h.Set("2001:db8:1::/50", 2);
  h.Set("2001:db8:1:4000::/50", 2);
  h.Set("2001:db8:1:8000::/50", 2);
  h.Set("2001:db8:1:c000::/50", 2);
  h.Commit("siblings");
  for (const auto& [p, r] : h.routes()) EXPECT_EQ(h.comp().StateOf(p).state, OffloadState::kOffloaded) << p.ToString();
  EXPECT_EQ(TcamAnswer(h.comp().entries(), A("2001:db8:1:9000::1")), 2);
  EXPECT_EQ(TcamAnswer(h.comp().entries(), A("2001:db8:2::1")), 1);
}

TEST(Tcam6Compiler, PuntRoutesAndLongPrefixesCutHoles) {
  Harness h(32);
  h.Set("2001:db8::/32", 1);
  h.Set("2001:db8:5::/48", 0, PuntReason::kUnresolved);
  h.Set("2001:db8:6::/48", 0, PuntReason::kToHost);
  h.Set("2001:db8:7:1::1/128", 2);  // its /64 must punt
  h.Set("2001:db8:8:1::1/128", 1);  // same code as its /64: the /64 may forward
  h.Commit("holes");
  const auto& t = h.comp().entries();
  EXPECT_EQ(TcamAnswer(t, A("2001:db8:5::1")), 0);
  EXPECT_EQ(TcamAnswer(t, A("2001:db8:6:ffff::1")), 0);
  EXPECT_EQ(TcamAnswer(t, A("2001:db8:7:1::2")), 0);
  EXPECT_EQ(TcamAnswer(t, A("2001:db8:7:1::1")), 0);
  EXPECT_EQ(TcamAnswer(t, A("2001:db8:8:1::1")), 1);
  EXPECT_EQ(TcamAnswer(t, A("2001:db8:9::1")), 1);
  EXPECT_EQ(h.comp().StateOf(P("2001:db8:5::/48")).reason, PuntReason::kUnresolved);
  EXPECT_EQ(h.comp().StateOf(P("2001:db8:6::/48")).reason, PuntReason::kToHost);
  EXPECT_EQ(h.comp().StateOf(P("2001:db8:7:1::1/128")).state, OffloadState::kPunted);
  EXPECT_EQ(h.comp().StateOf(P("2001:db8:7:1::1/128")).reason, PuntReason::kLongerThan64);
  EXPECT_EQ(h.comp().StateOf(P("2001:db8:8:1::1/128")).state, OffloadState::kOffloaded);
  const auto cover = h.comp().StateOf(P("2001:db8::/32"));
  EXPECT_EQ(cover.state, OffloadState::kPartial);
  EXPECT_EQ(cover.reason, PuntReason::kLongerThan64);
}

TEST(Tcam6Compiler, CapacityIsWhatTheDeviceSays) {
  Harness h(3);
  for (int i = 0; i < 12; ++i) {
    h.Set(Prefix::V6((U128{0x20010db8} << 96) | (U128(i) << 80), 48), Tcam6Route{uint8_t(1 + i % 3), {}, 1});
  }
  h.Commit("cap3");
  int offloaded = 0;
  for (const auto& [p, r] : h.routes()) {
    const auto st = h.comp().StateOf(p);
    if (st.state == OffloadState::kOffloaded) ++offloaded;
    else EXPECT_EQ(st.reason, PuntReason::kTcamFull);
  }
  // Codes repeat every third /48, so the /44 .. /48 aggregates cannot merge
  // neighbours; three entries offload at least three routes.
  EXPECT_GE(offloaded, 3);
  EXPECT_EQ(h.comp().covered_routes(), uint64_t(offloaded));
}

TEST(Tcam6Compiler, WeightsDecideWhatFits) {
  Harness h(1);
  h.Set(P("2001:db8:1::/48"), Tcam6Route{1, {}, 1});
  h.Set(P("2001:db8:2::/48"), Tcam6Route{2, {}, 10});
  h.Commit("weights");
  EXPECT_EQ(h.comp().StateOf(P("2001:db8:2::/48")).state, OffloadState::kOffloaded);
  EXPECT_EQ(h.comp().StateOf(P("2001:db8:1::/48")).state, OffloadState::kPunted);
  EXPECT_EQ(h.comp().covered_weight(), 10u);
}

TEST(Tcam6Compiler, NoChangeNoWrites) {
  Harness h(8);
  h.Set("2001:db8::/32", 1);
  h.Set("2001:db8:1::/48", 2);
  EXPECT_FALSE(h.Commit("first").empty());
  h.Set("2001:db8::/32", 1);
  EXPECT_TRUE(h.Commit("same").empty());
  // A small change is a small write sequence: one new hole, nothing else moves.
  h.Set("2001:db8:2::/48", 0, PuntReason::kNoSlot);
  const auto w = h.Commit("hole");
  EXPECT_EQ(w.size(), 1u);
}

// A full TCAM where the only safe path is through punting: the hole below a
// covering entry becomes a forwarding entry with another code.
TEST(Tcam6Compiler, FullTcamChangeStaysSafe) {
  Harness h(2);
  h.Set("2001:db8::/32", 1);
  h.Set("2001:db8:1::/48", 0, PuntReason::kUnresolved);
  h.Commit("before");
  h.Set("2001:db8:1::/48", 2);
  const auto w = h.Commit("after");
  EXPECT_FALSE(w.empty());
  EXPECT_EQ(TcamAnswer(h.comp().entries(), A("2001:db8:1::1")), 2);
}

TEST(Tcam6Compiler, RandomTablesAndChanges) {
  const uint64_t seed = std::random_device{}();
  std::printf("RandomTablesAndChanges seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  int fallbacks = 0, commits = 0;
  for (int table = 0; table < 40; ++table) {
    const uint32_t cap = 1 + uint32_t(rng() % 32);
    Harness h(cap, rng());
    std::vector<Prefix> known;
    const int n = 1 + int(rng() % 120);
    auto random_route = [&] { return RandomRoute(rng, 3); };
    for (int i = 0; i < n; ++i) {
      const Prefix p = RandomPrefix(rng, known);
      known.push_back(p);
      h.Set(p, random_route());
    }
    h.Commit("seed " + std::to_string(seed) + " table " + std::to_string(table) + " initial");
    for (int round = 0; round < 12; ++round) {
      const int changes = 1 + int(rng() % 4);
      for (int c = 0; c < changes; ++c) {
        const int kind = int(rng() % 3);
        if (kind == 0 || known.empty()) {
          const Prefix p = RandomPrefix(rng, known);
          known.push_back(p);
          h.Set(p, random_route());
        } else if (kind == 1) {
          h.Erase(known[rng() % known.size()]);
        } else {
          h.Set(known[rng() % known.size()], random_route());
        }
      }
      h.Commit("seed " + std::to_string(seed) + " table " + std::to_string(table) + " round " +
               std::to_string(round));
      fallbacks += h.comp().last_plan_fell_back();
      ++commits;
      if (HasFatalFailure() || HasFailure()) return;
    }
  }
  std::printf("%d of %d commits used the always-safe write order\n", fallbacks, commits);
}

}  // namespace
}  // namespace fibnic::tcam6test
