#include "ipnuma/kernel_neighbours.h"

#include <net/if.h>

#include <boost/asio/io_context.hpp>

namespace fibnic::ipnuma {
namespace {

KernelSourceConfig SourceConfig(const std::string& interface, std::function<void(const std::string&)> log) {
  KernelSourceConfig c;
  c.ports = {{interface, 0}};  // the port number is of no use here: one interface
  c.log = std::move(log);
  return c;
}

}  // namespace

KernelNeighbours::KernelNeighbours(boost::asio::io_context& io, const std::string& interface,
                                   std::function<void(const std::string&)> log)
    : io_(io),
      interface_(interface),
      log_(log),
      source_(KernelSource::NeighboursOnly(io, *this, SourceConfig(interface, log))) {}

Status KernelNeighbours::Start(std::chrono::milliseconds limit) {
  RETURN_IF_ERROR(source_->Start());
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!source_->initial_sync_done() && io_.run_one_until(end) > 0) {
  }
  if (io_.stopped()) io_.restart();
  if (log_ && if_nametoindex(interface_.c_str()) == 0) {
    log_("interface '" + interface_ + "' does not exist (yet): no peer MACs until it does");
  }
  return OkStatus();
}

std::optional<MacAddr> KernelNeighbours::Lookup(uint32_t ip) const {
  std::lock_guard lock(mu_);
  auto it = macs_.find(ip);
  if (it == macs_.end()) return std::nullopt;
  return it->second;
}

void KernelNeighbours::UpsertNeighbor(const Neighbor& n) {
  if (!n.addr.is_v4()) return;
  if (!NeighUsable(n.state) || n.mac.IsZero()) return DeleteNeighbor(n.addr);
  const uint32_t ip = n.addr.v4();
  if (n.mac.b[0] & 1) {  // group bit: no single host answers to it
    if (log_) log_("neighbour " + n.addr.ToString() + " has broadcast/multicast MAC " + n.mac.ToString() + ": ignored");
    return DeleteNeighbor(n.addr);
  }
  {
    std::lock_guard lock(mu_);
    auto [it, added] = macs_.try_emplace(ip, n.mac);
    if (!added && it->second == n.mac) return;  // a state change only
    it->second = n.mac;
  }
  if (changed_) changed_(ip, n.mac);  // unlocked: the service calls Lookup under its own lock
}

void KernelNeighbours::DeleteNeighbor(const IpAddr& addr) {
  if (!addr.is_v4()) return;
  std::lock_guard lock(mu_);
  macs_.erase(addr.v4());
}

}  // namespace fibnic::ipnuma
