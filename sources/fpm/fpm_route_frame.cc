#include "sources/fpm/fpm_route_frame.h"

#include <linux/netlink.h>

#include <vector>

#include "sources/netlink/netlink_route.h"

namespace fibnic {

Status ForEachFpmRoute(const uint8_t* payload, size_t len, uint32_t table, const std::set<uint8_t>& ignore,
                       FpmRouteCounts& counts, const std::function<void(const Prefix&, uint8_t protocol)>& fn) {
  std::vector<NlMessage> msgs;
  RETURN_IF_ERROR(ForEachNetlinkMessage(payload, len, [&](const nlmsghdr* h, size_t off) -> Status {
    auto m = ParseNetlinkMessage(reinterpret_cast<const uint8_t*>(h), h->nlmsg_len);
    if (!m.ok()) return m.status().WithContext("netlink message at payload byte " + std::to_string(off));
    msgs.push_back(std::move(m).value());
    return OkStatus();
  }));
  for (const NlMessage& m : msgs) {
    if (m.kind != NlMessage::Kind::kRoute || m.route.table != table || ignore.count(m.route.protocol)) {
      ++counts.ignored;
      continue;
    }
    ++counts.messages;
    if (m.route.del) {
      ++counts.deleted;
      continue;
    }
    fn(m.route.prefix, m.route.protocol);
  }
  return OkStatus();
}

}  // namespace fibnic
