// ipnumad: provisions one IP-NUMA NIC's peer tables and agrees mappings with
// the peers' ipnumad. Threads: the peer API and the operator API each serve
// on their own io_context (an operator request that waits on a peer never
// blocks a peer's request to us); the main thread runs start-up, the periodic
// reconcile (pending mappings), the kernel's neighbour events and the signals.
#include <sys/stat.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <thread>

#include "common/log.h"
#include "common/mapped_region.h"
#include "common/sd_notifier.h"
#include "hwif/bpf_bar.h"
#include "hwif/file_bar.h"
#include "hwif/pci_bar.h"
#include "ipnuma/api.h"
#include "ipnuma/config.h"
#include "ipnuma/http_transport.h"
#include "ipnuma/kernel_neighbours.h"
#include "ipnuma/nic_memory_bar.h"
#include "web/http/dashboard.h"
#include "web/http/server.h"

namespace fibnic::ipnuma {
namespace {

constexpr const char* kUsage =
    "usage: ipnumad --config FILE [--check-config]\n"
    "  --config FILE     YAML configuration (see docs/ipnuma.md)\n"
    "  --check-config    validate FILE (and the secret files it names), print the result, exit\n";

StatusOr<std::unique_ptr<Bar>> OpenDevice(const DeviceConfig& d) {
  if (d.kind == DeviceConfig::Kind::kPci) {
    ASSIGN_OR_RETURN(std::string bdf, ResolvePciDevice(kSysfsPciDevices, d.path));
    ASSIGN_OR_RETURN(auto bar, PciBar::Open(kSysfsPciDevices, bdf));
    return std::unique_ptr<Bar>(std::move(bar));
  }
  // Memory stands for the NIC, PEER_STATE's write-1-to-clear shown in it
  // (NicMemoryBar): on a bpffs a pinned BPF map, which an XDP program can
  // reach; anywhere else a regular file.
  auto wrap = [](std::unique_ptr<MappedBar> m) {
    return std::unique_ptr<Bar>(std::make_unique<NicMemoryBar>(std::move(m)));
  };
  if (IsBpfFsPath(d.path)) {
    // A map holds whole 4 KiB values: a model whose BAR0 is not a multiple
    // of them gets a larger map, the tail past PAGEMAP unused, as a PCI BAR
    // (a power of two) is larger than its registers. ProbeNic accepts that.
    const size_t size = (d.model.bar0_bytes() + kBpfBarPage - 1) / kBpfBarPage * kBpfBarPage;
    auto existing = BpfBar::OpenAnySize(d.path);  // an existing NIC: its own size, probed below
    if (existing.ok()) return wrap(std::move(*existing));
    if (existing.status().code() != StatusCode::kNotFound) return existing.status();
    ASSIGN_OR_RETURN(auto map, BpfBar::OpenOrCreate(d.path, size, IdentityBlock(d.model)));
    return wrap(std::move(map));
  }
  struct stat st {};
  if (::stat(d.path.c_str(), &st) == 0) {  // an existing NIC image: its own size, probed below
    ASSIGN_OR_RETURN(auto bar, FileBar::Open(d.path, static_cast<size_t>(st.st_size)));
    return wrap(std::move(bar));
  }
  ASSIGN_OR_RETURN(auto bar, FileBar::OpenOrCreate(d.path, d.model.bar0_bytes(), IdentityBlock(d.model)));
  return wrap(std::move(bar));
}

StatusOr<BufferPool> OpenPool(const PoolConfig& p) {
  switch (p.kind) {
    case PoolConfig::Kind::kUdmabuf: return BufferPool::FromUdmabuf(p.path);
    case PoolConfig::Kind::kFile: return BufferPool::FromFile(p.path, p.base, p.size);
    case PoolConfig::Kind::kReserved: break;
  }
  return BufferPool::Reserved(p.base, p.size);
}

web::WebConfig ServerConfig(const Endpoint& listen, const std::string& token) {
  web::WebConfig w;
  w.listen_address = listen.host.ToString();
  w.port = listen.port;
  w.token = token;
  return w;
}

// A running web server on its own thread.
struct ServingThread {
  boost::asio::io_context io;
  web::Router router;
  std::unique_ptr<web::WebServer> server;
  std::thread thread;
  Status Start(const web::WebConfig& cfg) {
    ASSIGN_OR_RETURN(server, web::WebServer::Start(io, cfg, router));
    thread = std::thread([this] { io.run(); });
    return OkStatus();
  }
  void Stop() {
    if (server) boost::asio::post(io, [this] { server->Stop(); });
    if (thread.joinable()) thread.join();
  }
};

int Run(const IpnumadConfig& cfg) {
  SdNotifier notifier;
  auto fail = [](const std::string& what, const Status& st) {
    LogError(what + ": " + st.ToString());
    return 1;
  };
  auto bar = OpenDevice(cfg.device);
  if (!bar.ok()) return fail("device " + cfg.device.path, bar.status());
  auto pool = OpenPool(cfg.pool);
  if (!pool.ok()) return fail("buffer pool", pool.status());
  auto prov = Provisioner::Open(**bar, cfg.local, *pool);
  if (!prov.ok()) return fail("device " + cfg.device.path, prov.status());
  std::string api_token;
  if (!cfg.api.token_file.empty()) {
    auto t = ReadSecretFile(cfg.api.token_file);
    if (!t.ok()) return fail("api", t.status());
    api_token = *t;
  }

  // Neighbours: the kernel's (events on their own thread, so a MAC change is
  // never queued behind a reconcile waiting on a slow peer) or a static list.
  boost::asio::io_context main_io, neigh_io;
  std::unique_ptr<KernelNeighbours> kernel;
  std::thread neigh_thread;
  Status st;
  MacLookup lookup;
  if (cfg.neighbours.source == NeighbourConfig::Source::kStatic) {
    std::map<uint32_t, MacAddr> table(cfg.neighbours.entries.begin(), cfg.neighbours.entries.end());
    lookup = [table](uint32_t ip) -> std::optional<MacAddr> {
      auto it = table.find(ip);
      if (it == table.end()) return std::nullopt;
      return it->second;
    };
  } else {
    kernel = std::make_unique<KernelNeighbours>(neigh_io, cfg.neighbours.interface,
                                                [](const std::string& m) { LogWarn("kernel neighbours: " + m); });
    st = kernel->Start(std::chrono::seconds(5));
    if (!st.ok()) return fail("kernel neighbour table", st);
    lookup = [k = kernel.get()](uint32_t ip) { return k->Lookup(ip); };
  }
  // Requests to peers leave from the peer API's address: the source they check.
  HttpPeerTransport transport(cfg.local.ip, cfg.peer_api.listen.host.ToString(), cfg.peer_api.timeout);
  IpnumaService svc(std::move(*prov), transport, lookup);
  PeerAuthenticator peer_auth(cfg.local.ip, cfg.desired.peers);

  // Peers can reach us while we start (they may be reconciling too). Their
  // requests are signed (no bearer token on this server).
  ServingThread peer_srv, op_srv;
  st = AddPeerRoutes(peer_srv.router, svc, peer_auth);
  if (st.ok()) {
    st = peer_srv.Start(ServerConfig(cfg.peer_api.listen, ""));
  }
  if (!st.ok()) return fail("peer API " + cfg.peer_api.listen.ToString(), st);
  LogInfo("peer API on " + cfg.peer_api.listen.ToString());

  st = svc.Start(cfg.desired);
  if (!st.ok()) {
    peer_srv.Stop();
    return fail("start", st);
  }
  st = AddOperatorRoutes(op_srv.router, svc);
  if (st.ok()) {
    web::AddDashboard(op_srv.router);
    st = op_srv.Start(ServerConfig(cfg.api.listen, api_token));
  }
  if (!st.ok()) {
    peer_srv.Stop();
    return fail("API " + cfg.api.listen.ToString(), st);
  }
  auto summary = [&svc] {
    auto s = svc.Snapshot();
    return std::to_string(s["peers"].size()) + " peers, " + std::to_string(s["exports"].size()) + " exports, " +
           std::to_string(s["mappings"].size()) + " mappings, " + std::to_string(s["pending"].size()) + " pending";
  };
  auto log_errors = [&svc] {
    const nlohmann::json snap = svc.Snapshot();
    for (const auto& e : snap["errors"]) LogWarn(e.get<std::string>());
    for (const auto& n : svc.TakeNotices()) LogInfo(n);
  };
  log_errors();
  LogInfo("ready: " + summary() + "; API on " + cfg.api.listen.ToString());
  notifier.Ready(summary());

  if (kernel) {
    // A changed MAC is rewritten at once; a peer's first one lets its pending
    // mappings go ahead without waiting for the next periodic reconcile.
    kernel->OnChange([&](uint32_t ip, const MacAddr& mac) {
      auto first = svc.OnNeighbour(ip, mac);
      if (!first.ok()) {
        LogError("neighbour " + regs::Ipv4String(ip) + " is " + mac.ToString() + ": " + first.status().ToString());
      } else if (*first) {
        boost::asio::post(main_io, [&] {
          Status r = svc.Reconcile();
          if (!r.ok()) LogError("reconcile: " + r.ToString());
          log_errors();
        });
      }
    });
    neigh_thread = std::thread([&neigh_io] { neigh_io.run(); });
  }
  boost::asio::signal_set signals(main_io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code&, int sig) {
    LogInfo(std::string("stopping on ") + strsignal(sig));
    notifier.Stopping("stopping");
    main_io.stop();
  });
  boost::asio::steady_timer timer(main_io);
  std::function<void()> tick = [&] {
    timer.expires_after(cfg.reconcile_interval);
    timer.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      Status r = svc.Reconcile();
      if (!r.ok()) LogError("reconcile: " + r.ToString());
      log_errors();
      notifier.Status(summary());
      tick();
    });
  };
  tick();
  main_io.run();
  if (kernel) {
    boost::asio::post(neigh_io, [&] {
      kernel->Stop();
      neigh_io.stop();
    });
    neigh_thread.join();
  }
  op_srv.Stop();
  peer_srv.Stop();
  return 0;
}

}  // namespace
}  // namespace fibnic::ipnuma

int main(int argc, char** argv) {
  std::string config;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--config" && i + 1 < argc) {
      config = argv[++i];
    } else if (a == "--check-config") {
      check = true;
    } else if (a == "--help" || a == "-h") {
      std::cout << fibnic::ipnuma::kUsage;
      return 0;
    } else {
      std::cerr << "ipnumad: unknown argument '" << a << "'\n" << fibnic::ipnuma::kUsage;
      return 2;
    }
  }
  if (config.empty()) {
    std::cerr << "ipnumad: --config FILE is required\n" << fibnic::ipnuma::kUsage;
    return 2;
  }
  auto cfg = fibnic::ipnuma::LoadIpnumadConfig(config);
  if (!cfg.ok()) {
    std::cerr << "ipnumad: " << cfg.status().ToString() << "\n";
    return 1;
  }
  if (check) {
    std::cout << config << ": OK (" << cfg->desired.peers.size() << " peers, " << cfg->desired.exports.size()
              << " exports, " << cfg->desired.mappings.size() << " mappings)\n";
    return 0;
  }
  return fibnic::ipnuma::Run(*cfg);
}
