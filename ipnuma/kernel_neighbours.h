// Peer and gateway MACs from the kernel's neighbour table, kept current by
// the kernel source in neighbour-only mode (an rtnetlink dump of links and
// neighbours, then their events; a re-dump with mark-and-sweep after an
// overrun; no route is dumped or parsed, and no RIB or compiler is linked).
// Only IPv4 neighbours on the one interface that faces the IP-NUMA NIC's
// segment count, and only in a usable state (not INCOMPLETE/FAILED) with a
// unicast MAC (a broadcast/multicast one would send every page write to all).
//
// A new or changed MAC reaches the service at once, which rewrites the
// peer's PCID entry in place. An entry that fails or goes away does not
// touch the NIC: the kernel ages out neighbours the host itself does not
// talk to while the NIC still sends to them, and the last MAC learnt is the
// best one there is (a PC ID named by pages must stay VALID anyway).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "sources/kernel/kernel_source.h"
#include "rib/route.h"

namespace fibnic::ipnuma {

class KernelNeighbours : public NeighborSink {
 public:
  // ip (host order) and its MAC, new or changed; called on io's thread.
  using Changed = std::function<void(uint32_t ip, const MacAddr& mac)>;

  KernelNeighbours(boost::asio::io_context& io, const std::string& interface,
                   std::function<void(const std::string&)> log);
  KernelNeighbours(const KernelNeighbours&) = delete;
  KernelNeighbours& operator=(const KernelNeighbours&) = delete;

  // Subscribes and dumps; runs io (on the calling thread, which must be the
  // one that runs it later) until the dump is in or `limit` passed, so the
  // service starts with every MAC the kernel already knows.
  Status Start(std::chrono::milliseconds limit);
  void Stop() { source_->Stop(); }

  // Where the service looks MACs up (any thread).
  std::optional<MacAddr> Lookup(uint32_t ip) const;
  // Events from now on go to fn.
  void OnChange(Changed fn) { changed_ = std::move(fn); }

  void UpsertNeighbor(const Neighbor& n) override;
  void DeleteNeighbor(const IpAddr& addr) override;

 private:
  boost::asio::io_context& io_;
  std::string interface_;
  std::function<void(const std::string&)> log_;
  std::unique_ptr<KernelSource> source_;
  Changed changed_;
  mutable std::mutex mu_;  // macs_: written on io's thread, read by any
  std::map<uint32_t, MacAddr> macs_;
};

}  // namespace fibnic::ipnuma
