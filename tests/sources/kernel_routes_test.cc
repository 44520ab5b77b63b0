// KernelRoutes (the kernel source's compact route store) against a plain
// map of each prefix's routes: random puts, takes, dump generations, notes
// and walks; each prefix's routes and note, the sweep's and the walks'
// answers, and the kinds' made/freed notifications (the gateway counts hang
// on them) must match what the plain map implies. A note survives its
// prefix's changes and goes with its last route.
#include "sources/kernel/kernel_routes.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "tests/support/test_seed.h"

namespace fibnic {
namespace {

KernelRouteKey KeyOfForTest(int rank, const NlRoute& r) {
  return {rank, r.priority, r.tos, r.nh_id, r.paths.size() == 1 ? r.paths[0].gateway : std::nullopt, r.type, 0};
}

std::string Describe(const NlRoute& r) {
  std::string s = r.prefix.ToString() + " t" + std::to_string(r.table) + " m" + std::to_string(r.priority) + " nh" +
                  std::to_string(r.nh_id) + " type" + std::to_string(r.type);
  for (const NlPath& x : r.paths) s += " via " + (x.gateway ? x.gateway->ToString() : "-") + "/" + std::to_string(x.ifindex);
  return s;
}

bool SameRoute(const NlRoute& a, const NlRoute& b) {
  return a.prefix == b.prefix && a.table == b.table && a.protocol == b.protocol && a.type == b.type &&
         a.scope == b.scope && a.tos == b.tos && a.flags == b.flags && a.priority == b.priority && a.nh_id == b.nh_id &&
         a.paths == b.paths && a.metrics_and_src == b.metrics_and_src && a.unsupported == b.unsupported;
}

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  uint32_t Below(uint32_t n) { return std::uniform_int_distribution<uint32_t>(0, n - 1)(rng_); }
  Prefix SomePrefix() {
    switch (Below(3)) {
      case 0: return Prefix::V4(0x0A000000u | Below(64) << 8, 24);
      case 1: return Prefix::V6(static_cast<U128>(0x20010db8u) << 96 | static_cast<U128>(Below(32)) << 64, 64);
      default: return Prefix::V6(static_cast<U128>(0x20010db8u) << 96 | Below(16), 128);
    }
  }
  NlRoute SomeRoute(const Prefix& p) {
    NlRoute r;
    r.prefix = p;
    r.table = Below(4) == 0 ? 255 : 254;
    r.protocol = Below(2) == 0 ? 186 : 4;
    r.type = Below(8) == 0 ? 6 : 1;
    r.priority = Below(3) * 100;
    if (Below(4) == 0) {
      r.nh_id = 1 + Below(4);
    } else {
      for (uint32_t i = 0, n = 1 + Below(2); i < n; ++i) {
        NlPath x;
        x.gateway = p.family() == Family::kV4 ? IpAddr::V4(0x0A090000u | Below(4)) : IpAddr::V6(0xfe80 | Below(4));
        x.ifindex = 2 + Below(3);
        r.paths.push_back(x);
      }
    }
    if (Below(16) == 0) r.metrics_and_src = "mtu" + std::to_string(Below(2));
    return r;
  }

 private:
  std::mt19937_64 rng_;
};

TEST(KernelRoutesRandom, MatchesAPlainMapOfEachPrefixsRoutes) {
  const uint64_t seed = testing::TestSeed("KernelRoutesRandom");
  Gen g(seed);
  // The made/freed notifications, counted per route content: what is alive.
  std::map<std::string, int> alive;
  KernelRoutes store(&KeyOfForTest, [&](const NlRoute& r, int delta) { alive[Describe(r)] += delta; });
  std::map<Prefix, KernelRouteEntries> model;
  std::map<Prefix, uint8_t> notes, givens;  // absent = 0
  uint64_t gen = 1;
  for (int step = 0; step < 20000; ++step) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " step " + std::to_string(step));
    const uint32_t op = g.Below(100);
    if (op < 2) {
      ++gen;
      store.ClearSeen();
      continue;
    }
    const Prefix p = g.SomePrefix();
    if (op < 8) {  // a note and a given record, on a prefix held or not
      const uint8_t n = static_cast<uint8_t>(g.Below(4)), gv = static_cast<uint8_t>(g.Below(4));
      store.SetNote(p, n);
      store.SetGiven(p, gv);
      if (model.count(p)) notes[p] = n, givens[p] = gv;
      ASSERT_EQ(store.note(p), model.count(p) ? n : 0) << p.ToString();
      ASSERT_EQ(store.given(p), model.count(p) ? std::optional<uint8_t>(gv) : std::nullopt) << p.ToString();
      continue;
    }
    if (op == 8 && g.Below(20) == 0) {
      store.ClearNotes();
      notes.clear();
      continue;
    }
    // Take, change, put back — as KernelTable does for every message.
    KernelRouteEntries taken = store.Take(p, gen);
    KernelRouteEntries& want = model[p];
    ASSERT_EQ(taken.size(), want.size()) << p.ToString();
    for (const auto& [key, e] : want) {
      auto it = taken.find(key);
      ASSERT_NE(it, taken.end()) << p.ToString();
      EXPECT_TRUE(SameRoute(it->second.route, e.route)) << Describe(it->second.route) << " != " << Describe(e.route);
      EXPECT_EQ(it->second.gen == gen, e.gen == gen) << Describe(e.route);
      EXPECT_EQ(it->second.unlisted, e.unlisted) << Describe(e.route);
      if (want.size() > 1 || e.several || e.unlisted) {
        EXPECT_EQ(it->second.several, e.several);
        EXPECT_EQ(it->second.order, e.order);
      }
    }
    if (op < 40 && !want.empty()) {
      want.erase(std::next(want.begin(), g.Below(static_cast<uint32_t>(want.size()))));
    } else if (op < 45) {
      want.clear();
    } else if (op < 50 && !want.empty()) {
      want.begin()->second.gen = gen;  // seen again in the dump, unchanged
    } else {
      const int rank = g.Below(3);
      KernelRouteEntry e{g.SomeRoute(p), gen, g.Below(8) == 0, g.Below(16) == 0, static_cast<int64_t>(g.Below(5)) - 2};
      want[KeyOfForTest(rank, e.route)] = e;
    }
    if (want.size() == 1 && !want.begin()->second.several && !want.begin()->second.unlisted) {
      want.begin()->second.order = 0;  // an only route has none
    }
    store.Put(p, want, gen);
    if (want.empty()) {
      model.erase(p);
      notes.erase(p);
      givens.erase(p);
    }
    ASSERT_EQ(store.note(p), notes.count(p) ? notes[p] : 0) << p.ToString();
    if (model.count(p)) {
      ASSERT_EQ(store.given(p), givens.count(p) ? givens[p] : 0) << p.ToString();
    }
    if (step % 997 != 0) continue;
    // Whole-table checks now and then.
    ASSERT_EQ(store.size(), model.size());
    std::map<Prefix, uint8_t> walked;
    std::map<Prefix, size_t> walked_kinds;
    for (size_t cursor = 0;;) {
      cursor = store.WalkNotes(cursor, 100, [&](const Prefix& q, const std::vector<const KernelRoutes::Kind*>& ks,
                                                uint8_t& n) {
        if (n) walked[q] = n;
        walked_kinds[q] = ks.size();
      });
      if (cursor == 0) break;
    }
    std::erase_if(notes, [](const auto& n) { return n.second == 0; });
    EXPECT_EQ(walked, notes);
    ASSERT_EQ(walked_kinds.size(), model.size());
    for (const auto& [q, entries] : model) EXPECT_EQ(walked_kinds[q], entries.size()) << q.ToString();
    std::set<Prefix> unseen;
    for (const auto& [q, entries] : model) {
      for (const auto& [key, e] : entries) {
        if (e.gen != gen) unseen.insert(q);
      }
    }
    const std::vector<Prefix> got = store.Unseen(gen);
    EXPECT_EQ(std::set<Prefix>(got.begin(), got.end()), unseen);
    std::set<Prefix> by_object;
    for (const auto& [q, entries] : model) {
      for (const auto& [key, e] : entries) {
        if (e.route.nh_id == 2) by_object.insert(q);
      }
    }
    const std::vector<Prefix> of = store.PrefixesOf([](uint32_t, const KernelRoutes::Kind& k) { return k.route.nh_id == 2; });
    EXPECT_EQ(std::set<Prefix>(of.begin(), of.end()), by_object);
    std::map<std::string, int> kinds;
    for (const auto& [q, entries] : model) {
      for (const auto& [key, e] : entries) {
        NlRoute r = e.route;
        r.prefix = q.family() == Family::kV4 ? Prefix::V4(0, 0) : Prefix::V6(0, 0);
        kinds[Describe(r)] = 1;
      }
    }
    std::erase_if(alive, [](const auto& a) { return a.second == 0; });
    // A kind per distinct content (per rank too, so at least as many).
    for (const auto& [d, n] : alive) EXPECT_GT(n, 0) << d;
    for (const auto& [d, n] : kinds) EXPECT_TRUE(alive.count(d)) << d << " has routes but no kind";
    for (const auto& [d, n] : alive) EXPECT_TRUE(kinds.count(d)) << d << " is a kind without routes";
  }
  // Emptied, nothing is left alive.
  for (const auto& [q, entries] : model) {
    (void)store.Take(q, gen);
    store.Put(q, {}, gen);
  }
  EXPECT_EQ(store.size(), 0u);
  EXPECT_EQ(store.kinds(), 0u);
  for (const auto& [d, n] : alive) EXPECT_EQ(n, 0) << d;
}

// A route taken and put back unchanged keeps its kind: its gateways are not
// counted away and back (which would ask the kernel to resolve them again).
TEST(KernelRoutes, TakeAndPutBackKeepsTheKind) {
  int made = 0, freed = 0;
  KernelRoutes store(&KeyOfForTest, [&](const NlRoute&, int delta) { (delta > 0 ? made : freed) += 1; });
  NlRoute r;
  r.prefix = Prefix::V4(0x0A000000, 8);
  r.paths = {NlPath{IpAddr::V4(0x0A090001), 2, 0, 1}};
  store.Put(r.prefix, {{KeyOfForTest(1, r), KernelRouteEntry{r, 1, false, 0}}}, 1);
  for (int i = 0; i < 3; ++i) {
    KernelRouteEntries e = store.Take(r.prefix, 1);
    store.Put(r.prefix, std::move(e), 1);
  }
  EXPECT_EQ(made, 1);
  EXPECT_EQ(freed, 0);
  EXPECT_EQ(store.kinds(), 1u);
}

}  // namespace
}  // namespace fibnic
