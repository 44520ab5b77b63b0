// The REST API over real HTTP against a server fed with routes from the real
// Internet table (data/), checked against independent oracles: counts and
// prefix sets read from the route file by the test itself, lookups against
// tests/oracle/reference_lpm.h, the SRAM picture against a decode of the BAR
// bytes, and every answer against the OpenAPI document it claims to follow.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "rib/route.h"
#include "tests/web/http_client.h"
#include "tests/web/schema_check.h"
#include "tests/web/server_fixture.h"
#include "tests/web/web_harness.h"
#include "web/http/dashboard.h"

namespace fibnic::web {
namespace {

using nlohmann::json;
using testing::Get;
using testing::Request;

constexpr const char* kToken = "api-test-token-0123456789";

// The route file as the test reads it: prefix → (gateway text, port) lines.
struct FileView {
  std::map<Prefix, std::vector<std::pair<std::string, int>>> routes;
  size_t neighbors = 0;
  uint64_t count(Family f) const {
    return std::count_if(routes.begin(), routes.end(), [f](const auto& r) { return r.first.family() == f; });
  }
};

class ApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(std::filesystem::temp_directory_path() / ("fibnic-web-api-" + std::to_string(::getpid())));
    std::filesystem::create_directories(*dir_);
    const std::string shared = FIBNIC_SOURCE_DIR;
    const std::string tool = "python3 " + shared + "/tools/make-routes " + shared + "/data/full-table-2024-03.prefixes.gz --gateways 3 ";
    ASSERT_EQ(std::system((tool + "--family 4 --limit 30000 --out " + *dir_ + "/r4.txt --neigh " + *dir_ + "/n.txt 2>/dev/null").c_str()), 0);
    ASSERT_EQ(std::system((tool + "--family 6 --limit 4000 --out " + *dir_ + "/r6.txt 2>/dev/null").c_str()), 0);
    ASSERT_EQ(std::system(("cat " + *dir_ + "/r4.txt " + *dir_ + "/r6.txt > " + *dir_ + "/routes.txt").c_str()), 0);

    file_ = new FileView;
    std::ifstream in(*dir_ + "/routes.txt");
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      std::string p, gw;
      int port;
      ls >> p >> gw >> port;
      file_->routes[*Prefix::Parse(p)].push_back({gw, port});
    }
    std::ifstream nin(*dir_ + "/n.txt");
    while (std::getline(nin, line)) file_->neighbors += !line.empty();

    harness_ = new testing::Harness();
    Status st = harness_->LoadRouteFiles(*dir_ + "/routes.txt", *dir_ + "/n.txt");
    ASSERT_TRUE(st.ok()) << st.ToString();
    telemetry_ = new Telemetry();
    WebConfig cfg;
    cfg.port = 0;
    cfg.token = kToken;
    server_ = new testing::ServerThread(cfg, [](boost::asio::io_context& io, Router& r) {
      ASSERT_TRUE(harness_->Mount(io, r, telemetry_).ok());
      AddDashboard(r);
    }, telemetry_);
    ASSERT_TRUE(server_->status().ok()) << server_->status().ToString();
    server_->BeforeStop([] { harness_->Unmount(); });
  }
  static void TearDownTestSuite() {
    delete server_;
    delete harness_;
    delete telemetry_;
    delete file_;
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }

  static json GetJson(const std::string& target, int want = 200) {
    auto r = Get(server_->port(), target);
    EXPECT_EQ(r.status, want) << target << ": " << r.body << r.error;
    return json::parse(r.body, nullptr, false);
  }
  uint16_t port() const { return server_->port(); }

  static std::string* dir_;
  static FileView* file_;
  static testing::Harness* harness_;
  static Telemetry* telemetry_;
  static testing::ServerThread* server_;
};
std::string* ApiTest::dir_;
FileView* ApiTest::file_;
testing::Harness* ApiTest::harness_;
Telemetry* ApiTest::telemetry_;
testing::ServerThread* ApiTest::server_;

std::string Enc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '/') o += "%2F";
    else if (c == ':') o += "%3A";
    else o += c;
  }
  return o;
}

TEST_F(ApiTest, StatusCountsMatchTheRouteFile) {
  json st = GetJson("/api/v1/status");
  ASSERT_FALSE(st.is_discarded());
  for (auto [fam, name] : {std::pair{Family::kV4, "ipv4"}, std::pair{Family::kV6, "ipv6"}}) {
    const json& c = st["routes"][name];
    EXPECT_EQ(c["total"].get<uint64_t>(), file_->count(fam)) << name;
    // Shadowed routes are counted apart from the punted.
    EXPECT_EQ(c["offloaded"].get<uint64_t>() + c["partial"].get<uint64_t>() + c["punted"].get<uint64_t>() +
                  c["shadowed"].get<uint64_t>(),
              file_->count(fam));
  }
  EXPECT_GT(st["routes"]["ipv4"]["offloaded"].get<uint64_t>(), 0u);
  EXPECT_EQ(st["neighbors"].get<size_t>(), file_->neighbors);
  EXPECT_EQ(st["slots"]["total"], 3);
  EXPECT_GE(st["slots"]["used"].get<int>(), 1);
  EXPECT_LE(st["slots"]["used"].get<int>(), 3);
  EXPECT_EQ(st["device"]["present"], true);
  EXPECT_EQ(st["device"]["version"], "1.0");
  EXPECT_EQ(st["device"]["caps"]["code_bits"], 2);
  EXPECT_GE(st["device"]["generation"].get<uint64_t>(), 1u);  // Sync wrote it
  EXPECT_EQ(st["device"]["control"]["ipv4"], true);
}

TEST_F(ApiTest, LookupMatchesTheReferenceLpm) {
  const uint64_t seed = std::random_device{}();
  std::printf("lookup seed=%llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  std::vector<Prefix> prefixes;
  for (const auto& [p, v] : file_->routes) prefixes.push_back(p);
  int forwarded = 0, punted = 0;
  for (int i = 0; i < 400; ++i) {
    IpAddr dst;
    if (i % 4 == 0) {
      dst = IpAddr::V4(static_cast<uint32_t>(rng()));
    } else {
      const Prefix& p = prefixes[rng() % prefixes.size()];
      const U128 host = p.family() == Family::kV4 ? (U128{rng()} & ~U128{MaskV4(p.len())} & 0xFFFFFFFF)
                                                  : (((U128{rng()} << 64) | rng()) & ~MaskV6(p.len()));
      dst = p.family() == Family::kV4 ? IpAddr::V4(p.addr().v4() | static_cast<uint32_t>(host)) : IpAddr::V6(p.addr().v6() | host);
    }
    json j = GetJson("/api/v1/lookup/" + Enc(dst.ToString()));
    ASSERT_FALSE(j.is_discarded());
    auto m = harness_->oracle().Match(dst);
    if (m) {
      EXPECT_EQ(j["rib"]["matched"], m->first.ToString()) << dst.ToString();
    } else {
      EXPECT_TRUE(j["rib"]["matched"].is_null()) << dst.ToString();
    }
    const auto ok = harness_->oracle().Acceptable(dst);
    const json& hw = j["hardware"];
    if (hw["forward"].get<bool>()) {
      ++forwarded;
      const oracle::Forward got{*MacAddr::Parse(hw["mac"].get<std::string>()), hw["port"].get<uint8_t>()};
      EXPECT_TRUE(ok.count(got)) << dst.ToString() << " forwarded to a result the oracle does not accept (seed " << seed << ")";
      EXPECT_EQ(j["verdict"], "match") << dst.ToString();
    } else {
      ++punted;
      EXPECT_EQ(j["verdict"], "punt");
    }
    // The RIB's own expectation must be one of the oracle's answers too.
    if (!j["rib"]["expected"].is_null()) {
      const oracle::Forward exp{*MacAddr::Parse(j["rib"]["expected"]["mac"].get<std::string>()),
                                j["rib"]["expected"]["port"].get<uint8_t>()};
      EXPECT_TRUE(ok.count(exp)) << dst.ToString();
    }
  }
  EXPECT_GT(forwarded, 50);
  EXPECT_GT(punted, 0);
  GetJson("/api/v1/lookup/10.1.2.300", 400);
  GetJson("/api/v1/lookup/not-an-address", 400);
}

TEST_F(ApiTest, PagingWalksEveryRouteOnceInOrder) {
  for (auto [fam, name] : {std::pair{Family::kV4, "ipv4"}, std::pair{Family::kV6, "ipv6"}}) {
    std::vector<Prefix> seen;
    std::string after;
    for (int page = 0; page < 1000; ++page) {
      json j = GetJson(std::string("/api/v1/routes?limit=1000&family=") + name + (after.empty() ? "" : "&after=" + Enc(after)));
      for (const auto& r : j["routes"]) seen.push_back(*Prefix::Parse(r["prefix"].get<std::string>()));
      if (j["next"].is_null()) break;
      after = j["next"].get<std::string>();
    }
    EXPECT_EQ(seen.size(), file_->count(fam)) << name;
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
    EXPECT_EQ(std::set<Prefix>(seen.begin(), seen.end()).size(), seen.size());
    for (const auto& p : seen) ASSERT_TRUE(file_->routes.count(p)) << p.ToString();
  }
}

TEST_F(ApiTest, FiltersAgreeWithTheFile) {
  const Prefix within = *Prefix::Parse("1.0.0.0/8");
  std::set<std::string> want_within, got_within;
  for (const auto& [p, v] : file_->routes) if (within.Contains(p)) want_within.insert(p.ToString());
  json j = GetJson("/api/v1/routes?limit=1000&prefix=" + Enc(within.ToString()));
  for (const auto& r : j["routes"]) got_within.insert(r["prefix"]);
  ASSERT_FALSE(want_within.empty());
  if (want_within.size() <= 1000) {
    EXPECT_EQ(got_within, want_within);
  }

  // covering: every file prefix that contains a /32 inside some long route
  const Prefix some = std::prev(file_->routes.end(), file_->count(Family::kV6) + 7)->first;  // an IPv4 route
  ASSERT_EQ(some.family(), Family::kV4);
  std::set<std::string> want_cov, got_cov;
  for (const auto& [p, v] : file_->routes) if (p.Contains(some.addr())) want_cov.insert(p.ToString());
  const json cov = GetJson("/api/v1/routes?covering=" + some.addr().ToString());
  for (const auto& r : cov["routes"]) got_cov.insert(r["prefix"]);
  EXPECT_EQ(got_cov, want_cov);

  uint64_t by_state = 0;
  for (const char* s : {"offloaded", "partial", "punted"}) {
    std::string after;
    for (;;) {
      json page = GetJson(std::string("/api/v1/routes?limit=1000&state=") + s + (after.empty() ? "" : "&after=" + Enc(after)));
      for (const auto& r : page["routes"]) {
        ASSERT_EQ(r["state"], s);
        ++by_state;
      }
      if (page["next"].is_null()) break;
      after = page["next"];
    }
  }
  EXPECT_EQ(by_state, file_->routes.size());
  EXPECT_EQ(GetJson("/api/v1/routes?source=kernel")["routes"].size(), 0u);  // the harness loads static routes
  GetJson("/api/v1/routes?state=sideways", 400);
  GetJson("/api/v1/routes?limit=0", 400);
  GetJson("/api/v1/routes?prefix=10.0.0.1/8", 400);  // host bits set
  GetJson("/api/v1/routes?family=ipv5", 400);
}

// Pages of random sizes under random filters (prefix, covering, family,
// after) against the same filter applied to the file's sorted prefixes; a
// route on each page equals its detail endpoint's best candidate.
TEST_F(ApiTest, FilteredPagesFollowTheFile) {
  const uint64_t seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  std::cout << "FilteredPagesFollowTheFile: seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  std::vector<Prefix> sorted;
  for (const auto& [p, v] : file_->routes) sorted.push_back(p);
  for (int round = 0; round < 12; ++round) {
    const Prefix some = sorted[rng() % sorted.size()];
    const int bits = FamilyBits(some.family());
    std::optional<Prefix> within, covering, after;
    std::optional<Family> family;
    if (rng() % 3) within = *Prefix::Make(some.addr(), static_cast<int>(rng() % 17) + (bits == 32 ? 4 : 16));
    if (rng() % 5 == 0) covering = *Prefix::Make(some.addr(), bits);
    if (rng() % 2) after = sorted[rng() % sorted.size()];
    if (rng() % 2) family = some.family();
    const uint64_t limit = 1 + rng() % 300;
    std::string query = "limit=" + std::to_string(limit);
    if (within) query += "&prefix=" + Enc(within->ToString());
    if (covering) query += "&covering=" + Enc(covering->ToString());
    if (family) query += std::string("&family=") + FamilyName(*family);
    SCOPED_TRACE(query + (after ? " after " + after->ToString() : ""));

    std::vector<std::string> want, got;
    for (const Prefix& p : sorted) {
      if ((after && !(*after < p)) || (family && p.family() != *family)) continue;
      if ((within && !within->Contains(p)) || (covering && !p.Contains(*covering))) continue;
      want.push_back(p.ToString());
    }
    // Long walks (small pages over a whole family) are sampled: their first 40 pages.
    std::optional<Prefix> cursor = after;
    size_t pages = 0;
    for (; pages < 40; ++pages) {
      json j = GetJson("/api/v1/routes?" + query + (cursor ? "&after=" + Enc(cursor->ToString()) : ""));
      ASSERT_TRUE(j.is_object());
      for (const auto& r : j["routes"]) got.push_back(r["prefix"]);
      if (!j["routes"].empty()) {
        const json& r = j["routes"][rng() % j["routes"].size()];
        const Prefix p = *Prefix::Parse(r["prefix"].get<std::string>());
        EXPECT_EQ(r, GetJson("/api/v1/routes/" + p.addr().ToString() + "/" + std::to_string(p.len()))["candidates"][0]);
      }
      if (j["next"].is_null()) break;
      EXPECT_EQ(j["routes"].size(), limit);
      cursor = *Prefix::Parse(j["next"].get<std::string>());
    }
    if (pages == 40) want.resize(std::min(want.size(), got.size()));
    EXPECT_EQ(got, want);
  }
}

// A state filter examines a bounded number of routes per page (so a rare
// state cannot hold the Fib's strand for the whole table); following the
// cursors still yields exactly the routes in that state, in order.
TEST_F(ApiTest, StatePagesAreBoundedAndComplete) {
  std::map<std::string, std::vector<std::string>> by_state;
  std::string after;
  for (int page = 0; page < 1000; ++page) {
    json j = GetJson("/api/v1/routes?limit=1000" + (after.empty() ? "" : "&after=" + Enc(after)));
    for (const auto& r : j["routes"]) by_state[r["state"]].push_back(r["prefix"]);
    if (j["next"].is_null()) break;
    after = j["next"];
  }
  for (const char* s : {"offloaded", "partial", "punted"}) {
    std::vector<std::string> got;
    after.clear();
    for (int page = 0; page < 1000; ++page) {
      json j = GetJson(std::string("/api/v1/routes?limit=1000&state=") + s + (after.empty() ? "" : "&after=" + Enc(after)));
      EXPECT_LE(j["scanned"].get<uint64_t>(), 20000u);
      for (const auto& r : j["routes"]) got.push_back(r["prefix"]);
      if (j["next"].is_null()) break;
      after = j["next"];
    }
    EXPECT_EQ(got, by_state[s]) << s;
  }
  ASSERT_GT(file_->routes.size(), 20000u);  // so some state page stopped at the bound
}

TEST_F(ApiTest, RouteDetailShowsTheFileNextHops) {
  const auto& [p, lines] = *file_->routes.begin();
  json j = GetJson("/api/v1/routes/" + p.addr().ToString() + "/" + std::to_string(p.len()));
  ASSERT_EQ(j["candidates"].size(), 1u);
  const json& c = j["candidates"][0];
  EXPECT_EQ(c["prefix"], p.ToString());
  EXPECT_EQ(c["source"], "static");
  std::set<std::pair<std::string, int>> want(lines.begin(), lines.end()), got;
  for (const auto& path : c["paths"]) got.insert({path["gateway"].get<std::string>(), path["port"].get<int>()});
  EXPECT_EQ(got, want);
  GetJson("/api/v1/routes/203.0.113.0/31", 404);
  GetJson("/api/v1/routes/203.0.113.1/24", 400);
}

TEST_F(ApiTest, TablesAreInSyncWithTheDevice) {
  json nh = GetJson("/api/v1/nexthops");
  ASSERT_EQ(nh["slots"].size(), 3u);
  for (const auto& s : nh["slots"]) {
    EXPECT_EQ(s["in_sync"], true) << s.dump();
    if (!s["owner"].is_null()) {
      EXPECT_EQ(s["device"]["valid"], true);
    }
  }
  json nb = GetJson("/api/v1/neighbors");
  EXPECT_EQ(nb["neighbors"].size(), file_->neighbors);
  // The NEIGH CAM holds what connected routes need; each entry shown must be on the device.
  int in_cam = 0;
  for (const auto& n : nb["neighbors"]) {
    if (n["cam_index"].is_null()) continue;
    ++in_cam;
    EXPECT_EQ(n["cam_mac"], n["mac"]);
    EXPECT_EQ(n["cam_port"], n["port"]);
  }
  EXPECT_EQ(nb["cam_used"], in_cam);
  json tc = GetJson("/api/v1/tcam");
  ASSERT_EQ(tc["entries"].size(), 32u);
  int valid = 0;
  for (size_t i = 0; i < 32; ++i) {
    EXPECT_EQ(tc["entries"][i]["index"], i);
    EXPECT_EQ(tc["entries"][i]["in_sync"], true);
    valid += tc["entries"][i]["valid"].get<bool>();
  }
  EXPECT_EQ(tc["used"], valid);
  // Offloaded IPv6 routes need TCAM entries.
  if (GetJson("/api/v1/status")["routes"]["ipv6"]["offloaded"].get<uint64_t>() > 0) {
    EXPECT_GT(valid, 0);
  }
}

TEST_F(ApiTest, SramPictureAndSummaryDecodeTheBar) {
  json s = GetJson("/api/v1/sram");
  EXPECT_EQ(s["source"], "device");
  uint64_t total = 0;
  for (const auto& n : s["by_code"]) total += n.get<uint64_t>();
  EXPECT_EQ(total, uint64_t{1} << 24);
  for (const auto& r : s["regions"]) {
    uint64_t sum = 0;
    for (const auto& n : r["by_code"]) sum += n.get<uint64_t>();
    ASSERT_EQ(sum, 65536u) << r["prefix"];
  }
  // Full-resolution linear map: pixel i is /24 number i. Decode the BAR bytes
  // here, straight from the spec's SRAM4 layout.
  auto r = Get(port(), "/api/v1/sram/map?size=4096&order=linear");
  ASSERT_EQ(r.status, 200);
  ASSERT_EQ(r.body.size(), size_t{1} << 24);
  EXPECT_EQ(r.headers.at("Content-Type"), "application/octet-stream");
  const uint8_t* bar = harness_->bar().data();
  std::vector<uint64_t> hist(4, 0);
  for (uint32_t s24 = 0; s24 < (1u << 24); ++s24) {
    const uint8_t byte = bar[regs::kOffSram4 + (s24 >> 2)];
    const uint8_t code = (byte >> (2 * (s24 & 3))) & 3;
    ASSERT_EQ(static_cast<uint8_t>(r.body[s24]), code) << s24;
    ++hist[code];
  }
  for (int c = 0; c < 4; ++c) EXPECT_EQ(s["by_code"][c].get<uint64_t>(), hist[c]);
  auto small = Get(port(), "/api/v1/sram/map");
  EXPECT_EQ(small.body.size(), 1024u * 1024u);
  EXPECT_EQ(small.headers.at("X-Fibnic-Order"), "hilbert");
  GetJson("/api/v1/sram/map?size=1000", 400);
  GetJson("/api/v1/sram/map?size=8192", 400);
  GetJson("/api/v1/sram/map?order=zigzag", 400);
}

TEST_F(ApiTest, StaticRouteThroughTheApiNeedsTheTokenAndTakesEffect) {
  const std::string target = "/api/v1/routes/static/198.51.100.0/24";
  const std::string body = R"({"paths":[{"gateway":"10.1.0.1","port":1}]})";
  std::map<std::string, std::string> hdr = {{"Content-Type", "application/json"}};
  EXPECT_EQ(Request(port(), "PUT", target, hdr, body).status, 401);
  hdr["Authorization"] = std::string("Bearer ") + kToken;
  EXPECT_EQ(Request(port(), "PUT", target, hdr, R"({"paths":[{"gateway":"10.1.0.1","port":9}]})").status, 400);
  EXPECT_EQ(Request(port(), "PUT", target, hdr, R"({"paths":[{"gateway":"fd00::1","port":1}]})").status, 400);
  EXPECT_EQ(Request(port(), "PUT", target, hdr, R"({"paths":[],"x":1})").status, 400);
  EXPECT_EQ(Request(port(), "PUT", target, hdr, "not json").status, 400);
  json before = GetJson("/api/v1/status");
  auto put = Request(port(), "PUT", target, hdr, body);
  ASSERT_EQ(put.status, 200) << put.body;
  json lk = GetJson("/api/v1/lookup/198.51.100.7");
  EXPECT_EQ(lk["rib"]["matched"], "198.51.100.0/24");
  EXPECT_EQ(lk["rib"]["path"]["gateway"], "10.1.0.1");
  EXPECT_NE(lk["verdict"], "mismatch");
  if (lk["hardware"]["forward"].get<bool>()) {
    EXPECT_EQ(lk["hardware"]["mac"], "02:00:00:00:00:01");
  }
  // Counts are cached for up to 20x their cost after a push (seconds under
  // ASan on a loaded machine): poll until they move, for at most 30 s.
  json after;
  for (int i = 0; i < 300; ++i) {
    after = GetJson("/api/v1/status");
    if (after["routes"]["ipv4"]["total"] != before["routes"]["ipv4"]["total"]) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(after["routes"]["ipv4"]["total"].get<uint64_t>(), before["routes"]["ipv4"]["total"].get<uint64_t>() + 1);
  EXPECT_GT(after["device"]["generation"].get<uint64_t>(), before["device"]["generation"].get<uint64_t>());
  json ev = GetJson("/api/v1/events?level=info");
  bool logged = false;
  for (const auto& e : ev["events"]) logged |= e["message"].get<std::string>().find("198.51.100.0/24 set") != std::string::npos;
  EXPECT_TRUE(logged) << ev.dump();
  hdr.erase("Content-Type");
  EXPECT_EQ(Request(port(), "DELETE", target, hdr).status, 200);
  EXPECT_EQ(Request(port(), "DELETE", target, hdr).status, 404);
  EXPECT_TRUE(GetJson("/api/v1/lookup/198.51.100.7")["rib"]["matched"] != "198.51.100.0/24");
}

// A blackhole set through the API: the RIB's answer is a drop, the card
// drops or punts (never forwards), and a body that mixes a blackhole with
// paths, or says false, is refused and changes nothing.
TEST_F(ApiTest, ABlackholeThroughTheApiIsNeverForwarded) {
  const std::string target = "/api/v1/routes/static/198.51.100.0/24";
  std::map<std::string, std::string> hdr = {{"Content-Type", "application/json"},
                                            {"Authorization", std::string("Bearer ") + kToken}};
  for (const char* bad : {R"({"blackhole":false})", R"({"blackhole":"yes"})",
                          R"({"blackhole":true,"paths":[{"gateway":"10.1.0.1","port":1}]})"}) {
    const auto r = Request(port(), "PUT", target, hdr, bad);
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_NE(r.body.find("blackhole"), std::string::npos) << r.body;
  }
  EXPECT_NE(GetJson("/api/v1/lookup/198.51.100.7")["rib"]["matched"], "198.51.100.0/24");
  const auto put = Request(port(), "PUT", target, hdr, R"({"blackhole":true})");
  ASSERT_EQ(put.status, 200) << put.body;
  json lk;
  for (int i = 0; i < 300; ++i) {  // until the commit is on the device
    lk = GetJson("/api/v1/lookup/198.51.100.7");
    if (lk["rib"]["matched"] == "198.51.100.0/24" && lk["verdict"] != "mismatch") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(lk["rib"]["matched"], "198.51.100.0/24");
  // Dropped in the card when the drop verdict holds a code; punted for want of one otherwise.
  EXPECT_TRUE(lk["rib"]["drop"] == true || lk["rib"]["reason"] == "no-slot") << lk.dump();
  EXPECT_EQ(lk["hardware"]["drop"], lk["rib"]["drop"]) << lk.dump();
  EXPECT_EQ(lk["rib"]["forward"], false);
  EXPECT_EQ(lk["hardware"]["forward"], false) << lk.dump();
  EXPECT_NE(lk["verdict"], "mismatch") << lk.dump();
  hdr.erase("Content-Type");
  EXPECT_EQ(Request(port(), "DELETE", target, hdr).status, 200);
}

// The API's routes are a source of their own: deleting one never removes the
// route file's route for the same prefix (it used to: both were "static").
TEST_F(ApiTest, ApiDeleteLeavesTheRouteFilesRoute) {
  const auto& [p, lines] = *file_->routes.begin();
  const std::string target = "/api/v1/routes/static/" + p.addr().ToString() + "/" + std::to_string(p.len());
  const std::string probe = "/api/v1/lookup/" + p.addr().ToString();
  std::map<std::string, std::string> hdr = {{"Authorization", std::string("Bearer ") + kToken}};
  EXPECT_EQ(Request(port(), "DELETE", target, hdr).status, 404);  // the API set nothing here
  EXPECT_EQ(GetJson(probe)["rib"]["matched"], p.ToString());
  hdr["Content-Type"] = "application/json";
  ASSERT_EQ(Request(port(), "PUT", target, hdr, R"({"paths":[{"gateway":"10.2.0.1","port":2}]})").status, 200);
  json set = GetJson("/api/v1/routes/" + p.addr().ToString() + "/" + std::to_string(p.len()));
  std::set<std::string> sources;
  for (const auto& c : set["candidates"]) sources.insert(c["source"].get<std::string>());
  EXPECT_EQ(sources, (std::set<std::string>{"api", "static"}));
  EXPECT_EQ(GetJson(probe)["rib"]["path"]["gateway"], "10.2.0.1");  // the operator's route wins the tie
  hdr.erase("Content-Type");
  ASSERT_EQ(Request(port(), "DELETE", target, hdr).status, 200);
  json lk = GetJson(probe);
  EXPECT_EQ(lk["rib"]["matched"], p.ToString());
  std::set<std::pair<std::string, int>> want(lines.begin(), lines.end());
  EXPECT_TRUE(want.count({lk["rib"]["path"]["gateway"].get<std::string>(), lk["rib"]["path"]["port"].get<int>()}))
      << lk.dump();
}

TEST_F(ApiTest, MetricsAgreeWithStatus) {
  json st = GetJson("/api/v1/status");
  auto m = Get(port(), "/metrics");
  ASSERT_EQ(m.status, 200);
  EXPECT_EQ(m.headers.at("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  for (const char* s : {"offloaded", "partial", "punted"}) {
    const std::string line = std::string("fibnic_fib_routes{family=\"ipv4\",state=\"") + s + "\"} " +
                             std::to_string(st["routes"]["ipv4"][s].get<uint64_t>()) + "\n";
    EXPECT_NE(m.body.find(line), std::string::npos) << line;
  }
  EXPECT_NE(m.body.find("fibnic_device_generation " + std::to_string(st["device"]["generation"].get<uint64_t>())),
            std::string::npos);
  EXPECT_NE(m.body.find("fibnic_device_port_counter_total{port=\"0\",counter=\"rx\"} 0"), std::string::npos);
  EXPECT_NE(m.body.find("# TYPE fibnic_http_request_duration_seconds histogram"), std::string::npos);
}

// The route sources the document names are the RIB's, no more, no fewer:
// in a route's schema and as the routes query's filter.
TEST_F(ApiTest, OpenApiNamesTheRibsRouteSources) {
  json doc = GetJson("/api/v1/openapi.json");
  std::set<std::string> rib;
  for (int i = 0; i < kRouteSourceCount; ++i) rib.insert(RouteSourceName(static_cast<RouteSource>(i)));
  const json& schema = doc["components"]["schemas"]["Route"]["properties"]["source"]["enum"];
  EXPECT_EQ(schema.get<std::set<std::string>>(), rib);
  bool filter = false;
  for (const json& param : doc["paths"]["/api/v1/routes"]["get"]["parameters"]) {
    if (param.value("name", "") != "source") continue;
    filter = true;
    EXPECT_EQ(param["schema"]["enum"].get<std::set<std::string>>(), rib);
  }
  EXPECT_TRUE(filter) << "GET /api/v1/routes documents no source filter";
}

// Every route the server answers is in the document and the other way round;
// each documented GET answers, and its JSON matches the documented schema.
TEST_F(ApiTest, OpenApiMatchesWhatIsServed) {
  json doc = GetJson("/api/v1/openapi.json");
  std::set<std::pair<std::string, std::string>> documented, mounted;
  for (const auto& [path, ops] : doc["paths"].items()) {
    for (const auto& [m, op] : ops.items()) {
      std::string up = m;
      std::transform(up.begin(), up.end(), up.begin(), ::toupper);
      documented.insert({up, path});
    }
  }
  for (const auto& r : server_->OnServer([] { return server_->router().Routes(); })) mounted.insert(r);
  EXPECT_EQ(documented, mounted);
  EXPECT_EQ(documented.size(), 16u);  // 14 GET + static PUT/DELETE
  for (const auto& [method, path] : documented) {
    if (method != "GET" || path == "/api/v1/stream") continue;
    std::string target = path;
    for (const auto& p : doc["paths"][path]["get"].value("parameters", json::array())) {
      if (p["in"] == "path") {
        target.replace(target.find("{" + p["name"].get<std::string>() + "}"), p["name"].get<std::string>().size() + 2,
                       p["example"].get<std::string>());
      }
    }
    if (target == "/api/v1/routes/10.0.0.0/8") target = "/api/v1/routes/" + file_->routes.begin()->first.addr().ToString() + "/" +
                                                         std::to_string(file_->routes.begin()->first.len());
    auto r = Get(port(), target);
    ASSERT_EQ(r.status, 200) << method << " " << target << ": " << r.body.substr(0, 200);
    const json& content = doc["paths"][path]["get"]["responses"]["200"]["content"];
    if (!content.contains("application/json")) continue;
    std::vector<std::string> errors;
    testing::CheckSchema(doc, content["application/json"]["schema"], json::parse(r.body), target, &errors);
    EXPECT_TRUE(errors.empty()) << target << ":\n" << [&] {
      std::string s;
      for (const auto& e : errors) s += "  " + e + "\n";
      return s;
    }();
  }
  // Paths that are not documented are not served.
  for (const char* t : {"/api/v1", "/api/v1/statuses", "/api/v2/status", "/api/v1/routes/1.0.0.0", "/api/v1/sram/map/x"}) {
    EXPECT_EQ(Get(port(), t).status, 404) << t;
  }
  EXPECT_EQ(Request(port(), "POST", "/api/v1/status").status, 405);
}

}  // namespace
}  // namespace fibnic::web
