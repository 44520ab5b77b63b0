// Attacks on the HTTP server both daemons use, over real sockets. Clients at
// other 127.x addresses are other hosts to the server: a flood from one of
// them must leave room for a legitimate client at 127.0.0.1.
//
// Each TEST_F here failed before per-client caps, stream admission,
// close-after-error, the auth throttle, the Host allowlist and hidden 500s.
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/web/http_client.h"
#include "tests/web/server_fixture.h"
#include "web/http/admission.h"

namespace fibnic::web {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using testing::FirstStatus;
using testing::RawConn;
using testing::ServerThread;
using Clock = std::chrono::steady_clock;

constexpr char kToken[] = "hardening-token-0123456789";

class TickStream : public EventStream {
 public:
  std::chrono::milliseconds interval() const override { return milliseconds(50); }
  std::string Poll() override { return "event: tick\ndata: x\n\n"; }
};

json Doc(const std::string& summary, json params = json::array()) {
  return {{"summary", summary}, {"parameters", params}, {"responses", {{"200", {{"description", "ok"}}}}}};
}

void Mount(boost::asio::io_context&, Router& r) {
  ASSERT_TRUE(r.Add({"GET", "/api/v1/echo/{word}",
                     [](const HttpRequest& q) -> StatusOr<HttpReply> { return JsonReply({{"word", q.params.at("word")}}); },
                     Doc("echo", {{{"name", "word"}, {"in", "path"}, {"required", true}}})})
                  .ok());
  ASSERT_TRUE(r.Add({"GET", "/api/v1/boom",
                     [](const HttpRequest&) -> StatusOr<HttpReply> {
                       throw std::runtime_error("secret detail: /etc/fibnic/key.pem line 3");
                     },
                     Doc("throws")})
                  .ok());
  ASSERT_TRUE(r.Add({"GET", "/api/v1/io",
                     [](const HttpRequest&) -> StatusOr<HttpReply> { return IoError("pread BAR at 0xfe000000 failed"); },
                     Doc("fails inside")})
                  .ok());
  ASSERT_TRUE(r.Add({"GET", "/api/v1/stream",
                     [](const HttpRequest&) -> StatusOr<HttpReply> {
                       HttpReply rep;
                       rep.stream = std::make_shared<TickStream>();
                       return rep;
                     },
                     Doc("sse")})
                  .ok());
}

// Production timeouts: a slow client holds its slot for the whole read_timeout.
WebConfig ProductionConfig() {
  WebConfig c;
  c.port = 0;
  c.token = kToken;
  return c;
}

// Connection: close unless keep_alive, so that a reader sees the answer end.
std::string Req(const std::string& target, const std::string& extra = "", const std::string& host = "127.0.0.1",
                bool keep_alive = false) {
  return "GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\n" + (keep_alive ? "" : "Connection: close\r\n") +
         extra + "\r\n";
}
std::string Auth(const std::string& token = kToken) { return "Authorization: Bearer " + token + "\r\n"; }

// Sends one request on a fresh connection from source and reads until the
// server closes or timeout_ms passes.
struct Answer {
  int status = 0;
  std::string raw;
  bool closed = false;
  double seconds = 0;
};
Answer Ask(uint16_t port, const std::string& request, const char* source = nullptr, int timeout_ms = 2000,
           size_t max = 1 << 20) {
  const auto t0 = Clock::now();
  const auto deadline = t0 + milliseconds(timeout_ms);
  RawConn c(port, timeout_ms, source);
  Answer a;
  if (!c.Send(request)) return a;
  // In small pieces, so that an endless answer (a stream) ends at the deadline too.
  while (!a.closed && a.raw.size() < max && Clock::now() < deadline) {
    const std::string piece = c.ReadAll(&a.closed, std::min<size_t>(512, max - a.raw.size()));
    if (piece.empty() && !a.closed) break;  // the read timed out
    a.raw += piece;
  }
  a.status = FirstStatus(a.raw);
  a.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return a;
}

void WaitForConnections(ServerThread& srv, size_t n) {
  for (int i = 0; i < 300 && srv.OnServer([&] { return srv.server()->open_connections(); }) < n; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
}

TEST(ServerFlood, SlowAndStreamingClientsFromOneHostLeaveRoomForOthers) {
  ServerThread srv(ProductionConfig(), Mount);
  ASSERT_TRUE(srv.status().ok()) << srv.status().ToString();
  // 127.0.0.2 opens more connections than the global cap and never finishes
  // a request (each would hold its slot for read_timeout, 10 s).
  std::vector<std::unique_ptr<RawConn>> slow;
  for (int i = 0; i < 300; ++i) {
    slow.push_back(std::make_unique<RawConn>(srv.port(), 200, "127.0.0.2"));
    slow.back()->Send("GET /api/v1/echo/x HTTP/1.1\r\nHo");
  }
  // 127.0.0.3 opens event streams with the token and reads them forever.
  std::vector<std::unique_ptr<RawConn>> streams;
  int streams_served = 0;
  for (int i = 0; i < 20; ++i) {
    streams.push_back(std::make_unique<RawConn>(srv.port(), 300, "127.0.0.3"));
    streams.back()->Send(Req("/api/v1/stream", Auth()));
    bool closed = false;
    if (FirstStatus(streams.back()->ReadAll(&closed, 64)) == 200 && !closed) ++streams_served;
  }
  WaitForConnections(srv, 32);
  // The legitimate client at 127.0.0.1: answered at once, well within its 2 s.
  for (int i = 0; i < 5; ++i) {
    Answer a = Ask(srv.port(), Req("/api/v1/echo/legit"), "127.0.0.1");
    EXPECT_EQ(a.status, 200) << "legitimate request " << i << " not answered (flood holds the slots): " << a.raw;
    EXPECT_LT(a.seconds, 2.0);
  }
  // ... and it may still open its own event stream.
  Answer live = Ask(srv.port(), Req("/api/v1/stream", Auth()), "127.0.0.1", 300, 200);
  EXPECT_EQ(live.status, 200) << live.raw;
  EXPECT_FALSE(live.closed);
  // The flood got its per-client share and no more.
  EXPECT_LE(streams_served, 4);
  const size_t open = srv.OnServer([&] { return srv.server()->open_connections(); });
  EXPECT_LE(open, 32u + 32u + 1u) << "per-client cap 32 for each flooding host";
}

TEST(ServerStreams, StreamNeedsTheTokenWhenOneIsConfigured) {
  ServerThread srv(ProductionConfig(), Mount);
  Answer a = Ask(srv.port(), Req("/api/v1/stream"), nullptr, 1000);
  EXPECT_EQ(a.status, 401) << a.raw;
  EXPECT_TRUE(a.closed);
  EXPECT_NE(a.raw.find("WWW-Authenticate: Bearer"), std::string::npos) << a.raw;
  // Without a configured token the stream is open to readers, within the caps.
  WebConfig open = ProductionConfig();
  open.token.clear();
  open.max_streams_per_client = 2;
  ServerThread srv2(open, Mount);
  RawConn s1(srv2.port(), 300), s2(srv2.port(), 300);
  bool closed = false;
  ASSERT_TRUE(s1.Send(Req("/api/v1/stream")));
  EXPECT_EQ(FirstStatus(s1.ReadAll(&closed, 64)), 200);
  ASSERT_TRUE(s2.Send(Req("/api/v1/stream")));
  EXPECT_EQ(FirstStatus(s2.ReadAll(&closed, 64)), 200);
  Answer third = Ask(srv2.port(), Req("/api/v1/stream"), nullptr, 1000);
  EXPECT_EQ(third.status, 429) << third.raw;
  EXPECT_NE(third.raw.find("max_streams"), std::string::npos) << third.raw;
  EXPECT_TRUE(third.closed);
  // Another host has its own share.
  Answer other = Ask(srv2.port(), Req("/api/v1/stream"), "127.0.0.2", 300, 64);
  EXPECT_EQ(other.status, 200) << other.raw;
}

TEST(ServerErrors, ErrorAnswersCloseTheConnection) {
  WebConfig c = ProductionConfig();
  c.idle_timeout = milliseconds(10000);  // a kept connection would stay open far past the read below
  ServerThread srv(c, Mount);
  for (const std::string& first :
       std::vector<std::string>{Req("/api/v1/nope", "", "127.0.0.1", true),
                                Req("/api/v1/echo/x", Auth("wrong-token"), "127.0.0.1", true),
                                Req("/api/v1/echo/x", "", "evil.example", true)}) {
    // A second request pipelined behind the failing one must not be served.
    Answer a = Ask(srv.port(), first + Req("/api/v1/echo/second"), nullptr, 1500);
    EXPECT_GE(a.status, 400) << a.raw;
    EXPECT_NE(a.raw.find("Connection: close"), std::string::npos) << a.raw;
    EXPECT_TRUE(a.closed) << "connection kept after " << a.status;
    EXPECT_EQ(a.raw.find("\"second\""), std::string::npos) << a.raw;
    EXPECT_LT(a.seconds, 1.4);
  }
  // A good answer still keeps the connection.
  Answer ok = Ask(srv.port(), Req("/api/v1/echo/one", "", "127.0.0.1", true), nullptr, 500);
  EXPECT_EQ(ok.status, 200);
  EXPECT_FALSE(ok.closed);
}

TEST(ServerAuth, WrongTokensAreThrottledPerClient) {
  WebConfig c = ProductionConfig();
  c.auth_failure_limit = 5;
  c.auth_failure_window = milliseconds(1500);
  ServerThread srv(c, Mount);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(Ask(srv.port(), Req("/api/v1/echo/x", Auth("guess-" + std::to_string(i)))).status, 401);
  }
  // The sixth try — even with the right token — waits out the window.
  Answer blocked = Ask(srv.port(), Req("/api/v1/echo/x", Auth()));
  EXPECT_EQ(blocked.status, 429) << blocked.raw;
  EXPECT_NE(blocked.raw.find("Retry-After: "), std::string::npos) << blocked.raw;
  // Reads without a token, and other hosts, are not affected.
  EXPECT_EQ(Ask(srv.port(), Req("/api/v1/echo/x")).status, 200);
  EXPECT_EQ(Ask(srv.port(), Req("/api/v1/echo/x", Auth()), "127.0.0.2").status, 200);
  std::this_thread::sleep_for(milliseconds(1600));
  EXPECT_EQ(Ask(srv.port(), Req("/api/v1/echo/x", Auth())).status, 200);
}

TEST(ServerHost, DnsRebindingHostIsRefused) {
  WebConfig c = ProductionConfig();
  c.allowed_hosts = {"router1.lab.example"};
  ServerThread srv(c, Mount);
  const std::string port = std::to_string(srv.port());
  for (const std::string& host : std::vector<std::string>{"evil.example", "evil.example:" + port, "127.0.0.1.evil.example",
                                 "localhost.evil.example", "[::1", "127.0.0.1:x", "router1.lab.example.evil"}) {
    Answer a = Ask(srv.port(), Req("/api/v1/echo/x", "", host));
    EXPECT_EQ(a.status, 421) << host << ": " << a.raw;
    EXPECT_NE(a.raw.find("web.allowed_hosts"), std::string::npos) << a.raw;
  }
  for (const std::string& host : std::vector<std::string>{"127.0.0.1", "127.0.0.1:" + port, "[::1]:" + port, "[::1]", "localhost",
                                 "LocalHost:" + port, "192.0.2.7", "ROUTER1.lab.example:" + port}) {
    EXPECT_EQ(Ask(srv.port(), Req("/api/v1/echo/x", "", host)).status, 200) << host;
  }
}

TEST(ServerInternalErrors, FiveHundredShowsARequestIdNotTheText) {
  ServerThread srv(ProductionConfig(), Mount);
  for (const char* path : {"/api/v1/boom", "/api/v1/io"}) {
    ::testing::internal::CaptureStderr();
    auto r = testing::Get(srv.port(), path);
    const std::string log = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(r.status, 500) << r.body;
    EXPECT_EQ(r.body.find("secret detail"), std::string::npos) << r.body;
    EXPECT_EQ(r.body.find("0xfe000000"), std::string::npos) << r.body;
    ASSERT_TRUE(r.headers.count("X-Request-Id")) << r.body;
    const std::string id = r.headers.at("X-Request-Id");
    EXPECT_NE(r.body.find("request id " + id), std::string::npos) << r.body;
    // The operator finds the detail in the log under that id.
    EXPECT_NE(log.find("request " + id), std::string::npos) << log;
    EXPECT_TRUE(log.find("secret detail") != std::string::npos || log.find("0xfe000000") != std::string::npos) << log;
  }
}

TEST(Admission, ClientKeysGroupIpv6By64) {
  EXPECT_EQ(ClientKeyOf("2001:db8:1:2::1"), ClientKeyOf("2001:db8:1:2:ffff::9"));
  EXPECT_NE(ClientKeyOf("2001:db8:1:2::1"), ClientKeyOf("2001:db8:1:3::1"));
  EXPECT_NE(ClientKeyOf("127.0.0.1"), ClientKeyOf("127.0.0.2"));
  EXPECT_EQ(ClientKeyOf("::ffff:127.0.0.1"), ClientKeyOf("127.0.0.1"));
}

TEST(Admission, TableCountsAndForgets) {
  ClientTable t(AdmissionLimits{2, 3, 1, 2, milliseconds(1000)});
  const ClientKey a = ClientKeyOf("10.0.0.1"), b = ClientKeyOf("10.0.0.2");
  EXPECT_TRUE(t.TryConnect(a));
  EXPECT_TRUE(t.TryConnect(a));
  EXPECT_FALSE(t.TryConnect(a));
  EXPECT_TRUE(t.TryConnect(b));
  EXPECT_TRUE(t.TryStream(a));
  EXPECT_FALSE(t.TryStream(a));  // per client 1
  EXPECT_TRUE(t.TryStream(b));
  t.EndStream(a);
  t.Disconnect(a);
  EXPECT_TRUE(t.TryConnect(a));
  const auto now = ClientTable::Clock::now();
  t.AuthFailed(a, now);
  EXPECT_EQ(t.AuthRetryAfter(a, now).count(), 0);
  t.AuthFailed(a, now + milliseconds(100));
  EXPECT_EQ(t.AuthRetryAfter(a, now + milliseconds(200)).count(), 800);
  EXPECT_EQ(t.AuthRetryAfter(a, now + milliseconds(1000)).count(), 0);
  EXPECT_EQ(t.AuthRetryAfter(b, now).count(), 0);
}

TEST(WebConfigHardening, ValidationNamesTheKey) {
  auto msg = [](auto edit) {
    WebConfig c;
    edit(c);
    return ValidateWebConfig(c).message();
  };
  EXPECT_NE(msg([](WebConfig& c) { c.max_connections_per_client = 0; }).find("web.max_connections_per_client"),
            std::string::npos);
  EXPECT_NE(msg([](WebConfig& c) { c.max_streams = 0; }).find("web.max_streams"), std::string::npos);
  EXPECT_NE(msg([](WebConfig& c) { c.max_streams_per_client = 0; }).find("web.max_streams_per_client"),
            std::string::npos);
  // Per-client caps above the global ones are the global ones, not an error.
  EXPECT_TRUE(ValidateWebConfig([] { WebConfig c; c.max_connections = 3; return c; }()).ok());
  EXPECT_NE(msg([](WebConfig& c) { c.auth_failure_limit = 0; }).find("web.auth_failure_limit"), std::string::npos);
  EXPECT_NE(msg([](WebConfig& c) { c.allowed_hosts = {"evil.example:80"}; }).find("web.allowed_hosts"),
            std::string::npos);
  EXPECT_TRUE(ValidateWebConfig(WebConfig()).ok());
}

}  // namespace
}  // namespace fibnic::web
