// The one route-file reader (ReadStaticTable, used by the file source and
// fibnic-compile) against the file's meaning: lines of a prefix, consecutive
// or scattered, are one ECMP route with sorted paths; an exact repeat is an
// error naming file:line and the first line; a bad line is an error naming
// file:line; line and ECMP counts are per family.
#include "sources/file/static_table.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace fibnic {
namespace {

class StaticTableTest : public ::testing::Test {
 protected:
  StaticTableTest() {
    path_ = (std::filesystem::temp_directory_path() / ("fibnic-static-table-" + std::to_string(::getpid()))).string();
  }
  ~StaticTableTest() override { std::filesystem::remove(path_); }
  StatusOr<StaticTable> Read(const std::string& text) {
    std::ofstream(path_) << text;
    return ReadStaticTable(path_, 4);
  }
  std::string path_;
};

NextHop Via(const char* gw, PortId port) { return NextHop{*IpAddr::Parse(gw), port}; }

std::map<Prefix, std::vector<NextHop>> Routes(const StaticTable& t) {
  std::map<Prefix, std::vector<NextHop>> out;
  t.ForEachRoute(RouteSource::kStatic, 1, [&](const Route& r) { out[r.prefix] = r.paths; });
  return out;
}

TEST_F(StaticTableTest, ScatteredLinesOfAPrefixAreOneEcmpRoute) {
  auto t = Read(
      "# a comment\n"
      "10.2.0.0/16 192.0.2.3 3\n"
      "10.1.0.0/16 192.0.2.2 1   # trailing comment\n"
      "\n"
      "2001:db8::/32 connected 2\n"
      "10.1.0.0/16 192.0.2.1 0\n"
      "10.2.0.0/16 192.0.2.1 0\n"
      "2001:db8::/32 2001:db8::1 1\n");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const auto routes = Routes(*t);
  ASSERT_EQ(routes.size(), 3u);
  EXPECT_EQ(routes.at(*Prefix::Parse("10.1.0.0/16")), (std::vector<NextHop>{Via("192.0.2.1", 0), Via("192.0.2.2", 1)}));
  EXPECT_EQ(routes.at(*Prefix::Parse("10.2.0.0/16")), (std::vector<NextHop>{Via("192.0.2.1", 0), Via("192.0.2.3", 3)}));
  EXPECT_EQ(routes.at(*Prefix::Parse("2001:db8::/32")),
            (std::vector<NextHop>{NextHop{std::nullopt, 2}, Via("2001:db8::1", 1)}));
  EXPECT_EQ(t->lines[0], 4u);
  EXPECT_EQ(t->lines[1], 2u);
  EXPECT_EQ(t->ecmp_lines(), 3u);
  // 10.1/16 and 10.2/16 name different sets; nothing is stored twice.
  EXPECT_EQ(t->path_sets.size(), 3u);
}

TEST_F(StaticTableTest, ErrorsNameFileAndLine) {
  const struct {
    const char* text;
    const char* want;
  } bad[] = {
      {"10.1.0.0/16 192.0.2.1 1\n10.2.0.0/16 192.0.2.2 2\n10.1.0.0/16 192.0.2.1 1\n",
       ":3: next-hop repeated for 10.1.0.0/16 (duplicate route 10.1.0.0/16 via 192.0.2.1 port 1, first on line 1)"},
      {"2001:db8::/32 connected 1\n2001:db8::/32 2001:db8::1 1\n2001:db8::/32 connected 1\n",
       ":3: next-hop repeated for 2001:db8::/32 (duplicate route 2001:db8::/32 connected port 1, first on line 1)"},
      {"10.1.0.0/16 192.0.2.1 1\n10.2.0.0/33 192.0.2.2 2\n", ":2: "},
      {"10.1.0.0/16 192.0.2.1 1\n\n10.2.0.0/16 192.0.2.2 4\n", ":3: bad port '4' (want 0..3)"},
      {"10.1.0.0/16 192.0.2.1\n",
       ":1: want 'PREFIX GATEWAY PORT', 'PREFIX connected PORT' or 'PREFIX blackhole', got 2 fields"},
      {"10.1.0.0/16 2001:db8::1 1\n", ":1: gateway 2001:db8::1 is not"},
      {"10.1.0.0/16 nowhere 1\n", ":1: "},
  };
  for (const auto& b : bad) {
    auto t = Read(b.text);
    ASSERT_FALSE(t.ok()) << b.text;
    EXPECT_NE(t.status().message().find(path_ + b.want), std::string::npos) << t.status().message();
  }
  EXPECT_FALSE(ReadStaticTable(path_ + ".missing", 4).ok());
}

}  // namespace
}  // namespace fibnic
