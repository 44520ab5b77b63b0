// KernelTable's links (kernel_table.h): what a link going down, losing its
// carrier, coming back or going away does to the routes and objects through
// it — silently, in the kernel — and which table the FIBNIC ports route
// with (VRF).
#include "sources/kernel/kernel_table.h"

#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/route/link.h>
#include <netlink/route/link/vrf.h>

#include <algorithm>

#include "sources/kernel/netlink_object.h"

namespace fibnic {

// A message's next-hop flags tell the link's state when it was sent, and the
// kernel changes that state later without a route message: LINKDOWN follows
// the carrier (this table tracks it, no_carrier_), and with
// ignore_routes_with_linkdown a next-hop without carrier is reported DEAD as
// well. A next-hop is really dead only while its link is down or, for IPv4,
// has no address (the kernel revives it when that ends, and so does this
// table); otherwise the DEAD seen is the carrier's, and was kept by mistake:
// a later link going down took such a multipath route for one without a live
// next-hop and erased it (found by
// tests/kdiff).
void KernelTable::ForgetLinkStateFlags(NlRoute& r) const {
  for (NlPath& x : r.paths) {
    x.flags &= static_cast<uint8_t>(~RTNH_F_LINKDOWN);
    if (!(x.flags & RTNH_F_DEAD) || !link_gen_.count(x.ifindex) || admin_down_.count(x.ifindex)) continue;
    if (r.prefix.family() == Family::kV4 && !v4_addrs_.count(x.ifindex)) continue;
    x.flags &= static_cast<uint8_t>(~RTNH_F_DEAD);
  }
}

// A link going down (or away) takes the IPv4 routes through it out of the
// kernel's FIB without a single RTM_DELROUTE (IPv6 announces its
// deletions): fib_sync_down_dev, in three strengths. A link going down
// spares the routes of scope host (the local table's, and any `scope host`
// or `local` route in another table, a VRF's included): their next-hop has
// scope nowhere, which only a forced flush kills. Its last IPv4 address
// going forces the flush. A multipath route that keeps a live next-hop
// stays in both: its next-hops through the link are marked dead
// (RTNH_F_DEAD) and come back when the link comes up again (fib_sync_up),
// also silently. A link deleted takes every route through it (found by
// tests/kdiff).
void KernelTable::DropIpv4PathsVia(uint32_t ifindex, Ipv4Loss loss) {
  auto via = [&](const NlPath& x) { return x.ifindex == ifindex; };
  auto hit = [&](const NlRoute& r) {
    return r.prefix.family() == Family::kV4 && (loss != Ipv4Loss::kLinkDown || r.scope != RT_SCOPE_HOST) &&
           std::any_of(r.paths.begin(), r.paths.end(), via);
  };
  for (const Prefix& p : routes_.PrefixesOf([&](uint32_t, const KernelRoutes::Kind& k) { return hit(k.route); })) {
    ChangeRoutes(p, [&](Entries& entries) {
      for (auto e = entries.begin(); e != entries.end();) {
        NlRoute& r = e->second.route;
        if (!hit(r)) {
          ++e;
          continue;
        }
        const bool live_elsewhere = std::any_of(r.paths.begin(), r.paths.end(), [&](const NlPath& x) {
          return !via(x) && !(x.flags & RTNH_F_DEAD);
        });
        if (loss == Ipv4Loss::kGone || !live_elsewhere) {
          e = entries.erase(e);
          continue;
        }
        for (NlPath& x : r.paths) {
          if (via(x)) x.flags |= RTNH_F_DEAD;
        }
        ++e;
      }
    });
  }
}

// A link coming up revives the dead IPv4 next-hops through it.
void KernelTable::ReviveIpv4PathsVia(uint32_t ifindex) {
  auto dead_via = [&](const NlPath& x) { return x.ifindex == ifindex && (x.flags & RTNH_F_DEAD); };
  for (const Prefix& p : routes_.PrefixesOf([&](uint32_t, const KernelRoutes::Kind& k) {
         return k.route.prefix.family() == Family::kV4 && std::any_of(k.route.paths.begin(), k.route.paths.end(), dead_via);
       })) {
    ChangeRoutes(p, [&](Entries& entries) {
      for (auto& [key, e] : entries) {
        for (NlPath& x : e.route.paths) {
          if (dead_via(x)) x.flags &= static_cast<uint8_t>(~RTNH_F_DEAD);
        }
      }
    });
  }
}

// IFF_LOWER_UP (carrier) lives in <linux/if.h>, which clashes with <net/if.h>.
constexpr unsigned kIffLowerUp = 0x10000;

// The carrier alone does not make a link usable. IPv6 takes a link as ready
// only when it is operationally up (IFF_RUNNING; addrconf_link_ready), and
// holds its routes linkdown otherwise: a port with carrier left DORMANT
// until 802.1X lets it in, and a link just set up until linkwatch has run
// (its RTM_NEWLINK comes with IFF_LOWER_UP and without IFF_RUNNING). IPv4
// follows the carrier, but a message sent while a carrier change waits for
// linkwatch shows the new carrier before the FIB has it. A path is used only
// while both hold; at worst the device punts a moment longer than needed.
// Next-hop objects go only when the kernel flushes them (net/ipv4/nexthop.c:
// down, gone, or NETDEV_CHANGE with neither flag), or a carrier back before
// linkwatch ran would find them missing here.
Status KernelTable::ApplyLink(const nlmsghdr* msg) {
  uint32_t ifindex = 0;
  std::string name;
  bool up = false, carrier = false, objects_kept = false;
  uint32_t master = 0;
  std::optional<uint32_t> vrf_table;
  RETURN_IF_ERROR(ParseObject(msg, "link", [&](nl_object* obj) {
    auto* l = reinterpret_cast<rtnl_link*>(obj);
    ifindex = static_cast<uint32_t>(rtnl_link_get_ifindex(l));
    if (const char* n = rtnl_link_get_name(l)) name = n;
    const unsigned flags = rtnl_link_get_flags(l);
    up = (flags & IFF_UP) != 0;
    carrier = up && (flags & IFF_RUNNING) && (flags & kIffLowerUp);
    objects_kept = up && (flags & (IFF_RUNNING | kIffLowerUp));
    master = static_cast<uint32_t>(std::max(0, rtnl_link_get_master(l)));
    uint32_t t = 0;
    if (rtnl_link_is_vrf(l) && rtnl_link_vrf_get_tableid(l, &t) == 0) vrf_table = t;
  }));
  if (ifindex == 0) return InvalidArgument("link message without an interface index");
  const bool gone = msg->nlmsg_type == RTM_DELLINK;
  // The kernel has no next-hop object through it (kernel_table_nexthop.cc).
  if (gone || !objects_kept) DropObjectsVia(ifindex);
  const bool was_down = admin_down_.count(ifindex) != 0;
  if (gone || !up) DropIpv4PathsVia(ifindex, gone ? Ipv4Loss::kGone : Ipv4Loss::kLinkDown);
  if (gone || up) {
    admin_down_.erase(ifindex);
  } else {
    admin_down_.insert(ifindex);
  }
  if (up && was_down) ReviveIpv4PathsVia(ifindex);
  const bool had_carrier = !no_carrier_.count(ifindex);
  if (msg->nlmsg_type == RTM_DELLINK || carrier) {
    no_carrier_.erase(ifindex);
  } else {
    no_carrier_.insert(ifindex);
  }
  bool changed = had_carrier != !no_carrier_.count(ifindex);
  if (gone) {
    vrf_.ForgetLink(ifindex);
  } else {
    vrf_.SetLink(ifindex, master, vrf_table);
  }
  if (msg->nlmsg_type == RTM_DELLINK) {
    changed |= ports_.RemoveLink(ifindex);
    link_gen_.erase(ifindex);
    v4_addrs_.erase(ifindex);
  } else {
    changed |= ports_.SetLink(ifindex, name);
    link_gen_[ifindex] = gen_;
  }
  if (UpdateContext() || changed) ReevaluateAll();
  return OkStatus();
}

bool KernelTable::UpdateContext() {
  const bool changed = vrf_.Update(link_gen_, ports_, options_.tables);
  counts_.refusing = vrf_.refusing();
  return changed;
}

bool KernelTable::RankActive(int rank) const {
  if (rank <= 0) return true;  // the local table
  return vrf_.TableActive(options_.tables[static_cast<size_t>(rank - 1)]);
}

}  // namespace fibnic
