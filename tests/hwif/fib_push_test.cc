// The real producer (Fib) and the real writer (FibnicPusher) together: every
// bus write of realistic update batches is recorded, and after EACH single
// write the device BAR is decoded with HwLookup and checked against the
// independent reference LPM (tests/oracle): each probe address must be
// forwarded as the old or the new routes say — each with the old or the new
// neighbours, since a batch may carry both a route change and a neighbour's
// new MAC and either may reach the device first — or punted. Batches are
// committed and pushed as the pipeline does: the safe part, then the TCAM's
// best entries.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <random>

#include "fib/fib.h"
#include "hwif/fibnic_device.h"
#include "hwif/fibnic_pusher.h"
#include "hwif/recording_bar.h"
#include "tests/hwif/fibnic_test_util.h"
#include "tests/oracle/reference_lpm.h"
#include "tests/support/parse.h"

namespace fibnic {
namespace {

using testing::P;

using namespace testing_util;
using oracle::Forward;
using oracle::ReferenceLpm;

FibConfig ConfigFor(const regs::Caps& caps) {
  FibConfig c;
  c.caps = caps;
  return c;
}

// Keeps the Fib and the oracle fed with the same changes, pushes each commit
// through a recording BAR and checks every intermediate state.
class Harness {
 public:
  explicit Harness(const regs::Caps& caps = regs::Caps::Model2Bit())
      : caps_(caps), fib_(ConfigFor(caps)), mem_(caps.bar_bytes()), rec_(mem_), pusher_(rec_) {
    EXPECT_TRUE(mem_.Write(0, FibnicCsrPreset(caps).data(), regs::kOffControl).ok());
    for (uint8_t p = 0; p < caps.ports; ++p) fib_.SetPortMac(p, MacAddr{{0x0e, 0, 0, 0, 0, p}});
    // Probe addresses: .5 and .200 of every /24 of 10.0.0.0/14, the IPv6 test space.
    for (uint32_t s = 0x0A0000; s < 0x0A0400; ++s) {
      probes_.push_back(IpAddr::V4((s << 8) | 5));
      probes_.push_back(IpAddr::V4((s << 8) | 200));
    }
    for (int i = 0; i < 16; ++i) probes_.push_back(IpAddr::V6((U128{0x20010db8} << 96) | (U128(i) << 80) | 5));
  }

  void Route(const char* prefix, std::vector<NextHop> paths) {
    fibnic::Route r{P(prefix), RouteSource::kStatic, 1, paths};
    fib_.UpsertRoute(r);
    routes_next_[P(prefix)] = paths;
  }
  void Unroute(const char* prefix) {
    fib_.DeleteRoute(P(prefix), RouteSource::kStatic);
    routes_next_.erase(P(prefix));
  }
  void Neighbor(const char* addr, const char* mac, uint8_t port, NeighState st = NeighState::kReachable) {
    fibnic::Neighbor n{A(addr), Mac(mac), port, st};
    // One neighbour per address here: a move to another port is the old one gone.
    if (auto it = neigh_next_.find(n.addr); it != neigh_next_.end() && it->second.port != port) {
      fib_.DeleteNeighbor(n.addr, it->second.port);
    }
    fib_.UpsertNeighbor(n);
    neigh_next_[n.addr] = n;
  }
  void Unneighbor(const char* addr) {
    if (auto it = neigh_next_.find(A(addr)); it != neigh_next_.end()) fib_.DeleteNeighbor(A(addr), it->second.port);
    neigh_next_.erase(A(addr));
  }
  void AddProbe(const char* addr) { probes_.push_back(A(addr)); }

  // Commits, pushes (Sync on the first call) and checks every write. After
  // the first call it commits as the pipeline does: the safe part, pushed,
  // then the TCAM's best entries, pushed (Fib::CommitSafe).
  void Commit(const std::string& label) {
    std::vector<DeviceDelta> deltas;
    if (started_) {
      deltas = fib_.CommitSafe();
    } else {
      fib_.Commit();
    }
    const ReferenceLpm next = Oracle(routes_next_, neigh_next_);
    const ReferenceLpm mixes[] = {Oracle(routes_prev_, neigh_prev_), Oracle(routes_prev_, neigh_next_),
                                  Oracle(routes_next_, neigh_prev_), next};
    std::vector<std::set<Forward>> allowed;
    for (const auto& p : probes_) {
      std::set<Forward> a;
      for (const auto& m : mixes) {
        auto b = m.Acceptable(p);
        a.insert(b.begin(), b.end());
      }
      allowed.push_back(std::move(a));
    }
    size_t checked = 0;
    std::string failure;
    rec_.Clear();
    rec_.set_observer([&](const BusWrite& w, size_t index) {
      ++checked;
      for (size_t i = 0; i < probes_.size(); ++i) {
        const Answer got = Look(mem_.data(), mem_.size(), probes_[i]);
        if (got.forward && !allowed[i].count({got.mac, got.port})) {
          failure = label + ": after write " + std::to_string(index + 1) + " (" + BarRegionName(RegionOf(w.offset)) +
                    " at " + std::to_string(w.offset) + ") " + probes_[i].ToString() + " -> " + got.ToString();
          return Internal(failure);
        }
      }
      return OkStatus();
    });
    Status st = started_ ? pusher_.Push(deltas, fib_.image()) : pusher_.Sync(fib_.image());
    if (started_ && st.ok() && failure.empty()) {
      const DeviceImage safe = fib_.image();
      auto dev = DecodeBar(mem_.data(), mem_.size());
      ASSERT_TRUE(dev.ok() && *dev == safe) << label << ": device differs from the safe image";
      st = pusher_.Push(fib_.CommitBest(), fib_.image());
    }
    started_ = true;
    rec_.set_observer(nullptr);
    ASSERT_TRUE(failure.empty()) << failure;
    ASSERT_TRUE(st.ok()) << label << ": " << st.ToString();
    // The device now holds exactly the compiled image, and forwards as the new routes say.
    auto dev = DecodeBar(mem_.data(), mem_.size());
    ASSERT_TRUE(dev.ok());
    ASSERT_TRUE(*dev == fib_.image()) << label << ": device differs from Fib::image()";
    size_t forwarded = 0;
    for (const auto& p : probes_) {
      const Answer got = Look(mem_.data(), mem_.size(), p);
      if (!got.forward) continue;
      ++forwarded;
      ASSERT_TRUE(next.Acceptable(p).count({got.mac, got.port})) << label << ": final " << p.ToString();
    }
    writes_ += checked;
    last_forwarded_ = forwarded;
    routes_prev_ = routes_next_;
    neigh_prev_ = neigh_next_;
  }

  Fib& fib() { return fib_; }
  FibnicPusher& pusher() { return pusher_; }
  MemoryBar& mem() { return mem_; }
  size_t writes() const { return writes_; }
  size_t last_forwarded() const { return last_forwarded_; }

 private:
  regs::Caps caps_;
  Fib fib_;
  MemoryBar mem_;
  RecordingBar rec_;
  FibnicPusher pusher_;
  using Routes = std::map<Prefix, std::vector<NextHop>>;
  using Neighbors = std::map<IpAddr, fibnic::Neighbor>;
  static ReferenceLpm Oracle(const Routes& routes, const Neighbors& neigh) {
    ReferenceLpm lpm;
    for (const auto& [p, paths] : routes) lpm.SetRoute(p, paths);
    for (const auto& [a, n] : neigh) lpm.SetNeighbor(n);
    return lpm;
  }
  Routes routes_prev_, routes_next_;
  Neighbors neigh_prev_, neigh_next_;
  std::vector<IpAddr> probes_;
  bool started_ = false;
  size_t writes_ = 0, last_forwarded_ = 0;
};

// A failed check inside Commit ends the test (not only the helper).
#define COMMIT(h, label)               \
  do {                                 \
    (h).Commit(label);                 \
    if (HasFatalFailure()) return;     \
  } while (0)

NextHop Via(const char* gw, uint8_t port) { return NextHop{A(gw), port}; }
NextHop Connected(uint8_t port) { return NextHop{std::nullopt, port}; }

void BaseTable(Harness& h) {
  h.Neighbor("192.0.2.1", "02:00:00:00:00:01", 0);
  h.Neighbor("192.0.2.2", "02:00:00:00:00:02", 1);
  h.Neighbor("192.0.2.3", "02:00:00:00:00:03", 2);
  h.Neighbor("192.0.2.4", "02:00:00:00:00:04", 3);
  h.Neighbor("10.3.0.5", "02:00:00:00:03:05", 2);
  h.Neighbor("10.3.0.200", "02:00:00:00:03:c8", 2);
  h.Route("10.0.0.0/16", {Via("192.0.2.1", 0)});
  h.Route("10.1.0.0/16", {Via("192.0.2.2", 1)});
  h.Route("10.2.0.0/20", {Via("192.0.2.3", 2)});
  h.Route("10.0.128.0/24", {Via("192.0.2.2", 1)});
  h.Route("10.0.5.0/25", {Via("192.0.2.2", 1)});  // longer than /24: 10.0.5.0/24 must punt
  h.Route("10.3.0.0/24", {Connected(2)});
  h.Route("10.1.64.0/18", {Via("192.0.2.1", 0), Via("192.0.2.2", 1)});  // ECMP
  h.Route("2001:db8::/32", {Via("192.0.2.1", 0)});
}

TEST(FibPush, EveryWriteOfRealisticBatchesIsSafe) {
  Harness h;
  COMMIT(h, "empty start");
  BaseTable(h);
  COMMIT(h, "initial table");
  EXPECT_GT(h.last_forwarded(), 500u);

  h.Route("10.2.16.0/20", {Via("192.0.2.1", 0)});
  h.Route("10.1.200.0/22", {Via("192.0.2.3", 2)});
  h.Route("10.0.7.0/24", {Via("192.0.2.3", 2)});
  COMMIT(h, "route adds");

  h.Unroute("10.0.128.0/24");
  h.Unroute("10.2.0.0/20");
  COMMIT(h, "route deletes");

  h.Neighbor("192.0.2.1", "06:00:00:00:00:11", 0);
  COMMIT(h, "next-hop MAC change");

  h.Neighbor("192.0.2.1", "06:00:00:00:00:12", 3);  // the gateway moves port: its routes must punt
  COMMIT(h, "neighbour on another port");
  h.Neighbor("192.0.2.1", "06:00:00:00:00:12", 0);
  COMMIT(h, "neighbour back");

  // A fourth gateway with more address space than 192.0.2.3 takes its slot:
  // the slot changes owner (retired in one delta, activated in the next).
  h.Neighbor("192.0.2.9", "02:00:00:00:00:09", 3);
  h.Route("10.2.0.0/16", {Via("192.0.2.9", 3)});
  COMMIT(h, "slot owner change");
  bool owned = false;
  for (const auto& s : h.fib().Slots()) owned = owned || (s.owner && *s.owner == Via("192.0.2.9", 3));
  EXPECT_TRUE(owned) << "the scenario should have moved a slot to 192.0.2.9";

  h.Neighbor("10.3.0.5", "02:00:00:00:03:99", 2);
  h.Unneighbor("10.3.0.200");
  COMMIT(h, "connected neighbours change");

  h.Neighbor("192.0.2.2", "02:00:00:00:00:02", 1, NeighState::kFailed);
  COMMIT(h, "gateway unreachable");
  EXPECT_GT(h.writes(), 0u);
}

TEST(FibPush, RandomChurnEveryWriteIsSafe) {
  const uint32_t seed = std::random_device{}();
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  Harness h;
  COMMIT(h, "empty start");
  BaseTable(h);
  COMMIT(h, "initial table");
  const char* gws[] = {"192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4", "192.0.2.9"};
  const uint8_t ports[] = {0, 1, 2, 3, 3};
  h.Neighbor("192.0.2.9", "02:00:00:00:00:09", 3);
  std::vector<std::string> added;
  for (int batch = 0; batch < 25; ++batch) {
    const int changes = 1 + static_cast<int>(rng() % 6);
    for (int c = 0; c < changes; ++c) {
      const uint32_t r = rng() % 10;
      if (r < 6 || added.empty()) {
        const int len = 14 + static_cast<int>(rng() % 13);  // /14 .. /26
        const uint32_t addr = (0x0A000000u | (rng() & 0x3FFFFu) << 0) & MaskV4(len);
        const auto p = Prefix::V4(addr, len).ToString();
        const size_t g = rng() % 5;
        h.Route(p.c_str(), {Via(gws[g], ports[g])});
        added.push_back(p);
      } else if (r < 8) {
        const size_t i = rng() % added.size();
        h.Unroute(added[i].c_str());
        added.erase(added.begin() + static_cast<long>(i));
      } else {
        const size_t g = rng() % 5;
        char mac[32];
        std::snprintf(mac, sizeof mac, "02:00:00:00:%02x:%02x", static_cast<unsigned>(rng() % 256),
                      static_cast<unsigned>(g));
        h.Neighbor(gws[g], mac, ports[g], rng() % 8 == 0 ? NeighState::kFailed : NeighState::kReachable);
      }
    }
    COMMIT(h, "seed " + std::to_string(seed) + " batch " + std::to_string(batch));
  }
}

// A restarted daemon compiles the same table again and Syncs: nothing is
// written; with k changed routes the writes are bounded by O(k).
TEST(FibPush, WarmRestartWritesOnlyTheDifference) {
  Harness first;
  COMMIT(first, "empty start");
  BaseTable(first);
  COMMIT(first, "initial table");

  auto restart = [&](auto&& tweak) {
    Harness scratch;  // a fresh Fib (same port MACs) fed the same table
    BaseTable(scratch);
    scratch.fib().Commit();
    tweak(scratch);
    scratch.fib().Commit();
    RecordingBar rec(first.mem());
    FibnicPusher pusher(rec);
    EXPECT_TRUE(pusher.Sync(scratch.fib().image()).ok());
    auto dev = DecodeBar(first.mem().data(), first.mem().size());
    EXPECT_TRUE(dev.ok() && *dev == scratch.fib().image());
    return pusher.last();
  };
  const PushStats same = restart([](Harness&) {});
  EXPECT_EQ(same.bus_writes, 0u);

  const int k = 12;
  const PushStats changed = restart([&](Harness& h) {
    for (int i = 0; i < k; ++i) {
      const auto p = Prefix::V4(0x0A010000u | (uint32_t(i) * 7 + 3) << 8, 24).ToString();  // /24s inside 10.1/16
      h.Route(p.c_str(), {Via("192.0.2.3", 2)});
    }
  });
  EXPECT_GT(changed.writes_in(BarRegion::kSram), 0u);
  // Each /24 route touches one SRAM bus word; entries and TCAM untouched.
  EXPECT_LE(changed.writes_in(BarRegion::kSram), static_cast<uint64_t>(k));
  EXPECT_EQ(changed.writes_in(BarRegion::kNexthop) + changed.writes_in(BarRegion::kTcam), 0u);
  EXPECT_LE(changed.bus_writes, static_cast<uint64_t>(k) + 1);  // + GENERATION
}

// The previous run's history numbered the slots by arrival (and kept a light
// owner by hysteresis), which a from-scratch compile would not reproduce. A
// restarted Fib fed the same table in another order adopts the device's
// numbering (Fib::AdoptDevice on the readback) and its Sync writes nothing;
// with k changed routes it writes O(k). Without adoption the same restart
// moves slots — the case adoption exists for.
void HistoryNeighbors(Harness& h) {
  h.Neighbor("192.0.2.1", "02:00:00:00:00:01", 0);
  h.Neighbor("192.0.2.2", "02:00:00:00:00:02", 1);
  h.Neighbor("192.0.2.3", "02:00:00:00:00:03", 2);
  h.Neighbor("192.0.2.4", "02:00:00:00:00:04", 3);
  h.Neighbor("10.3.0.5", "02:00:00:00:03:05", 2);
  h.Neighbor("10.3.0.200", "02:00:00:00:03:c8", 2);
}
const std::vector<std::pair<const char*, NextHop>>& HistoryRoutes() {
  static const std::vector<std::pair<const char*, NextHop>> routes = {
      {"10.0.9.0/24", Via("192.0.2.1", 0)},   // weight 1: code 1, later displaced
      {"10.3.0.0/24", Connected(2)},          // weight 1: code 2, kept (canonical: 3)
      {"10.1.0.0/20", Via("192.0.2.2", 1)},   // weight 16: code 3 (canonical: 2)
      {"10.2.0.0/16", Via("192.0.2.4", 3)},   // weight 256: displaces code 1
      {"10.0.16.0/24", Via("192.0.2.3", 2)},  // weight 1: too light to displace anyone
  };
  return routes;
}

TEST(FibPush, AdoptedRestartAfterAHistoryWritesNothing) {
  Harness first;
  HistoryNeighbors(first);
  COMMIT(first, "neighbours");
  for (const auto& [prefix, nh] : HistoryRoutes()) {
    first.Route(prefix, {nh});
    COMMIT(first, std::string("history: ") + prefix);
  }
  auto device = DecodeBar(first.mem().data(), first.mem().size());
  ASSERT_TRUE(device.ok());
  ASSERT_EQ(device->nexthop[2], Nh("00:00:00:00:00:00", 2, true)) << "history did not number as intended";
  const std::vector<uint8_t> before(first.mem().data(), first.mem().data() + first.mem().size());

  auto restart = [&](bool adopt, auto&& tweak) {
    EXPECT_TRUE(first.mem().Write(0, before.data(), before.size()).ok());
    Harness scratch;  // a fresh Fib, the same table arriving in reverse order
    const auto& routes = HistoryRoutes();
    for (auto it = routes.rbegin(); it != routes.rend(); ++it) scratch.Route(it->first, {it->second});
    HistoryNeighbors(scratch);
    tweak(scratch);
    if (adopt) {
      const DeviceAdoption got = scratch.fib().AdoptDevice(*device);
      EXPECT_EQ(got.slots, 3);
      EXPECT_EQ(got.neighbors, 2);
    }
    scratch.fib().Commit();
    RecordingBar rec(first.mem());
    FibnicPusher pusher(rec);
    EXPECT_TRUE(pusher.Sync(scratch.fib().image()).ok());
    auto dev = DecodeBar(first.mem().data(), first.mem().size());
    EXPECT_TRUE(dev.ok() && *dev == scratch.fib().image());
    return pusher.last();
  };

  const PushStats unadopted = restart(false, [](Harness&) {});
  EXPECT_GT(unadopted.writes_in(BarRegion::kSram) + unadopted.writes_in(BarRegion::kNexthop), 0u);

  const PushStats same = restart(true, [](Harness&) {});
  for (BarRegion r : {BarRegion::kSram, BarRegion::kTcam, BarRegion::kNexthop, BarRegion::kNeigh}) {
    EXPECT_EQ(same.writes_in(r), 0u) << BarRegionName(r);
  }
  EXPECT_EQ(same.bus_writes, 0u);

  const int k = 12;
  const PushStats changed = restart(true, [&](Harness& h) {
    for (int i = 0; i < k; ++i) {
      const auto p = Prefix::V4(0x0A020000u | (uint32_t(i) * 7 + 3) << 8, 24).ToString();  // /24s inside 10.2/16
      h.Route(p.c_str(), {Via("192.0.2.2", 1)});
    }
  });
  EXPECT_GT(changed.writes_in(BarRegion::kSram), 0u);
  EXPECT_LE(changed.writes_in(BarRegion::kSram), static_cast<uint64_t>(k));
  EXPECT_EQ(changed.writes_in(BarRegion::kNexthop) + changed.writes_in(BarRegion::kTcam) +
                changed.writes_in(BarRegion::kNeigh),
            0u);
  EXPECT_LE(changed.bus_writes, static_cast<uint64_t>(k) + 1);  // + GENERATION
}

// IPv6 routes that arrived a few per batch (as a BGP block does under
// batch_max) leave one optimal TCAM6 entry set — /62s, each commit keeping
// the entries it had — where a scratch compile of the same routes picks
// another (one /59). A restart with the table unchanged keeps the device's.
TEST(FibPush, RestartAfterIpv6RoutesArrivedInBatchesKeepsTheTcamAsItIs) {
  auto block = [](Harness& h, int from, int to) {
    for (int i = from; i < to; ++i) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "2001:db8:0:%x::/64", 0xa0 + i);
      h.Route(buf, {Via("192.0.2.2", 1)});
    }
  };
  Harness first;
  first.Neighbor("192.0.2.2", "02:00:00:00:00:02", 1);
  COMMIT(first, "neighbour");
  for (int i = 0; i < 32; i += 4) {
    block(first, i, i + 4);
    COMMIT(first, "routes " + std::to_string(i) + "..");
  }
  auto device = DecodeBar(first.mem().data(), first.mem().size());
  ASSERT_TRUE(device.ok());
  const std::vector<uint8_t> before(first.mem().data(), first.mem().data() + first.mem().size());

  auto restart = [&](bool adopt) {
    EXPECT_TRUE(first.mem().Write(0, before.data(), before.size()).ok());
    Harness scratch;  // a fresh Fib, the whole table at once
    scratch.Neighbor("192.0.2.2", "02:00:00:00:00:02", 1);
    block(scratch, 0, 32);
    if (adopt) {
      EXPECT_GE(scratch.fib().AdoptDevice(*device).tcam6, 8);
    }
    scratch.fib().Commit();
    RecordingBar rec(first.mem());
    FibnicPusher pusher(rec);
    EXPECT_TRUE(pusher.Sync(scratch.fib().image()).ok());
    return pusher.last();
  };
  EXPECT_GT(restart(false).writes_in(BarRegion::kTcam), 0u) << "the history left the scratch compile's entries";
  const PushStats same = restart(true);
  EXPECT_EQ(same.writes_in(BarRegion::kTcam), 0u);
  EXPECT_EQ(same.bus_writes, 0u);
}

// Restarts on `first`'s device: a fresh Fib that `feed` gives the same
// routes and neighbours adopts the device (`slots` codes), commits and syncs
// through a recording BAR — which must write nothing.
void ExpectRestartWritesNothing(Harness& first, const std::function<void(Harness&)>& feed, int slots) {
  auto device = DecodeBar(first.mem().data(), first.mem().size());
  ASSERT_TRUE(device.ok());
  const std::vector<uint8_t> before(first.mem().data(), first.mem().data() + first.mem().size());
  Harness scratch;
  feed(scratch);
  EXPECT_EQ(scratch.fib().AdoptDevice(*device).slots, slots);
  scratch.fib().Commit();
  RecordingBar rec(first.mem());
  FibnicPusher pusher(rec);
  EXPECT_TRUE(pusher.Sync(scratch.fib().image()).ok());
  const PushStats& wrote = pusher.last();
  EXPECT_EQ(wrote.bus_writes, 0u) << "SRAM " << wrote.writes_in(BarRegion::kSram) << ", TCAM "
                                  << wrote.writes_in(BarRegion::kTcam) << ", NEXTHOP "
                                  << wrote.writes_in(BarRegion::kNexthop);
  const auto changed = std::mismatch(before.begin(), before.end(), first.mem().data()).first;
  EXPECT_TRUE(changed == before.end()) << "the BAR changed at byte " << (changed - before.begin());
}

// What the device does with a destination now.
HwDecision DeviceAnswer(Harness& h, const char* addr) { return HwLookup(h.mem().data(), h.mem().size(), A(addr)); }

// IPv6 routes of three gateways whose best paths move between them, batch
// after batch: each batch's safe part punts TCAM entries and its best entries
// put them back, wherever the sequencer finds room. A restart with the table
// unchanged adopts the TCAM as the device holds it and writes nothing.
TEST(FibPush, RestartAfterIpv6PathsMovedWritesNothing) {
  const char* gws[3] = {"fd00::1", "fd00::2", "fd00::3"};
  auto neighbours = [&](Harness& h) {
    for (int g = 0; g < 3; ++g) {
      h.Neighbor(gws[g], ("02:00:00:00:00:0" + std::to_string(g + 1)).c_str(), uint8_t(g));
    }
  };
  // Route i's gateway after `round` rounds of moves.
  auto gateway = [](int i, int round) { return (i * 7 + round * (i % 3 + 1)) % 3; };
  auto route = [&](Harness& h, int i, int round) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "2001:db8:%x::/48", i < 24 ? i : 0x100 + i);
    const int g = gateway(i, round);
    h.Route(buf, {Via(gws[g], uint8_t(g))});
  };
  Harness first;
  neighbours(first);
  for (int i = 0; i < 40; ++i) route(first, i, 0);
  COMMIT(first, "table");
  const int rounds = 6;
  for (int r = 1; r <= rounds; ++r) {
    for (int i = r % 4; i < 40; i += 4) route(first, i, r);
    COMMIT(first, "round " + std::to_string(r));
  }
  ExpectRestartWritesNothing(
      first,
      [&](Harness& h) {
        for (int i = 39; i >= 0; --i) {
          int last = 0;
          for (int r = 1; r <= rounds; ++r) last = (i % 4 == r % 4) ? r : last;
          route(h, i, last);
        }
        neighbours(h);
      },
      3);
}

// A neighbour that failed keeps its next-hop's code with the entry VALID=0
// (its space punts; one write restores it). The kernel then reports the
// neighbour FAILED without a MAC; a restart with that unchanged must adopt
// the VALID=0 entry for it, not free the code (else the restart rewrites
// NEXTHOP and TCAM6).
TEST(FibPush, RestartKeepsTheCodeOfANeighbourThatFailed) {
  auto table = [](Harness& h) {
    h.Route("10.1.0.0/16", {Via("192.0.2.2", 1)});
    h.Route("10.2.0.0/16", {Via("192.0.2.3", 2)});
  };
  Harness first;
  first.Neighbor("192.0.2.2", "02:00:00:00:00:02", 1);
  first.Neighbor("192.0.2.3", "02:00:00:00:00:03", 2);
  table(first);
  COMMIT(first, "resolved");
  first.Neighbor("192.0.2.2", "00:00:00:00:00:00", 1, NeighState::kFailed);
  COMMIT(first, "failed");
  auto device = DecodeBar(first.mem().data(), first.mem().size());
  ASSERT_TRUE(device.ok());
  int kept_invalid = 0;
  for (const auto& e : device->nexthop) kept_invalid += !e.valid() && e.port == 1 && e.dst_mac == Mac("02:00:00:00:00:02");
  ASSERT_EQ(kept_invalid, 1) << "the failed neighbour's code was not kept VALID=0";

  ExpectRestartWritesNothing(first, [&](Harness& h) {
    table(h);
    h.Neighbor("192.0.2.3", "02:00:00:00:00:03", 2);
    h.Neighbor("192.0.2.2", "00:00:00:00:00:00", 1, NeighState::kFailed);
  }, 2);
}

// A kept VALID=0 entry held only the next-hops that resolved to it before
// their neighbour failed. Another gateway on its port whose neighbour failed
// without ever resolving left its space at code 0 (punt). After a restart
// the kernel reports both neighbours FAILED without a MAC: only the device
// tells them apart — here its SRAM (else the restart binds every such
// gateway and rewrites the /24s of code 0).
TEST(FibPush, RestartBindsOnlyTheFailedNextHopsTheDeviceShowsOnAKeptEntry) {
  auto table = [](Harness& h) {
    h.Route("10.1.0.0/16", {Via("192.0.2.2", 1)});  // resolved, then failed
    h.Route("10.2.0.0/16", {Via("192.0.2.9", 1)});  // never resolved
    h.Route("10.3.0.0/16", {Via("192.0.2.3", 2)});
  };
  Harness first;
  first.Neighbor("192.0.2.2", "02:00:00:00:00:02", 1);
  first.Neighbor("192.0.2.9", "00:00:00:00:00:00", 1, NeighState::kFailed);
  first.Neighbor("192.0.2.3", "02:00:00:00:00:03", 2);
  table(first);
  COMMIT(first, "resolved");
  first.Neighbor("192.0.2.2", "00:00:00:00:00:00", 1, NeighState::kFailed);
  COMMIT(first, "failed");
  ASSERT_STREQ(DeviceAnswer(first, "10.1.0.5").why, "nexthop-invalid") << "its code was not kept VALID=0";
  ASSERT_EQ(DeviceAnswer(first, "10.2.0.5").code, 0);

  ExpectRestartWritesNothing(first, [&](Harness& h) {
    table(h);
    h.Neighbor("192.0.2.3", "02:00:00:00:00:03", 2);
    h.Neighbor("192.0.2.2", "00:00:00:00:00:00", 1, NeighState::kFailed);
    h.Neighbor("192.0.2.9", "00:00:00:00:00:00", 1, NeighState::kFailed);
  }, 2);
}

// The same for IPv6 routes, which only the TCAM can tell apart — it may
// answer a route in part, and one entry may answer several routes. The kept
// code answers fe80::2's /40 past a route of the same router's IPv4 address
// at its start (one adjacency, one code, no entry of its own), and that
// address's /48 inside fe80::9's /40, whose own space punts.
TEST(FibPush, RestartBindsOnlyTheFailedNextHopsTheTcamShowsOnAKeptEntry) {
  auto table = [](Harness& h) {
    h.Route("2001:db8:100::/40", {Via("fe80::2", 1)});  // resolved, then failed
    h.Route("2001:db8:100::/48", {Via("192.0.2.2", 1)});
    h.Route("2001:db8:300::/48", {Via("fe80::3", 2)});
    h.Route("2001:db8:200::/40", {Via("fe80::9", 1)});  // never resolved
    h.Route("2001:db8:200::/48", {Via("192.0.2.2", 1)});
  };
  auto failed = [](Harness& h) {
    h.Neighbor("fe80::2", "00:00:00:00:00:00", 1, NeighState::kFailed);
    h.Neighbor("192.0.2.2", "00:00:00:00:00:00", 1, NeighState::kFailed);
    h.Neighbor("fe80::9", "00:00:00:00:00:00", 1, NeighState::kFailed);
  };
  Harness first;
  first.Neighbor("fe80::2", "02:00:00:00:00:02", 1);
  first.Neighbor("192.0.2.2", "02:00:00:00:00:02", 1);
  first.Neighbor("fe80::9", "00:00:00:00:00:00", 1, NeighState::kFailed);
  first.Neighbor("fe80::3", "02:00:00:00:00:03", 2);
  table(first);
  COMMIT(first, "resolved");
  failed(first);
  COMMIT(first, "failed");
  for (const char* kept : {"2001:db8:100::5", "2001:db8:101::5", "2001:db8:200::5"}) {
    ASSERT_STREQ(DeviceAnswer(first, kept).why, "nexthop-invalid") << kept;
  }
  ASSERT_EQ(DeviceAnswer(first, "2001:db8:300::5").port, 2);
  ASSERT_EQ(DeviceAnswer(first, "2001:db8:201::5").code, 0);

  ExpectRestartWritesNothing(first, [&](Harness& h) {
    table(h);
    h.Neighbor("fe80::3", "02:00:00:00:00:03", 2);
    failed(h);
  }, 2);
}

// A device entry whose owner is gone (its neighbour changed MAC) is not
// adopted; the owner that remains is.
TEST(FibPush, AdoptDeviceSkipsOwnersThatNoLongerMatch) {
  Harness first;
  HistoryNeighbors(first);
  for (const auto& [prefix, nh] : HistoryRoutes()) {
    first.Route(prefix, {nh});
    COMMIT(first, std::string("history: ") + prefix);
  }
  auto device = DecodeBar(first.mem().data(), first.mem().size());
  ASSERT_TRUE(device.ok());
  Harness scratch;
  for (const auto& [prefix, nh] : HistoryRoutes()) scratch.Route(prefix, {nh});
  HistoryNeighbors(scratch);
  scratch.Neighbor("192.0.2.4", "02:00:00:00:00:44", 3);  // code 1's owner no longer has the device's MAC
  EXPECT_EQ(scratch.fib().AdoptDevice(*device).slots, 2);
  scratch.fib().Commit();
  const auto slots = scratch.fib().Slots();
  ASSERT_EQ(slots.size(), 3u);
  EXPECT_EQ(slots[1].owner, Connected(2));
  EXPECT_EQ(slots[2].owner, Via("192.0.2.2", 1));
  EXPECT_EQ(slots[0].owner, Via("192.0.2.4", 3));  // free code 1 goes to the heaviest by normal policy
  EXPECT_EQ(slots[0].entry, Nh("02:00:00:00:00:44", 3));
}

}  // namespace
}  // namespace fibnic
