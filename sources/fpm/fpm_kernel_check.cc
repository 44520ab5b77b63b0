#include "sources/fpm/fpm_kernel_check.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstring>

#include "sources/netlink/netlink_route.h"

namespace fibnic {

bool KernelHoldsRoute(const Prefix& p, uint32_t table, uint8_t protocol) {
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return false;
  const timeval timeout{1, 0};  // the kernel answers at once; never hang the loop
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  struct {
    nlmsghdr h;
    rtmsg r;
    char attrs[64];
  } req{};
  const bool v4 = p.family() == Family::kV4;
  const int addr_len = v4 ? 4 : 16;
  req.h.nlmsg_type = RTM_GETROUTE;
  req.h.nlmsg_flags = NLM_F_REQUEST;
  req.h.nlmsg_seq = 1;
  req.r.rtm_family = v4 ? AF_INET : AF_INET6;
  req.r.rtm_dst_len = static_cast<unsigned char>(v4 ? 32 : 128);
  req.r.rtm_flags = RTM_F_FIB_MATCH;
  size_t len = NLMSG_LENGTH(sizeof(rtmsg));
  auto add = [&](uint16_t type, const void* data, int n) {
    auto* a = reinterpret_cast<rtattr*>(reinterpret_cast<char*>(&req) + NLMSG_ALIGN(len));
    a->rta_type = type;
    a->rta_len = static_cast<unsigned short>(RTA_LENGTH(n));
    std::memcpy(RTA_DATA(a), data, n);
    len = NLMSG_ALIGN(len) + RTA_ALIGN(a->rta_len);
  };
  const auto bytes = p.addr().bytes();
  add(RTA_DST, bytes.data(), addr_len);
  add(RTA_TABLE, &table, sizeof table);
  req.h.nlmsg_len = static_cast<uint32_t>(len);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  bool holds = false;
  if (::sendto(fd, &req, len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) == static_cast<ssize_t>(len)) {
    alignas(nlmsghdr) uint8_t buf[16384];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    const auto* h = reinterpret_cast<const nlmsghdr*>(buf);
    if (n > 0 && NLMSG_OK(h, static_cast<size_t>(n)) && h->nlmsg_type == RTM_NEWROUTE) {
      auto m = ParseNetlinkMessage(buf, h->nlmsg_len);
      holds = m.ok() && m->kind == NlMessage::Kind::kRoute && m->route.prefix == p && m->route.table == table &&
              m->route.protocol == protocol;
    }
  }
  ::close(fd);
  return holds;
}

}  // namespace fibnic
