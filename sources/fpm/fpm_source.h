// The FRR source: a TCP server that zebra's dplane_fpm_nl module connects to
// (zebra is the client; `fpm address 127.0.0.1 port 2620` in zebra's config).
// One zebra at a time: while a connection is live, another is refused
// (closed at accept, logged and counted) — a local user cannot take over the
// feed, inject routes, or get FRR's routes swept by staying silent. TCP
// keepalive finds a peer that vanished without closing, so a zebra that
// reconnects after losing its end is let in within ~30 s at the latest.
//
// Reconnect = full replay with no end marker and no deletes: on every
// connection all routes and groups are marked stale, and the stale ones are
// swept once the replay has gone quiet (see FpmSourceConfig::stale_hold).
// While zebra is away nothing is removed: the host keeps forwarding with
// what it had, and so does the FIBNIC.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "common/status.h"
#include "sources/netlink/netlink_ports.h"
#include "rib/route.h"
#include "sources/source.h"

namespace boost::asio {
class io_context;
}

namespace fibnic {

struct FpmSourceConfig {
  std::string address = "127.0.0.1";
  uint16_t port = 2620;  // 0 = any free port (tests); see FpmSource::port()
  PortNames ports;       // interface name → FIBNIC port
  uint32_t table = 254;  // zebra table id taken (254 = default VRF)
  uint8_t distance = 20;
  // Route protocols not taken from zebra (see FpmTableOptions): by default
  // RTPROT_KERNEL, zebra's connected/kernel routes, whose deletions it
  // never sends over FPM; the kernel source provides them.
  std::set<uint8_t> ignore_protocols = {2};
  // Sweep stale routes no earlier than this after a connect, and only once no
  // frame arrived for `replay_quiet` (or at 4 x stale_hold at the latest).
  std::chrono::milliseconds stale_hold{30000};
  std::chrono::milliseconds replay_quiet{1000};
  // How long an interface index → name answer is trusted.
  std::chrono::milliseconds port_name_max_age{5000};
  std::function<void(const std::string&)> log;  // default: stderr
};

struct FpmSourceStats {
  bool connected = false;
  std::string peer;              // "127.0.0.1:40012"
  uint64_t connections = 0;
  uint64_t frames = 0;
  uint64_t messages = 0;         // netlink messages applied
  uint64_t ignored = 0;          // other types, families, tables
  uint64_t routes = 0;           // routes held now
  uint64_t nexthop_groups = 0;   // groups held now
  uint64_t route_updates = 0;    // upserts + deletes given to the RIB
  uint64_t errors = 0;           // malformed frames and socket errors
  uint64_t resyncs = 0;          // replays (connections after the first)
  uint64_t refused = 0;          // connections refused while another was live
  uint64_t stale_swept = 0;
  uint64_t stale_pending = 0;    // marked stale, not yet replayed or swept
  std::string last_error;
};

class FpmSource : public Source {
 public:
  FpmSource(boost::asio::io_context& io, RouteSink& sink, FpmSourceConfig config);
  ~FpmSource() override;
  FpmSource(const FpmSource&) = delete;
  FpmSource& operator=(const FpmSource&) = delete;

  // Call everything from the io_context's thread (the sources are not
  // thread-safe; post to it from elsewhere).
  const char* name() const override { return "fpm"; }
  Status Start() override;  // binds and listens
  void Stop() override;     // closes listener and connection; routes stay in the RIB
  // At once: zebra replays its table whenever it connects, with no end
  // marker, and the device is not held back until it does.
  bool initial_sync_done() const override { return true; }
  nlohmann::json StatsJson() const override;
  FpmSourceStats stats() const;
  uint16_t port() const;  // the bound port (after Start)

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace fibnic
