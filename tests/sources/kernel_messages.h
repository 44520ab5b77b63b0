// Link and route messages as the kernel sends them, for the kernel table's
// socket-free tests.
#pragma once

#include <gtest/gtest.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/msg.h>
#include <netlink/route/link.h>
#include <netlink/route/link/vrf.h>

#include <optional>
#include <vector>

#include "sources/netlink/netlink_build.h"

namespace fibnic::testing {

inline constexpr unsigned kIffLowerUp = 0x10000;
// A link that is up with its carrier, as linkwatch leaves it.
inline constexpr unsigned kLinkUsable = IFF_UP | IFF_RUNNING | kIffLowerUp;

inline std::vector<uint8_t> LinkMessage(uint32_t ifindex, const char* name, uint32_t master, std::optional<uint32_t> vrf_table,
                                 unsigned flags = kLinkUsable, uint16_t type = RTM_NEWLINK) {
  rtnl_link* l = vrf_table ? rtnl_link_vrf_alloc() : rtnl_link_alloc();
  if (vrf_table) rtnl_link_vrf_set_tableid(l, *vrf_table);
  rtnl_link_set_ifindex(l, static_cast<int>(ifindex));
  rtnl_link_set_name(l, name);
  rtnl_link_set_flags(l, flags);
  if (master) rtnl_link_set_master(l, static_cast<int>(master));
  nl_msg* m = nullptr;
  EXPECT_EQ(rtnl_link_build_add_request(l, NLM_F_CREATE, &m), 0);
  nlmsghdr* h = nlmsg_hdr(m);
  h->nlmsg_type = type;
  const auto* b = reinterpret_cast<const uint8_t*>(h);
  std::vector<uint8_t> out(b, b + h->nlmsg_len);
  nlmsg_free(m);
  rtnl_link_put(l);
  return out;
}

inline std::vector<uint8_t> RouteVia(const char* prefix, uint32_t table, const char* gw, uint32_t ifindex) {
  NlRoute r;
  r.prefix = *Prefix::Parse(prefix);
  r.table = table;
  r.protocol = RTPROT_BOOT;
  r.type = RTN_UNICAST;
  r.paths = {NlPath{*IpAddr::Parse(gw), ifindex}};
  return BuildRouteMessage(r);
}

}  // namespace fibnic::testing
