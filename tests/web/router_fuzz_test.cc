// Seeded mutation fuzzing of fibnicd's REST router without sockets: requests
// from the corpus (tests/fuzz/corpus/rest/*.req: "METHOD TARGET", a blank
// line, the body) are mutated in their method, path, query and body, turned
// into an HttpRequest by the server's own decoding (PercentDecode,
// ParseQuery) and dispatched to the real Fib API (a real Fib and writer,
// tests/web/web_harness.h) on its io thread. Every answer must be a
// well-formed reply: never a 500 (a handler that threw or failed inside),
// a JSON error body on every 4xx/5xx, and the router keeps answering a valid
// request. Run under ASan/UBSan in the sanitizer pass.
//
// Bounded by time: FIBNIC_ROUTER_FUZZ_SECONDS (default 15), seed printed,
// FIBNIC_ROUTER_FUZZ_SEED replays it. bench/web/router_fuzz.sh runs it long.
//
// The ipnumad peer API is not mounted here; once its routes exist, mount them
// beside the Fib API in Mount() below and add their requests to the corpus
// (tests/fuzz/corpus/peer/).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/fuzz.h"
#include "tests/web/server_fixture.h"
#include "tests/web/web_harness.h"

namespace fibnic::web {
namespace {

struct Seed {
  std::string method, target, body;
};

std::vector<Seed> LoadCorpus(const std::filesystem::path& dir) {
  std::vector<Seed> out;
  for (const auto& file : fibnic::testing::ReadCorpus(dir)) {
    const std::string& text = file.text;
    const size_t nl = text.find('\n'), sp = text.find(' ');
    if (nl == std::string::npos || sp == std::string::npos || sp > nl) continue;
    Seed s{text.substr(0, sp), text.substr(sp + 1, nl - sp - 1), ""};
    const size_t blank = text.find("\n\n");
    if (blank != std::string::npos) s.body = text.substr(blank + 2);
    out.push_back(std::move(s));
  }
  return out;
}

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}
  size_t Pick(size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  Seed Next(const std::vector<Seed>& corpus) {
    Seed s = corpus[Pick(corpus.size())];
    for (int i = 0, n = 1 + static_cast<int>(Pick(3)); i < n; ++i) Mutate(s);
    return s;
  }

 private:
  void Mutate(Seed& s) {
    static const std::vector<std::string> kTokens = {
        "%", "%0", "%00", "%zz", "%2F", "%2f", "..", "/", "//", "{", "}", "?", "&", "=", "+", "#", "\xff", "\xc3\xa9",
        "0", "-1", "4294967296", "18446744073709551616", "999999999999999999999", "::", "::ffff:1.2.3.4", "1.2.3.4/33",
        "10.0.0.0/-1", "0.0.0.0/0", "::/0", "fe80::1%eth0", "limit=0", "limit=1000", "limit=1001", "after=", "state=x",
        "verify=1", "size=4096", "size=3", "order=hilbert", "family=5", "level=debug", "since=-1", "n=1&n=2"};
    static const std::vector<std::string> kMethods = {"GET", "PUT", "POST", "DELETE", "PATCH", "HEAD", "OPTIONS", ""};
    std::string& t = s.target;
    switch (Pick(10)) {
      case 0: s.method = kMethods[Pick(kMethods.size())]; break;
      case 1: if (!t.empty()) t[Pick(t.size())] = static_cast<char>(Pick(256)); break;
      case 2: t.insert(Pick(t.size() + 1), kTokens[Pick(kTokens.size())]); break;
      case 3: t.resize(Pick(t.size() + 1)); break;
      case 4: t += (t.find('?') == std::string::npos ? "?" : "&") + kTokens[Pick(kTokens.size())]; break;
      case 5: {  // swap a path segment for a token
        const size_t a = t.rfind('/');
        if (a != std::string::npos) t = t.substr(0, a + 1) + kTokens[Pick(kTokens.size())];
        break;
      }
      case 6: if (!s.body.empty()) s.body[Pick(s.body.size())] = static_cast<char>(Pick(256)); break;
      case 7: s.body.insert(Pick(s.body.size() + 1), kTokens[Pick(kTokens.size())]); break;
      case 8: {
        static const std::vector<std::string> kBodies = {
            "", "{}", "[]", "null", "{\"paths\":[]}", "{\"paths\":[{\"gateway\":\"10.0.0.1\",\"port\":9}]}",
            "{\"paths\":[{\"gateway\":\"::1\",\"port\":1}],\"distance\":300}", "{\"paths\":{}}", "\"x\"",
            "{\"paths\":[{\"gateway\":\"10.0.0.1\",\"port\":1}],\"distance\":-1}", std::string(5000, '['),
            "{\"paths\":[{\"gateway\":\"10.0.0.1\",\"port\":1,\"extra\":true}]}"};
        s.body = kBodies[Pick(kBodies.size())];
        break;
      }
      default: t.resize(Pick(t.size() + 1)); t += t; break;
    }
  }
  std::mt19937_64 rng_;
};

// The server's decoding of a request target (web/http/server.cc), socket-free.
std::optional<HttpRequest> Decode(const Seed& s, bool authenticated, HttpReply* rejected) {
  if (s.target.empty() || s.target.front() != '/') {
    *rejected = ErrorReply(400, "request target must be an absolute path");
    return std::nullopt;
  }
  HttpRequest r;
  r.method = s.method;
  const size_t q = s.target.find('?');
  auto path = PercentDecode(std::string_view(s.target).substr(0, q), false);
  if (!path) {
    *rejected = ErrorReply(400, "malformed percent-escape");
    return std::nullopt;
  }
  r.path = *path;
  if (q != std::string::npos) {
    auto query = ParseQuery(std::string_view(s.target).substr(q + 1));
    if (!query.ok()) {
      *rejected = ErrorReply(query.status());
      return std::nullopt;
    }
    r.query = *query;
  }
  r.authenticated = authenticated;
  r.content_type = "application/json";
  r.body = s.body;
  return r;
}

TEST(RouterFuzz, MutatedRequestsGetWellFormedAnswers) {
  const uint64_t seed = fibnic::testing::FuzzSeed("router fuzz", "FIBNIC_ROUTER_FUZZ_SEED");
  const uint64_t seconds = fibnic::testing::EnvOr("FIBNIC_ROUTER_FUZZ_SECONDS", 15);
  std::printf("router fuzz: for %llu s\n", static_cast<unsigned long long>(seconds));
  const auto corpus = LoadCorpus(std::filesystem::path(FIBNIC_SOURCE_DIR) / "tests/fuzz/corpus/rest");
  ASSERT_GE(corpus.size(), 10u) << "corpus missing";

  Telemetry telemetry;
  WebConfig cfg;
  cfg.port = 0;
  testing::Harness harness;
  ASSERT_TRUE(harness.LoadSynthetic(2000, 200, seed).ok());
  testing::ServerThread srv(cfg, [&](boost::asio::io_context& io, Router& r) {
    ASSERT_TRUE(harness.Mount(io, r, &telemetry).ok());
  }, &telemetry);
  ASSERT_TRUE(srv.status().ok()) << srv.status().ToString();
  srv.BeforeStop([&] { harness.Unmount(); });

  Mutator mut(seed);
  std::map<int, int> by_status;
  uint64_t cases = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < end) {
    const Seed s = mut.Next(corpus);
    const bool auth = mut.Pick(2) == 0;
    HttpReply rep;
    if (auto req = Decode(s, auth, &rep)) {
      rep = srv.OnServer([&] {
        try {
          return srv.router().Dispatch(*req);
        } catch (const std::exception& e) {
          return ErrorReply(500, std::string("threw: ") + e.what());
        }
      });
    }
    ++cases;
    ++by_status[rep.status];
    const std::string what = "case " + std::to_string(cases) + " (seed " + std::to_string(seed) + "): " + s.method +
                             " " + s.target + " body " + s.body.substr(0, 80);
    ASSERT_NE(rep.status, 500) << what << "\n" << rep.body.substr(0, 300);
    ASSERT_GE(rep.status, 200) << what;
    ASSERT_LT(rep.status, 600) << what;
    if (rep.status >= 400) {
      const auto j = nlohmann::json::parse(rep.body, nullptr, false);
      ASSERT_TRUE(j.is_object() && j.contains("error")) << what << "\n" << rep.body.substr(0, 300);
      ASSERT_EQ(j["error"]["status"], rep.status) << what;
    }
    if (cases % 500 == 0) {
      HttpRequest ok;
      ok.method = "GET";
      ok.path = "/api/v1/lookup/10.1.2.3";
      ASSERT_EQ(srv.OnServer([&] { return srv.router().Dispatch(ok); }).status, 200) << "after " << what;
    }
  }
  std::printf("router fuzz: %llu cases; by status:", static_cast<unsigned long long>(cases));
  for (const auto& [st, n] : by_status) std::printf(" %d=%d", st, n);
  std::printf("\n");
  EXPECT_GT(by_status[200], 0);
  EXPECT_GT(cases, 100u);
}

}  // namespace
}  // namespace fibnic::web
