// The HTTP server and router over real sockets: routing, JSON errors, query
// and auth rules, size limits, timeouts, the connection cap, SSE and TLS.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/web/http_client.h"
#include "tests/web/server_fixture.h"
#include "web/http/dashboard.h"

namespace fibnic::web {
namespace {

using nlohmann::json;
using testing::FirstStatus;
using testing::Get;
using testing::RawConn;
using testing::Request;
using testing::ServerThread;

json Doc(const std::string& summary, json params = json::array()) {
  return {{"summary", summary}, {"parameters", params}, {"responses", {{"200", {{"description", "ok"}}}}}};
}
json QueryParam(const std::string& n) { return {{"name", n}, {"in", "query"}, {"schema", {{"type", "string"}}}}; }
json PathParam(const std::string& n) { return {{"name", n}, {"in", "path"}, {"required", true}}; }

class CountingStream : public EventStream {
 public:
  std::chrono::milliseconds interval() const override { return std::chrono::milliseconds(20); }
  std::string Poll() override { return "event: tick\ndata: " + std::to_string(n_++) + "\n\n"; }

 private:
  int n_ = 0;
};

void Mount(boost::asio::io_context&, Router& r) {
  ASSERT_TRUE(r.Add({"GET", "/api/v1/echo/{word}",
                     [](const HttpRequest& q) -> StatusOr<HttpReply> {
                       json j = {{"word", q.params.at("word")}};
                       if (auto n = QueryUint(q, "n", 1, 1, 10); n.ok()) j["n"] = *n;
                       else return n.status();
                       return JsonReply(j);
                     },
                     Doc("echo", {PathParam("word"), QueryParam("n")})})
                  .ok());
  ASSERT_TRUE(r.Add({"PUT", "/api/v1/thing",
                     [](const HttpRequest& q) -> StatusOr<HttpReply> { return JsonReply({{"got", q.body}}); },
                     Doc("put a thing")})
                  .ok());
  ASSERT_TRUE(r.Add({"GET", "/api/v1/boom",
                     [](const HttpRequest&) -> StatusOr<HttpReply> { throw std::runtime_error("kaput"); },
                     Doc("throws")})
                  .ok());
  ASSERT_TRUE(r.Add({"GET", "/api/v1/missing",
                     [](const HttpRequest&) -> StatusOr<HttpReply> { return NotFound("nothing here"); },
                     Doc("not found")})
                  .ok());
  ASSERT_TRUE(r.Add({"GET", "/api/v1/ticks",
                     [](const HttpRequest&) -> StatusOr<HttpReply> {
                       HttpReply rep;
                       rep.stream = std::make_shared<CountingStream>();
                       return rep;
                     },
                     Doc("sse")})
                  .ok());
  AddDashboard(r);
}

WebConfig TestConfig() {
  WebConfig c;
  c.port = 0;
  c.token = "s3cret-token-for-tests";
  c.read_timeout = std::chrono::milliseconds(400);
  c.idle_timeout = std::chrono::milliseconds(400);
  c.write_timeout = std::chrono::milliseconds(1000);
  c.allowed_hosts = {"a", "x"};  // the raw requests below name these hosts
  return c;
}

json Body(const testing::Response& r) { return json::parse(r.body, nullptr, false); }

void ExpectJsonError(const testing::Response& r, int status, const std::string& needle) {
  EXPECT_EQ(r.status, status) << r.body << r.error;
  json j = Body(r);
  ASSERT_TRUE(j.contains("error")) << r.body;
  EXPECT_EQ(j["error"]["status"], status);
  EXPECT_NE(j["error"]["message"].get<std::string>().find(needle), std::string::npos) << r.body;
  EXPECT_EQ(r.headers.at("Content-Type"), "application/json");
}

TEST(RouterTest, RejectsUndocumentedOrDuplicateRoutes) {
  Router r;
  auto h = [](const HttpRequest&) -> StatusOr<HttpReply> { return JsonReply({}); };
  EXPECT_FALSE(r.Add({"GET", "/a", h, {{"summary", "x"}}}).ok());  // no responses
  EXPECT_FALSE(r.Add({"GET", "/a/{id}", h, Doc("x")}).ok());        // path param not documented
  EXPECT_FALSE(r.Add({"GET", "/a/{id", h, Doc("x")}).ok());
  EXPECT_FALSE(r.Add({"BREW", "/a", h, Doc("x")}).ok());
  EXPECT_TRUE(r.Add({"GET", "/a", h, Doc("x")}).ok());
  EXPECT_EQ(r.Add({"GET", "/a", h, Doc("x")}).code(), StatusCode::kAlreadyExists);
}

TEST(RouterTest, ParseQueryIsStrict) {
  EXPECT_TRUE(ParseQuery("a=1&b=x%20y+z").ok());
  EXPECT_EQ(ParseQuery("a=1&b=x%20y+z")->at("b"), "x y z");
  EXPECT_FALSE(ParseQuery("a=1&a=2").ok());
  EXPECT_FALSE(ParseQuery("a=%zz").ok());
  EXPECT_FALSE(ParseQuery("a=%4").ok());
  EXPECT_FALSE(ParseQuery("=1").ok());
  EXPECT_FALSE(ParseQuery("a=%00").ok());
}

class ServerTest : public ::testing::Test {
 protected:
  ServerThread srv_{TestConfig(), Mount};
};

TEST_F(ServerTest, RoutesWithParamsAndQuery) {
  ASSERT_TRUE(srv_.status().ok()) << srv_.status().ToString();
  auto r = Get(srv_.port(), "/api/v1/echo/h%C3%A9llo?n=3");
  ASSERT_EQ(r.status, 200) << r.body << r.error;
  EXPECT_EQ(Body(r)["word"], "h\xC3\xA9llo");
  EXPECT_EQ(Body(r)["n"], 3);
  EXPECT_EQ(r.headers.at("Cache-Control"), "no-store");
  EXPECT_EQ(r.headers.at("X-Content-Type-Options"), "nosniff");
}

TEST_F(ServerTest, JsonErrorsFor4xx) {
  ExpectJsonError(Get(srv_.port(), "/api/v1/nope"), 404, "no such resource");
  ExpectJsonError(Get(srv_.port(), "/api/v1/echo/x?n=11"), 400, "outside 1..10");
  ExpectJsonError(Get(srv_.port(), "/api/v1/echo/x?n=abc"), 400, "not a non-negative integer");
  ExpectJsonError(Get(srv_.port(), "/api/v1/echo/x?bogus=1"), 400, "allowed: n");
  ExpectJsonError(Get(srv_.port(), "/api/v1/echo/x?n=1&n=2"), 400, "given twice");
  ExpectJsonError(Get(srv_.port(), "/api/v1/echo/%zz"), 400, "percent-escape");
  ExpectJsonError(Get(srv_.port(), "/api/v1/missing"), 404, "nothing here");
  auto r = Request(srv_.port(), "DELETE", "/api/v1/echo/x");
  ExpectJsonError(r, 405, "not allowed");
  EXPECT_EQ(r.headers.at("Allow"), "GET");
}

TEST_F(ServerTest, HandlerExceptionIs500AndServerKeepsServing) {
  // The exception's text goes to the log, never to the client (server_hardening_test).
  ExpectJsonError(Get(srv_.port(), "/api/v1/boom"), 500, "internal error");
  EXPECT_EQ(Get(srv_.port(), "/api/v1/echo/ok").status, 200);
}

TEST_F(ServerTest, StateChangesNeedTheBearerToken) {
  ExpectJsonError(Request(srv_.port(), "PUT", "/api/v1/thing", {}, "x"), 401, "Bearer");
  ExpectJsonError(Request(srv_.port(), "PUT", "/api/v1/thing", {{"Authorization", "Bearer wrong"}}, "x"), 401,
                  "rejected");
  ExpectJsonError(Request(srv_.port(), "PUT", "/api/v1/thing", {{"Authorization", "Basic czNjcmV0"}}, "x"), 401,
                  "rejected");
  auto ok = Request(srv_.port(), "PUT", "/api/v1/thing", {{"Authorization", "Bearer s3cret-token-for-tests"}}, "payload");
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(Body(ok)["got"], "payload");
  // A wrong token is refused on reads too (a client that sends one expects it to count).
  ExpectJsonError(Get(srv_.port(), "/api/v1/echo/x", {{"Authorization", "Bearer nope"}}), 401, "rejected");
}

TEST(ServerNoToken, WithoutATokenNothingMayChangeState) {
  WebConfig c = TestConfig();
  c.token.clear();
  ServerThread srv(c, Mount);
  ExpectJsonError(Request(srv.port(), "PUT", "/api/v1/thing", {{"Authorization", "Bearer "}}, "x"), 401, "rejected");
  ExpectJsonError(Request(srv.port(), "PUT", "/api/v1/thing", {}, "x"), 401, "Bearer");
}

TEST_F(ServerTest, SizeLimits) {
  RawConn big_header(srv_.port());
  ASSERT_TRUE(big_header.Send("GET /api/v1/echo/x HTTP/1.1\r\nHost: a\r\nX-Big: " + std::string(9000, 'a') + "\r\n\r\n"));
  bool closed = false;
  std::string raw = big_header.ReadAll(&closed);
  EXPECT_EQ(FirstStatus(raw), 431) << raw;
  EXPECT_TRUE(closed);

  auto big_body = Request(srv_.port(), "PUT", "/api/v1/thing", {{"Authorization", "Bearer s3cret-token-for-tests"}},
                          std::string(70 * 1024, 'b'));
  // The server answers 413 as soon as Content-Length exceeds the limit.
  EXPECT_EQ(big_body.status, 413) << big_body.error;
}

TEST_F(ServerTest, MalformedRequestIs400ThenClose) {
  RawConn c(srv_.port());
  ASSERT_TRUE(c.Send("GARBAGE\r\n\r\n"));
  bool closed = false;
  std::string raw = c.ReadAll(&closed);
  EXPECT_EQ(FirstStatus(raw), 400) << raw;
  EXPECT_NE(raw.find("\"error\""), std::string::npos);
  EXPECT_TRUE(closed);
  EXPECT_EQ(Get(srv_.port(), "/api/v1/echo/ok").status, 200);
}

TEST_F(ServerTest, AbsoluteFormTargetRejected) {
  RawConn c(srv_.port());
  ASSERT_TRUE(c.Send("GET http://evil/api/v1/echo/x HTTP/1.1\r\nHost: a\r\n\r\n"));
  bool closed = false;
  EXPECT_EQ(FirstStatus(c.ReadAll(&closed)), 400);
}

TEST_F(ServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  RawConn c(srv_.port(), 1000);
  ASSERT_TRUE(c.Send("GET /api/v1/echo/a HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v1/echo/b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  bool closed = false;
  std::string raw = c.ReadAll(&closed);
  EXPECT_NE(raw.find("\"word\":\"a\""), std::string::npos) << raw;
  EXPECT_NE(raw.find("\"word\":\"b\""), std::string::npos) << raw;
  EXPECT_TRUE(closed);
}

TEST_F(ServerTest, SilentAndSlowClientsAreDropped) {
  const auto t0 = std::chrono::steady_clock::now();
  RawConn silent(srv_.port(), 5000);
  RawConn slow(srv_.port(), 5000);
  ASSERT_TRUE(slow.Send("GET /api/v1/echo/x HTTP/1.1\r\nHo"));  // never finishes
  bool closed1 = false, closed2 = false;
  silent.ReadAll(&closed1);
  slow.ReadAll(&closed2);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(closed1);
  EXPECT_TRUE(closed2);
  EXPECT_LT(secs, 3.0) << "read_timeout is 0.4 s";
  EXPECT_EQ(Get(srv_.port(), "/api/v1/echo/ok").status, 200);
}

TEST(ServerCap, ConnectionsBeyondTheCapAreClosed) {
  WebConfig c = TestConfig();
  c.max_connections = 3;
  c.read_timeout = c.idle_timeout = std::chrono::milliseconds(1500);
  ServerThread srv(c, Mount);
  std::vector<std::unique_ptr<RawConn>> idle;
  for (int i = 0; i < 3; ++i) idle.push_back(std::make_unique<RawConn>(srv.port()));
  // Wait until the server has accepted all three.
  for (int i = 0; i < 100 && srv.OnServer([&] { return srv.server()->open_connections(); }) < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(srv.OnServer([&] { return srv.server()->open_connections(); }), 3u);
  RawConn extra(srv.port(), 1000);
  extra.Send("GET /api/v1/echo/x HTTP/1.1\r\nHost: a\r\n\r\n");
  bool closed = false;
  EXPECT_EQ(extra.ReadAll(&closed), "");
  EXPECT_TRUE(closed);
  idle.clear();  // once they go, service resumes
  for (int i = 0; i < 100 && srv.OnServer([&] { return srv.server()->open_connections(); }) > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(Get(srv.port(), "/api/v1/echo/ok").status, 200);
}

TEST_F(ServerTest, ServerSentEventsStream) {
  RawConn c(srv_.port(), 300);
  // A server with a token wants it for event streams too.
  ASSERT_TRUE(c.Send("GET /api/v1/ticks HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer s3cret-token-for-tests\r\n"
                     "Accept: text/event-stream\r\n\r\n"));
  bool closed = false;
  std::string raw = c.ReadAll(&closed, 600);
  EXPECT_EQ(FirstStatus(raw), 200);
  EXPECT_NE(raw.find("Content-Type: text/event-stream"), std::string::npos) << raw;
  EXPECT_NE(raw.find("event: tick\ndata: 0\n\n"), std::string::npos) << raw;
  EXPECT_NE(raw.find("event: tick\ndata: 3\n\n"), std::string::npos) << raw;
  EXPECT_FALSE(closed);
}

TEST_F(ServerTest, OpenApiListsExactlyTheMountedRoutes) {
  auto r = Get(srv_.port(), "/api/v1/openapi.json");
  ASSERT_EQ(r.status, 200);
  json doc = Body(r);
  EXPECT_EQ(doc["openapi"], "3.0.3");
  std::set<std::string> paths;
  for (const auto& [p, ops] : doc["paths"].items()) paths.insert(p);
  EXPECT_EQ(paths, (std::set<std::string>{"/api/v1/echo/{word}", "/api/v1/thing", "/api/v1/boom", "/api/v1/missing",
                                          "/api/v1/ticks", "/api/v1/openapi.json"}));
  EXPECT_TRUE(doc["paths"]["/api/v1/thing"].contains("put"));
}

TEST_F(ServerTest, DashboardIsServedWithACsp) {
  auto r = Get(srv_.port(), "/");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.headers.at("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(r.headers.at("Content-Security-Policy").find("default-src 'self'"), std::string::npos);
  EXPECT_NE(r.body.find("<title>fibnic</title>"), std::string::npos);
  auto js = Get(srv_.port(), "/ui/chart.min.js");
  ASSERT_EQ(js.status, 200);
  EXPECT_GT(js.body.size(), 100000u);  // the real Chart.js, not a placeholder
  EXPECT_NE(js.body.find("Chart"), std::string::npos);
  EXPECT_EQ(Request(srv_.port(), "POST", "/ui/app.js").status, 405);
}

// --- TLS -------------------------------------------------------------------

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("fibnic-web-tls-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    const std::string cmd = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 "
                            "-subj /CN=127.0.0.1 -keyout " + (dir_ / "key.pem").string() + " -out " +
                            (dir_ / "cert.pem").string() + " 2>/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << "openssl must be installed (scripts/deps/web.txt)";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(TlsTest, ServesHttpsAndSurvivesPlainHttpOnTheTlsPort) {
  WebConfig c = TestConfig();
  c.tls_cert_file = (dir_ / "cert.pem").string();
  c.tls_key_file = (dir_ / "key.pem").string();
  ServerThread srv(c, Mount);
  ASSERT_TRUE(srv.status().ok()) << srv.status().ToString();
  boost::asio::ssl::context client(boost::asio::ssl::context::tls_client);
  client.load_verify_file(c.tls_cert_file);
  client.set_verify_mode(boost::asio::ssl::verify_peer);
  auto r = testing::Request(srv.port(), "GET", "/api/v1/echo/secure", {}, "", &client);
  ASSERT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(Body(r)["word"], "secure");
  // Plain HTTP to the TLS port: the handshake fails, the connection closes.
  RawConn plain(srv.port(), 2000);
  plain.Send("GET /api/v1/echo/x HTTP/1.1\r\nHost: a\r\n\r\n");
  bool closed = false;
  EXPECT_EQ(FirstStatus(plain.ReadAll(&closed)), 0);
  EXPECT_TRUE(closed);
  EXPECT_EQ(testing::Request(srv.port(), "GET", "/api/v1/echo/again", {}, "", &client).status, 200);
}

TEST_F(TlsTest, BadCertificateFileIsAClearError) {
  WebConfig c = TestConfig();
  c.tls_cert_file = (dir_ / "missing.pem").string();
  c.tls_key_file = (dir_ / "key.pem").string();
  ServerThread srv(c, Mount);
  EXPECT_EQ(srv.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(srv.status().message().find("missing.pem"), std::string::npos);
}

TEST(WebConfigTest, ValidationNamesTheKey) {
  WebConfig c;
  c.listen_address = "localhost:80";
  EXPECT_NE(ValidateWebConfig(c).message().find("web.listen"), std::string::npos);
  c = WebConfig();
  c.tls_cert_file = "a.pem";
  EXPECT_NE(ValidateWebConfig(c).message().find("tls_key"), std::string::npos);
  c = WebConfig();
  c.max_connections = 0;
  EXPECT_FALSE(ValidateWebConfig(c).ok());
  EXPECT_TRUE(ValidateWebConfig(WebConfig()).ok());
}

TEST(WebConfigTest, PortInUseIsAClearError) {
  ServerThread a(TestConfig(), Mount);
  WebConfig c = TestConfig();
  c.port = a.port();
  ServerThread b(c, Mount);
  EXPECT_EQ(b.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(b.status().message().find(std::to_string(a.port())), std::string::npos);
}

}  // namespace
}  // namespace fibnic::web
