// The FRR source: a TCP server that zebra's dplane_fpm_nl module connects to
// (zebra is the client; `fpm address 127.0.0.1 port 2620` in zebra's config).
// One zebra at a time: while a connection is live, another is refused
// (closed at accept, logged and counted) — a local user cannot take over the
// feed, inject routes, or get FRR's routes swept by staying silent. TCP
// keepalive finds a peer that vanished without closing, so a zebra that
// reconnects after losing its end is let in within ~30 s at the latest.
//
// Reconnect = full replay with no end marker and no deletes: when zebra goes
// away and when it connects all routes and groups are marked stale, and the
// stale ones are swept once the replay is over (fpm_replay.h). Meanwhile
// the kernel's word decides: a stale route whose kernel copy zebra deleted
// goes at once (KernelRoute), the others keep forwarding as the host does.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "common/status.h"
#include "sources/netlink/kernel_route_view.h"
#include "sources/netlink/netlink_ports.h"
#include "sources/netlink/nexthop_objects.h"
#include "rib/route.h"
#include "sources/source.h"
#include "sources/fpm/fpm_reply.h"

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
  // The replay after a connect is over, and what it did not bring is swept,
  // once nothing was replayed for stale_hold — at the latest stale_hold_max
  // after the connect (FpmReplayWatch). stale_hold_max >= stale_hold.
  std::chrono::milliseconds stale_hold{30000};
  std::chrono::milliseconds stale_hold_max{600000};
  // Start-up: when the kernel holds zebra's routes (KernelRoute), the initial
  // state is in only once zebra connected and its replay is over, or after
  // this long (logged). 0: never wait.
  std::chrono::milliseconds initial_wait{0};
  // How long an interface index → name answer is trusted.
  std::chrono::milliseconds port_name_max_age{5000};
  std::function<void(const std::string&)> log;  // default: stderr
  std::function<bool(uint32_t id)> kernel_holds_object;  // FpmTableOptions::kernel_holds_object
  std::function<std::optional<NexthopObjects::Resolved>(uint32_t id)> kernel_object;  // FpmTableOptions::kernel_object
  // Asks the kernel source for a dump of the kernel's routes (its
  // KernelDumpBegins/Ends follow). At a replay's end: zebra replays routes
  // the kernel refused or does not hold yet, and such a route is not in the
  // kernel — the dump says which (FpmTable::KernelDumpEnds); unset without
  // a kernel source. Start-up's initial state waits for that dump's end.
  std::function<void()> request_kernel_dump;
  // Offload replies to zebra (fpm_offload.h; FRR 8.5+ reads them, 8.4
  // discards them): the states come from here. nullptr: no replies.
  FpmOffloadOracle* offload = nullptr;
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
  uint64_t kernel_dropped = 0;   // stale routes dropped as the kernel deleted them
  uint64_t kernel_kept = 0;      // stale routes sweeps punted as the kernel still held them
  uint64_t in_flux = 0;          // prefixes punted now because the kernel and FPM disagree
  uint64_t flux_entered = 0;     // prefixes that went into flux
  uint64_t flux_overflows = 0;   // disagreeing prefixes punted by a placeholder (flux map full)
  uint64_t kernel_dump_gone = 0;  // zebra's routes a re-dump of the kernel no longer showed (events lost)
  bool replaying = false;        // connected, replay not over yet
  std::string last_error;
  FpmReplyCounts offload;        // replies to zebra
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
  // With initial_wait set and zebra's routes in the kernel: once zebra's
  // replay is over (or initial_wait has passed). Otherwise at once.
  bool initial_sync_done() const override;
  // The kernel's state of a route zebra installed (any FRR protocol), from
  // the kernel source, as it changes: it gates what FPM says of the prefix
  // (FpmTable::KernelRoute, fpm_flux.h: a prefix where the two disagree
  // punts), a deletion drops a stale copy at once, and an addition tells
  // start-up there is a table to wait for.
  void KernelRoute(const KernelRouteView& k);
  // The kernel deleted zebra's next-hop object `id` (and, without a route
  // message, the routes using it): stale routes naming it are dropped and
  // prefixes in flux whose kernel route named it have none, in one pass per
  // burst of deletions (FpmTable::DropStaleUsing, KernelObjectsGone).
  void KernelNexthopDeleted(uint32_t id);
  // A dump of the kernel's routes begins / ends (FpmTable::KernelDumpBegins):
  // at a complete end, zebra's routes it did not show are taken as deleted
  // in the kernel (their deletions' events were lost).
  void KernelDumpBegins();
  void KernelDumpEnds(bool complete);
  // The kernel added or replaced zebra's next-hop object `id`
  // (FpmTable::KernelObjectAdded).
  void KernelNexthopAdded(uint32_t id);
  // A link's state, from the kernel source: down, without carrier or gone
  // (carrier false), or up with carrier (FpmTable::LinkState).
  void KernelLink(uint32_t ifindex, bool carrier);
  nlohmann::json StatsJson() const override;
  FpmSourceStats stats() const;
  uint16_t port() const;  // the bound port (after Start)

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace fibnic
