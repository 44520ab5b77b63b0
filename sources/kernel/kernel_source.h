// The kernel source: links, neighbours and IPv4/IPv6 routes of the
// configured tables, from rtnetlink via libnl-route-3. An initial dump,
// then the multicast groups; on a netlink overrun (ENOBUFS — events were
// lost) or a resync request, everything is dumped again and reconciled by
// mark-and-sweep (see KernelTable), so nothing stale survives and nothing is
// missed. Events that arrive during a dump are held and applied after it.
//
// Gateways of routes on FIBNIC ports whose neighbour is missing or failed
// are handed to the kernel to resolve (RTM_NEWNEIGH with NTF_USE: the kernel
// creates the entry and probes); the resolved neighbour then arrives like
// any other and the next-hop is offloaded.
//
// Neighbour-only (KernelSource::NeighboursOnly, ipnumad's peer MACs): links
// and neighbours, no route group joined and no route dumped.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "sources/netlink/netlink_ports.h"
#include "sources/netlink/nexthop_objects.h"
#include "rib/route.h"
#include "sources/route_notes.h"
#include "sources/source.h"

namespace boost::asio {
class io_context;
}

namespace fibnic {

struct KernelSourceConfig {
  PortNames ports;                            // interface name → FIBNIC port
  std::vector<uint32_t> tables = {255, 254};  // local (always punted), main
  uint8_t distance = 100;
  std::set<uint8_t> ignore_protocols;  // KernelTableOptions::ignore_protocols
  bool resolve_gateways = true;
  std::chrono::milliseconds resolve_retry{5000};
  // Event socket receive buffer (SO_RCVBUFFORCE when root). A restarted
  // zebra's sweep and re-install of a full table on a busy 2-core host
  // overran 32 MiB (bench/frr); the kernel charges it only while events wait.
  int rcvbuf_bytes = 128 << 20;
  std::function<void(const std::string&)> log;  // default: stderr
};

struct KernelSourceStats {
  uint64_t messages = 0;
  uint64_t ignored = 0;
  uint64_t routes = 0;           // prefixes held now
  uint64_t neighbors = 0;        // neighbours on FIBNIC ports held now
  uint64_t nexthop_objects = 0;  // the kernel's next-hop objects held now
  uint64_t route_kinds = 0;      // distinct routes but for their prefix (kernel_routes.h)
  uint64_t route_memory_bytes = 0;
  uint64_t route_updates = 0;
  uint64_t neighbor_updates = 0;
  uint64_t errors = 0;
  uint64_t overruns = 0;         // ENOBUFS on the event socket
  uint64_t resyncs = 0;          // dumps after the first
  uint64_t swept = 0;
  uint64_t resolve_requests = 0;
  // Re-dumps asked for because the kernel's notifications left some
  // prefix's routes unknown (KernelTableCounts::unsure_replaces).
  uint64_t unsure_redumps = 0;
  // Dumps the tables changed under, and the routes they did not list kept
  // (punting) for the next dump (KernelTable::BeginSweep).
  uint64_t torn_dumps = 0;
  uint64_t kept_unlisted = 0;
  bool dumping = false;
  std::string refusing;  // why everything punts (FIBNIC ports split over VRFs, ...); empty = normal
  std::string last_error;
};

class KernelSource : public Source {
 public:
  // Routes and neighbours.
  KernelSource(boost::asio::io_context& io, RibSink& sink, KernelSourceConfig config);
  // Neighbours only: config.tables and the route options are not used.
  static std::unique_ptr<KernelSource> NeighboursOnly(boost::asio::io_context& io, NeighborSink& sink,
                                                      KernelSourceConfig config);
  ~KernelSource() override;
  KernelSource(const KernelSource&) = delete;
  KernelSource& operator=(const KernelSource&) = delete;

  // Call everything from the io_context's thread (the sources are not
  // thread-safe; post to it from elsewhere).
  const char* name() const override { return "kernel"; }
  Status Start() override;  // opens sockets, subscribes, starts the first dump
  void Stop() override;
  bool initial_sync_done() const override;  // the first dump is in (or failed)
  nlohmann::json StatsJson() const override;
  std::string State() const override;
  void RequestResync();
  KernelSourceStats stats() const;
  // The kernel's routes as the offload replies to zebra see them (nullptr
  // in neighbour-only mode). Lives as long as the source.
  RouteNotes* route_notes();
 private:
  struct Impl;
  explicit KernelSource(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace fibnic
