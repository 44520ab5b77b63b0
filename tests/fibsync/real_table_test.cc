// The shared real Internet table (make-routes, generated at test time),
// compiled through the route-file loader, written as a BAR by the codec and
// checked /24 by /24 against the reference LPM.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fibsync/route_file_loader.h"
#include "hwif/fibnic_image_codec.h"
#include "tests/fibsync/fib_check.h"

namespace fibnic::testing {
namespace {

namespace fs = std::filesystem;

struct Files {
  fs::path dir, routes, neigh;
};

// make-routes into a fresh temporary folder (the data is never committed).
Files MakeRoutes(int gateways) {
  Files f;
  f.dir = fs::temp_directory_path() / ("fibsync-real-" + std::to_string(::getpid()) + "-" + std::to_string(gateways));
  fs::create_directories(f.dir);
  f.routes = f.dir / "routes.txt";
  f.neigh = f.dir / "neigh.txt";
  const std::string shared = FIBNIC_SHARED_DIR;
  const std::string cmd = "python3 '" + shared + "/tools/make-routes' '" + shared +
                          "/data/full-table-2024-03.prefixes.gz' --gateways " + std::to_string(gateways) +
                          " --out '" + f.routes.string() + "' --neigh '" + f.neigh.string() + "' 2>/dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return f;
}

// Reads the files with a plain stream parser of its own (not fibsync's).
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
  EXPECT_EQ(owners.size(), static_cast<size_t>(gateways));  // every IPv4 gateway fits in a slot
  const auto bar = EncodeBar(fib.image());
  const auto r = CheckAllSlash24(bar, world, world.Oracle(), owners, cfg.ecmp, cfg.caps.neigh_entries);
  EXPECT_TRUE(r.ok()) << r.first_error;
  EXPECT_EQ(r.misforwarded, 0u);
  EXPECT_EQ(r.owed_punted, 0u);
  EXPECT_GT(r.owed, 10'000'000u);  // the real table covers most of IPv4
  std::cout << "checked " << r.addresses << " addresses, forwarded " << r.forwarded << ", owed " << r.owed << "\n";
  fs::remove_all(files.dir);
}

#if defined(__SANITIZE_ADDRESS__)
INSTANTIATE_TEST_SUITE_P(CodeBits, RealTable, ::testing::Values(2));  // one sweep is enough under ASan
#else
INSTANTIATE_TEST_SUITE_P(CodeBits, RealTable, ::testing::Values(2, 4));
#endif

}  // namespace
}  // namespace fibnic::testing
