// The kernel source under load, in a private network namespace: a big dump
// and a burst of events leave its loop responsive, and a forced netlink
// overrun is recovered by a re-dump and mark-and-sweep, after which the RIB
// equals the kernel's own table.
#include <gtest/gtest.h>
#include <linux/rtnetlink.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "tests/sources/kernel_source_fixture.h"

namespace fibnic::testing {
namespace {

// The kernel's routes of tables local + main, as the RIB should hold them,
// computed from `ip -j route show` by the test itself: local table first
// (punted), else the lowest metric of main; two routes sharing that metric
// (IPv6 fe80::/64 on two links) are punted, as is anything not via k0.
std::map<Prefix, std::vector<NextHop>> KernelFib() {
  struct Seen {
    bool local = false;
    uint32_t metric = 0;
    int count = 0;
    std::vector<NextHop> paths;
  };
  std::map<Prefix, Seen> seen;
  for (const std::string fam : {"-4", "-6"}) {
    for (const std::string table : {"local", "main"}) {
      auto j = nlohmann::json::parse(Sh("ip " + fam + " -j route show table " + table));
      for (const auto& r : j) {
        std::string dst = r.value("dst", "");
        if (dst == "default") dst = fam == "-4" ? "0.0.0.0/0" : "::/0";
        if (dst.find('/') == std::string::npos) dst += fam == "-4" ? "/32" : "/128";
        Seen& s = seen[*Prefix::Parse(dst)];
        if (table == "local") {
          s.local = true;
          continue;
        }
        std::vector<NextHop> paths;
        bool host = r.value("type", "unicast") != "unicast";
        auto add = [&](const nlohmann::json& nh) {
          if (nh.value("dev", "") != "k0") {
            host = true;
            return;
          }
          NextHop hop{std::nullopt, 0};
          if (nh.contains("gateway")) hop.gateway = *IpAddr::Parse(nh["gateway"].get<std::string>());
          paths.push_back(hop);
        };
        if (r.contains("nexthops")) {
          for (const auto& nh : r["nexthops"]) add(nh);
        } else {
          add(r);
        }
        std::sort(paths.begin(), paths.end());
        if (host) paths = {NextHop::ToHost()};
        const uint32_t metric = r.value("metric", 0u);
        if (s.count == 0 || metric < s.metric) {
          s.metric = metric;
          s.count = 1;
          s.paths = paths;
        } else if (metric == s.metric) {
          ++s.count;
        }
      }
    }
  }
  std::map<Prefix, std::vector<NextHop>> out;
  for (const auto& [p, s] : seen) {
    out[p] = (s.local || s.count > 1) ? std::vector<NextHop>{NextHop::ToHost()} : s.paths;
  }
  return out;
}

// A dump of a big table is read a few buffers at a time: the source's loop
// keeps serving other work meanwhile (a re-dump of a million routes must
// not hold it, and the status API with it, for tens of seconds). Counted
// in the loop's own turns, not in time (a loaded machine stretches time, not
// turns): a task that re-posts itself on the loop sees only a small share of
// the dump's routes arrive between two of its runs.
TEST_F(KernelSourceTest, BigDumpLeavesTheLoopResponsive) {
  constexpr int kRoutes = 150000;
  std::string batch = "/tmp/fibnic-kdump-" + std::to_string(getpid());
  {
    std::ofstream f(batch);
    for (int i = 0; i < kRoutes; ++i) {
      f << "route add 100." << (i >> 16) << "." << ((i >> 8) & 255) << "." << (i & 255) << "/32 via 10.1.0.2 dev k1\n";
    }
  }
  MustSh("ip -batch " + batch);
  Sh("rm -f " + batch);
  // Runs on the loop: the routes given to the RIB so far, at each of its turns.
  std::vector<uint64_t> seen;
  std::promise<void> dumped;
  std::function<void()> tick = [&] {
    const KernelSourceStats st = source->stats();
    seen.push_back(st.route_updates);
    if (!st.dumping && st.route_updates >= static_cast<uint64_t>(kRoutes)) {
      dumped.set_value();
      return;
    }
    boost::asio::post(io, tick);
  };
  boost::asio::post(io, tick);  // runs once the loop does, beside the first dump
  StartSource(KernelSourceConfig{});
  ASSERT_EQ(dumped.get_future().wait_for(300s), std::future_status::ready) << "the dump did not end";
  const uint64_t most = MostBetweenTurns(seen);
  std::cout << "dump of " << kRoutes << " routes: " << seen.size() << " turns of the loop, at most " << most
            << " routes between two runs of the posted task" << std::endl;
  EXPECT_TRUE(RouteIs("100.2.73.239/32", host));
  EXPECT_LT(most * 10, static_cast<uint64_t>(kRoutes));
}

// A burst of events queued while the loop was busy (the kernel's word on a
// table added at once) is read a part per turn, as a dump is: a task posted
// to the loop runs between the parts.
TEST_F(KernelSourceTest, EventBurstLeavesTheLoopResponsive) {
  constexpr int kRoutes = 15000;  // within the 128 MiB receive buffer: no overrun
  StartSource(KernelSourceConfig{});
  ASSERT_TRUE(WaitFor([&] { return source->initial_sync_done() && !source->stats().dumping; }, 10s));
  const uint64_t before = source->stats().route_updates;
  const std::string batch = "/tmp/fibnic-kburst-" + std::to_string(getpid());
  {
    std::ofstream f(batch);
    for (int i = 0; i < kRoutes; ++i) {
      f << "route add 101." << (i >> 16) << "." << ((i >> 8) & 255) << "." << (i & 255) << "/32 via 10.1.0.2 dev k1\n";
    }
  }
  // Runs on the loop: the routes given to the RIB so far, at each of its turns.
  std::vector<uint64_t> seen;
  std::promise<void> read_all;
  std::function<void()> tick = [&] {
    const uint64_t updates = source->stats().route_updates - before;
    seen.push_back(updates);
    if (updates >= static_cast<uint64_t>(kRoutes)) {
      read_all.set_value();
      return;
    }
    boost::asio::post(io, tick);
  };
  // The loop stalls while the routes go in; the tick is queued behind the
  // stall, so it runs as soon as the loop does, beside the queued events.
  int rc = 0;
  std::string out;
  WhileHeld([&] {
    boost::asio::post(io, tick);
    out = Sh("ip -batch " + batch + " 2>&1", &rc);
  });
  Sh("rm -f " + batch);
  ASSERT_EQ(rc, 0) << out;
  ASSERT_EQ(read_all.get_future().wait_for(120s), std::future_status::ready) << "the events were not all read";
  ASSERT_EQ(source->stats().overruns, 0u) << "the burst overran the socket: the test shows nothing";
  const uint64_t most = MostBetweenTurns(seen);
  std::cout << "burst of " << kRoutes << " route events: " << seen.size() << " turns of the loop, at most " << most
            << " routes between two runs of the posted task" << std::endl;
  EXPECT_TRUE(RouteIs("101.0.58.151/32", host));
  EXPECT_LT(most * 10, static_cast<uint64_t>(kRoutes));
}

TEST_F(KernelSourceTest, OverrunIsRecoveredByRedumpAndSweep) {
  const uint64_t seed = std::random_device{}();
  std::cout << "seed " << seed << std::endl;
  std::mt19937_64 rng(seed);
  KernelSourceConfig cfg;
  cfg.rcvbuf_bytes = 4096;  // tiny: a burst overflows it
  StartSource(cfg);
  ASSERT_TRUE(WaitFor([&] { return sink.routes().count(P("10.0.0.0/24")); }, 10s));
  const std::string dir = "/tmp/fibnic-kernel-" + std::to_string(getpid());
  MustSh("mkdir -p " + dir);
  {
    std::ofstream add(dir + "/add");
    for (int i = 0; i < 3000; ++i) {
      add << "route add 10." << 100 + i / 250 << "." << i % 250 << ".0/24 via 10.0.0." << 2 + rng() % 5 << "\n";
    }
  }
  ASSERT_NO_FATAL_FAILURE(RunStalled(dir + "/add"));  // events are lost
  {
    // Delete a random third, change another third.
    std::ofstream mod(dir + "/mod");
    for (int i = 0; i < 3000; ++i) {
      const std::string p = "10." + std::to_string(100 + i / 250) + "." + std::to_string(i % 250) + ".0/24";
      switch (rng() % 3) {
        case 0: mod << "route del " << p << "\n"; break;
        case 1: mod << "route replace " << p << " via 10.0.0." << 2 + rng() % 5 << "\n"; break;
        default: break;
      }
    }
  }
  ASSERT_NO_FATAL_FAILURE(RunStalled(dir + "/mod"));
  Sh("rm -rf " + dir);
  std::map<Prefix, std::vector<NextHop>> want, got;
  const bool ok = WaitFor(
      [&] {
        want = KernelFib();
        got.clear();
        for (const auto& [p, r] : sink.routes()) got[p] = r.paths;
        return got == want && !Stats().dumping;
      },
      60s);
  const auto st = Stats();
  EXPECT_GE(st.overruns, 1u);
  EXPECT_GE(st.resyncs, 1u);
  std::string diff;
  for (const auto& [p, paths] : want) {
    auto it = got.find(p);
    if (it == got.end() || it->second != paths) {
      diff += "  " + p.ToString() + ": kernel " + (paths.empty() ? "-" : paths[0].ToString()) + ", RIB " +
              (it == got.end() || it->second.empty() ? "-" : it->second[0].ToString()) + "\n";
    }
  }
  for (const auto& [p, paths] : got) {
    if (!want.count(p)) diff += "  " + p.ToString() + ": only in the RIB\n";
  }
  ASSERT_TRUE(ok) << "RIB (" << got.size() << " routes) differs from the kernel (" << want.size() << "):\n"
                  << diff.substr(0, 3000);
  std::cout << "overruns " << st.overruns << ", resyncs " << st.resyncs << ", swept " << st.swept << ", routes "
            << got.size() << std::endl;
}

}  // namespace
}  // namespace fibnic::testing
