// Randomized malformed-request test: thousands of mutated HTTP requests over
// real sockets. The server must answer each with a non-5xx status or close
// the connection — never hang, crash or stop serving — and a valid request
// must keep working between bursts. The seed is printed; set
// FIBNIC_WEB_FUZZ_SEED to replay, FIBNIC_WEB_FUZZ_CASES to run more.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/fuzz.h"
#include "tests/web/fuzz_mutator.h"
#include "tests/web/http_client.h"
#include "tests/web/server_fixture.h"
#include "tests/web/web_harness.h"
#include "web/http/dashboard.h"

namespace fibnic::web {
namespace {

using testing::FirstStatus;
using testing::RawConn;
using testing::ServerThread;

TEST(WebFuzz, MalformedRequestsNeverBreakTheServer) {
  const uint64_t seed = fibnic::testing::FuzzSeed("web fuzz", "FIBNIC_WEB_FUZZ_SEED");
  const uint64_t cases = fibnic::testing::EnvOr("FIBNIC_WEB_FUZZ_CASES", 1500);
  std::printf("web fuzz: %llu cases\n", static_cast<unsigned long long>(cases));

  Telemetry telemetry;
  WebConfig cfg;
  cfg.port = 0;
  cfg.token = "fuzz-token-0123456789";
  cfg.read_timeout = cfg.idle_timeout = std::chrono::milliseconds(150);
  cfg.write_timeout = std::chrono::milliseconds(1000);
  cfg.allowed_hosts = {"a"};  // the mutated requests name this host
  testing::Harness harness;
  ASSERT_TRUE(harness.LoadSynthetic(2000, 200, seed).ok());
  ServerThread srv(cfg, [&](boost::asio::io_context& io, Router& r) {
    ASSERT_TRUE(harness.Mount(io, r, &telemetry).ok());
    AddDashboard(r);
  }, &telemetry);
  ASSERT_TRUE(srv.status().ok()) << srv.status().ToString();
  srv.BeforeStop([&] { harness.Unmount(); });

  const std::vector<std::string> valid = {
      "GET /api/v1/status HTTP/1.1\r\nHost: a\r\n\r\n",
      "GET /api/v1/routes?limit=5&state=offloaded HTTP/1.1\r\nHost: a\r\n\r\n",
      "GET /api/v1/routes?prefix=10.0.0.0%2F8&after=10.0.0.0%2F24 HTTP/1.1\r\nHost: a\r\n\r\n",
      "GET /api/v1/lookup/10.1.2.3 HTTP/1.1\r\nHost: a\r\n\r\n",
      "GET /api/v1/lookup/2001:db8::1 HTTP/1.1\r\nHost: a\r\n\r\n",
      "GET /api/v1/routes/10.0.0.0/8 HTTP/1.1\r\nHost: a\r\n\r\n",
      "GET /api/v1/tcam HTTP/1.1\r\nHost: a\r\nAccept: application/json\r\n\r\n",
      "GET /api/v1/sram/map?size=64&order=linear HTTP/1.1\r\nHost: a\r\n\r\n",
      "GET /api/v1/events?since=0&level=info HTTP/1.1\r\nHost: a\r\n\r\n",
      "GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\n\r\n",
      "PUT /api/v1/routes/static/198.51.100.0/24 HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer fuzz-token-0123456789\r\n"
      "Content-Type: application/json\r\nContent-Length: 39\r\n\r\n{\"paths\":[{\"gateway\":\"10.0.0.1\",\"port\":1}]}",
      "DELETE /api/v1/routes/static/198.51.100.0/24 HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer fuzz-token-0123456789\r\n\r\n",
  };

  testing::HttpMutator mut(seed);
  std::map<std::string, int> kinds;
  int answered = 0, closed_only = 0;
  for (uint64_t i = 0; i < cases; ++i) {
    auto c = mut.Next(valid);
    ++kinds[c.kind];
    if (std::getenv("FIBNIC_WEB_FUZZ_TRACE")) std::fprintf(stderr, "case %llu %s\n", static_cast<unsigned long long>(i), c.kind);
    RawConn conn(srv.port(), 2000);
    ASSERT_TRUE(conn.connected()) << "case " << i << ": server stopped accepting (seed " << seed << ")";
    conn.Send(c.bytes);  // the server may close before reading everything
    if (c.half_close) conn.ShutdownWrite();
    bool closed = false;
    const std::string raw = conn.ReadAll(&closed, 1 << 16);
    const int status = FirstStatus(raw);
    ASSERT_TRUE(closed || status != 0) << "case " << i << " (" << c.kind << "): no answer and not closed within 2 s";
    if (status) {
      ++answered;
      ASSERT_LT(status, 500) << "case " << i << " (" << c.kind << ") seed " << seed << ":\n" << raw.substr(0, 300);
    } else {
      ++closed_only;
    }
    if (i % 100 == 99) {
      auto ok = testing::Get(srv.port(), "/api/v1/status");
      ASSERT_EQ(ok.status, 200) << "after case " << i << " (seed " << seed << "): " << ok.error;
    }
  }
  // Server-side view: nothing was answered with a 5xx.
  EXPECT_EQ(telemetry.CounterValue("fibnic_http_requests_total", {{"code", "5xx"}}), 0u);
  EXPECT_GT(telemetry.CounterValue("fibnic_http_requests_total", {{"code", "4xx"}}), cases / 10);
  EXPECT_EQ(testing::Get(srv.port(), "/api/v1/lookup/10.1.2.3").status, 200);
  std::printf("web fuzz: %d answered, %d closed without an answer; kinds:", answered, closed_only);
  for (const auto& [k, n] : kinds) std::printf(" %s=%d", k.c_str(), n);
  std::printf("\n");
}

}  // namespace
}  // namespace fibnic::web
