#include "sources/netlink/netlink_build.h"

#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <sys/socket.h>

#include <cstring>
#include <memory>
#include <vector>

namespace fibnic {
namespace {

using MsgPtr = std::unique_ptr<nl_msg, decltype(&nlmsg_free)>;

int Af(Family f) { return f == Family::kV4 ? AF_INET : AF_INET6; }
int AddrLen(Family f) { return f == Family::kV4 ? 4 : 16; }

void PutAddr(nl_msg* m, int type, const IpAddr& a) {
  const auto b = a.bytes();
  nla_put(m, type, AddrLen(a.family()), b.data());
}

// A path's gateway: RTA_GATEWAY in the route's family, else RTA_VIA (an
// IPv4 route via an IPv6 next-hop, as the kernel and zebra write it).
void PutGateway(nl_msg* m, Family route_family, const IpAddr& gw) {
  if (gw.family() == route_family) return PutAddr(m, RTA_GATEWAY, gw);
  std::vector<uint8_t> via(sizeof(rtvia) + static_cast<size_t>(AddrLen(gw.family())));
  const auto family = static_cast<__kernel_sa_family_t>(Af(gw.family()));
  std::memcpy(via.data(), &family, sizeof family);
  const auto b = gw.bytes();
  std::memcpy(via.data() + sizeof(rtvia), b.data(), via.size() - sizeof(rtvia));
  nla_put(m, RTA_VIA, static_cast<int>(via.size()), via.data());
}

std::vector<uint8_t> Bytes(nl_msg* m) {
  const nlmsghdr* h = nlmsg_hdr(m);
  const auto* p = reinterpret_cast<const uint8_t*>(h);
  return std::vector<uint8_t>(p, p + h->nlmsg_len);
}

}  // namespace

std::vector<uint8_t> BuildRouteMessage(const NlRoute& r) {
  MsgPtr m(nlmsg_alloc_simple(r.del ? RTM_DELROUTE : RTM_NEWROUTE, r.del ? 0 : NLM_F_CREATE | NLM_F_REPLACE),
           nlmsg_free);
  rtmsg rtm{};
  rtm.rtm_family = static_cast<unsigned char>(Af(r.prefix.family()));
  rtm.rtm_dst_len = static_cast<unsigned char>(r.prefix.len());
  rtm.rtm_table = static_cast<unsigned char>(r.table < 256 ? r.table : RT_TABLE_UNSPEC);
  rtm.rtm_protocol = r.protocol;
  rtm.rtm_scope = r.scope;
  rtm.rtm_type = r.type;
  rtm.rtm_tos = r.tos;
  nlmsg_append(m.get(), &rtm, sizeof rtm, NLMSG_ALIGNTO);
  PutAddr(m.get(), RTA_DST, r.prefix.addr());
  nla_put_u32(m.get(), RTA_TABLE, r.table);
  if (r.priority != 0) nla_put_u32(m.get(), RTA_PRIORITY, r.priority);
  if (r.nh_id != 0) {
    nla_put_u32(m.get(), RTA_NH_ID, r.nh_id);
  } else if (r.paths.size() == 1) {
    if (r.paths[0].gateway) PutGateway(m.get(), r.prefix.family(), *r.paths[0].gateway);
    if (r.paths[0].ifindex != 0) nla_put_u32(m.get(), RTA_OIF, r.paths[0].ifindex);
  } else if (r.paths.size() > 1) {
    nlattr* mp = nla_nest_start(m.get(), RTA_MULTIPATH);
    for (const NlPath& p : r.paths) {
      // libnl messages never move once allocated (a full one rejects puts).
      auto* nh = static_cast<rtnexthop*>(nlmsg_reserve(m.get(), sizeof(rtnexthop), NLMSG_ALIGNTO));
      nh->rtnh_flags = p.flags;
      nh->rtnh_hops = static_cast<unsigned char>(p.weight - 1);
      nh->rtnh_ifindex = static_cast<int>(p.ifindex);
      if (p.gateway) PutGateway(m.get(), r.prefix.family(), *p.gateway);
      nh->rtnh_len = static_cast<unsigned short>(static_cast<uint8_t*>(nlmsg_tail(nlmsg_hdr(m.get()))) -
                                                 reinterpret_cast<uint8_t*>(nh));
    }
    nla_nest_end(m.get(), mp);
  }
  return Bytes(m.get());
}

std::vector<uint8_t> BuildNexthopMessage(const NlNexthop& n) {
  MsgPtr m(nlmsg_alloc_simple(n.del ? RTM_DELNEXTHOP : RTM_NEWNEXTHOP, n.del ? 0 : NLM_F_CREATE | NLM_F_REPLACE),
           nlmsg_free);
  nhmsg nhm{};
  if (n.path.gateway) nhm.nh_family = static_cast<unsigned char>(Af(n.path.gateway->family()));
  nhm.nh_flags = n.path.flags;
  nhm.nh_protocol = n.protocol;
  nlmsg_append(m.get(), &nhm, sizeof nhm, NLMSG_ALIGNTO);
  nla_put_u32(m.get(), NHA_ID, n.id);
  if (!n.del) {
    if (!n.group.empty()) {
      std::vector<nexthop_grp> g;
      for (const auto& mem : n.group) g.push_back({mem.id, static_cast<__u8>(mem.weight - 1), 0, 0});
      nla_put(m.get(), NHA_GROUP, static_cast<int>(g.size() * sizeof(nexthop_grp)), g.data());
    } else if (n.blackhole) {
      nla_put_flag(m.get(), NHA_BLACKHOLE);
    } else {
      if (n.path.ifindex != 0) nla_put_u32(m.get(), NHA_OIF, n.path.ifindex);
      if (n.path.gateway) PutAddr(m.get(), NHA_GATEWAY, *n.path.gateway);
    }
  }
  return Bytes(m.get());
}

}  // namespace fibnic
