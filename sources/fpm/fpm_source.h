// The FRR source: a TCP server that zebra's dplane_fpm_nl module connects to
// (zebra is the client; `fpm address 127.0.0.1 port 2620` in zebra's config).
// One zebra at a time: while a connection is live, another is refused
// (closed at accept, logged and counted) — a local user cannot take over the
// feed, inject routes, or get FRR's routes swept by staying silent. TCP
// keepalive finds a peer that vanished without closing, so a zebra that
// reconnects after losing its end is let in within ~30 s at the latest.
//
// What it is for: zebra installs each route in the kernel before it sends
// it over FPM (dplane_fpm_nl runs after the kernel provider), and fibnicd
// follows the kernel — the kernel source brings zebra's routes like any
// other. The FPM connection tells which routes zebra installed, so that each
// gets an offload reply (RTM_F_OFFLOAD / RTM_F_TRAP / RTM_F_OFFLOAD_FAILED,
// fpm_offload.h) from the device's real state: FRR 8.5 and later show it in
// `show ip route` and hold a BGP advertisement under suppress-fib-pending
// until then. Nothing FPM says reaches the RIB.
//
// Reconnect = full replay: every route zebra replays gets a reply again.
// Nothing needs sweeping after it — fibnicd keeps no route of zebra's but
// the kernel's.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "common/status.h"
#include "sources/source.h"
#include "sources/fpm/fpm_reply.h"
#include "sources/route_notes.h"

namespace boost::asio {
class io_context;
}

namespace fibnic {

struct FpmSourceConfig {
  std::string address = "127.0.0.1";
  uint16_t port = 2620;  // 0 = any free port (tests); see FpmSource::port()
  uint32_t table = 254;  // zebra table id followed (254 = default VRF)
  // Route protocols not answered: by default RTPROT_KERNEL, zebra's
  // connected/kernel routes, which it never installs.
  std::set<uint8_t> ignore_protocols = {2};
  std::function<void(const std::string&)> log;  // default: stderr
  // Offload replies to zebra (fpm_offload.h; FRR 8.5+ reads them, 8.4
  // discards them): the states come from `offload`, zebra's routes and what
  // it was told from `routes` (the kernel source's). Either nullptr: no replies.
  FpmOffloadOracle* offload = nullptr;
  RouteNotes* routes = nullptr;
  std::chrono::milliseconds offload_walk_every{10000};
  // A quiet point for that walk: no frame from zebra for this long.
  std::chrono::milliseconds offload_quiet{1000};
  size_t offload_buffer = 1 << 20;  // bytes of replies waiting for zebra
};

struct FpmSourceStats {
  bool connected = false;
  std::string peer;              // "127.0.0.1:40012"
  uint64_t connections = 0;
  uint64_t frames = 0;
  uint64_t messages = 0;         // route messages of the table followed
  uint64_t ignored = 0;          // other types, families, tables, protocols
  uint64_t deleted = 0;          // of those, deletions
  uint64_t errors = 0;           // malformed frames and socket errors
  uint64_t resyncs = 0;          // replays (connections after the first)
  uint64_t refused = 0;          // connections refused while another was live
  std::string last_error;
  FpmReplyCounts offload;        // replies to zebra
};

class FpmSource : public Source {
 public:
  FpmSource(boost::asio::io_context& io, FpmSourceConfig config);
  ~FpmSource() override;
  FpmSource(const FpmSource&) = delete;
  FpmSource& operator=(const FpmSource&) = delete;

  // Call everything from the io_context's thread (the sources are not
  // thread-safe; post to it from elsewhere).
  const char* name() const override { return "fpm"; }
  Status Start() override;  // binds and listens
  void Stop() override;     // closes listener and connection
  // At once: the device's state never waits for zebra (its routes come from
  // the kernel).
  bool initial_sync_done() const override { return true; }
  nlohmann::json StatsJson() const override;
  std::string State() const override { return stats().connected ? "up" : "down"; }
  FpmSourceStats stats() const;
  uint16_t port() const;  // the bound port (after Start)

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace fibnic
