// VRF as the kernel table sees it. The FIBNIC has one FIB, so
// exactly one routing table can be the one it follows: main's (0 here) or,
// when every FIBNIC port is enslaved to one VRF, that VRF's table, which must
// be among the configured tables; then main is not used. Ports split over
// several, or a VRF table not configured: everything punts (refusing() says
// why). In main's context the tables of known VRFs are not used. This keeps
// the links' masters and the VRF devices' tables, and that choice, apart
// from the routes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "sources/netlink/netlink_ports.h"

namespace fibnic {

class VrfContext {
 public:
  // A link's master (0: none) and, for a VRF device, its table.
  void SetLink(uint32_t ifindex, uint32_t master, std::optional<uint32_t> vrf_table);
  void ForgetLink(uint32_t ifindex) { SetLink(ifindex, 0, std::nullopt); }

  // Chooses the table again from the links that exist (links: ifindex →
  // generation) and the configured tables. True when the choice or
  // refusing() changed.
  bool Update(const std::unordered_map<uint32_t, uint64_t>& links, InterfacePorts& ports,
              const std::vector<uint32_t>& tables);

  // Whether routes of a configured table (not local) are used in the chosen context.
  bool TableActive(uint32_t table) const;
  // Why every route punts; empty while the ports' routing table is followed.
  const std::string& refusing() const { return refusing_; }

 private:
  std::unordered_map<uint32_t, uint32_t> master_;     // ifindex → master ifindex
  std::unordered_map<uint32_t, uint32_t> vrf_table_;  // VRF device ifindex → its table
  uint32_t context_table_ = 0;
  std::string refusing_;
};

}  // namespace fibnic
