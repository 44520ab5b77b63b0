#include "sources/fpm/fpm_reply.h"

#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <cstring>

#include "sources/fpm/fpm_frame.h"

namespace fibnic {
namespace {

size_t NetlinkSize(Family family) {
  const size_t addr = family == Family::kV4 ? 4 : 16;
  return NLMSG_LENGTH(sizeof(rtmsg)) + RTA_SPACE(sizeof(uint32_t)) + RTA_SPACE(addr);
}

template <typename T>
void Put(uint8_t* at, const T& v) {
  std::memcpy(at, &v, sizeof v);
}

// One attribute at `at`; returns the bytes it takes.
size_t PutAttr(uint8_t* at, uint16_t type, const void* data, size_t len) {
  rtattr a{};
  a.rta_len = static_cast<uint16_t>(RTA_LENGTH(len));
  a.rta_type = type;
  Put(at, a);
  std::memcpy(at + RTA_LENGTH(0), data, len);
  return RTA_SPACE(len);
}

}  // namespace

uint32_t FpmOffloadFlags(FpmOffload s) {
  switch (s) {
    case FpmOffload::kNone: return 0;
    case FpmOffload::kOffloaded: return RTM_F_OFFLOAD;
    case FpmOffload::kTrapped: return RTM_F_OFFLOAD | RTM_F_TRAP;
    case FpmOffload::kFailed: return RTM_F_OFFLOAD_FAILED;
  }
  return 0;
}

size_t FpmReplySize(Family family) { return kFpmHeaderLen + NetlinkSize(family); }

void AppendFpmReply(std::vector<uint8_t>& out, const Prefix& prefix, uint32_t table, uint8_t protocol, FpmOffload state) {
  const size_t nl = NetlinkSize(prefix.family());
  const size_t total = kFpmHeaderLen + nl;
  const size_t at = out.size();
  out.resize(at + total, 0);
  uint8_t* frame = out.data() + at;
  frame[0] = kFpmVersion;
  frame[1] = kFpmTypeNetlink;
  frame[2] = static_cast<uint8_t>(total >> 8);
  frame[3] = static_cast<uint8_t>(total);
  uint8_t* msg = frame + kFpmHeaderLen;
  nlmsghdr h{};
  h.nlmsg_len = static_cast<uint32_t>(nl);
  h.nlmsg_type = RTM_NEWROUTE;
  h.nlmsg_flags = NLM_F_REQUEST;
  Put(msg, h);
  rtmsg r{};
  r.rtm_family = prefix.family() == Family::kV4 ? AF_INET : AF_INET6;
  r.rtm_dst_len = static_cast<uint8_t>(prefix.len());
  r.rtm_table = table < 256 ? static_cast<uint8_t>(table) : static_cast<uint8_t>(RT_TABLE_UNSPEC);
  r.rtm_protocol = protocol;
  r.rtm_scope = RT_SCOPE_UNIVERSE;
  r.rtm_type = RTN_UNICAST;
  r.rtm_flags = FpmOffloadFlags(state);
  Put(msg + NLMSG_LENGTH(0), r);
  uint8_t* attr = msg + NLMSG_LENGTH(sizeof(rtmsg));
  attr += PutAttr(attr, RTA_TABLE, &table, sizeof table);
  const auto bytes = prefix.addr().bytes();
  PutAttr(attr, RTA_DST, bytes.data(), prefix.family() == Family::kV4 ? 4 : 16);
}

}  // namespace fibnic
