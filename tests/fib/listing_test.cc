// Seekable route listings and Counts() on random tables and after random
// update sequences from several sources. The references: the test's own
// table of candidates (best = lowest distance, then lowest source), filtered
// and ordered by a plain std::map; each route's RouteInfo from GetRoute(),
// whose per-route /24 walk is also the oracle for Counts() and for a pass in
// steps (CountStep). Seeds are
// printed; FIBNIC_SEED replays one.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>

#include "tests/fib/random_world.h"
#include "tests/support/test_seed.h"

namespace fibnic::testing {
namespace {

struct Cand {
  uint8_t distance = 0;
  std::vector<NextHop> paths;
};

// Every source's route per prefix, as the test fed them.
struct Table {
  std::map<Prefix, std::map<RouteSource, Cand>> routes;

  // The best candidate: lowest distance, then lowest source.
  std::pair<RouteSource, Cand> Best(const Prefix& p) const {
    const auto& cands = routes.at(p);
    auto best = cands.begin();
    for (auto it = cands.begin(); it != cands.end(); ++it) {
      if (it->second.distance < best->second.distance) best = it;
    }
    return *best;
  }
  std::vector<Prefix> Select(const RouteQuery& q) const {
    std::vector<Prefix> out;
    for (const auto& [p, cands] : routes) {
      if (p.family() != q.family || (q.after && !(*q.after < p))) continue;
      if ((q.within && !q.within->Contains(p)) || (q.covering && !p.Contains(*q.covering))) continue;
      if (q.source && Best(p).first != *q.source) continue;
      out.push_back(p);
    }
    return out;
  }
};

class Harness {
 public:
  Harness(uint64_t seed, int code_bits) : gen_(seed) {
    FibConfig cfg;
    cfg.caps = code_bits == 4 ? regs::Caps::Model4Bit() : regs::Caps::Model2Bit();
    fib_ = std::make_unique<Fib>(cfg);
    shape_.gateways = code_bits == 4 ? 20 : 6;  // more gateways than slots: some routes punt
    World w = gen_.Make(shape_);
    gen_.AddV6(w, shape6_);
    for (const auto& [a, n] : w.neigh) fib_->UpsertNeighbor(n);
    for (const auto& [p, paths] : w.routes) Upsert(p, RouteSource::kStatic, 1, paths);
    // Both halves of a few short routes: those routes keep no /24 of their own (shadowed).
    for (int i = 0; i < 6; ++i) {
      const Prefix p = gen_.RandomPrefix(shape_);
      if (p.len() > 23) continue;
      const uint32_t half = 1u << (31 - p.len());
      Upsert(p, RouteSource::kStatic, 1, gen_.RandomPaths(shape_));
      Upsert(Prefix::V4(p.addr().v4(), p.len() + 1), RouteSource::kStatic, 1, gen_.RandomPaths(shape_));
      Upsert(Prefix::V4(p.addr().v4() + half, p.len() + 1), RouteSource::kStatic, 1, gen_.RandomPaths(shape_));
    }
    // Other sources on some prefixes, winning (kernel, distance 0) or losing (api, distance 20).
    std::vector<Prefix> prefixes;
    for (const auto& [p, c] : table_.routes) prefixes.push_back(p);
    for (const Prefix& p : prefixes) {
      const auto roll = rng()() % 10;
      if (roll == 0) Upsert(p, RouteSource::kKernel, 0, {gen_.Gateway(static_cast<int>(rng()() % 6))});
      if (roll == 1) Upsert(p, RouteSource::kApi, 20, {gen_.Gateway(static_cast<int>(rng()() % 6))});
    }
  }

  std::mt19937_64& rng() { return gen_.rng(); }
  Fib& fib() { return *fib_; }
  const Table& table() const { return table_; }

  void Upsert(const Prefix& p, RouteSource s, uint8_t distance, std::vector<NextHop> paths) {
    std::sort(paths.begin(), paths.end());
    paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
    table_.routes[p][s] = Cand{distance, paths};
    fib_->UpsertRoute(Route{p, s, distance, paths});
  }

  // One random change: a route of any source added, changed or deleted, or a
  // gateway neighbour failing, recovering or moving port.
  void RandomOp() {
    const int op = static_cast<int>(rng()() % 100);
    const RouteSource s = static_cast<RouteSource>(rng()() % kRouteSourceCount);
    const uint8_t distance = s == RouteSource::kKernel ? 0 : s == RouteSource::kStatic ? 1 : 20;
    if (op < 35) {
      Upsert(gen_.RandomPrefix(shape_), s, distance, gen_.RandomPaths(shape_));
    } else if (op < 45) {
      Upsert(gen_.RandomPrefix6(), s, distance, gen_.RandomPaths6(shape6_));
    } else if (op < 80 && !table_.routes.empty()) {
      auto it = std::next(table_.routes.begin(), static_cast<long>(rng()() % table_.routes.size()));
      const RouteSource gone = std::next(it->second.begin(), static_cast<long>(rng()() % it->second.size()))->first;
      fib_->DeleteRoute(it->first, gone);
      it->second.erase(gone);
      if (it->second.empty()) table_.routes.erase(it);
    } else {
      const int k = static_cast<int>(rng()() % static_cast<uint64_t>(shape_.gateways));
      const NextHop g = rng()() % 2 ? gen_.Gateway(k) : gen_.Gateway6(k);
      Neighbor n{*g.gateway, gen_.RandomMac(), g.port, NeighState::kReachable};
      const int how = static_cast<int>(rng()() % 4);
      if (how == 1) n.state = NeighState::kFailed;
      if (how == 2) n.port = static_cast<PortId>((n.port + 1) % 4);
      if (how == 3) {
        fib_->DeleteNeighbor(n.addr, n.port);
      } else {
        fib_->UpsertNeighbor(n);
      }
    }
  }

 private:
  RandomWorlds gen_;
  WorldShape shape_;
  WorldShape6 shape6_;
  std::unique_ptr<Fib> fib_;
  Table table_;
};

void ExpectSameInfo(const RouteInfo& got, const RouteInfo& want) {
  EXPECT_EQ(got.route.prefix, want.route.prefix);
  EXPECT_EQ(got.route.source, want.route.source);
  EXPECT_EQ(got.route.distance, want.route.distance);
  EXPECT_EQ(got.route.paths, want.route.paths);
  EXPECT_EQ(got.best, want.best);
  EXPECT_EQ(got.state, want.state);
  EXPECT_EQ(got.reason, want.reason);
  EXPECT_EQ(got.slash24_total, want.slash24_total);
  EXPECT_EQ(got.slash24_punted, want.slash24_punted);
}

// Pages of random sizes, each starting after the previous page's last prefix.
std::vector<RouteInfo> Paged(const Fib& fib, RouteQuery q, std::mt19937_64& rng) {
  std::vector<RouteInfo> all;
  for (;;) {
    const size_t page = 1 + rng() % 40;
    std::vector<RouteInfo> got;
    fib.ForEachRoute(q, [&](const RouteInfo& r) {
      got.push_back(r);
      return got.size() < page;
    });
    all.insert(all.end(), got.begin(), got.end());
    if (got.size() < page) return all;
    q.after = got.back().route.prefix;
  }
}

std::vector<Prefix> PrefixesOf(const std::vector<RouteInfo>& infos) {
  std::vector<Prefix> out;
  for (const auto& i : infos) out.push_back(i.route.prefix);
  return out;
}

// Every route of both families, paged: the reference's order, each once, the
// reference's best candidate with GetRoute's RouteInfo; Counts() equal to the
// states GetRoute gives summed. Returns those reference counts.
FibCounts CheckAll(Fib& fib, const Table& table, std::mt19937_64& rng) {
  FibCounts want;
  for (Family f : {Family::kV4, Family::kV6}) {
    RouteQuery q;
    q.family = f;
    const auto got = Paged(fib, q, rng);
    const auto ref = table.Select(q);
    EXPECT_EQ(PrefixesOf(got), ref) << FamilyName(f);
    if (got.size() != ref.size()) continue;
    // StatesOf, asked of all at once in a random order, answers as StateOf.
    std::vector<size_t> shuffled(ref.size());
    for (size_t i = 0; i < shuffled.size(); ++i) shuffled[i] = i;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    std::vector<Prefix> asked;
    std::vector<size_t> asked_at(ref.size());  // ref index -> position in asked
    for (const size_t i : shuffled) {
      asked_at[i] = asked.size();
      asked.push_back(ref[i]);
    }
    std::vector<std::vector<std::optional<Fib::SourceState>>> batch;
    for (int k = 0; k < kRouteSourceCount; ++k) batch.push_back(fib.StatesOf(asked, static_cast<RouteSource>(k)));
    for (size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE(ref[i].ToString());
      const auto [source, cand] = table.Best(ref[i]);
      EXPECT_EQ(got[i].route.source, source);
      EXPECT_EQ(got[i].route.paths, cand.paths);
      const auto cands = fib.GetRoute(ref[i]);
      EXPECT_FALSE(cands.empty());
      if (cands.empty()) continue;
      ExpectSameInfo(got[i], cands[0]);
      // StateOf (the FPM offload replies' query): each source's candidate,
      // best or not, with GetRoute's state; none for a source with no route.
      for (int k = 0; k < kRouteSourceCount; ++k) {
        const auto s = static_cast<RouteSource>(k);
        const auto state = fib.StateOf(ref[i], s);
        const bool held = table.routes.at(ref[i]).count(s) > 0;
        EXPECT_EQ(state.has_value(), held) << "source " << k;
        const auto& in_batch = batch[k][asked_at[i]];
        EXPECT_EQ(in_batch.has_value(), held) << "source " << k << " (StatesOf)";
        if (in_batch && state) {
          EXPECT_EQ(in_batch->best, state->best) << "source " << k << " (StatesOf)";
          EXPECT_EQ(in_batch->state, state->state) << "source " << k << " (StatesOf)";
        }
        if (!state || !held) continue;
        EXPECT_EQ(state->best, s == source) << "source " << k;
        for (const auto& c : cands) {
          if (c.route.source == s) {
            EXPECT_EQ(state->state, c.state) << "source " << k;
          }
        }
      }
      ++want.routes[f == Family::kV4 ? 0 : 1][static_cast<int>(cands[0].state)];
      want.shadowed[f == Family::kV4 ? 0 : 1] += cands[0].reason == PuntReason::kShadowed;
    }
  }
  auto expect_counts = [&](const FibCounts& c, const char* how) {
    for (int f = 0; f < 2; ++f) {
      for (int s = 0; s < 3; ++s) {
        EXPECT_EQ(c.routes[f][s], want.routes[f][s]) << how << ": family " << f << " state " << s;
      }
      EXPECT_EQ(c.shadowed[f], want.shadowed[f]) << how << ": family " << f << " shadowed";
    }
  };
  expect_counts(fib.Counts(), "Counts()");
  // In steps as short as they come (each stops at its first look at the
  // clock): a pass cut anywhere, resumed from its positions, counts the same.
  Fib::CountsPassPtr pass = fib.StartCounts();
  FibCounts stepped;
  int steps = 1;
  Fib::CountsProgress progress;
  while ((progress = fib.CountStep(*pass, std::chrono::steady_clock::now(), &stepped)) == Fib::CountsProgress::kMore) {
    ++steps;
  }
  EXPECT_EQ(progress, Fib::CountsProgress::kDone);
  EXPECT_GT(steps, 256) << "2^24 cells, a clock look every 2^16: a pass of one step was not cut";
  expect_counts(stepped, "CountStep()");
  return want;
}

// A random filter combination, with prefixes near the table's routes.
RouteQuery RandomQuery(const Table& table, std::mt19937_64& rng) {
  std::vector<Prefix> prefixes;
  for (const auto& [p, c] : table.routes) prefixes.push_back(p);
  auto some = [&] { return prefixes[rng() % prefixes.size()]; };
  auto around = [&](const Prefix& p) {  // a supernet, itself, or an address inside
    const int bits = FamilyBits(p.family());
    const int len = static_cast<int>(rng() % static_cast<uint64_t>(bits + 1));
    return *Prefix::Make(p.addr(), len <= p.len() ? len : bits);
  };
  RouteQuery q;
  q.family = rng() % 3 ? Family::kV4 : Family::kV6;
  if (rng() % 2) q.after = rng() % 4 ? some() : around(some());  // in the table or not, either family
  if (rng() % 2) q.within = around(some());
  if (rng() % 4 == 0) q.covering = around(some());
  if (rng() % 4 == 0) q.source = static_cast<RouteSource>(rng() % kRouteSourceCount);
  return q;
}

void CheckFilters(const Fib& fib, const Table& table, std::mt19937_64& rng, int queries) {
  for (int i = 0; i < queries; ++i) {
    const RouteQuery q = RandomQuery(table, rng);
    SCOPED_TRACE(std::string(FamilyName(q.family)) + " after " + (q.after ? q.after->ToString() : "-") + " within " +
                 (q.within ? q.within->ToString() : "-") + " covering " +
                 (q.covering ? q.covering->ToString() : "-") + " source " +
                 (q.source ? RouteSourceName(*q.source) : "-"));
    EXPECT_EQ(PrefixesOf(Paged(fib, q, rng)), table.Select(q));
  }
}

class Listing : public ::testing::TestWithParam<int> {};

TEST_P(Listing, RandomTablesPageAndCountLikeTheReference) {
  uint64_t states[3] = {};
  for (int round = 0; round < 3; ++round) {
    Harness h(TestSeed("ListingTable"), GetParam());
    for (bool committed : {false, true}) {  // pending routes are listed too
      if (committed) h.fib().Commit();
      const FibCounts c = CheckAll(h.fib(), h.table(), h.rng());
      for (int s = 0; s < 3; ++s) states[s] += c.routes[0][s];
      CheckFilters(h.fib(), h.table(), h.rng(), 40);
    }
  }
  // The tables reach every state, so each of Counts()'s cases was compared.
  for (int s = 0; s < 3; ++s) EXPECT_GT(states[s], 0u) << OffloadStateName(static_cast<OffloadState>(s));
}

TEST_P(Listing, UpdateSequencesKeepPagesAndCountsExact) {
  Harness h(TestSeed("ListingSequence"), GetParam());
  h.fib().Commit();
  for (int step = 1; step <= 8; ++step) {
    for (int i = 0; i < 40; ++i) h.RandomOp();
    if (step % 3 != 0) h.fib().Commit();  // every third check sees uncommitted changes
    CheckAll(h.fib(), h.table(), h.rng());
    CheckFilters(h.fib(), h.table(), h.rng(), 10);
  }
}

TEST(ListingEdges, AfterAndFiltersOfTheOtherFamily) {
  Fib fib{FibConfig{}};
  const Prefix v4 = *Prefix::Parse("10.0.0.0/8"), v6 = *Prefix::Parse("2001:db8::/32");
  for (const Prefix& p : {v4, v6}) fib.UpsertRoute(Route{p, RouteSource::kStatic, 1, {NextHop::ToHost()}});
  auto list = [&](Family f, std::optional<Prefix> after, std::optional<Prefix> within) {
    RouteQuery q;
    q.family = f;
    q.after = after;
    q.within = within;
    std::vector<Prefix> out;
    fib.ForEachRoute(q, [&](const RouteInfo& r) {
      out.push_back(r.route.prefix);
      return true;
    });
    return out;
  };
  EXPECT_EQ(list(Family::kV6, v4, std::nullopt), std::vector<Prefix>{v6});  // IPv4 sorts before IPv6
  EXPECT_TRUE(list(Family::kV4, v6, std::nullopt).empty());
  EXPECT_TRUE(list(Family::kV4, v4, std::nullopt).empty());
  EXPECT_TRUE(list(Family::kV4, std::nullopt, v6).empty());
  EXPECT_EQ(list(Family::kV4, *Prefix::Parse("9.255.255.255/32"), v4), std::vector<Prefix>{v4});
}

// A pass in steps is of one state of the Fib: a change between two steps
// (here a route whose /24 the pass has not reached yet, which would
// otherwise be counted) voids it, and a new pass counts the change.
TEST(CountSteps, AChangeBetweenStepsVoidsThePass) {
  Fib fib{FibConfig{}};
  fib.UpsertRoute(Route{*Prefix::Parse("10.0.0.0/8"), RouteSource::kStatic, 1, {NextHop::ToHost()}});
  fib.Commit();
  Fib::CountsPassPtr pass = fib.StartCounts();
  FibCounts c;
  ASSERT_EQ(fib.CountStep(*pass, std::chrono::steady_clock::now(), &c), Fib::CountsProgress::kMore);
  fib.UpsertRoute(Route{*Prefix::Parse("203.0.113.0/24"), RouteSource::kStatic, 1, {NextHop::ToHost()}});
  EXPECT_EQ(fib.CountStep(*pass, std::chrono::steady_clock::time_point::max(), &c), Fib::CountsProgress::kVoid);
  fib.Commit();
  pass = fib.StartCounts();
  ASSERT_EQ(fib.CountStep(*pass, std::chrono::steady_clock::time_point::max(), &c), Fib::CountsProgress::kDone);
  EXPECT_EQ(c.routes[0][0] + c.routes[0][1] + c.routes[0][2], 2u);
  EXPECT_EQ(c.commits, fib.commits());
}

INSTANTIATE_TEST_SUITE_P(Models, Listing, ::testing::Values(2, 4));

}  // namespace
}  // namespace fibnic::testing
