// KernelTable's next-hop objects (`ip nexthop`): RTM_NEWNEXTHOP/DELNEXTHOP
// kept in a NexthopObjects, the routes naming each object (RTA_NH_ID)
// re-evaluated when it changes, and the kernel's silent removals mirrored.
//
// The kernel's rules (net/ipv4/nexthop.c; each checked with `ip monitor` on
// 6.18):
// - A link going admin down (NETDEV_DOWN), losing its carrier (NETDEV_CHANGE
//   with neither IFF_RUNNING nor IFF_LOWER_UP) or going away (NETDEV_UNREGISTER)
//   removes every next-hop object through it (blackholes excepted) WITHOUT an
//   RTM_DELNEXTHOP. Objects through a link that is down or without carrier
//   cannot be made ("Nexthop device is not up", "Carrier for nexthop device
//   is down"), so removing them again at every such link message is exact.
// - An object removed (by `ip nexthop del`, announced, or by the above,
//   silent) leaves every group holding it; a group that loses a member is
//   re-announced only when the removal was announced, and a group losing its
//   last member is removed with it (announced likewise).
// - Every route using a removed object goes: IPv4 routes without a message
//   (always), IPv6 routes announced with nexthop_compat_mode=1 and silently
//   with 0. Routes using a group that keeps members stay, silently changed.
// - A replaced object changes every route using it, directly or through a
//   group; only nexthop_compat_mode=1 announces those routes again.
// - Address changes leave objects and their routes alone.
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#include <set>
#include <unordered_set>

#include "sources/kernel/kernel_table.h"

namespace fibnic {

Status KernelTable::ApplyNexthop(const nlmsghdr* msg) {
  ASSIGN_OR_RETURN(NlMessage m, ParseNetlinkMessage(reinterpret_cast<const uint8_t*>(msg), msg->nlmsg_len));
  if (m.kind != NlMessage::Kind::kNexthop) {
    ++counts_.ignored;
    return OkStatus();
  }
  NlNexthop& n = m.nexthop;
  if (n.del) {
    NexthopObjects::Changes c = nexthops_.Remove(n.id);
    DropObjects(c.removed, c.changed);
    return OkStatus();
  }
  if (const NlNexthop* old = nexthops_.Find(n.id)) AddObjectGateway(*old, -1);
  AddObjectGateway(n, +1);
  const std::vector<uint32_t> changed = nexthops_.Put(std::move(n), gen_);
  EmitUsersOf(changed);
  return OkStatus();
}

void KernelTable::DropObjectsVia(uint32_t ifindex) {
  NexthopObjects::Changes c = nexthops_.RemoveVia(ifindex);
  if (!c.removed.empty()) DropObjects(c.removed, c.changed);
}

// The objects in `removed` are gone, and every route using one with them;
// the groups in `changed` lost members.
void KernelTable::DropObjects(const std::vector<NlNexthop>& removed, const std::vector<uint32_t>& changed) {
  std::unordered_set<uint32_t> ids;
  for (const NlNexthop& o : removed) {
    AddObjectGateway(o, -1);
    ids.insert(o.id);
  }
  auto uses = [&](uint32_t id) { return id != 0 && ids.count(id) != 0; };
  for (const Prefix& p : routes_.PrefixesOf([&](uint32_t, const KernelRoutes::Kind& k) { return uses(k.route.nh_id); })) {
    ChangeRoutes(p, [&](Entries& entries) { std::erase_if(entries, [&](const auto& e) { return uses(e.second.route.nh_id); }); });
  }
  EmitUsersOf(changed);
}

// An object's gateway is resolved like a route's: routes using it need it.
void KernelTable::AddObjectGateway(const NlNexthop& n, int delta) {
  if (!n.group.empty() || n.blackhole || !n.path.gateway || n.path.ifindex == 0) return;
  NlRoute one;
  one.paths = {n.path};
  AddGateways(one, delta);
}

// The objects `ids` changed their paths: the routes using them follow.
void KernelTable::EmitUsersOf(const std::vector<uint32_t>& ids) {
  if (ids.empty()) return;
  const std::unordered_set<uint32_t> set(ids.begin(), ids.end());
  const std::vector<uint32_t> kinds = routes_.Recompute(
      [&](const KernelRoutes::Kind& k) { return k.route.nh_id != 0 && set.count(k.route.nh_id); },
      [this](const KernelRoutes::Kind& k) { return KindOutput(k); });
  for (const Prefix& p : PrefixesOfKinds(kinds)) EmitRoute(p);
}

// After a re-dump: the objects it did not bring are gone. No cascade — the
// same dump said which routes remain; those naming a swept object punt.
std::vector<Prefix> KernelTable::SweepObjects() {
  std::unordered_set<uint32_t> ids;
  for (NlNexthop& o : nexthops_.Sweep(gen_)) {
    AddObjectGateway(o, -1);
    ids.insert(o.id);
  }
  if (ids.empty()) return {};
  const std::vector<uint32_t> kinds = routes_.Recompute(
      [&](const KernelRoutes::Kind& k) { return k.route.nh_id != 0 && ids.count(k.route.nh_id); },
      [this](const KernelRoutes::Kind& k) { return KindOutput(k); });
  return PrefixesOfKinds(kinds);
}

}  // namespace fibnic
