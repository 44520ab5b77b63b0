// Which kernel interfaces are FIBNIC ports. The operator names them in config
// (interface name → PortId); sources see interface indexes, so this keeps the
// index → name binding current: the kernel source feeds it from RTM_NEWLINK /
// RTM_DELLINK, the FPM source (which sees no link messages) asks the system
// and re-asks after `max_age`, so a renamed or re-created interface is
// noticed within that time.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "common/status.h"
#include "rib/route.h"

namespace fibnic {

using PortNames = std::map<std::string, PortId>;

// Checks a port map from config: names non-empty and shorter than IFNAMSIZ,
// ports below kHostPort.
Status ValidatePortNames(const PortNames& ports);

class InterfacePorts {
 public:
  using Clock = std::chrono::steady_clock;

  explicit InterfacePorts(PortNames ports) : ports_(std::move(ports)) {}

  // Link-fed mode: the caller reports every link. Return true if the port
  // the index maps to changed.
  bool SetLink(uint32_t ifindex, const std::string& name);
  bool RemoveLink(uint32_t ifindex);

  // System mode: unknown (or older than max_age) indexes are resolved with
  // if_indextoname().
  void UseSystemNames(Clock::duration max_age) { system_max_age_ = max_age; }

  std::optional<PortId> Port(uint32_t ifindex);
  std::optional<PortId> PortOfName(const std::string& name) const;
  // Kernel index of a FIBNIC port's interface (link-fed mode), if known.
  std::optional<uint32_t> IfindexOfPort(PortId port) const;
  const PortNames& names() const { return ports_; }

 private:
  struct Entry {
    std::string name;
    std::optional<PortId> port;
    Clock::time_point learned;
  };
  PortNames ports_;
  std::unordered_map<uint32_t, Entry> links_;
  std::optional<Clock::duration> system_max_age_;
};

}  // namespace fibnic
