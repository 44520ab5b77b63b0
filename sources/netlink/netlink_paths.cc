#include "sources/netlink/netlink_paths.h"

#include <linux/rtnetlink.h>

#include <algorithm>

namespace fibnic {
namespace {

FibPathsResult Punt(std::string why) { return {{NextHop::ToHost()}, std::move(why)}; }

const char* TypeName(uint8_t t) {
  switch (t) {
    case RTN_LOCAL: return "local";
    case RTN_BROADCAST: return "broadcast";
    case RTN_ANYCAST: return "anycast";
    case RTN_MULTICAST: return "multicast";
    case RTN_BLACKHOLE: return "blackhole";
    case RTN_UNREACHABLE: return "unreachable";
    case RTN_PROHIBIT: return "prohibit";
    case RTN_THROW: return "throw";
    case RTN_NAT: return "nat";
    default: return "non-unicast";
  }
}

}  // namespace

FibPathsResult FibPaths(uint8_t rtn_type, Family family, const std::vector<NlPath>& paths,
                        const std::string& unsupported, const PortLookup& port_of) {
  // The kernel discards a blackhole's packets without a word: a device that
  // can drop does the same in the card. Unreachable and prohibit punt, so
  // the host sends their ICMP errors.
  if (rtn_type == RTN_BLACKHOLE) return {{NextHop::Drop()}, ""};
  if (rtn_type != RTN_UNICAST) return Punt(std::string(TypeName(rtn_type)) + " route");
  if (!unsupported.empty()) return Punt(unsupported);
  FibPathsResult out;
  for (const NlPath& p : paths) {
    if (p.flags & RTNH_F_DEAD) continue;  // the kernel does not use it either
    // No carrier: with ignore_routes_with_linkdown the kernel skips it, and
    // without, what it sends there is dropped.
    if (p.flags & RTNH_F_LINKDOWN) continue;
    if (p.ifindex == 0) return Punt("path without an interface");
    // An IPv4 route via an IPv6 next-hop (RFC 5549: RTA_VIA, or a next-hop
    // object of family AF_INET6) is forwarded by the kernel to that IPv6
    // neighbour's MAC; an IPv6 route via an IPv4 gateway it cannot do.
    if (p.gateway && family == Family::kV6 && p.gateway->is_v4()) return Punt("IPv6 route via an IPv4 gateway");
    const auto port = port_of(p.ifindex);
    if (!port) return Punt("path via ifindex " + std::to_string(p.ifindex) + ", not a FIBNIC port");
    out.paths.push_back(NextHop{p.gateway, *port});
  }
  if (out.paths.empty()) return Punt(paths.empty() ? "route without paths" : "every path is dead or without carrier");
  std::sort(out.paths.begin(), out.paths.end());
  out.paths.erase(std::unique(out.paths.begin(), out.paths.end()), out.paths.end());
  return out;
}

}  // namespace fibnic
