// The shared real Internet table (make-routes, generated at test time),
// compiled through the route-file loader, written as a BAR by the codec and
// checked /24 by /24 against the reference LPM.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tools/route_file_loader.h"
#include "device/fibnic_image_codec.h"
#include "tests/fib/fib_check.h"

namespace fibnic::testing {
namespace {

namespace fs = std::filesystem;

struct Files {
  fs::path dir, routes, neigh;
};

// make-routes into a fresh temporary folder (the data is never committed).
Files MakeRoutes(int gateways, const std::string& family = "all") {
  Files f;
  f.dir = fs::temp_directory_path() / ("fibnic-real-" + std::to_string(::getpid()) + "-" + std::to_string(gateways) + "-" + family);
  fs::create_directories(f.dir);
  f.routes = f.dir / "routes.txt";
  f.neigh = f.dir / "neigh.txt";
  const std::string shared = FIBNIC_SOURCE_DIR;
  const std::string cmd = "python3 '" + shared + "/tools/make-routes' '" + shared +
                          "/data/full-table-2024-03.prefixes.gz' --gateways " + std::to_string(gateways) +
                          " --family " + family + " --out '" + f.routes.string() + "' --neigh '" + f.neigh.string() + "' 2>/dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return f;
}

// Reads the files with a plain stream parser of its own (not fib/'s).
World ReadWorld(const Files& f) {
  World w;
  std::ifstream r(f.routes);
  std::string prefix, gw;
  int port;
  while (r >> prefix >> gw >> port) {
    NextHop nh{std::nullopt, static_cast<PortId>(port)};
    if (gw != "connected") nh.gateway = *IpAddr::Parse(gw);
    w.routes[*Prefix::Parse(prefix)].push_back(nh);
  }
  std::ifstream n(f.neigh);
  std::string addr, mac;
  while (n >> addr >> mac >> port) {
    const auto a = *IpAddr::Parse(addr);
    w.neigh[a] = Neighbor{a, *MacAddr::Parse(mac), static_cast<PortId>(port), NeighState::kReachable};
  }
  return w;
}

class RealTable : public ::testing::TestWithParam<int> {};

TEST_P(RealTable, EverySlash24MatchesReferenceLpm) {
  const int gateways = GetParam() == 2 ? 3 : 12;
  const Files files = MakeRoutes(gateways);
  FibConfig cfg;
  cfg.caps = GetParam() == 4 ? regs::Caps::Model4Bit() : regs::Caps::Model2Bit();
  Fib fib(cfg);
  RouteFileStats stats;
  ASSERT_TRUE(LoadRouteFileInto(fib, files.routes.string(), &stats).ok());
  ASSERT_TRUE(LoadNeighborFileInto(fib, files.neigh.string(), &stats).ok());
  fib.Commit();
  EXPECT_EQ(stats.lines[0], 901899u);
  EXPECT_EQ(stats.lines[1], 160147u);

  const World world = ReadWorld(files);
  const auto owners = Owners(fib);
  // Every IPv4 gateway fits in a slot; each router's IPv6 gateway is behind
  // the same MAC and port: one adjacency, so it shares that code.
  size_t v4_owners = 0;
  for (const auto& o : owners) v4_owners += o.gateway && o.gateway->is_v4();
  EXPECT_EQ(v4_owners, static_cast<size_t>(gateways));
  EXPECT_EQ(owners.size(), static_cast<size_t>(2 * gateways));
  const auto bar = EncodeBar(fib.image());
  const auto r = CheckAllSlash24(bar, world, world.Oracle(), owners, cfg.ecmp, cfg.caps.neigh_entries);
  EXPECT_TRUE(r.ok()) << r.first_error;
  EXPECT_EQ(r.misforwarded, 0u);
  EXPECT_EQ(r.owed_punted, 0u);
  EXPECT_GT(r.owed, 10'000'000u);  // the real table covers most of IPv4
  std::cout << "checked " << r.addresses << " addresses, forwarded " << r.forwarded << ", owed " << r.owed << "\n";
  std::mt19937_64 rng(static_cast<uint64_t>(::getpid()));
  std::cout << "IPv6 sample seed " << ::getpid() << "\n";
  const auto r6 = CheckV6Sampled(bar, world, world.Oracle(), fib, rng);
  EXPECT_TRUE(r6.ok()) << r6.first_error;
  std::cout << "IPv6: " << r6.addresses << " destinations, forwarded " << r6.forwarded << ", owed " << r6.owed << "\n";
  fs::remove_all(files.dir);
}

// The table's IPv6 part alone: its gateways own every slot and the TCAM
// holds what the compiler chose; sampled destinations against the oracle.
TEST(RealTable6, SampledDestinationsMatchReferenceLpm) {
  const Files files = MakeRoutes(3, "6");
  FibConfig cfg;
  Fib fib(cfg);
  RouteFileStats stats;
  ASSERT_TRUE(LoadRouteFileInto(fib, files.routes.string(), &stats).ok());
  ASSERT_TRUE(LoadNeighborFileInto(fib, files.neigh.string(), &stats).ok());
  fib.Commit();
  EXPECT_EQ(stats.lines[1], 160147u);
  EXPECT_EQ(Owners(fib).size(), 3u);
  uint32_t used = 0;
  for (const auto& e : fib.image().tcam) used += e.valid();
  EXPECT_EQ(used, cfg.caps.tcam_entries);
  const World world = ReadWorld(files);
  const auto bar = EncodeBar(fib.image());
  const uint64_t seed = static_cast<uint64_t>(::getpid());
  std::mt19937_64 rng(seed);
  std::cout << "sample seed " << seed << "\n";
  const auto r = CheckV6Sampled(bar, world, world.Oracle(), fib, rng, 256);
  EXPECT_EQ(r.misforwarded, 0u) << r.first_error;
  EXPECT_EQ(r.owed_punted, 0u) << r.first_error;
  const auto counts = fib.Counts();
  EXPECT_GT(counts.routes[1][static_cast<int>(OffloadState::kOffloaded)], 0u);
  EXPECT_GT(r.forwarded, 0u);
  std::cout << "IPv6: " << r.addresses << " destinations, forwarded " << r.forwarded << ", owed " << r.owed
            << "; routes offloaded " << counts.routes[1][static_cast<int>(OffloadState::kOffloaded)] << ", partial "
            << counts.routes[1][static_cast<int>(OffloadState::kPartial)] << "\n";
  fs::remove_all(files.dir);
}

// Three dual-stack routers, the common real case: make-routes
// gives router k an IPv4 and an IPv6 gateway with one MAC on one port. With
// 2-bit codes the three (MAC, port) adjacencies fit the three next-hop
// entries, so both families of every router can be forwarded; IPv6 is held as
// far as the 32-entry TCAM allows (as many routes as the IPv6 part alone
// gets). Before next-hops became adjacencies the IPv4 gateways took all three
// codes: IPv4 as below, IPv6 nothing.
constexpr uint64_t kV4OffloadedBefore = 857100;  // IPv4 routes offloaded, main at 50b67a6
constexpr uint64_t kV4ForwardedBefore = 11995792;  // /24 sweep addresses forwarded, the same
TEST(RealTableDualStack, RoutersShareTheirCodeAcrossFamilies) {
  const Files files = MakeRoutes(3);
  // The premise: each MAC names exactly one IPv4 and one IPv6 gateway, on one port.
  std::map<std::string, std::set<std::pair<bool, int>>> gateways_of;  // MAC → {(is IPv4, port)}
  {
    std::ifstream n(files.neigh);
    std::string addr, mac;
    int port;
    while (n >> addr >> mac >> port) gateways_of[mac].insert({IpAddr::Parse(addr)->is_v4(), port});
  }
  ASSERT_EQ(gateways_of.size(), 3u);
  for (const auto& [mac, gws] : gateways_of) {
    ASSERT_EQ(gws.size(), 2u) << mac;
    EXPECT_NE(gws.begin()->first, gws.rbegin()->first) << mac << ": not one gateway per family";
    EXPECT_EQ(gws.begin()->second, gws.rbegin()->second) << mac << ": its gateways are on two ports";
  }

  FibConfig cfg;
  cfg.caps = regs::Caps::Model2Bit();
  // What the TCAM allows: the IPv6 part alone, whose gateways own every code.
  uint64_t v6_alone = 0;
  {
    const Files files6 = MakeRoutes(3, "6");
    Fib fib6(cfg);
    RouteFileStats stats6;
    ASSERT_TRUE(LoadRouteFileInto(fib6, files6.routes.string(), &stats6).ok());
    ASSERT_TRUE(LoadNeighborFileInto(fib6, files6.neigh.string(), &stats6).ok());
    fib6.Commit();
    v6_alone = fib6.Counts().routes[1][static_cast<int>(OffloadState::kOffloaded)];
    fs::remove_all(files6.dir);
  }
  Fib fib(cfg);
  RouteFileStats stats;
  ASSERT_TRUE(LoadRouteFileInto(fib, files.routes.string(), &stats).ok());
  ASSERT_TRUE(LoadNeighborFileInto(fib, files.neigh.string(), &stats).ok());
  fib.Commit();
  const auto counts = fib.Counts();
  const uint64_t v4 = counts.routes[0][static_cast<int>(OffloadState::kOffloaded)];
  const uint64_t v6 = counts.routes[1][static_cast<int>(OffloadState::kOffloaded)];

  const World world = ReadWorld(files);
  const auto bar = EncodeBar(fib.image());
  const auto r = CheckAllSlash24(bar, world, world.Oracle(), Owners(fib), cfg.ecmp, cfg.caps.neigh_entries);
  EXPECT_TRUE(r.ok()) << r.first_error;
  const uint64_t seed = static_cast<uint64_t>(::getpid());
  std::mt19937_64 rng(seed);
  const auto r6 = CheckV6Sampled(bar, world, world.Oracle(), fib, rng);
  EXPECT_TRUE(r6.ok()) << r6.first_error << " (sample seed " << seed << ")";
  std::cout << "dual stack, 3 routers, 2-bit codes: IPv4 " << v4 << " of " << stats.lines[0]
            << " routes offloaded (before adjacencies: " << kV4OffloadedBefore << "), /24 sweep forwards " << r.forwarded
            << " of " << r.addresses << " addresses; IPv6 " << v6 << " of " << stats.lines[1]
            << " routes offloaded (before: 0; the IPv6 part alone: " << v6_alone << "), sampled " << r6.addresses << " destinations (seed " << seed
            << "), forwarded " << r6.forwarded << "\n";
  EXPECT_GE(v4, kV4OffloadedBefore);
  EXPECT_GE(r.forwarded, kV4ForwardedBefore);
  EXPECT_GT(v6, 0u);
  EXPECT_EQ(v6, v6_alone);
  EXPECT_GT(r6.forwarded, 0u);
  fs::remove_all(files.dir);
}

#if defined(__SANITIZE_ADDRESS__)
INSTANTIATE_TEST_SUITE_P(CodeBits, RealTable, ::testing::Values(2));  // one sweep is enough under ASan
#else
INSTANTIATE_TEST_SUITE_P(CodeBits, RealTable, ::testing::Values(2, 4));
#endif

}  // namespace
}  // namespace fibnic::testing
