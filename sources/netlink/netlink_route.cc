#include "sources/netlink/netlink_route.h"

#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <sys/socket.h>

#include <array>
#include <cstring>

namespace fibnic {
namespace {

// Error naming the byte offset of `at` inside the message starting at `base`.
Status Bad(const uint8_t* base, const void* at, const std::string& what) {
  const auto off = static_cast<const uint8_t*>(at) - base;
  return InvalidArgument(what + " at byte " + std::to_string(off) + " of the message");
}

// Indexes the attributes in [head, head+len) by type (the last of a type
// wins, like the kernel). Every attribute header and length is checked, so
// the parsers below never read past the message.
template <size_t N>
Status IndexAttrs(const uint8_t* base, const void* head, int len, std::array<const nlattr*, N>& tb,
                  const char* what) {
  tb.fill(nullptr);
  auto* a = static_cast<nlattr*>(const_cast<void*>(head));
  int rem = len;
  while (rem > 0) {
    if (!nla_ok(a, rem)) {
      return Bad(base, a, std::string("truncated ") + what + " attribute (" + std::to_string(rem) + " bytes left)");
    }
    const int type = nla_type(a);
    if (type >= 0 && static_cast<size_t>(type) < N) tb[type] = a;
    a = nla_next(a, &rem);
  }
  return OkStatus();
}

StatusOr<uint32_t> U32(const uint8_t* base, const nlattr* a, const char* name) {
  if (nla_len(a) != 4) return Bad(base, a, std::string(name) + " has " + std::to_string(nla_len(a)) + " bytes, expected 4");
  uint32_t v;
  std::memcpy(&v, nla_data(a), 4);
  return v;
}

StatusOr<IpAddr> Addr(const uint8_t* base, const nlattr* a, Family f, const char* name) {
  const int want = f == Family::kV4 ? 4 : 16;
  if (nla_len(a) != want) {
    return Bad(base, a, std::string(name) + " has " + std::to_string(nla_len(a)) + " bytes, expected " +
                            std::to_string(want) + " for " + FamilyName(f));
  }
  return IpAddr::FromBytes(f, static_cast<const uint8_t*>(nla_data(a)));
}

std::optional<Family> FamilyOf(int af) {
  if (af == AF_INET) return Family::kV4;
  if (af == AF_INET6) return Family::kV6;
  return std::nullopt;
}

// The per-path attributes that RTA_MULTIPATH entries and plain routes share.
Status ReadPathAttrs(const uint8_t* base, const std::array<const nlattr*, RTA_MAX + 1>& tb, Family f, NlPath& path,
                     std::string& unsupported) {
  if (tb[RTA_GATEWAY]) {
    ASSIGN_OR_RETURN(path.gateway, Addr(base, tb[RTA_GATEWAY], f, "RTA_GATEWAY"));
  }
  if (tb[RTA_VIA]) {
    // An IPv4 route's IPv6 next-hop (RFC 5549, BGP unnumbered): struct rtvia,
    // a family and the address. It resolves through the IPv6 neighbour on
    // the path's interface, as the kernel does.
    const nlattr* via = tb[RTA_VIA];
    const int len = nla_len(via);
    if (len < static_cast<int>(sizeof(rtvia))) return Bad(base, via, "RTA_VIA of " + std::to_string(len) + " bytes");
    rtvia head;
    std::memcpy(&head, nla_data(via), sizeof head);
    const auto vf = FamilyOf(head.rtvia_family);
    if (!vf) {
      unsupported = "next-hop of address family " + std::to_string(head.rtvia_family) + " (RTA_VIA)";
    } else {
      const int want = *vf == Family::kV4 ? 4 : 16;
      if (len - static_cast<int>(sizeof(rtvia)) != want) {
        return Bad(base, via, "RTA_VIA has " + std::to_string(len - static_cast<int>(sizeof(rtvia))) +
                                  " address bytes, expected " + std::to_string(want) + " for " + FamilyName(*vf));
      }
      path.gateway = IpAddr::FromBytes(*vf, static_cast<const uint8_t*>(nla_data(via)) + sizeof(rtvia));
    }
  }
  if (tb[RTA_ENCAP] || tb[RTA_ENCAP_TYPE]) unsupported = "encapsulation (RTA_ENCAP)";
  return OkStatus();
}

Status ParseMultipath(const uint8_t* base, const nlattr* mp, Family f, NlRoute& r) {
  const auto* p = static_cast<const uint8_t*>(nla_data(mp));
  int rem = nla_len(mp);
  while (rem > 0) {
    if (rem < static_cast<int>(sizeof(rtnexthop))) {
      return Bad(base, p, "truncated RTA_MULTIPATH entry (" + std::to_string(rem) + " bytes left)");
    }
    rtnexthop nh;
    std::memcpy(&nh, p, sizeof nh);
    if (nh.rtnh_len < sizeof(rtnexthop) || nh.rtnh_len > rem) {
      return Bad(base, p, "RTA_MULTIPATH entry claims " + std::to_string(nh.rtnh_len) + " bytes, " +
                              std::to_string(rem) + " left");
    }
    NlPath path;
    path.ifindex = static_cast<uint32_t>(nh.rtnh_ifindex);
    path.flags = nh.rtnh_flags;
    path.weight = static_cast<uint16_t>(nh.rtnh_hops + 1);
    std::array<const nlattr*, RTA_MAX + 1> tb;
    RETURN_IF_ERROR(IndexAttrs(base, p + RTNH_LENGTH(0), nh.rtnh_len - RTNH_LENGTH(0), tb, "RTA_MULTIPATH"));
    RETURN_IF_ERROR(ReadPathAttrs(base, tb, f, path, r.unsupported));
    r.paths.push_back(path);
    const int step = static_cast<int>(RTNH_ALIGN(nh.rtnh_len));
    p += step;
    rem -= step;
  }
  if (r.paths.empty()) return Bad(base, mp, "empty RTA_MULTIPATH");
  return OkStatus();
}

StatusOr<NlMessage> ParseRoute(const uint8_t* base, const nlmsghdr* h) {
  NlMessage m;
  m.nlmsg_type = h->nlmsg_type;
  if (h->nlmsg_len < NLMSG_LENGTH(sizeof(rtmsg))) {
    return Bad(base, base, "route message of " + std::to_string(h->nlmsg_len) + " bytes is shorter than its header");
  }
  rtmsg rtm;
  std::memcpy(&rtm, NLMSG_DATA(h), sizeof rtm);
  const auto fam = FamilyOf(rtm.rtm_family);
  if (!fam) return m;  // MPLS, multicast (RTNL_FAMILY_IPMR), ...: not ours
  NlRoute& r = m.route;
  r.del = h->nlmsg_type == RTM_DELROUTE;
  r.table = rtm.rtm_table;
  r.protocol = rtm.rtm_protocol;
  r.type = rtm.rtm_type;
  r.scope = rtm.rtm_scope;
  r.tos = rtm.rtm_tos;
  r.flags = rtm.rtm_flags;
  if (rtm.rtm_dst_len > FamilyBits(*fam)) {
    return Bad(base, NLMSG_DATA(h), "prefix length " + std::to_string(rtm.rtm_dst_len) + " is too long for " +
                                        FamilyName(*fam));
  }
  std::array<const nlattr*, RTA_MAX + 1> tb;
  RETURN_IF_ERROR(IndexAttrs(base, nlmsg_attrdata(h, sizeof(rtmsg)), nlmsg_attrlen(h, sizeof(rtmsg)), tb, "route"));
  IpAddr dst = *fam == Family::kV4 ? IpAddr::V4(0) : IpAddr::V6(0);
  if (tb[RTA_DST]) {
    ASSIGN_OR_RETURN(dst, Addr(base, tb[RTA_DST], *fam, "RTA_DST"));
  }
  r.prefix = *Prefix::Make(dst, rtm.rtm_dst_len);
  if (tb[RTA_TABLE]) {
    ASSIGN_OR_RETURN(r.table, U32(base, tb[RTA_TABLE], "RTA_TABLE"));
  }
  if (tb[RTA_PRIORITY]) {
    ASSIGN_OR_RETURN(r.priority, U32(base, tb[RTA_PRIORITY], "RTA_PRIORITY"));
  }
  if (tb[RTA_NH_ID]) {
    ASSIGN_OR_RETURN(r.nh_id, U32(base, tb[RTA_NH_ID], "RTA_NH_ID"));
  }
  for (int t : {RTA_METRICS, RTA_PREFSRC}) {
    if (tb[t]) {
      r.metrics_and_src += static_cast<char>(t);
      r.metrics_and_src.append(static_cast<const char*>(nla_data(tb[t])), static_cast<size_t>(nla_len(tb[t])));
    }
  }
  if (tb[RTA_SRC] || rtm.rtm_src_len != 0) r.unsupported = "source-specific route (RTA_SRC)";
  if (tb[RTA_MULTIPATH]) {
    RETURN_IF_ERROR(ParseMultipath(base, tb[RTA_MULTIPATH], *fam, r));
  } else if (tb[RTA_GATEWAY] || tb[RTA_OIF] || tb[RTA_VIA]) {
    NlPath path;
    if (tb[RTA_OIF]) {
      ASSIGN_OR_RETURN(path.ifindex, U32(base, tb[RTA_OIF], "RTA_OIF"));
    }
    path.flags = static_cast<uint8_t>(rtm.rtm_flags & 0xFF);
    RETURN_IF_ERROR(ReadPathAttrs(base, tb, *fam, path, r.unsupported));
    r.paths.push_back(path);
  }
  m.kind = NlMessage::Kind::kRoute;
  return m;
}

StatusOr<NlMessage> ParseNexthop(const uint8_t* base, const nlmsghdr* h) {
  NlMessage m;
  m.nlmsg_type = h->nlmsg_type;
  if (h->nlmsg_len < NLMSG_LENGTH(sizeof(nhmsg))) {
    return Bad(base, base, "next-hop message of " + std::to_string(h->nlmsg_len) + " bytes is shorter than its header");
  }
  nhmsg nhm;
  std::memcpy(&nhm, NLMSG_DATA(h), sizeof nhm);
  NlNexthop& n = m.nexthop;
  n.del = h->nlmsg_type == RTM_DELNEXTHOP;
  n.protocol = nhm.nh_protocol;
  std::array<const nlattr*, NHA_MAX + 1> tb;
  RETURN_IF_ERROR(IndexAttrs(base, nlmsg_attrdata(h, sizeof(nhmsg)), nlmsg_attrlen(h, sizeof(nhmsg)), tb, "next-hop"));
  if (!tb[NHA_ID]) return Bad(base, base, "next-hop message without NHA_ID");
  ASSIGN_OR_RETURN(n.id, U32(base, tb[NHA_ID], "NHA_ID"));
  if (n.id == 0) return Bad(base, tb[NHA_ID], "next-hop id 0");
  m.kind = NlMessage::Kind::kNexthop;
  if (n.del) return m;
  if (tb[NHA_GROUP]) {
    const int len = nla_len(tb[NHA_GROUP]);
    if (len == 0 || len % static_cast<int>(sizeof(nexthop_grp)) != 0) {
      return Bad(base, tb[NHA_GROUP], "NHA_GROUP of " + std::to_string(len) + " bytes is not a list of nexthop_grp");
    }
    const auto* p = static_cast<const uint8_t*>(nla_data(tb[NHA_GROUP]));
    for (int off = 0; off < len; off += sizeof(nexthop_grp)) {
      nexthop_grp g;
      std::memcpy(&g, p + off, sizeof g);
      n.group.push_back({g.id, static_cast<uint16_t>(g.weight + 1)});
    }
    // A resilient group hashes flows to buckets the kernel moves between
    // members on its own timers; an FDB group serves the bridge, not routes.
    if (tb[NHA_GROUP_TYPE]) {
      if (nla_len(tb[NHA_GROUP_TYPE]) != 2) {
        return Bad(base, tb[NHA_GROUP_TYPE], "NHA_GROUP_TYPE has " + std::to_string(nla_len(tb[NHA_GROUP_TYPE])) +
                                                 " bytes, expected 2");
      }
      uint16_t type;
      std::memcpy(&type, nla_data(tb[NHA_GROUP_TYPE]), 2);
      if (type == NEXTHOP_GRP_TYPE_RES) {
        n.unsupported = "resilient next-hop group";
      } else if (type != NEXTHOP_GRP_TYPE_MPATH) {
        n.unsupported = "next-hop group of type " + std::to_string(type);
      }
    }
    if (tb[NHA_FDB]) n.unsupported = "bridge FDB next-hop group (NHA_FDB)";
    return m;
  }
  if (tb[NHA_BLACKHOLE]) n.blackhole = true;
  if (tb[NHA_FDB]) n.unsupported = "bridge FDB next-hop (NHA_FDB)";
  if (tb[NHA_ENCAP] || tb[NHA_ENCAP_TYPE]) n.unsupported = "encapsulation (NHA_ENCAP)";
  if (tb[NHA_OIF]) {
    ASSIGN_OR_RETURN(n.path.ifindex, U32(base, tb[NHA_OIF], "NHA_OIF"));
  }
  n.path.flags = static_cast<uint8_t>(nhm.nh_flags & 0xFF);
  if (tb[NHA_GATEWAY]) {
    const auto fam = FamilyOf(nhm.nh_family);
    if (!fam) {
      // zebra 8.4 sends such objects over FPM (an address-family-less next
      // hop it could not install: "without an interface"); the kernel
      // refuses them. The object is unusable, the message well-formed: its
      // routes punt, and the FPM connection (which zebra would replay the
      // same object on, forever) stays up.
      n.unsupported = "gateway with next-hop family " + std::to_string(nhm.nh_family) + " (the kernel refuses it)";
      return m;
    }
    ASSIGN_OR_RETURN(n.path.gateway, Addr(base, tb[NHA_GATEWAY], *fam, "NHA_GATEWAY"));
  }
  return m;
}

}  // namespace

StatusOr<NlMessage> ParseNetlinkMessage(const uint8_t* data, size_t len) {
  if (len < NLMSG_HDRLEN) return InvalidArgument("netlink message of " + std::to_string(len) + " bytes has no header");
  const auto* h = reinterpret_cast<const nlmsghdr*>(data);
  if (h->nlmsg_len != len) {
    return InvalidArgument("netlink header says " + std::to_string(h->nlmsg_len) + " bytes, message has " +
                           std::to_string(len));
  }
  switch (h->nlmsg_type) {
    case RTM_NEWROUTE:
    case RTM_DELROUTE:
      return ParseRoute(data, h);
    case RTM_NEWNEXTHOP:
    case RTM_DELNEXTHOP:
      return ParseNexthop(data, h);
    default: {
      NlMessage m;
      m.nlmsg_type = h->nlmsg_type;
      return m;
    }
  }
}

Status ForEachNetlinkMessage(const uint8_t* data, size_t len,
                             const std::function<Status(const nlmsghdr* msg, size_t offset)>& fn) {
  size_t off = 0;
  while (off < len) {
    const size_t left = len - off;
    if (left < NLMSG_HDRLEN) {
      return InvalidArgument("truncated netlink header at byte " + std::to_string(off) + " (" + std::to_string(left) +
                             " bytes left)");
    }
    const auto* h = reinterpret_cast<const nlmsghdr*>(data + off);
    if (h->nlmsg_len < NLMSG_HDRLEN || h->nlmsg_len > left) {
      return InvalidArgument("netlink message at byte " + std::to_string(off) + " claims " +
                             std::to_string(h->nlmsg_len) + " bytes, " + std::to_string(left) + " available");
    }
    RETURN_IF_ERROR(fn(h, off));
    off += NLMSG_ALIGN(h->nlmsg_len);
  }
  return OkStatus();
}

}  // namespace fibnic
