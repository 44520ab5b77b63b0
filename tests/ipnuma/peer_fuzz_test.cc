// Seeded mutation fuzzing of ipnumad's peer API over TCP: requests from the
// corpus (tests/fuzz/corpus/peer/, valid signed and unsigned ones) are
// mutated in their method, target, body and JSON, then signed as the
// protocol says (or not), then mutated again in their headers, signature,
// timestamp, nonce, TCP source and framing (lengths, chunked encoding, bytes
// in the head, pipelining, bare LFs), and sent to node B's peer API:
//  - InProcessServer: the real WebServer + peer routes + IpnumaService in
//    this process (in-memory BARs under the RuleChecker, a test clock), the
//    bulk of the cases (FIBNIC_PEER_FUZZ_SECONDS, default 12);
//  - RunningDaemons: two ipnumad processes (B, and C whose export B maps),
//    BARs in files, for a few seconds (FIBNIC_PEER_FUZZ_DAEMON_SECONDS, 4).
// Oracle, per request:
//  - every answer is a well-formed HTTP response, never a 500, an error is a
//    JSON object naming its status and its cause; an intact request always
//    gets an answer; the server keeps serving a valid request;
//  - a 200 only for a request the model (peer_fuzz.h, written from the
//    protocol, not the product) calls validly signed, in its window, from the
//    peer's source, with an unseen nonce — and such a request is never
//    refused as forged (401) or from the wrong peer (403);
//  - B's peer tables (page map, PC IDs, REGIONs: the BAR bytes) change only
//    with a 200 to a validly signed revoke from C, exactly when its answer
//    lists what it unmapped (then the test maps again).
// Seed printed; FIBNIC_SEED replays it (tests/support/test_seed.h).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "common/http_client.h"
#include "ipnuma/api.h"
#include "ipnuma/peer_auth.h"
#include "tests/ipnuma/peer_fuzz.h"
#include "tests/ipnuma/two_nics.h"
#include "tests/support/fuzz.h"
#include "tests/support/loopback.h"
#include "tests/support/test_seed.h"
#include "tests/web/server_fixture.h"

namespace fibnic::ipnuma::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using fibnic::testing::EnvOr;
using fibnic::testing::FreePort;

constexpr uint64_t kPoolA = 0x100000000ull, kPoolB = 0x200000000ull, kPoolC = 0x300000000ull;

// Node B as the fuzzer sees it.
struct Target {
  std::string host;
  uint16_t port = 0;
  std::function<std::vector<uint8_t>()> tables;  // B's BAR bytes
  std::function<void()> map_again;               // after a revoke unmapped to-c
  std::function<int64_t()> now;                  // B's clock
  std::function<void()> tick;                    // between cases (a test clock moves)
  int timeout_ms = 5000;
};

struct Stats {
  uint64_t cases = 0, changes = 0, valid = 0, no_answer = 0;
  std::map<int, uint64_t> by_status;
};

std::string Show(const fuzz::Req& r) {
  std::string s = r.Serialise().substr(0, 600);
  std::string out;
  for (char c : s) {
    if (c == '\r') continue;
    out += (static_cast<unsigned char>(c) < 0x20 && c != '\n') || static_cast<unsigned char>(c) >= 0x7f ? '?' : c;
  }
  return "from " + r.source + ":\n" + out;
}

void RunFuzz(const Target& t, uint64_t seed, uint64_t seconds, Stats* st) {
  const auto corpus = fuzz::LoadCorpus(fs::path(FIBNIC_SOURCE_DIR) / "tests/fuzz/corpus/peer");
  ASSERT_GE(corpus.size(), 10u) << "corpus missing";
  fuzz::Mutator m(seed);
  fuzz::NonceHistory nonces;
  std::vector<fuzz::Req> sent;  // signed requests sent, for replays
  auto before = t.tables();
  const auto end = Clock::now() + std::chrono::seconds(seconds);
  // The time asked for; longer (up to 30 s more) until one request changed
  // B's tables — a slow machine or a sanitizer build must still see one.
  const fuzz::Req* revoke_c = nullptr;
  for (const auto& c : corpus) {
    if (c.name == "revoke_c.req") revoke_c = &c;
  }
  ASSERT_NE(revoke_c, nullptr) << "corpus lacks revoke_c.req";
  while (Clock::now() < end || (st->changes == 0 && Clock::now() < end + std::chrono::seconds(30))) {
    t.tick();
    const int64_t now = t.now();
    fuzz::Req r;
    // Past the time asked with nothing changed yet (a loaded sanitizer run
    // sent 247 cases in 34 s, none a valid revoke from C): every 16th case is
    // C's revoke signed as it should be, so the oracle below still gets a
    // change to check. It goes through the same judgement as any other case.
    const bool unlucky = Clock::now() >= end && st->changes == 0 && st->cases % 16 == 15;
    if (unlucky) {
      r = *revoke_c;
      fuzz::Mutator::SignAs(r, fuzz::kPeerC, fuzz::kPeerC, now, m.Nonce());
    } else if (!sent.empty() && m.OneIn(12)) {
      r = sent[m.Pick(sent.size())];  // replayed verbatim
    } else {
      r = corpus[m.Pick(corpus.size())];
      const bool is_signed = fuzz::HeaderOf(r, "X-Ipnuma-Signature").has_value();
      if (m.OneIn(2)) {
        for (size_t i = 0, n = 1 + m.Pick(2); i < n; ++i) m.MutateContent(r);
      }
      if (is_signed ? !m.OneIn(10) : m.OneIn(10)) {
        // Signed now, or at the edges of the ±30 s window, or well outside it.
        static const std::vector<int64_t> kSkews = {-100000, -3600, -60, -31, -30, -29, -5, 5, 29, 30, 31, 60, 3600};
        m.Sign(r, now + (m.OneIn(6) ? kSkews[m.Pick(kSkews.size())] : 0), m.Nonce());
      }
      if (m.OneIn(2)) {
        for (size_t i = 0, n = 1 + m.Pick(2); i < n; ++i) m.MutateEnvelope(r, now);
      }
      if (m.OneIn(8)) m.MutateFraming(r);
      if (fuzz::HeaderOf(r, "X-Ipnuma-Signature")) sent.push_back(r);
      if (sent.size() > 256) sent.erase(sent.begin());
    }
    const fuzz::Judgement j = fuzz::Judge(r, now, nonces);
    const auto raw = fuzz::Exchange(r.source, t.host, t.port, r.Serialise(), t.timeout_ms);
    ++st->cases;
    const std::string what = "case " + std::to_string(st->cases) + " (FIBNIC_SEED=" + std::to_string(seed) +
                             ", model: " + (j.verdict == fuzz::Verdict::kValid ? "valid" : j.verdict == fuzz::Verdict::kUnknown ? "unknown" : "invalid: " + j.why) +
                             ") " + Show(r);
    ASSERT_TRUE(raw.has_value()) << "no connection: the server is gone? " << what;
    std::string problem;
    const auto answers = fuzz::ParseAnswers(*raw, &problem);
    ASSERT_EQ(problem, "") << what;
    if (answers.empty()) {
      ++st->no_answer;
      ASSERT_TRUE(r.exotic) << "an intact request got no answer: " << what;
    }
    ASSERT_TRUE(r.exotic || answers.size() <= 1) << what;
    bool ok200 = false;
    for (const auto& a : answers) {
      ++st->by_status[a.status];
      ASSERT_NE(a.status, 500) << what << "\n" << a.body;
      ok200 = ok200 || a.status == 200;
    }
    // What the server may have remembered of the nonce.
    fuzz::Req unframed = r;
    unframed.exotic = false;
    const fuzz::Judgement plain = r.exotic ? fuzz::Judge(unframed, now, nonces) : j;
    // HTTP/1.0 with chunked encoding and the like: refused by the HTTP parser
    // before anyone looked at the signature (the nonce was not taken).
    const bool unparsed = !answers.empty() && answers.front().body.find("malformed HTTP request") != std::string::npos;
    if (j.verdict == fuzz::Verdict::kValid) {
      ++st->valid;
      (unparsed ? nonces.maybe : nonces.sure).insert(j.nonce_key);
      ASSERT_FALSE(answers.empty()) << what;
      const fuzz::Answer& a = answers.front();
      ASSERT_NE(a.status, 401) << "a validly signed request refused as forged: " << what << "\n" << a.body;
      if (a.status == 403) {
        ASSERT_NE(a.body.find("'from'"), std::string::npos) << what << "\n" << a.body;
      }
    } else if (plain.signature_ok) {
      nonces.maybe.insert(plain.nonce_key);
    }
    if (j.verdict == fuzz::Verdict::kInvalid) {
      ASSERT_FALSE(ok200) << "accepted a request the protocol refuses (" << j.why << "): " << what;
    }
    auto after = t.tables();
    bool listed_unmapped = false;
    for (const auto& a : answers) {
      const auto body = json::parse(a.body, nullptr, false);
      listed_unmapped = listed_unmapped || (a.status == 200 && body.contains("unmapped") && !body["unmapped"].empty());
    }
    if (after != before) {
      ASSERT_TRUE(ok200 && j.verdict != fuzz::Verdict::kInvalid &&
                  (r.exotic || fuzz::RoutedTo(fuzz::DecodedPath(r.target)) == "revoke") &&
                  fuzz::HeaderOf(r, "X-Ipnuma-Peer").value_or("").find("10.0.0.3") != std::string::npos)
          << "B's peer tables changed by this request: " << what;
      ASSERT_TRUE(listed_unmapped) << "tables changed but the answer lists nothing unmapped: " << what;
      ++st->changes;
      t.map_again();
      before = t.tables();
      ASSERT_NE(before, after) << "to-c was not mapped again";
    } else {
      ASSERT_FALSE(listed_unmapped) << "the answer lists unmapped pages but the tables did not change: " << what;
    }
    if (st->cases % 200 == 0) {  // still serving a plain valid request
      fuzz::Req probe = corpus.front();
      for (const auto& c : corpus) {
        if (c.name == "grant_a.req") probe = c;
      }
      fuzz::Mutator::SignAs(probe, fuzz::kPeerA, fuzz::kPeerA, t.now(), m.Nonce());
      const auto got = fuzz::Exchange(probe.source, t.host, t.port, probe.Serialise(), t.timeout_ms);
      ASSERT_TRUE(got && got->rfind("HTTP/1.1 200", 0) == 0) << "after " << what << "\n" << got.value_or("(nothing)");
    }
  }
}

void Report(const char* name, uint64_t seed, const Stats& st) {
  std::printf("%s: seed %llu, %llu cases, %llu validly signed, %llu changed B's tables, %llu without answer; by status:",
              name, static_cast<unsigned long long>(seed), static_cast<unsigned long long>(st.cases),
              static_cast<unsigned long long>(st.valid), static_cast<unsigned long long>(st.changes),
              static_cast<unsigned long long>(st.no_answer));
  for (const auto& [s, n] : st.by_status) std::printf(" %d=%llu", s, static_cast<unsigned long long>(n));
  std::printf("\n");
}

PeerSpec FuzzPeerOf(const Nic& n, const fuzz::FuzzPeer& p) {
  PeerSpec s = PeerOf(n);
  s.secret = p.secret;
  s.source = IpAddr::Parse(p.source).value();
  return s;
}

// The corpus's stored signatures agree with the model, and the model with
// ipnumad's signer: the fuzzer's idea of "validly signed" is the protocol's.
TEST(PeerFuzz, CorpusSignaturesMatchTheModelAndTheProduct) {
  const auto corpus = fuzz::LoadCorpus(fs::path(FIBNIC_SOURCE_DIR) / "tests/fuzz/corpus/peer");
  int signed_ = 0;
  for (const auto& r : corpus) {
    const auto peer = fuzz::HeaderOf(r, "X-Ipnuma-Peer");
    if (!peer) continue;
    ++signed_;
    const fuzz::FuzzPeer* p = fuzz::PeerByNic(*peer);
    ASSERT_NE(p, nullptr) << r.name;
    const int64_t ts = std::stoll(*fuzz::HeaderOf(r, "X-Ipnuma-Timestamp"));
    const std::string nonce = *fuzz::HeaderOf(r, "X-Ipnuma-Nonce");
    const std::string model = fuzz::ModelHmac(p->secret, r.method, r.target, *peer, ts, nonce, r.body);
    EXPECT_EQ(*fuzz::HeaderOf(r, "X-Ipnuma-Signature"), model) << r.name;
    EXPECT_EQ(PeerSignature(p->secret, {r.method, r.target, r.body, Ip(peer->c_str()), Ip(fuzz::kNodeB), ts, nonce}),
              model)
        << r.name;
    fuzz::NonceHistory none;
    fuzz::Req at = r;
    EXPECT_EQ(fuzz::Judge(at, ts, none).verdict, r.method == "POST" ? fuzz::Verdict::kValid : fuzz::Verdict::kInvalid)
        << r.name << ": " << fuzz::Judge(at, ts, none).why;
  }
  EXPECT_GE(signed_, 6);
}

TEST(PeerFuzz, InProcessServer) {
  const uint64_t seed = fibnic::testing::TestSeed("peer fuzz (in process)");
  Bench bench;
  Nic& a = bench.AddNic("a", "10.0.0.1", "02:00:00:00:00:01", kPoolA);
  Nic& b = bench.AddNic("b", "10.0.0.2", "02:00:00:00:00:02", kPoolB);
  Nic& c = bench.AddNic("c", "10.0.0.3", "02:00:00:00:00:03", kPoolC);
  for (Nic* n : {&a, &b, &c}) bench.neighbours[n->local.ip] = n->local.mac;
  ASSERT_TRUE(bench.Start(c, {{PeerOf(b)}, {Export("rx-c", kPoolC + 0x4000, 0x4000, "10.0.0.2/32")}, {}}).ok());
  const std::vector<PeerSpec> b_peers = {FuzzPeerOf(a, fuzz::kPeerA), FuzzPeerOf(c, fuzz::kPeerC)};
  const MappingSpec to_c = Mapping("to-c", "c", "rx-c", 0, 0, 4);
  ASSERT_TRUE(bench.Start(b, {b_peers, {Export("rx", kPoolB + 0x1000, 0x4000, "10.0.0.0/24")}, {to_c}}).ok());
  ASSERT_TRUE(b.Tables().pagemap[0].mapped());

  std::atomic<int64_t> now{1'800'000'000};
  PeerAuthenticator auth(b.local.ip, b_peers, PeerAuthConfig{}, [&] { return now.load(); });
  web::WebConfig cfg;
  cfg.listen_address = fuzz::kListenB;
  cfg.port = 0;
  web::testing::ServerThread srv(cfg, [&](boost::asio::io_context&, web::Router& r) {
    ASSERT_TRUE(AddPeerRoutes(r, *b.svc, auth).ok());
  });
  ASSERT_TRUE(srv.status().ok()) << srv.status().ToString();

  uint64_t n = 0;
  Target t;
  t.host = fuzz::kListenB;
  t.port = srv.port();
  t.tables = [&] { return srv.OnServer([&] { return b.Bytes(); }); };
  t.map_again = [&] { ASSERT_TRUE(srv.OnServer([&] { return b.svc->AddMapping(to_c); }).ok()); };
  t.now = [&] { return now.load(); };
  t.tick = [&] {
    if (++n % 150 == 0) ++now;  // old nonces leave the window; the cache never fills
  };
  Stats st;
  RunFuzz(t, seed, EnvOr("FIBNIC_PEER_FUZZ_SECONDS", 12), &st);
  Report("peer fuzz (in process)", seed, st);
  EXPECT_EQ(bench.checker.first_violation(), "");
  EXPECT_GT(st.changes, 0u) << "no request changed B's tables: the oracle saw nothing to check";
  EXPECT_GT(st.valid, st.cases / 20);
  EXPECT_GT(st.by_status[401], 0u);
}

// --- the same against running ipnumad processes ----------------------------

void WriteSecret(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text << "\n";
  fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write);
}

std::vector<uint8_t> ReadBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

struct Proc {
  pid_t pid = -1;
  void Start(const fs::path& config, const fs::path& log) {
    pid = ::fork();
    if (pid == 0) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      ::dup2(fd, 2);
      ::execl(IPNUMAD_BIN, "ipnumad", "--config", config.c_str(), nullptr);
      ::_exit(127);
    }
  }
  int Stop() {
    if (pid <= 0) return -1;
    ::kill(pid, SIGTERM);
    int st = 0;
    ::waitpid(pid, &st, 0);
    pid = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }
  ~Proc() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
};

TEST(PeerFuzz, RunningDaemons) {
  const uint64_t seed = fibnic::testing::TestSeed("peer fuzz (running ipnumad)");
  const fs::path dir = fs::temp_directory_path() / ("pf-peer-fuzz-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  WriteSecret(dir / "ab.secret", fuzz::kPeerA.secret);
  WriteSecret(dir / "bc.secret", fuzz::kPeerC.secret);
  WriteSecret(dir / "b.token", "peer-fuzz-operator-token");
  const uint16_t b_peer = FreePort(fuzz::kListenB), c_peer = FreePort(fuzz::kPeerC.source);
  const uint16_t b_api = FreePort("127.0.0.1"), c_api = FreePort("127.0.0.1");
  auto config = [&](const char* ip, const char* mac, const char* pool, const std::string& listen, uint16_t api,
                    const std::string& peers, const std::string& neigh, const std::string& rest) {
    return "device: {kind: file, path: " + (dir / (std::string(ip) + ".bar")).string() +
           ", model: {pages: 64, pcid_entries: 4, region_entries: 3}}\n"
           "local: {address: " + ip + ", netmask: 255.255.255.0, gateway: 10.0.0.254, mac: '" + mac +
           "', udp_port: 4791, retransmit_timeout: 5us}\n"
           "pool: {kind: reserved, base: " + pool + ", size: 0x100000}\n"
           "neighbours: {source: static, static: [" + neigh + "]}\n"
           "api: {listen: '127.0.0.1:" + std::to_string(api) + "'" +
           (std::string(ip) == fuzz::kNodeB ? ", token_file: " + (dir / "b.token").string() : "") + "}\n"
           "peer_api: {listen: '" + listen + "', timeout: 1s}\n"
           "reconcile_interval: 1s\npeers:\n" + peers + rest;
  };
  const std::string b_listen = std::string(fuzz::kListenB) + ":" + std::to_string(b_peer);
  const std::string c_listen = std::string(fuzz::kPeerC.source) + ":" + std::to_string(c_peer);
  std::ofstream(dir / "b.yaml") << config(
      fuzz::kNodeB, "02:00:00:00:00:02", "0x200000000", b_listen, b_api,
      "  - {name: a, address: 10.0.0.1, api: '127.0.0.11:9', secret_file: " + (dir / "ab.secret").string() + "}\n"
      "  - {name: c, address: 10.0.0.3, api: '" + c_listen + "', secret_file: " + (dir / "bc.secret").string() + "}\n",
      "{address: 10.0.0.1, mac: '02:00:00:00:00:01'}, {address: 10.0.0.3, mac: '02:00:00:00:00:03'}",
      "exports:\n  - {name: rx, base: 0x200001000, length: 0x4000, allow: 10.0.0.0/24}\n"
      "mappings:\n  - {name: to-c, peer: c, export: rx-c, first_page: 0, pages: 4}\n");
  std::ofstream(dir / "c.yaml") << config(
      "10.0.0.3", "02:00:00:00:00:03", "0x300000000", c_listen, c_api,
      "  - {name: b, address: 10.0.0.2, api: '" + b_listen + "', secret_file: " + (dir / "bc.secret").string() + "}\n",
      "{address: 10.0.0.2, mac: '02:00:00:00:00:02'}",
      "exports:\n  - {name: rx-c, base: 0x300004000, length: 0x4000, allow: 10.0.0.2/32}\n");
  Proc b, c;
  c.Start(dir / "c.yaml", dir / "c.log");
  b.Start(dir / "b.yaml", dir / "b.log");
  auto op = [&](const std::string& method, const std::string& target, const std::string& body) {
    HttpRequestSpec req;
    req.server = Endpoint{IpAddr::V4(0x7F000001), b_api};
    req.method = method;
    req.target = target;
    req.body = body;
    req.token = "peer-fuzz-operator-token";
    return HttpCall(req);
  };
  bool mapped = false;
  for (int i = 0; i < 300 && !mapped; ++i) {
    auto got = op("GET", "/api/v1/ipnuma/mappings", "");
    mapped = got.ok() && got->status == 200 && json::parse(got->body, nullptr, false)["mappings"].size() == 1;
    if (!mapped) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto logs = [&] {
    std::stringstream ss;
    for (const char* n : {"b.log", "c.log"}) ss << "---- " << n << "\n" << std::ifstream(dir / n).rdbuf() << "\n";
    return ss.str();
  };
  ASSERT_TRUE(mapped) << logs();

  Target t;
  t.host = fuzz::kListenB;
  t.port = b_peer;
  const fs::path bar = dir / "10.0.0.2.bar";
  t.tables = [&] { return ReadBytes(bar); };
  t.map_again = [&] {
    auto got = op("POST", "/api/v1/ipnuma/mappings",
                  R"({"name":"to-c","peer":"c","export":"rx-c","first_page":0,"pages":4})");
    ASSERT_TRUE(got.ok() && got->status == 200) << (got.ok() ? got->body : got.status().ToString());
  };
  t.now = SystemUnixSeconds;
  t.tick = [] {};
  t.timeout_ms = 15000;
  Stats st;
  RunFuzz(t, seed, EnvOr("FIBNIC_PEER_FUZZ_DAEMON_SECONDS", 4), &st);
  Report("peer fuzz (running ipnumad)", seed, st);
  EXPECT_GT(st.changes, 0u);
  // Healthy afterwards: answers its operator, stops cleanly.
  auto status = op("GET", "/api/v1/ipnuma/status", "");
  EXPECT_TRUE(status.ok() && status->status == 200);
  EXPECT_EQ(b.Stop(), 0) << logs();
  EXPECT_EQ(c.Stop(), 0) << logs();
  if (!HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace fibnic::ipnuma::testing
