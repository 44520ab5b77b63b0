// The file source against what the files say: a load hands every route (ECMP
// lines merged) and neighbour to the sink; a reload hands only the difference
// (new, changed, gone); a bad file — a bad line, a next-hop repeated for a
// prefix, a bad neighbour file — is an error naming file:line and hands over
// nothing. A big random table reloaded with random edits leaves the sink equal
// to a plain parse of the new file.
#include "sources/file/file_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include "tests/sources/recording_sink.h"
#include "tests/support/parse.h"
#include "tests/support/test_seed.h"

namespace fibnic {
namespace {

using testing::P;

class FileSourceTest : public ::testing::Test {
 protected:
  FileSourceTest() {
    dir_ = std::filesystem::temp_directory_path() / ("fibnic-file-source-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  ~FileSourceTest() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
  testing::RecordingSink sink_;
};

NextHop Via(const char* gw, PortId port) { return NextHop{*IpAddr::Parse(gw), port}; }

TEST_F(FileSourceTest, LoadThenReloadHandsOverOnlyTheDifference) {
  Write("r", "10.1.0.0/16 192.0.2.1 1\n10.2.0.0/16 192.0.2.2 2\n10.1.0.0/16 192.0.2.2 2\n2001:db8::/32 connected 3\n");
  Write("n", "192.0.2.1 02:00:00:00:00:01 1\n");
  FileSource src(sink_, Path("r"), Path("n"), 5, 4);
  ASSERT_TRUE(src.Load().ok());
  auto routes = sink_.routes();
  ASSERT_EQ(routes.size(), 3u);
  EXPECT_EQ(routes[P("10.1.0.0/16")].paths, (std::vector<NextHop>{Via("192.0.2.1", 1), Via("192.0.2.2", 2)}));
  EXPECT_EQ(routes[P("10.1.0.0/16")].distance, 5);
  EXPECT_EQ(routes[P("2001:db8::/32")].paths, (std::vector<NextHop>{NextHop{std::nullopt, 3}}));
  EXPECT_EQ(sink_.neighbors().size(), 1u);
  EXPECT_EQ(src.stats().routes, 3u);
  sink_.TakeLog();

  // 10.1/16 loses a path, 10.2/16 goes, 10.3/16 comes, the IPv6 route stays.
  Write("r", "10.1.0.0/16 192.0.2.1 1\n10.3.0.0/16 192.0.2.1 1\n2001:db8::/32 connected 3\n");
  Write("n", "192.0.2.2 02:00:00:00:00:02 2\n");
  ASSERT_TRUE(src.Load().ok());
  auto log = sink_.TakeLog();
  std::sort(log.begin(), log.end());
  EXPECT_EQ(log, (std::vector<std::string>{"delete 10.2.0.0/16", "neigh 192.0.2.2", "neigh-delete 192.0.2.1",
                                           "upsert 10.1.0.0/16", "upsert 10.3.0.0/16"}));
  EXPECT_EQ(sink_.routes()[P("10.1.0.0/16")].paths, (std::vector<NextHop>{Via("192.0.2.1", 1)}));

  // The same files again: nothing.
  ASSERT_TRUE(src.Load().ok());
  EXPECT_TRUE(sink_.TakeLog().empty());
  EXPECT_EQ(src.stats().loads, 3u);
}

TEST_F(FileSourceTest, BadFilesChangeNothingAndSayWhere) {
  Write("r", "10.1.0.0/16 192.0.2.1 1\n");
  FileSource src(sink_, Path("r"), "", 1, 4);
  ASSERT_TRUE(src.Load().ok());
  sink_.TakeLog();
  const struct {
    const char* routes;
    const char* want;
  } bad[] = {
      {"10.1.0.0/16 192.0.2.1 1\n10.9.0.0/16 192.0.2.1 9\n", ":2: "},                            // port out of range
      {"10.1.0.0/16 192.0.2.1 1\n10.2.0.0/16 192.0.2.1 1\n10.1.0.0/16 192.0.2.1 1\n", ":3: next-hop repeated for 10.1.0.0/16"},
      {"2001:db8::/32 2001:db8::1 1\n2001:db8::/32 2001:db8::1 1\n", ":2: next-hop repeated for 2001:db8::/32"},
  };
  for (const auto& b : bad) {
    Write("r", b.routes);
    const Status st = src.Load();
    ASSERT_FALSE(st.ok()) << b.routes;
    EXPECT_NE(st.message().find(Path("r") + b.want), std::string::npos) << st.message();
    EXPECT_TRUE(sink_.TakeLog().empty()) << b.routes;
  }
  EXPECT_EQ(sink_.routes().size(), 1u);
}

// A 15k-route table, then random edits (paths changed, routes removed and
// added, ECMP lines split apart in the file): after each reload the sink holds
// exactly the file's table.
TEST_F(FileSourceTest, RandomReloadsLeaveTheSinkEqualToTheFile) {
  std::mt19937_64 rng(testing::TestSeed("FileSource"));
  auto hop4 = [&] { return Via(("192.0.2." + std::to_string(1 + rng() % 5)).c_str(), static_cast<PortId>(rng() % 4)); };
  auto hop6 = [&] {
    return rng() % 2 ? NextHop{std::nullopt, static_cast<PortId>(rng() % 4)}
                     : Via(("2001:db8:ffff::" + std::to_string(1 + rng() % 5)).c_str(), static_cast<PortId>(rng() % 4));
  };
  auto hop_for = [&](const Prefix& p) { return p.family() == Family::kV4 ? hop4() : hop6(); };
  std::map<Prefix, std::vector<NextHop>> table;
  auto random_prefix = [&] {
    if (rng() % 6 == 0) return *Prefix::Make(IpAddr::V6((U128{0x20010db8} << 96) | (U128(rng()) << 32)), 32 + static_cast<int>(rng() % 33));
    return Prefix::V4(static_cast<uint32_t>(rng()), 8 + static_cast<int>(rng() % 25));
  };
  while (table.size() < 15000) {
    const Prefix p = random_prefix();
    auto& paths = table[p];
    paths = {hop_for(p)};
    if (rng() % 5 == 0) {
      const NextHop second = hop_for(p);
      if (second != paths[0]) paths.push_back(second);
    }
    std::sort(paths.begin(), paths.end());
  }
  FileSource src(sink_, Path("r"), "", 1, 4);
  for (int round = 0; round < 4; ++round) {
    std::vector<std::string> lines;
    for (const auto& [p, paths] : table) {
      for (const auto& nh : paths) {
        lines.push_back(p.ToString() + " " + (nh.gateway ? nh.gateway->ToString() : "connected") + " " +
                        std::to_string(nh.port));
      }
    }
    std::shuffle(lines.begin(), lines.end(), rng);  // a file need not be sorted
    std::string text;
    for (const auto& l : lines) text += l + "\n";
    Write("r", text);
    const Status st = src.Load();
    ASSERT_TRUE(st.ok()) << st.ToString();
    const auto got = sink_.routes();
    ASSERT_EQ(got.size(), table.size());
    for (const auto& [p, paths] : table) {
      auto it = got.find(p);
      ASSERT_NE(it, got.end()) << p.ToString();
      ASSERT_EQ(it->second.paths, paths) << p.ToString();
    }
    // Edits for the next round.
    for (int k = 0; k < 1000; ++k) {
      auto it = std::next(table.begin(), static_cast<long>(rng() % table.size()));
      if (k % 3 == 0) {
        table.erase(it);
      } else {
        it->second = {hop_for(it->first)};
      }
      const Prefix p = random_prefix();
      table[p] = {hop_for(p)};
    }
  }
}

}  // namespace
}  // namespace fibnic
