// Ingest rate of a full table through the kernel source (which brings every
// route the host forwards by, zebra's and BIRD's too), against the kernel's
// own install time of the same routes measured in the same run:
//   kernel (events): the kernel source following `ip -batch` live;
//   kernel (dump):   a fresh kernel source's initial dump of the same table;
//   peer: `ip -batch` installing the routes into the kernel.
// Runs in its own network namespace (needs root).
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <utility>  // before Boost.Asio 1.74 (awaitable.hpp uses std::exchange)
#include <atomic>
#include <boost/asio.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "sources/kernel/kernel_source.h"
#include "sources/netlink/netlink_build.h"

namespace fibnic {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kPorts = 4;

struct FileRoute {
  Prefix prefix;
  IpAddr gateway;
  int port;
};

std::vector<FileRoute> ReadRoutes(const std::string& path) {
  std::vector<FileRoute> out;
  std::ifstream in(path);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    std::string p, gw;
    int port = -1;
    ss >> p >> gw >> port;
    auto pr = Prefix::Parse(p);
    auto g = IpAddr::Parse(gw);
    if (!pr.ok() || !g.ok() || port < 0 || port >= kPorts) {
      std::cerr << path << ":" << lineno << ": unusable route line '" << line << "'\n";
      std::exit(2);
    }
    out.push_back({*pr, *g, port});
  }
  return out;
}

void Run(const std::string& cmd) {
  if (std::system(cmd.c_str()) != 0) {
    std::cerr << "failed: " << cmd << "\n";
    std::exit(1);
  }
}

// Counts first arrivals of the routes of the file.
class CountingSink : public RibSink {
 public:
  explicit CountingSink(const std::vector<FileRoute>& routes) {
    for (const auto& r : routes) want_.insert(r.prefix);
  }
  void UpsertRoute(const Route& r) override {
    if (want_.erase(r.prefix)) ++count_;
  }
  void DeleteRoute(const Prefix&, RouteSource) override {}
  void UpsertNeighbor(const Neighbor&) override {}
  void DeleteNeighbor(const IpAddr&, PortId) override {}
  uint64_t count() const { return count_.load(); }

 private:
  std::unordered_set<Prefix> want_;
  std::atomic<uint64_t> count_{0};
};

double WaitCount(const CountingSink& sink, uint64_t n, Clock::time_point t0, std::chrono::seconds limit) {
  while (sink.count() < n) {
    if (Clock::now() - t0 > limit) {
      std::cerr << "timed out: " << sink.count() << " of " << n << " routes\n";
      std::exit(1);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

PortNames Ports() {
  PortNames p;
  for (int i = 0; i < kPorts; ++i) p["p" + std::to_string(i)] = static_cast<PortId>(i);
  return p;
}

struct IoThread {
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work{io.get_executor()};
  std::thread t{[this] { io.run(); }};
  ~IoThread() {
    work.reset();
    io.stop();
    t.join();
  }
};

}  // namespace
}  // namespace fibnic

int main(int argc, char** argv) {
  using namespace fibnic;
  if (argc != 2) {
    std::cerr << "usage: sources_bench ROUTES.txt   (route file from make-routes; needs root)\n";
    return 2;
  }
  const auto routes = ReadRoutes(argv[1]);
  const double n = static_cast<double>(routes.size());
  if (unshare(CLONE_NEWNET) != 0) {
    std::cerr << "sources_bench: unshare(CLONE_NEWNET) failed (needs root)\n";
    return 1;
  }
  Run("ip link set lo up");
  for (int p = 0; p < kPorts; ++p) {
    const std::string i = std::to_string(p);
    Run("ip link add p" + i + " type veth peer name p" + i + "x && ip link set p" + i + " up && ip link set p" + i +
        "x up && ip addr add 10." + i + ".0.2/16 dev p" + i + " && ip -6 addr add fd00:" + i +
        "::2/32 dev p" + i + " nodad");
  }
  const std::string batch = "/tmp/fibnic-sources-bench-" + std::to_string(getpid()) + ".batch";
  {
    std::ofstream b(batch);
    for (const auto& r : routes) {
      b << "route add " << r.prefix.ToString() << " via " << r.gateway.ToString() << " dev p" << r.port << "\n";
    }
  }
  std::printf("routes: %zu\n", routes.size());

  // Kernel: install with ip -batch while the kernel source follows live.
  double install = 0, live = 0;
  {
    CountingSink sink(routes);
    IoThread io;
    KernelSourceConfig cfg;
    cfg.ports = Ports();
    cfg.resolve_gateways = false;  // nobody answers on the veths
    cfg.log = [](const std::string&) {};
    KernelSource src(io.io, sink, cfg);
    if (!src.Start().ok()) return 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // initial (empty) dump
    const auto t0 = Clock::now();
    Run("ip -batch " + batch);
    install = std::chrono::duration<double>(Clock::now() - t0).count();
    live = WaitCount(sink, routes.size(), t0, std::chrono::seconds(600));
    boost::asio::post(io.io, [&] { src.Stop(); });
  }
  // Kernel: a fresh source dumping the full table.
  double dump = 0;
  {
    CountingSink sink(routes);
    IoThread io;
    KernelSourceConfig cfg;
    cfg.ports = Ports();
    cfg.resolve_gateways = false;
    cfg.log = [](const std::string&) {};
    KernelSource src(io.io, sink, cfg);
    const auto t0 = Clock::now();
    std::promise<Status> started;
    boost::asio::post(io.io, [&] { started.set_value(src.Start()); });
    if (!started.get_future().get().ok()) return 1;
    dump = WaitCount(sink, routes.size(), t0, std::chrono::seconds(600));
    boost::asio::post(io.io, [&] { src.Stop(); });
  }
  std::remove(batch.c_str());

  auto row = [&](const char* what, double secs) {
    std::printf("%-28s %8.3f s %12.0f routes/s   x%.2f vs kernel install\n", what, secs, n / secs, install / secs);
  };
  std::printf("%-28s %8.3f s %12.0f routes/s   (peer)\n", "kernel install (ip -batch)", install, n / install);
  row("kernel source (live events)", live);
  row("kernel source (dump)", dump);
  return 0;
}
