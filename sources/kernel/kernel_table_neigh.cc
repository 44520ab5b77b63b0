// KernelTable's neighbour half: neighbours keyed by (interface, address) —
// the same link-local fe80::1 or 169.254.0.1 on two interfaces is two
// neighbours, each emitted as (address, port) — and the gateways asked to be
// resolved, likewise per interface.
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <netlink/addr.h>
#include <netlink/route/neighbour.h>
#include <sys/socket.h>

#include <cstring>

#include "sources/kernel/kernel_table.h"
#include "sources/kernel/netlink_object.h"

namespace fibnic {

bool KernelTable::WantsResolution(const NeighKey& gw) const {
  auto it = neighs_.find(gw);
  return it == neighs_.end() || it->second.state == NeighState::kFailed;
}

void KernelTable::AddGateways(const NlRoute& r, int delta) {
  for (const NlPath& path : r.paths) {
    if (!path.gateway || path.ifindex == 0) continue;
    const NeighKey key{path.ifindex, *path.gateway};
    if (delta > 0) {
      if (gateways_[key]++ == 0 && resolve_ && WantsResolution(key) && ports_.Port(path.ifindex)) {
        resolve_(*path.gateway, path.ifindex);
      }
    } else if (auto it = gateways_.find(key); it != gateways_.end() && --it->second == 0) {
      gateways_.erase(it);
    }
  }
}

void KernelTable::ResolvePending() {
  if (!resolve_) return;
  for (const auto& [gw, refs] : gateways_) {
    if (WantsResolution(gw) && ports_.Port(gw.ifindex)) resolve_(gw.addr, gw.ifindex);
  }
}

namespace {

NeighState FromNud(int nud) {
  if (nud & NUD_PERMANENT) return NeighState::kPermanent;
  if (nud & NUD_NOARP) return NeighState::kNoArp;
  if (nud & NUD_REACHABLE) return NeighState::kReachable;
  if (nud & NUD_STALE) return NeighState::kStale;
  if (nud & NUD_DELAY) return NeighState::kDelay;
  if (nud & NUD_PROBE) return NeighState::kProbe;
  if (nud & NUD_FAILED) return NeighState::kFailed;
  return NeighState::kIncomplete;  // NUD_INCOMPLETE, NUD_NONE
}

}  // namespace

Status KernelTable::ApplyNeigh(const nlmsghdr* msg) {
  struct Parsed {
    bool ok = false;
    IpAddr addr;
    MacAddr mac;
    uint32_t ifindex = 0;
    int state = 0;
  } p;
  RETURN_IF_ERROR(ParseObject(msg, "neighbour", [&](nl_object* obj) {
    auto* n = reinterpret_cast<rtnl_neigh*>(obj);
    const int fam = rtnl_neigh_get_family(n);
    nl_addr* dst = rtnl_neigh_get_dst(n);
    if ((fam != AF_INET && fam != AF_INET6) || !dst || (rtnl_neigh_get_flags(n) & NTF_PROXY)) return;
    const unsigned want = fam == AF_INET ? 4 : 16;
    if (nl_addr_get_len(dst) != want) return;
    p.addr = IpAddr::FromBytes(fam == AF_INET ? Family::kV4 : Family::kV6,
                               static_cast<const uint8_t*>(nl_addr_get_binary_addr(dst)));
    if (nl_addr* ll = rtnl_neigh_get_lladdr(n); ll && nl_addr_get_len(ll) == 6) {
      std::memcpy(p.mac.b.data(), nl_addr_get_binary_addr(ll), 6);
    }
    p.ifindex = static_cast<uint32_t>(rtnl_neigh_get_ifindex(n));
    p.state = rtnl_neigh_get_state(n);
    p.ok = true;
  }));
  if (!p.ok) {
    ++counts_.ignored;
    return OkStatus();
  }
  const NeighKey key{p.ifindex, p.addr};
  if (msg->nlmsg_type == RTM_DELNEIGH) {
    // Only this interface's: the address on another interface is another neighbour.
    if (neighs_.erase(key) == 0) return OkStatus();
  } else {
    neighs_[key] = Neigh{p.mac, FromNud(p.state), gen_};
  }
  EmitNeigh(key);
  return OkStatus();
}

void KernelTable::EmitNeigh(const NeighKey& key) {
  auto it = neighs_.find(key);
  std::optional<PortId> port;
  if (it != neighs_.end()) port = ports_.Port(key.ifindex);
  auto em = neigh_emitted_.find(key);
  // Gone, not on a FIBNIC port, or its interface now another port: the
  // neighbour the RIB holds for it goes.
  if (em != neigh_emitted_.end() && (!port || em->second.port != *port)) {
    sink_.DeleteNeighbor(em->second.addr, em->second.port);
    ++counts_.neighbor_updates;
    neigh_emitted_.erase(em);
    em = neigh_emitted_.end();
  }
  if (!port) return;
  Neighbor n{key.addr, it->second.mac, *port, it->second.state};
  if (em != neigh_emitted_.end() && em->second == n) return;
  sink_.UpsertNeighbor(n);
  ++counts_.neighbor_updates;
  neigh_emitted_[key] = n;
}

}  // namespace fibnic
