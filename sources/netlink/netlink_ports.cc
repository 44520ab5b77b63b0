#include "sources/netlink/netlink_ports.h"

#include <net/if.h>

namespace fibnic {

Status ValidatePortNames(const PortNames& ports) {
  for (const auto& [name, port] : ports) {
    if (name.empty() || name.size() >= IFNAMSIZ) return InvalidArgument("bad interface name '" + name + "' in port map");
    if (port >= kHostPort) {
      return InvalidArgument("interface '" + name + "' maps to port " + std::to_string(port) + ", above the last port");
    }
  }
  return OkStatus();
}

std::optional<PortId> InterfacePorts::PortOfName(const std::string& name) const {
  auto it = ports_.find(name);
  if (it == ports_.end()) return std::nullopt;
  return it->second;
}

bool InterfacePorts::SetLink(uint32_t ifindex, const std::string& name) {
  const auto port = PortOfName(name);
  auto it = links_.find(ifindex);
  const bool changed = it == links_.end() ? port.has_value() : it->second.port != port;
  links_[ifindex] = Entry{name, port, Clock::now()};
  return changed;
}

bool InterfacePorts::RemoveLink(uint32_t ifindex) {
  auto it = links_.find(ifindex);
  if (it == links_.end()) return false;
  const bool changed = it->second.port.has_value();
  links_.erase(it);
  return changed;
}

std::optional<PortId> InterfacePorts::Port(uint32_t ifindex) {
  auto it = links_.find(ifindex);
  if (system_max_age_ && (it == links_.end() || Clock::now() - it->second.learned > *system_max_age_)) {
    char buf[IF_NAMESIZE] = {};
    if (if_indextoname(ifindex, buf) == nullptr) {
      links_.erase(ifindex);
      return std::nullopt;
    }
    SetLink(ifindex, buf);
    it = links_.find(ifindex);
  }
  if (it == links_.end()) return std::nullopt;
  return it->second.port;
}

std::optional<uint32_t> InterfacePorts::IfindexOfPort(PortId port) const {
  for (const auto& [ifindex, e] : links_) {
    if (e.port == port) return ifindex;
  }
  return std::nullopt;
}

}  // namespace fibnic
