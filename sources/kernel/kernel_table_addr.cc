// KernelTable's address half: which interfaces hold an IPv4 address. The
// kernel disables IPv4 on an interface whose last IPv4 address goes
// (fib_disable_ip, forced: even the routes of scope host a link going down
// spares): the routes through it leave its FIB and a multipath route's
// next-hops through it are marked dead — without a route message. Adding an
// address to an interface that is up revives them (fib_sync_up), also
// silently.
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cstring>

#include "sources/kernel/kernel_table.h"

namespace fibnic {

Status KernelTable::ApplyAddr(const nlmsghdr* msg) {
  if (msg->nlmsg_len < NLMSG_LENGTH(sizeof(ifaddrmsg))) {
    return InvalidArgument("address message of " + std::to_string(msg->nlmsg_len) + " bytes, shorter than ifaddrmsg");
  }
  const auto* ifa = static_cast<const ifaddrmsg*>(NLMSG_DATA(msg));
  if (ifa->ifa_family != AF_INET) {  // IPv6 routes do not depend on the link's addresses
    ++counts_.ignored;
    return OkStatus();
  }
  // IFA_LOCAL is the interface's own address (IFA_ADDRESS the peer's on a
  // point-to-point link); either names it.
  std::optional<IpAddr> local, address;
  const size_t body = NLMSG_ALIGN(sizeof(ifaddrmsg));
  const auto* base = static_cast<const uint8_t*>(NLMSG_DATA(msg));
  size_t len = msg->nlmsg_len - NLMSG_LENGTH(0);
  for (size_t off = body; off + sizeof(rtattr) <= len;) {
    const auto* a = reinterpret_cast<const rtattr*>(base + off);
    if (a->rta_len < sizeof(rtattr) || off + a->rta_len > len) {
      return InvalidArgument("address message: bad attribute at offset " + std::to_string(NLMSG_LENGTH(0) + off));
    }
    const size_t payload = a->rta_len - sizeof(rtattr);
    const auto* data = reinterpret_cast<const uint8_t*>(a) + sizeof(rtattr);
    if ((a->rta_type == IFA_LOCAL || a->rta_type == IFA_ADDRESS) && payload == 4) {
      (a->rta_type == IFA_LOCAL ? local : address) = IpAddr::FromBytes(Family::kV4, data);
    }
    off += RTA_ALIGN(a->rta_len);
  }
  if (!local) local = address;
  if (!local) return InvalidArgument("IPv4 address message without IFA_LOCAL or IFA_ADDRESS");
  const uint32_t ifindex = ifa->ifa_index;
  if (msg->nlmsg_type == RTM_DELADDR) {
    auto it = v4_addrs_.find(ifindex);
    if (it == v4_addrs_.end() || it->second.erase(*local) == 0 || !it->second.empty()) return OkStatus();
    v4_addrs_.erase(it);
    DropIpv4PathsVia(ifindex, Ipv4Loss::kNoAddress);
    return OkStatus();
  }
  auto& held = v4_addrs_[ifindex];
  const bool added = !held.count(*local);
  held[*local] = gen_;
  if (added && !admin_down_.count(ifindex)) ReviveIpv4PathsVia(ifindex);
  return OkStatus();
}

// Addresses the dump did not show again are forgotten without touching the
// routes: the route dump already shows what the kernel did with them.
void KernelTable::SweepAddrs() {
  for (auto it = v4_addrs_.begin(); it != v4_addrs_.end();) {
    std::erase_if(it->second, [&](const auto& a) { return a.second != gen_; });
    it = it->second.empty() ? v4_addrs_.erase(it) : std::next(it);
  }
}

}  // namespace fibnic
