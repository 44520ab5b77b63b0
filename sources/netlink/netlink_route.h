// Parses rtnetlink route and next-hop messages — the kernel's own, and the
// ones zebra wraps in FPM frames — into plain structs. Nothing here decides
// forwarding (see netlink_paths.h); it only reads, and it rejects anything
// malformed with a message naming the byte offset inside the message.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/ip.h"
#include "common/status.h"

struct nlmsghdr;

namespace fibnic {

// One path of a route (RTA_GATEWAY/RTA_OIF, or one rtnexthop of RTA_MULTIPATH),
// or the single path of a next-hop object.
struct NlPath {
  std::optional<IpAddr> gateway;  // nullopt = directly connected
  uint32_t ifindex = 0;           // 0 = none given
  uint8_t flags = 0;              // RTNH_F_* (DEAD, ONLINK, LINKDOWN, ...)
  uint16_t weight = 1;
  bool operator==(const NlPath&) const = default;
  // The same next hop (gateway and link), whatever its flags and weight.
  bool SameHop(const NlPath& o) const { return gateway == o.gateway && ifindex == o.ifindex; }
};

// Whether `paths` names the next hop of x.
inline bool NamesHop(const std::vector<NlPath>& paths, const NlPath& x) {
  return std::any_of(paths.begin(), paths.end(), [&](const NlPath& y) { return y.SameHop(x); });
}

// RTM_NEWROUTE / RTM_DELROUTE for AF_INET / AF_INET6.
struct NlRoute {
  bool del = false;
  Prefix prefix;
  uint32_t table = 0;     // RTA_TABLE if present, else rtm_table
  uint8_t protocol = 0;   // RTPROT_*
  uint8_t type = 0;       // RTN_*
  uint8_t scope = 0;
  uint8_t tos = 0;
  uint32_t flags = 0;     // rtm_flags (RTM_F_CLONED marks cache entries)
  uint32_t priority = 0;  // RTA_PRIORITY (metric)
  uint32_t nh_id = 0;     // RTA_NH_ID; 0 = paths are inline
  std::vector<NlPath> paths;
  // RTA_METRICS and RTA_PREFSRC as sent (raw): with the type, protocol,
  // scope and paths they tell two IPv4 routes of one rank apart, as the
  // kernel does (`ip route append P via G mtu 1400` beside `P via G`).
  std::string metrics_and_src;
  // Non-empty when the route uses something the FIBNIC cannot do (an
  // encapsulation, a gateway of the other family, ...): it must be punted.
  std::string unsupported;
};

struct NlGroupMember {
  uint32_t id = 0;
  uint16_t weight = 1;  // nexthop_grp.weight + 1
  bool operator==(const NlGroupMember&) const = default;
};

// RTM_NEWNEXTHOP / RTM_DELNEXTHOP: a single next-hop or a group of them.
struct NlNexthop {
  bool del = false;
  uint32_t id = 0;
  uint8_t protocol = 0;  // nh_protocol (who made it: zebra, ...)
  bool blackhole = false;
  NlPath path;                       // single next-hop (group empty)
  std::vector<NlGroupMember> group;  // non-empty = group
  std::string unsupported;           // encap, FDB next-hop, ...
};

struct NlMessage {
  enum class Kind : uint8_t { kRoute, kNexthop, kIgnored };
  Kind kind = Kind::kIgnored;
  uint16_t nlmsg_type = 0;
  NlRoute route;      // kind == kRoute
  NlNexthop nexthop;  // kind == kNexthop
};

// Parses one complete netlink message of exactly `len` bytes (its nlmsg_len).
// `data` must be 4-byte aligned. Message types and address families that are
// not routes/next-hops of IPv4/IPv6 come back as kIgnored.
StatusOr<NlMessage> ParseNetlinkMessage(const uint8_t* data, size_t len);

// Walks back-to-back netlink messages in [data, data+len) (4-byte aligned) and
// calls fn(header, offset) for each; the whole buffer must be consumed exactly.
// Returns the first error fn returns, or one naming the offset of a bad header.
Status ForEachNetlinkMessage(const uint8_t* data, size_t len,
                             const std::function<Status(const nlmsghdr* msg, size_t offset)>& fn);

}  // namespace fibnic
