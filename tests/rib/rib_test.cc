// The RIB's Robin Hood table against a plain reference (std::map of every
// source's candidate per prefix): random upserts and erases over a pool of
// prefixes large enough to grow the table many times and to shift entries
// back on every kind of delete. Every change's reported (old best, new best,
// dropped) and every touched prefix's candidates are checked; the whole table
// is compared at intervals, and the parent search (ParentV4) at every step. Seeds are printed; FIBNIC_SEED replays one.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>

#include "rib/rib.h"
#include "tests/support/test_seed.h"

namespace fibnic {
namespace {

// The reference: per prefix, per source, the candidate.
using Model = std::map<Prefix, std::map<RouteSource, RibCand>>;

// Best first: lowest distance, then lowest source.
std::vector<RibCand> Ranked(const Model& m, const Prefix& p) {
  std::vector<RibCand> out;
  auto it = m.find(p);
  if (it == m.end()) return out;
  for (const auto& [s, c] : it->second) out.push_back(c);
  std::stable_sort(out.begin(), out.end(), [](const RibCand& a, const RibCand& b) { return a.distance < b.distance; });
  return out;
}

NhgId BestGroup(const Model& m, const Prefix& p) {
  const auto r = Ranked(m, p);
  return r.empty() ? kNoGroup : r.front().nhg;
}

Prefix RandomPrefix(std::mt19937_64& rng) {
  // Few distinct lengths per family and a narrow address space, so prefixes
  // repeat (updates, second sources) and /0, /32, /128 appear.
  if (rng() % 4 == 0) {
    static constexpr int kLens6[] = {0, 32, 48, 56, 64, 127, 128};
    const int len = kLens6[rng() % 7];
    const U128 addr = (U128{0x20010db8} << 96) | (U128(rng() % 4096) << 64) | U128(rng() % 3);
    return *Prefix::Make(IpAddr::V6(addr), len);
  }
  static constexpr int kLens4[] = {0, 8, 16, 20, 24, 24, 24, 28, 32};
  const int len = kLens4[rng() % 9];
  return Prefix::V4(static_cast<uint32_t>(rng() % 60000) << 8 | static_cast<uint32_t>(rng() % 2), len);
}

void ExpectSameAsModel(const Rib& rib, const Model& m, const Prefix& p) {
  const auto want = Ranked(m, p);
  EXPECT_EQ(rib.Candidates(p), want) << p.ToString();
  const auto best = rib.Best(p);
  ASSERT_EQ(best.has_value(), !want.empty()) << p.ToString();
  if (best) {
    EXPECT_EQ(*best, want.front()) << p.ToString();
  }
}

// What one random step must leave: the change it reported, the prefix's
// candidates as the reference ranks them, the count, and (IPv4 up to /24)
// a delete's parent search — the longest shorter prefix with a route.
void CheckStep(const Rib& rib, const Model& model, const Prefix& p, const RibChange& got, NhgId old_best,
               NhgId dropped, size_t candidates, std::mt19937_64& rng, int step) {
  ASSERT_EQ(got.old_best, old_best) << "step " << step << " " << p.ToString();
  ASSERT_EQ(got.new_best, BestGroup(model, p)) << "step " << step << " " << p.ToString();
  ASSERT_EQ(got.dropped, dropped) << "step " << step << " " << p.ToString();
  ExpectSameAsModel(rib, model, p);
  ASSERT_EQ(rib.candidates(), candidates);
  if (p.family() == Family::kV4 && p.len() <= 24) {
    const uint32_t addr = p.addr().v4() | static_cast<uint32_t>(rng() & 0xFF);
    std::optional<std::pair<int, RibCand>> want;
    for (int l = p.len() - 1; l >= 0 && !want; --l) {
      const auto r = Ranked(model, Prefix::V4(addr, l));
      if (!r.empty()) want = std::make_pair(l, r.front());
    }
    ASSERT_EQ(rib.ParentV4(addr, p.len()), want) << "step " << step << " " << p.ToString();
  }
}

TEST(Rib, RandomOperationsMatchReference) {
  std::mt19937_64 rng(testing::TestSeed("Rib"));
  Rib rib;
  Model model;
  size_t candidates = 0;
  for (int step = 0; step < 400'000; ++step) {
    const Prefix p = RandomPrefix(rng);
    const auto source = static_cast<RouteSource>(rng() % kRouteSourceCount);
    const NhgId old_best = BestGroup(model, p);
    auto& cands = model[p];
    const auto had = cands.find(source);
    const NhgId dropped = had == cands.end() ? kNoGroup : had->second.nhg;
    RibChange got;
    if (rng() % 100 < 55) {
      // Few distances, so ties between sources are common.
      const RibCand c{source, static_cast<uint8_t>(1 + rng() % 3), static_cast<NhgId>(1 + rng() % 50)};
      if (rng() % 500 == 0) rib.ReserveV4(rng() % 5000);  // a bulk load's reservation changes nothing
      if (p.family() == Family::kV4) rib.PrefetchV4(p.addr().v4(), static_cast<uint8_t>(p.len()));
      // IPv4 also through the address+length entry point, host bits set.
      got = p.family() == Family::kV4 && rng() % 2
                ? rib.UpsertV4(p.addr().v4() | (p.len() < 32 ? ~0u >> p.len() : 0u), static_cast<uint8_t>(p.len()), c)
                : rib.Upsert(p, c);
      candidates += had == cands.end();
      cands[source] = c;
    } else {
      got = p.family() == Family::kV4 && rng() % 2
                ? rib.EraseV4(p.addr().v4() | (p.len() < 32 ? ~0u >> p.len() : 0u), static_cast<uint8_t>(p.len()), source)
                : rib.Erase(p, source);
      if (had != cands.end()) {
        cands.erase(had);
        --candidates;
      }
    }
    if (cands.empty()) model.erase(p);
    ASSERT_NO_FATAL_FAILURE(CheckStep(rib, model, p, got, old_best, dropped, candidates, rng, step));
    if (step % 50'000 == 0 || step == 399'999) {
      size_t n[2] = {0, 0};
      for (const auto& [q, c] : model) ++n[q.family() == Family::kV4 ? 0 : 1];
      ASSERT_EQ(rib.size(Family::kV4), n[0]);
      ASSERT_EQ(rib.size(Family::kV6), n[1]);
      for (Family f : {Family::kV4, Family::kV6}) {
        size_t seen = 0;
        rib.ForEach(f, [&](const Prefix& q, const RibCand& best) {
          ++seen;
          const auto want = Ranked(model, q);
          ASSERT_FALSE(want.empty()) << q.ToString();
          EXPECT_EQ(best, want.front()) << q.ToString();
        });
        EXPECT_EQ(seen, n[f == Family::kV4 ? 0 : 1]);
        for (int len = 0; len <= (f == Family::kV4 ? 32 : 128); ++len) {
          bool any = false;
          for (const auto& [q, c] : model) any |= q.family() == f && q.len() == len;
          ASSERT_EQ(rib.HasLength(f, len), any) << len;
        }
      }
    }
  }
  std::cout << model.size() << " prefixes at the end, " << candidates << " candidates\n";
}

// Candidates a slot's word cannot hold: group ids from 2^19 up and more
// (source, distance) pairs than it interns (16) live in the side map, alone
// or beside others, and come back inline when replaced by one that fits.
// Checked against the same reference, change by change.
TEST(Rib, CandidatesTheSlotCannotHoldMatchReference) {
  std::mt19937_64 rng(testing::TestSeed("Rib"));
  Rib rib;
  Model model;
  size_t candidates = 0;
  for (int step = 0; step < 100'000; ++step) {
    const Prefix p = RandomPrefix(rng);
    const auto source = static_cast<RouteSource>(rng() % kRouteSourceCount);
    const NhgId old_best = BestGroup(model, p);
    auto& cands = model[p];
    const auto had = cands.find(source);
    const NhgId dropped = had == cands.end() ? kNoGroup : had->second.nhg;
    RibChange got;
    if (rng() % 100 < 55) {
      // 40 distances (more kinds than fit) and a third of the groups wide.
      const NhgId nhg = rng() % 3 == 0 ? (NhgId{1} << 19) + static_cast<NhgId>(rng() % 50)
                                       : static_cast<NhgId>(1 + rng() % 50);
      const RibCand c{source, static_cast<uint8_t>(1 + rng() % 40), nhg};
      got = rib.Upsert(p, c);
      candidates += had == cands.end();
      cands[source] = c;
    } else {
      got = rib.Erase(p, source);
      if (had != cands.end()) {
        cands.erase(had);
        --candidates;
      }
    }
    if (cands.empty()) model.erase(p);
    ASSERT_NO_FATAL_FAILURE(CheckStep(rib, model, p, got, old_best, dropped, candidates, rng, step));
  }
  size_t n[2] = {0, 0};
  for (const auto& [q, c] : model) ++n[q.family() == Family::kV4 ? 0 : 1];
  for (Family f : {Family::kV4, Family::kV6}) {
    size_t seen = 0;
    rib.ForEach(f, [&](const Prefix& q, const RibCand& best) {
      ++seen;
      const auto want = Ranked(model, q);
      ASSERT_FALSE(want.empty()) << q.ToString();
      EXPECT_EQ(best, want.front()) << q.ToString();
    });
    EXPECT_EQ(seen, n[f == Family::kV4 ? 0 : 1]);
    EXPECT_EQ(rib.size(f), seen);
  }
}

// A table load: many new prefixes after one reservation, then every one
// erased again (backward shifts through full clusters), in random order.
TEST(Rib, BulkLoadThenEraseAll) {
  std::mt19937_64 rng(testing::TestSeed("Rib"));
  Rib rib;
  std::vector<Prefix> all;
  for (uint32_t i = 0; i < 300'000; ++i) all.push_back(Prefix::V4(i << 8, 24));
  std::shuffle(all.begin(), all.end(), rng);
  rib.ReserveV4(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    const auto ch = rib.Upsert(all[i], RibCand{RouteSource::kStatic, 1, static_cast<NhgId>(1 + i % 7)});
    ASSERT_EQ(ch.old_best, kNoGroup);
  }
  EXPECT_EQ(rib.size(Family::kV4), all.size());
  std::shuffle(all.begin(), all.end(), rng);
  for (size_t i = 0; i < all.size(); ++i) {
    ASSERT_TRUE(rib.Best(all[i]).has_value()) << all[i].ToString();
    ASSERT_NE(rib.Erase(all[i], RouteSource::kStatic).dropped, kNoGroup);
    ASSERT_FALSE(rib.Best(all[i]).has_value());
    if (i % 1000 == 0 && i + 1 < all.size()) {
      ASSERT_TRUE(rib.Best(all[i + 1]).has_value());
    }
  }
  EXPECT_EQ(rib.size(Family::kV4), 0u);
  EXPECT_FALSE(rib.HasLength(Family::kV4, 24));
}

}  // namespace
}  // namespace fibnic
