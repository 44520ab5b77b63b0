// The route and neighbour model every source produces and the RIB consumes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/ip.h"

namespace fibnic {

using PortId = uint8_t;

// A path the FIBNIC must never take itself: the destination belongs to the host
// (local address), is answered by the host (unreachable/prohibit: it sends the
// ICMP error), or leaves through an interface that is not a FIBNIC port. Such
// routes still go into the RIB — dropping them would let a covering route be
// offloaded over them and misforward — and the hardware punts their whole
// address space.
inline constexpr PortId kHostPort = 0xFF;
// A path that discards: a blackhole route (the kernel drops silently, no
// ICMP). A device with the DROP capability drops its space in the card, so an
// attack on a blackholed prefix never reaches the host; on any other device
// it punts like a to-host path.
inline constexpr PortId kDropPort = 0xFE;

// One forwarding path: a gateway on a port, or "connected" (the destination
// itself is on the port's segment and is resolved per address via NEIGH).
struct NextHop {
  std::optional<IpAddr> gateway;  // nullopt = connected
  PortId port = 0;

  bool connected() const { return !gateway.has_value() && port < kDropPort; }
  bool to_host() const { return port == kHostPort; }
  bool drop() const { return port == kDropPort; }
  static NextHop ToHost() { return NextHop{std::nullopt, kHostPort}; }
  static NextHop Drop() { return NextHop{std::nullopt, kDropPort}; }
  std::string ToString() const;  // "via 10.0.0.1 port 1" / "connected port 2" / "to host" / "drop"
  auto operator<=>(const NextHop&) const = default;
  bool operator==(const NextHop&) const = default;
};

// Where a route came from. Each source has an administrative distance (set by
// the source from config); the lowest distance wins per prefix, and among
// equal distances the lower value here: an operator's route set through the
// REST API (kApi) before the route files' (kStatic) — each source owns its
// own routes, so a REST DELETE never removes a file's route nor a reload of
// the files an API route.
enum class RouteSource : uint8_t { kApi = 0, kStatic = 1, kKernel = 2 };
inline constexpr int kRouteSourceCount = 3;
const char* RouteSourceName(RouteSource s);  // "api", "static", "kernel"

struct Route {
  Prefix prefix;
  RouteSource source = RouteSource::kStatic;
  uint8_t distance = 1;
  std::vector<NextHop> paths;  // more than one = ECMP; kept sorted and unique
};

// Kernel NUD states (linux/neighbour.h) reduced to what forwarding needs.
enum class NeighState : uint8_t { kIncomplete, kReachable, kStale, kDelay, kProbe, kFailed, kNoArp, kPermanent };
const char* NeighStateName(NeighState s);
// A neighbour whose MAC may be used to forward (the kernel does too).
bool NeighUsable(NeighState s);

// A neighbour is an address on a port: the same address on two ports is two
// neighbours (a link-local fe80::1 or 169.254.0.1 means something only with
// its interface, and BGP unnumbered peers all use such addresses).
struct Neighbor {
  IpAddr addr;
  MacAddr mac;
  PortId port = 0;
  NeighState state = NeighState::kReachable;
  bool operator==(const Neighbor&) const = default;
};

// What a source feeds. Sources own their reconciliation (mark-and-sweep after a
// resync or an FPM reconnect) and express it as plain upserts and deletes.
// Routes and neighbours are separate sinks so that a source takes only what it
// feeds (FPM and the REST API give routes only; ipnumad wants neighbours only).
class RouteSink {
 public:
  virtual ~RouteSink() = default;
  virtual void UpsertRoute(const Route& route) = 0;  // replaces this source's route for the prefix
  virtual void DeleteRoute(const Prefix& prefix, RouteSource source) = 0;
};

class NeighborSink {
 public:
  virtual ~NeighborSink() = default;
  // Replaces the neighbour (n.addr, n.port); the address on other ports stays.
  virtual void UpsertNeighbor(const Neighbor& n) = 0;
  // The neighbour `addr` on `port` is gone; the address on other ports stays.
  // By default forwarded to the address-only call, for sinks that follow a
  // single port (ipnumad's one segment), where the address names it.
  virtual void DeleteNeighbor(const IpAddr& addr, PortId port) {
    (void)port;
    DeleteNeighbor(addr);
  }
  virtual void DeleteNeighbor(const IpAddr& addr) { (void)addr; }
};

// Both: what the Fib and the pipeline's queue take, and what the kernel and
// file sources feed.
class RibSink : public RouteSink, public NeighborSink {};

}  // namespace fibnic
