// The kernel's IPv4 neighbour table as /proc/net/arp shows it: where ipnumad
// learns peer (or gateway) MACs. Only complete entries (ATF_COM) count; a
// changed MAC is picked up on the next read and rewritten in place.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "common/ip.h"
#include "common/status.h"

namespace fibnic::ipnuma {

// IPv4 (host order) → MAC of every complete entry in the file (format of /proc/net/arp).
StatusOr<std::map<uint32_t, MacAddr>> ReadArpTable(const std::string& path = "/proc/net/arp");

}  // namespace fibnic::ipnuma
