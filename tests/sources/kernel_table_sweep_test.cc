// The sweep after a re-dump, in steps (KernelSource runs it a slice per turn
// of its loop, so that sweeping a million routes never holds it): whatever
// the step size, the RIB ends as after a sweep in one go — every route the
// dump showed kept, every other one gone — and a small step takes many.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "sources/kernel/kernel_table.h"
#include "tests/sources/kernel_messages.h"
#include "tests/sources/recording_sink.h"
#include "tests/support/netlink_bytes.h"

namespace fibnic {
namespace {

constexpr uint32_t kK0 = 10, kK1 = 11;

class Table {
 public:
  Table() : table(sink, PortNames{{"k0", 0}, {"k1", 1}}, KernelTableOptions{}, nullptr) { FeedLinks(); }
  void FeedLinks() {
    Feed(testing::LinkMessage(kK0, "k0", 0, std::nullopt));
    Feed(testing::LinkMessage(kK1, "k1", 0, std::nullopt));
  }
  void Feed(const std::vector<uint8_t>& m) {
    auto aligned = testing::Aligned(m);
    if (dumping) testing::Header(aligned)->nlmsg_flags |= NLM_F_MULTI;  // a dump's part
    ASSERT_TRUE(table.Apply(testing::Header(std::as_const(aligned))).ok());
  }
  // Routes 10.i.j.0/24 (i < 4) in main, and for every seventh also one in
  // the local table (a prefix with two routes); `dump` keeps those the dump
  // shows.
  template <typename Shown>
  void FeedRoutes(Shown shown) {
    for (int n = 0; n < 1024; ++n) {
      if (!shown(n)) continue;
      const std::string p = "10." + std::to_string(n / 256) + "." + std::to_string(n % 256) + ".0/24";
      Feed(testing::RouteVia(p.c_str(), 254, n % 2 ? "10.0.0.2" : "10.1.0.2", n % 2 ? kK0 : kK1));
      if (n % 7 == 0) Feed(testing::RouteVia(p.c_str(), 255, "10.0.0.3", kK0));
    }
  }
  std::map<Prefix, std::vector<NextHop>> Rib() const {
    std::map<Prefix, std::vector<NextHop>> out;
    for (const auto& [p, r] : sink.routes()) out[p] = r.paths;
    return out;
  }
  testing::RecordingSink sink;
  KernelTable table;
  bool dumping = false;
};

bool All(int) { return true; }
bool Some(int n) { return n % 3 != 0; }

TEST(KernelTableSweep, InStepsEndsAsInOneGo) {
  Table once, steps;
  for (Table* t : {&once, &steps}) {
    t->FeedRoutes(All);
    t->table.BeginResync();
    t->FeedRoutes(Some);  // the re-dump misses every third route
  }
  const size_t swept_once = once.table.EndResync();
  steps.table.BeginSweep();
  int calls = 1;
  while (!steps.table.SweepStep(7)) ++calls;
  const size_t swept_steps = steps.table.EndSweep();
  EXPECT_EQ(swept_steps, swept_once);
  EXPECT_GT(swept_once, 300u);
  EXPECT_GT(calls, 100) << "a step of 7 swept everything at once";
  EXPECT_EQ(steps.Rib(), once.Rib());
  EXPECT_EQ(steps.table.routes(), once.table.routes());
  for (int n = 0; n < 1024; ++n) {
    const std::string p = "10." + std::to_string(n / 256) + "." + std::to_string(n % 256) + ".0/24";
    EXPECT_EQ(steps.Rib().count(*Prefix::Parse(p)), Some(n) ? 1u : 0u) << p;
  }
}

// A dump the tables changed under may have left routes out (the kernel's
// IPv6 dump walks again from the root skipping what it had sent): what it
// did not list is kept, punting, until a dump that lists the tables whole.
TEST(KernelTableSweep, ATornDumpKeepsWhatItDidNotListPuntingUntilAWholeDumpSweepsIt) {
  Table t;
  t.FeedRoutes(All);
  const auto before = t.Rib();
  t.table.BeginResync();
  t.dumping = true;
  t.FeedLinks();
  t.FeedRoutes(Some);
  t.dumping = false;
  t.table.BeginSweep(/*torn=*/true);
  while (!t.table.SweepStep(64)) {
  }
  EXPECT_EQ(t.table.EndSweep(), 0u) << "a torn dump swept routes";
  EXPECT_TRUE(t.table.RedumpWanted()) << "routes kept unlisted, and no re-dump asked for";
  EXPECT_GT(t.table.counts().kept_unlisted, 300u);
  const auto kept = t.Rib();
  for (int n = 0; n < 1024; ++n) {
    const std::string p = "10." + std::to_string(n / 256) + "." + std::to_string(n % 256) + ".0/24";
    const Prefix prefix = *Prefix::Parse(p);
    ASSERT_EQ(kept.count(prefix), 1u) << p << " left the RIB after a torn dump";
    if (Some(n)) {
      EXPECT_EQ(kept.at(prefix), before.at(prefix)) << p << " was listed and changed";
    } else {
      EXPECT_EQ(kept.at(prefix), std::vector<NextHop>{NextHop::ToHost()}) << p << " unlisted and not punted";
    }
  }
  // The next dump lists the tables whole: what it does not list goes, and a
  // kept route it lists again forwards again.
  t.table.BeginResync();
  t.dumping = true;
  t.FeedLinks();
  t.FeedRoutes([](int n) { return Some(n) || n % 2 == 0; });
  t.dumping = false;
  t.table.BeginSweep(/*torn=*/false);
  while (!t.table.SweepStep(64)) {
  }
  EXPECT_GT(t.table.EndSweep(), 100u);
  EXPECT_FALSE(t.table.RedumpWanted());
  const auto after = t.Rib();
  for (int n = 0; n < 1024; ++n) {
    const std::string p = "10." + std::to_string(n / 256) + "." + std::to_string(n % 256) + ".0/24";
    const Prefix prefix = *Prefix::Parse(p);
    if (Some(n) || n % 2 == 0) {
      ASSERT_EQ(after.count(prefix), 1u) << p;
      EXPECT_EQ(after.at(prefix), before.at(prefix)) << p;
    } else {
      EXPECT_EQ(after.count(prefix), 0u) << p << " the whole dump did not list it, and it stayed";
    }
  }
}

}  // namespace
}  // namespace fibnic
