// A flood against the RUNNING daemons (processes): fibnicd (REST API with its
// admission limits, FPM port) and ipnumad (operator API, peer API), from
// attacker addresses on loopback, while a legitimate client keeps working.
//
// The attack, for kFloodSeconds: from three addresses, slowloris connections
// (a request head trickled a header a second) and idle ones, as many as the
// attacker can open (300 per port: more than the 256 slots of each server);
// requests with 100 MB bodies; wrong tokens, over and over; event streams
// without the token; unsigned and forged peer requests; and a second FPM
// connection, again and again, each sending a route of its own.
//
// What must hold meanwhile, every kProbeMs:
//  - the legitimate client (its own address) gets 200 from fibnicd's API,
//    ipnumad's operator API and ipnumad's peer API (a signed grant from its
//    configured source) within kAnswerBound each;
//  - fibnicd keeps converging: a route file changed and reloaded and a
//    static route PUT through the API show up in the device (the BAR image
//    decoded as the hardware would, HwLookup), and a route zebra sends over
//    its FPM connection is held to be answered; the second FPM connection is
//    refused and its route never taken;
//  - each daemon's RSS stays within kRssBound of what it was before;
// and afterwards both answer, hold no attacker connection, and exit 0 on SIGTERM.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/http_client.h"
#include "device/fibnic_lookup.h"
#include "ipnuma/peer_auth.h"
#include "sources/fpm/fpm_frame.h"
#include "sources/netlink/netlink_build.h"
#include "tests/fibnicd/daemon_harness.h"
#include "tests/support/loopback.h"

namespace fibnic {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using fibnic::testing::FreePort;
using json = nlohmann::json;

constexpr auto kFloodSeconds = 12s;
constexpr auto kProbeMs = 250ms;
constexpr auto kAnswerBound = 2s;       // the legitimate client's timeout
constexpr auto kConvergeBound = 5s;     // route change → device, during the flood
constexpr long kRssBoundKiB = 64 * 1024;  // growth of each daemon's RSS
constexpr int kSlowPerPort = 300;       // attacker connections per port (servers: 256 slots)
constexpr const char* kToken = "flood-test-token-0123456789";
constexpr const char* kPeerSecret = "flood-test-pair-secret-0123456789abcdef";
const char* const kAttackers[] = {"127.0.0.66", "127.0.0.67", "127.0.0.68"};

std::string Slurp(const std::string& path) {
  auto v = testing::ReadFile(path);
  return std::string(v.begin(), v.end());
}

long RssKiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// A socket from source to host:port; non-blocking when asked. -1 on failure.
int Connect(const char* source, const char* host, uint16_t port, bool nonblocking) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), 0);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
  sockaddr_in l{}, r{};
  l.sin_family = r.sin_family = AF_INET;
  ::inet_pton(AF_INET, source, &l.sin_addr);
  ::inet_pton(AF_INET, host, &r.sin_addr);
  r.sin_port = htons(port);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&l), sizeof l) != 0 ||
      (::connect(fd, reinterpret_cast<sockaddr*>(&r), sizeof r) != 0 && errno != EINPROGRESS)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends a request, reads the answer's status line (0: none within timeout).
int OneShot(const char* source, const char* host, uint16_t port, const std::string& bytes,
            std::chrono::milliseconds timeout) {
  const int fd = Connect(source, host, port, false);
  if (fd < 0) return 0;
  timeval tv{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  char buf[64] = {};
  const ssize_t n = ::recv(fd, buf, sizeof buf - 1, 0);
  ::close(fd);
  return n >= 12 && std::strncmp(buf, "HTTP/1.1 ", 9) == 0 ? std::atoi(buf + 9) : 0;
}

struct Port {
  const char* host;
  uint16_t port;
};

// Slowloris and idle connections from the attacker addresses, kept at
// kSlowPerPort per port: closed ones are opened again.
class Slowloris {
 public:
  explicit Slowloris(std::vector<Port> ports) : ports_(std::move(ports)) {}
  ~Slowloris() {
    for (auto& c : conns_) ::close(c.fd);
  }
  void Run(const std::atomic<bool>& stop) {
    for (size_t p = 0; p < ports_.size(); ++p) {
      for (int i = 0; i < kSlowPerPort; ++i) conns_.push_back({-1, p, kAttackers[i % 3], i % 2 == 0, 0, {}});
    }
    auto next_trickle = Clock::now();
    while (!stop) {
      std::vector<pollfd> fds;
      for (auto& c : conns_) {
        if (c.fd < 0 && Clock::now() >= c.retry_at) {  // again 50 ms after the server dropped it
          c.fd = Connect(c.source, ports_[c.port].host, ports_[c.port].port, true);
          c.sent = 0;
          ++opened;
        }
        fds.push_back({c.fd, POLLIN, 0});  // a negative fd is skipped by poll
      }
      ::poll(fds.data(), fds.size(), 100);
      for (size_t i = 0; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        char buf[512];
        if (::recv(conns_[i].fd, buf, sizeof buf, MSG_DONTWAIT) <= 0) {  // closed by the server
          ::close(conns_[i].fd);
          conns_[i].fd = -1;
          conns_[i].retry_at = Clock::now() + 50ms;
          ++dropped;
        }
      }
      if (Clock::now() >= next_trickle) {  // a header a second on the slow ones
        next_trickle = Clock::now() + 1s;
        for (auto& c : conns_) {
          if (!c.slow || c.fd < 0) continue;
          const std::string part = c.sent++ == 0 ? "GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                                 : "X-Slow-" + std::to_string(c.sent) + ": y\r\n";
          ::send(c.fd, part.data(), part.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        }
      }
    }
  }
  std::atomic<uint64_t> opened{0}, dropped{0};

 private:
  struct Conn {
    int fd;
    size_t port;
    const char* source;
    bool slow;
    int sent;
    Clock::time_point retry_at;
  };
  std::vector<Port> ports_;
  std::vector<Conn> conns_;
};

std::string Frame(const std::string& prefix, bool del = false) {
  NlRoute r;
  r.del = del;
  r.prefix = Prefix::Parse(prefix).value();
  r.table = 254;
  r.protocol = 186;  // bgp
  r.type = 1;        // unicast
  NlPath p;
  p.gateway = IpAddr::Parse("192.0.2.1").value();
  p.ifindex = 1;
  r.paths.push_back(p);
  const auto nl = BuildRouteMessage(r);
  const auto f = EncodeFpmFrame(nl.data(), nl.size());
  return std::string(f.begin(), f.end());
}

HwDecision DeviceLookup(const std::string& bar, const char* addr) {
  const int fd = ::open(bar.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  ::fstat(fd, &st);
  void* map = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  HwDecision d;
  if (map == MAP_FAILED) return d;
  d = HwLookup(static_cast<const uint8_t*>(map), static_cast<size_t>(st.st_size), IpAddr::Parse(addr).value());
  ::munmap(map, static_cast<size_t>(st.st_size));
  return d;
}

class Flood : public ::testing::Test {
 protected:
  void SetUp() override {
    rlimit nofile{};  // the attacker holds ~900 sockets
    ::getrlimit(RLIMIT_NOFILE, &nofile);
    nofile.rlim_cur = nofile.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &nofile);
    dir_ = ::testing::TempDir() + "/pf-flood-" + std::to_string(::getpid());
    std::system(("rm -rf " + dir_ + " && mkdir -p " + dir_).c_str());
    // fibnicd: file BAR, routes from a file, FPM, the API with a token.
    testing::WriteFile(dir_ + "/routes.txt", "198.51.100.0/24 192.0.2.1 0\n");
    testing::WriteFile(dir_ + "/neigh.txt", "192.0.2.1 52:54:00:00:00:01 0\n");
    testing::WriteFile(dir_ + "/fibnicd.yaml", "device: {backend: file, path: " + dir_ + "/bar0.img}\n"
                       "sources:\n  fpm: {enabled: true, listen: 127.0.0.1:0}\n"
                       "  file: {routes: " + dir_ + "/routes.txt, neighbors: " + dir_ + "/neigh.txt}\n"
                       "web: {listen: 127.0.0.1:0, token: " + kToken + "}\n");
    notify_ = std::make_unique<testing::NotifySocket>(dir_ + "/notify");
    fibnicd_ = testing::StartDaemon(FIBNICD_BIN, dir_ + "/fibnicd.yaml", dir_ + "/fibnicd.log",
                                    {"NOTIFY_SOCKET=" + notify_->path()});
    std::vector<std::string> log;
    ASSERT_TRUE(notify_->WaitFor("READY=1", 60s, &log)) << Slurp(dir_ + "/fibnicd.log");
    const std::string text = Slurp(dir_ + "/fibnicd.log");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(text, m, std::regex("REST API at http://127\\.0\\.0\\.1:(\\d+)/"))) << text;
    web_ = static_cast<uint16_t>(std::stoi(m[1]));
    ASSERT_TRUE(std::regex_search(text, m, std::regex("FPM source listening on 127\\.0\\.0\\.1:(\\d+)"))) << text;
    fpm_ = static_cast<uint16_t>(std::stoi(m[1]));
    // ipnumad: file BAR; peer A (the legitimate peer) sends from 127.0.0.11.
    std::ofstream(dir_ + "/ab.secret") << kPeerSecret << "\n";
    std::filesystem::permissions(dir_ + "/ab.secret", std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    std::ofstream(dir_ + "/op.token") << kToken << "\n";
    std::filesystem::permissions(dir_ + "/op.token", std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    op_ = FreePort("127.0.0.1");
    peer_ = FreePort("127.0.0.12");
    testing::WriteFile(dir_ + "/ipnumad.yaml",
                       "device: {kind: file, path: " + dir_ + "/ipnuma.bar, model: {pages: 64, pcid_entries: 4, region_entries: 3}}\n"
                       "local: {address: 10.0.0.2, netmask: 255.255.255.0, gateway: 10.0.0.254, mac: '02:00:00:00:00:02', udp_port: 4791, retransmit_timeout: 5us}\n"
                       "pool: {kind: reserved, base: 0x200000000, size: 0x100000}\n"
                       "neighbours: {source: static, static: [{address: 10.0.0.1, mac: '02:00:00:00:00:01'}]}\n"
                       "api: {listen: '127.0.0.1:" + std::to_string(op_) + "', token_file: " + dir_ + "/op.token}\n"
                       "peer_api: {listen: '127.0.0.12:" + std::to_string(peer_) + "', timeout: 1s}\n"
                       "peers:\n  - {name: a, address: 10.0.0.1, api: '127.0.0.11:9', secret_file: " + dir_ + "/ab.secret}\n"
                       "exports:\n  - {name: rx, base: 0x200001000, length: 0x4000, allow: 10.0.0.0/24}\n");
    ipnumad_ = testing::StartDaemon(IPNUMAD_BIN, dir_ + "/ipnumad.yaml", dir_ + "/ipnumad.log");
    for (int i = 0; i < 200 && Get(op_, "/api/v1/ipnuma/status").status != 200; ++i) std::this_thread::sleep_for(50ms);
    ASSERT_EQ(Get(op_, "/api/v1/ipnuma/status").status, 200) << Slurp(dir_ + "/ipnumad.log");
  }
  void TearDown() override {
    if (HasFailure()) {
      std::cerr << "---- fibnicd log (tail)\n" << Slurp(dir_ + "/fibnicd.log").substr(0, 20000) << "\n---- ipnumad log\n"
                << Slurp(dir_ + "/ipnumad.log").substr(0, 20000) << "\n";
    } else {
      std::system(("rm -rf " + dir_).c_str());
    }
  }

  HttpResult Call(uint16_t port, const std::string& method, const std::string& target, const std::string& body = "",
                  std::vector<std::pair<std::string, std::string>> headers = {}, const std::string& host = "127.0.0.1",
                  const std::string& bind = "127.0.0.1") {
    HttpRequestSpec r;
    r.server = Endpoint{IpAddr::Parse(host).value(), port};
    r.method = method;
    r.target = target;
    r.body = body;
    r.headers = std::move(headers);
    r.bind_address = bind;
    if (method != "GET" && port != peer_) r.token = kToken;
    r.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(kAnswerBound);
    auto got = HttpCall(r);
    return got.ok() ? *got : HttpResult{0, "", got.status().ToString()};
  }
  HttpResult Get(uint16_t port, const std::string& target) { return Call(port, "GET", target); }
  HttpResult PeerGrant() {
    const std::string body = R"({"export":"rx","offset":0,"length":4096})";
    auto h = ipnuma::SignPeerRequest(kPeerSecret, "POST", "/peer/v1/grant", body, 0x0A000001, 0x0A000002,
                                     ipnuma::SystemUnixSeconds());
    h.emplace_back("Content-Type", "application/json");
    return Call(peer_, "POST", "/peer/v1/grant", body, h, "127.0.0.12", "127.0.0.11");
  }
  json FpmStats() {
    const json st = json::parse(Get(web_, "/api/v1/status").body, nullptr, false);
    if (st.is_discarded()) return json();
    const json& sources = st["sources"];
    if (sources.is_object() && sources.contains("fpm")) return sources["fpm"];
    for (const auto& s : sources) {
      if (s.is_object() && s.value("name", "") == "fpm") return s;
    }
    return json();
  }

  std::string dir_;
  std::unique_ptr<testing::NotifySocket> notify_;
  std::unique_ptr<testing::Child> fibnicd_, ipnumad_;
  uint16_t web_ = 0, fpm_ = 0, op_ = 0, peer_ = 0;
};

TEST_F(Flood, DaemonsKeepServingAndConvergingUnderAttack) {
  // zebra: the first FPM connection, from 127.0.0.1, with one route.
  const int zebra = Connect("127.0.0.1", "127.0.0.1", fpm_, false);
  ASSERT_GE(zebra, 0);
  const std::string z1 = Frame("203.0.113.0/24");
  ASSERT_EQ(::send(zebra, z1.data(), z1.size(), MSG_NOSIGNAL), static_cast<ssize_t>(z1.size()));
  auto zebra_routes = [&] { return FpmStats().value("messages", 0); };  // zebra's route messages taken
  for (int i = 0; i < 100 && zebra_routes() != 1; ++i) std::this_thread::sleep_for(50ms);
  ASSERT_EQ(zebra_routes(), 1) << FpmStats().dump();
  const long rss0_fibnicd = RssKiB(fibnicd_->pid()), rss0_ipnumad = RssKiB(ipnumad_->pid());

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> big_413{0}, bad_401{0}, bad_429{0}, fpm_tries{0};
  Slowloris slow({{"127.0.0.1", web_}, {"127.0.0.1", op_}, {"127.0.0.12", peer_}});
  std::vector<std::thread> attackers;
  struct Joiner {  // the attack stops however the test body ends (an ASSERT returns early)
    std::atomic<bool>& stop;
    std::vector<std::thread>& threads;
    ~Joiner() {
      stop = true;
      for (auto& t : threads) {
        if (t.joinable()) t.join();
      }
    }
  } joiner{stop, attackers};
  attackers.emplace_back([&] { slow.Run(stop); });
  attackers.emplace_back([&] {  // oversized bodies, then wrong tokens, streams, forged peer requests
    const std::string big = "PUT /api/v1/routes/static/10.9.0.0/16 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                            "Content-Type: application/json\r\nContent-Length: 100000000\r\n\r\n" +
                            std::string(256 * 1024, '[');
    const std::string bad_token = "PUT /api/v1/routes/static/10.9.0.0/16 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                  "Authorization: Bearer wrong-token\r\nContent-Length: 2\r\n\r\n{}";
    const std::string stream = "GET /api/v1/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    const std::string forged = "POST /peer/v1/grant HTTP/1.1\r\nHost: 127.0.0.12\r\nX-Ipnuma-Peer: 10.0.0.1\r\n"
                               "X-Ipnuma-Timestamp: 1\r\nX-Ipnuma-Nonce: 00000000000000000000000000000000\r\n"
                               "X-Ipnuma-Signature: 00\r\nContent-Length: 2\r\n\r\n{}";
    for (int i = 0; !stop; ++i) {
      for (const Port& p : {Port{"127.0.0.1", web_}, Port{"127.0.0.1", op_}, Port{"127.0.0.12", peer_}}) {
        if (OneShot("127.0.0.69", p.host, p.port, big, 2000ms) == 413) ++big_413;
        const int s = OneShot("127.0.0.70", p.host, p.port, p.port == peer_ ? forged : bad_token, 2000ms);
        bad_401 += s == 401;
        bad_429 += s == 429;
      }
      OneShot("127.0.0.71", "127.0.0.1", web_, stream, 500ms);
    }
  });
  attackers.emplace_back([&] {  // a second FPM connection, over and over, with a route of its own
    const std::string evil = Frame("198.18.9.0/24");
    while (!stop) {
      const int fd = Connect("127.0.0.72", "127.0.0.1", fpm_, false);
      if (fd >= 0) {
        ::send(fd, evil.data(), evil.size(), MSG_NOSIGNAL);
        char b;
        timeval tv{0, 500000};
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        ::recv(fd, &b, 1, 0);
        ::close(fd);
        ++fpm_tries;
      }
    }
  });

  // The legitimate client, and the routes fed in meanwhile.
  const std::string bar = dir_ + "/bar0.img";
  ASSERT_FALSE(DeviceLookup(bar, "198.18.0.5").forward);
  ASSERT_FALSE(DeviceLookup(bar, "198.18.1.5").forward);
  auto worst = Clock::duration::zero();
  long peak_fibnicd = rss0_fibnicd, peak_ipnumad = rss0_ipnumad;
  int probes = 0;
  std::optional<Clock::time_point> file_since, api_since, fpm_since;
  bool file_seen = false, api_seen = false, fpm_seen = false;
  const auto start = Clock::now();
  while (Clock::now() - start < kFloodSeconds) {
    std::this_thread::sleep_for(kProbeMs);
    notify_->Drain(0ms);  // read what fibnicd sent, as systemd would (unread, its notifications are dropped)
    const auto t0 = Clock::now();
    const HttpResult a = Get(web_, "/api/v1/status"), b = Get(op_, "/api/v1/ipnuma/status"), c = PeerGrant();
    const auto took = (Clock::now() - t0) / 3;
    ++probes;
    ASSERT_EQ(a.status, 200) << "fibnicd API, probe " << probes << ": " << a.body;
    ASSERT_EQ(b.status, 200) << "ipnumad API, probe " << probes << ": " << b.body;
    ASSERT_EQ(c.status, 200) << "ipnumad peer API, probe " << probes << ": " << c.body;
    worst = std::max(worst, took);
    peak_fibnicd = std::max(peak_fibnicd, RssKiB(fibnicd_->pid()));
    peak_ipnumad = std::max(peak_ipnumad, RssKiB(ipnumad_->pid()));
    const auto elapsed = Clock::now() - start;
    if (!file_since && elapsed > 2s) {  // the route file changes, fibnicd reloads it
      testing::WriteFile(dir_ + "/routes.txt", "198.51.100.0/24 192.0.2.1 0\n198.18.0.0/24 192.0.2.1 0\n");
      fibnicd_->Signal(SIGHUP);
      file_since = Clock::now();
    }
    if (!api_since && elapsed > 3s) {
      const HttpResult put = Call(web_, "PUT", "/api/v1/routes/static/198.18.1.0/24",
                                  R"({"paths":[{"gateway":"192.0.2.1","port":0}]})");
      ASSERT_LT(put.status, 300) << put.body;
      api_since = Clock::now();
    }
    if (!fpm_since && elapsed > 4s) {
      const std::string z2 = Frame("203.0.114.0/24");
      ASSERT_EQ(::send(zebra, z2.data(), z2.size(), MSG_NOSIGNAL), static_cast<ssize_t>(z2.size()));
      fpm_since = Clock::now();
    }
    // Each change must show within kConvergeBound of being made.
    auto converged = [&](std::optional<Clock::time_point> since, bool* seen, const std::function<bool()>& shows) {
      if (!since || *seen) return true;
      *seen = shows();
      return *seen || Clock::now() - *since < kConvergeBound;
    };
    ASSERT_TRUE(converged(file_since, &file_seen, [&] { return DeviceLookup(bar, "198.18.0.5").forward; }))
        << "route file reload → device";
    ASSERT_TRUE(converged(api_since, &api_seen, [&] { return DeviceLookup(bar, "198.18.1.5").forward; }))
        << "static route PUT → device";
    ASSERT_TRUE(converged(fpm_since, &fpm_seen, [&] { return zebra_routes() == 2; })) << "FPM route → taken to answer";
  }
  stop = true;
  for (auto& t : attackers) t.join();
  const uint64_t opened = slow.opened, dropped = slow.dropped;
  std::printf("flood: %d probes, slowest answer %lld ms (bound %lld ms); slowloris opened %llu, dropped %llu; "
              "413 x%llu, 401 x%llu, 429 x%llu; %llu second FPM connections; RSS fibnicd %ld → %ld KiB, ipnumad "
              "%ld → %ld KiB (bound +%ld KiB)\n",
              probes, static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(worst).count()),
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(kAnswerBound).count()),
              static_cast<unsigned long long>(opened), static_cast<unsigned long long>(dropped),
              static_cast<unsigned long long>(big_413.load()), static_cast<unsigned long long>(bad_401.load()),
              static_cast<unsigned long long>(bad_429.load()), static_cast<unsigned long long>(fpm_tries.load()),
              rss0_fibnicd, peak_fibnicd, rss0_ipnumad, peak_ipnumad, kRssBoundKiB);
  EXPECT_TRUE(file_seen && api_seen && fpm_seen);
  EXPECT_LE(peak_fibnicd - rss0_fibnicd, kRssBoundKiB);
  EXPECT_LE(peak_ipnumad - rss0_ipnumad, kRssBoundKiB);
  // The attack really ran into the limits.
  EXPECT_GT(dropped, 0u) << "no slow connection was ever dropped";
  EXPECT_GT(big_413.load(), 0u);
  EXPECT_GT(bad_429.load(), 0u);
  EXPECT_GT(fpm_tries.load(), 0u);
  // zebra's feed was never taken over: the second connections were refused,
  // their route was never taken, zebra's connection is still the live one.
  const json fpm = FpmStats();
  EXPECT_GT(fpm.value("refused", 0), 0) << fpm.dump();
  EXPECT_EQ(fpm.value("messages", 0), 2) << fpm.dump();
  EXPECT_EQ(fpm.value("connections", 0), 1) << fpm.dump();
  // Healthy afterwards: both answer at once, and stop cleanly.
  EXPECT_EQ(Get(web_, "/api/v1/status").status, 200);
  EXPECT_EQ(PeerGrant().status, 200);
  ::close(zebra);
  fibnicd_->Signal(SIGTERM);
  EXPECT_EQ(fibnicd_->Wait(20s, [this] { notify_->Drain(0ms); }), 0);
  ipnumad_->Signal(SIGTERM);
  EXPECT_EQ(ipnumad_->Wait(20s), 0);
}

}  // namespace
}  // namespace fibnic
