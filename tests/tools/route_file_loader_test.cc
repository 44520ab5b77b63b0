// The route-file loader against the file's own meaning: lines of a prefix
// (consecutive or scattered) are one ECMP route, an exact repeat is an error
// naming the line, and a sorted full-size file loads as one batch with the
// same result as upserting each route on its own.
#include "tools/route_file_loader.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

namespace fibnic {
namespace {

class LoaderTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& text) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("fibnic-loader-" + std::to_string(::getpid()) + "-" + std::to_string(files_++) + ".txt");
    std::ofstream(path) << text;
    paths_.push_back(path);
    return path.string();
  }
  ~LoaderTest() override {
    for (const auto& p : paths_) std::filesystem::remove(p);
  }
  Fib fib_{FibConfig{}};
  RouteFileStats stats_;

 private:
  int files_ = 0;
  std::vector<std::filesystem::path> paths_;
};

std::vector<NextHop> PathsOf(const Fib& fib, const char* prefix) {
  auto r = fib.FindRoute(*Prefix::Parse(prefix), RouteSource::kStatic);
  return r ? r->paths : std::vector<NextHop>{};
}

NextHop Via(const char* gw, PortId port) { return NextHop{*IpAddr::Parse(gw), port}; }

TEST_F(LoaderTest, RepeatedPrefixesAreEcmpWhereverTheyAre) {
  const std::string file = Write(
      "10.1.0.0/16 192.0.2.2 1\n"
      "10.1.0.0/16 192.0.2.1 0\n"  // consecutive
      "10.2.0.0/16 192.0.2.1 0\n"
      "10.3.0.0/16 connected 2\n"
      "10.2.0.0/16 192.0.2.3 3\n"  // back in prefix order: an earlier prefix
      "2001:db8::/32 2001:db8::1 1\n");
  ASSERT_TRUE(LoadRouteFileInto(fib_, file, &stats_).ok());
  EXPECT_EQ(PathsOf(fib_, "10.1.0.0/16"), (std::vector<NextHop>{Via("192.0.2.1", 0), Via("192.0.2.2", 1)}));
  EXPECT_EQ(PathsOf(fib_, "10.2.0.0/16"), (std::vector<NextHop>{Via("192.0.2.1", 0), Via("192.0.2.3", 3)}));
  EXPECT_EQ(PathsOf(fib_, "10.3.0.0/16"), (std::vector<NextHop>{NextHop{std::nullopt, 2}}));
  EXPECT_EQ(PathsOf(fib_, "2001:db8::/32").size(), 1u);
  EXPECT_EQ(stats_.lines[0], 5u);
  EXPECT_EQ(stats_.lines[1], 1u);
  EXPECT_EQ(stats_.ecmp_lines, 2u);
}

TEST_F(LoaderTest, ExactRepeatIsAnErrorNamingTheLine) {
  for (const char* text : {"10.1.0.0/16 192.0.2.1 0\n10.1.0.0/16 192.0.2.1 0\n",
                           "10.1.0.0/16 192.0.2.1 0\n10.2.0.0/16 192.0.2.1 0\n10.1.0.0/16 192.0.2.1 0\n"}) {
    Fib fib{FibConfig{}};
    RouteFileStats stats;
    const std::string file = Write(text);
    const Status st = LoadRouteFileInto(fib, file, &stats);
    ASSERT_FALSE(st.ok()) << text;
    const std::string line = std::string(text).find("10.2") == std::string::npos ? ":2: " : ":3: ";
    EXPECT_NE(st.message().find(file + line), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("duplicate route 10.1.0.0/16"), std::string::npos) << st.message();
  }
}

// A sorted 20k-line file (with ECMP runs) and the same routes upserted one by
// one compile to the same image.
TEST_F(LoaderTest, SortedFileEqualsRouteByRoute) {
  std::mt19937_64 rng(7);
  std::map<Prefix, std::vector<NextHop>> routes;
  while (routes.size() < 20000) {
    const Prefix p = Prefix::V4(static_cast<uint32_t>(rng()), 12 + static_cast<int>(rng() % 21));
    auto& paths = routes[p];
    for (int k = 0; k < 1 + static_cast<int>(rng() % 4 == 0); ++k) {
      const NextHop nh = Via(("192.0.2." + std::to_string(1 + rng() % 4)).c_str(), static_cast<PortId>(rng() % 4));
      if (std::find(paths.begin(), paths.end(), nh) == paths.end()) paths.push_back(nh);
    }
    std::sort(paths.begin(), paths.end());
  }
  std::string text;
  for (const auto& [p, paths] : routes) {
    for (const auto& nh : paths) text += p.ToString() + " " + nh.gateway->ToString() + " " + std::to_string(nh.port) + "\n";
  }
  ASSERT_TRUE(LoadRouteFileInto(fib_, Write(text), &stats_).ok());
  Fib one_by_one{FibConfig{}};
  for (const auto& [p, paths] : routes) {
    one_by_one.UpsertRoute(Route{p, RouteSource::kStatic, 1, paths});
    ASSERT_TRUE(one_by_one.FindRoute(p, RouteSource::kStatic).has_value());  // settles each
  }
  for (Fib* f : {&fib_, &one_by_one}) {
    for (int i = 1; i <= 4; ++i) {
      const IpAddr gw = *IpAddr::Parse(("192.0.2." + std::to_string(i)).c_str());
      f->UpsertNeighbor(Neighbor{gw, MacAddr{{2, 0, 0, 0, 0, uint8_t(i)}}, PortId(i % 4), NeighState::kReachable});
    }
    f->Commit();
  }
  EXPECT_TRUE(fib_.image() == one_by_one.image());
  for (const auto& [p, paths] : routes) ASSERT_EQ(fib_.FindRoute(p, RouteSource::kStatic)->paths, paths) << p.ToString();
}

}  // namespace
}  // namespace fibnic
