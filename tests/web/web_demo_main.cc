// fibnic-web-demo: serves the Fib API + dashboard over a real Fib, pusher and
// in-memory BAR fed from a route file, optionally churning routes (SIGUSR1
// holds the churn, SIGUSR2 resumes it) — what the
// browser test and the wrk bench talk to.
//   fibnic-web-demo (--routes R.txt --neighbors N.txt | --synthetic V4,V6)
//                   [--port P] [--port-file F] [--token T] [--churn ROUTES_PER_S]
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "tests/web/web_harness.h"
#include "web/http/dashboard.h"
#include "web/http/server.h"

namespace fibnic::web {
namespace {

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr, "fibnic-web-demo: %s\nusage: fibnic-web-demo (--routes R --neighbors N | --synthetic V4,V6) "
               "[--port P] [--port-file F] [--token T] [--churn ROUTES_PER_S]\n", why.c_str());
  std::exit(2);
}

// Adds and removes /24s inside 100.64.0.0/10 at a steady rate, committing
// every 10 ms like the daemon's batching pipeline.
class Churn {
 public:
  Churn(boost::asio::io_context& io, testing::Harness& h, Telemetry& t, double per_s)
      : timer_(io), h_(h), t_(t), per_tick_(per_s / 100.0) {
    for (const auto& n : h.neighbors()) {
      if (n.addr.is_v4()) gateways_.push_back(n);
    }
    updates_ = t.Counter(kRouteUpdatesTotal, "Route upserts/deletes applied to the Fib");
  }
  void Start() { Tick(); }
  // The browser test holds the churn while it compares the page with the API:
  // counts follow every commit, so under churn two reads never meet.
  void Hold(bool on) { held_ = on; }

 private:
  void Tick() {
    if (held_) {
      timer_.expires_after(std::chrono::milliseconds(10));
      timer_.async_wait([this](boost::system::error_code ec) {
        if (!ec) Tick();
      });
      return;
    }
    debt_ += per_tick_;
    int added = 0, removed = 0;
    while (debt_ >= 1 && !gateways_.empty()) {
      debt_ -= 1;
      const uint32_t a = 0x64400000u | ((static_cast<uint32_t>(rng_()) & 0x3FFF) << 8);  // 100.64.0.0/10, /24s
      const Prefix p = Prefix::V4(a, 24);
      if (live_.count(p)) {
        h_.Delete(p);
        live_.erase(p);
        ++removed;
      } else {
        const Neighbor& g = gateways_[rng_() % gateways_.size()];
        h_.Upsert(Route{p, RouteSource::kStatic, 1, {NextHop{g.addr, g.port}}});
        live_.insert(p);
        ++added;
      }
      updates_->Add();
    }
    if (added + removed) {
      Status st = h_.Commit();
      if (!st.ok()) t_.Record(EventLevel::kError, "push", st.ToString());
      if (++ticks_ % 200 == 0) {
        t_.Record(EventLevel::kInfo, "route", "churn: " + std::to_string(live_.size()) + " churned /24s live");
      }
    }
    timer_.expires_after(std::chrono::milliseconds(10));
    timer_.async_wait([this](boost::system::error_code ec) {
      if (!ec) Tick();
    });
  }

  boost::asio::steady_timer timer_;
  testing::Harness& h_;
  Telemetry& t_;
  double per_tick_;
  double debt_ = 0;
  std::vector<Neighbor> gateways_;
  std::set<Prefix> live_;
  std::mt19937_64 rng_{42};
  CounterMetric* updates_;
  uint64_t ticks_ = 0;
  bool held_ = false;
};

int Main(int argc, char** argv) {
  std::string routes, neighbors, synthetic, port_file, token;
  int port = 8080;
  double churn = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) Usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--routes") routes = next();
    else if (a == "--neighbors") neighbors = next();
    else if (a == "--synthetic") synthetic = next();
    else if (a == "--port") port = std::atoi(next().c_str());
    else if (a == "--port-file") port_file = next();
    else if (a == "--token") token = next();
    else if (a == "--churn") churn = std::atof(next().c_str());
    else Usage("unknown argument '" + a + "'");
  }
  testing::Harness h;
  Status st;
  if (!synthetic.empty()) {
    const auto comma = synthetic.find(',');
    if (comma == std::string::npos) Usage("--synthetic wants V4,V6");
    st = h.LoadSynthetic(std::atoi(synthetic.c_str()), std::atoi(synthetic.c_str() + comma + 1), 1);
  } else if (!routes.empty() && !neighbors.empty()) {
    st = h.LoadRouteFiles(routes, neighbors);
  } else {
    Usage("give --routes and --neighbors, or --synthetic");
  }
  if (!st.ok()) {
    std::fprintf(stderr, "fibnic-web-demo: %s\n", st.ToString().c_str());
    return 1;
  }
  boost::asio::io_context io;
  Telemetry telemetry;
  Router router;
  st = h.Mount(io, router, &telemetry);
  if (!st.ok()) {
    std::fprintf(stderr, "fibnic-web-demo: %s\n", st.ToString().c_str());
    return 1;
  }
  AddDashboard(router);
  WebConfig cfg;
  cfg.port = static_cast<uint16_t>(port);
  cfg.token = token;
  cfg.max_connections = 1024;
  auto server = WebServer::Start(io, cfg, router, &telemetry);
  if (!server.ok()) {
    std::fprintf(stderr, "fibnic-web-demo: %s\n", server.status().ToString().c_str());
    return 1;
  }
  telemetry.Record(EventLevel::kInfo, "config", "serving " + std::to_string(h.routes().size()) + " routes");
  if (!port_file.empty()) {
    std::ofstream(port_file + ".tmp") << (*server)->port() << "\n";
    std::rename((port_file + ".tmp").c_str(), port_file.c_str());
  }
  std::printf("fibnic-web-demo: http://127.0.0.1:%u/\n", (*server)->port());
  std::fflush(stdout);
  std::unique_ptr<Churn> churner;
  if (churn > 0) {
    churner = std::make_unique<Churn>(io, h, telemetry, churn);
    churner->Start();
  }
  // SIGUSR1 holds the churn, SIGUSR2 lets it go on.
  boost::asio::signal_set hold(io, SIGUSR1, SIGUSR2);
  std::function<void()> wait_hold = [&] {
    hold.async_wait([&](boost::system::error_code ec, int sig) {
      if (ec) return;
      if (churner) churner->Hold(sig == SIGUSR1);
      wait_hold();
    });
  };
  wait_hold();
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](boost::system::error_code, int) {
    (*server)->Stop();
    hold.cancel();
    io.stop();
  });
  io.run();
  return 0;
}

}  // namespace
}  // namespace fibnic::web

int main(int argc, char** argv) { return fibnic::web::Main(argc, argv); }
