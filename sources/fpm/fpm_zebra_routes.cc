#include "sources/fpm/fpm_zebra_routes.h"

#include <linux/netlink.h>

#include "sources/netlink/netlink_route.h"

namespace fibnic {

FpmZebraRoutes::FpmZebraRoutes(uint32_t table, std::set<uint8_t> ignore_protocols, size_t sent_max)
    : table_(table), ignore_protocols_(std::move(ignore_protocols)), sent_max_(sent_max) {}

Status FpmZebraRoutes::ApplyFrame(const uint8_t* payload, size_t len) {
  std::vector<NlMessage> msgs;
  RETURN_IF_ERROR(ForEachNetlinkMessage(payload, len, [&](const nlmsghdr* h, size_t off) -> Status {
    auto m = ParseNetlinkMessage(reinterpret_cast<const uint8_t*>(h), h->nlmsg_len);
    if (!m.ok()) return m.status().WithContext("netlink message at payload byte " + std::to_string(off));
    msgs.push_back(std::move(m).value());
    return OkStatus();
  }));
  for (const NlMessage& m : msgs) {
    if (m.kind != NlMessage::Kind::kRoute || m.route.table != table_) {
      ++counts_.ignored;
      continue;
    }
    ++counts_.messages;
    const NlRoute& r = m.route;
    const std::optional<uint32_t> held = words_.Find(r.prefix);
    if (r.del || ignore_protocols_.count(r.protocol)) {
      if (ignore_protocols_.count(r.protocol)) ++counts_.ignored;
      if (held && (*held & 0x80)) --stale_;
      words_.Erase(r.prefix);
      continue;
    }
    if (!held || (*held & 0x80)) ++counts_.replayed;
    if (held && (*held & 0x80)) --stale_;
    words_.Put(r.prefix, Encode({r.protocol, 0, false}));
    Sent(r.prefix);
  }
  return OkStatus();
}

void FpmZebraRoutes::Sent(const Prefix& p) {
  if (sent_.size() < sent_max_) {
    sent_.push_back(p);
  } else if (sent_max_ != 0) {
    sent_overflow_ = true;
  }
}

bool FpmZebraRoutes::TakeSent(std::vector<Prefix>& out) {
  out.swap(sent_);
  sent_.clear();
  const bool complete = !sent_overflow_;
  sent_overflow_ = false;
  return complete;
}

void FpmZebraRoutes::MarkAllStale() {
  words_.ForEach([](const Prefix&, uint32_t& w) { w |= 0x80; });
  stale_ = words_.size();
}

size_t FpmZebraRoutes::SweepStale() {
  std::vector<Prefix> gone;
  words_.ForEach([&](const Prefix& p, uint32_t w) {
    if (w & 0x80) gone.push_back(p);
  });
  for (const Prefix& p : gone) words_.Erase(p);
  stale_ = 0;
  counts_.stale_swept += gone.size();
  return gone.size();
}

std::optional<FpmZebraRoute> FpmZebraRoutes::Find(const Prefix& p) const {
  const std::optional<uint32_t> w = words_.Find(p);
  if (!w) return std::nullopt;
  return Decode(*w);
}

void FpmZebraRoutes::Put(const Prefix& p, const FpmZebraRoute& r) {
  const std::optional<uint32_t> old = words_.Put(p, Encode(r));
  if (old && (*old & 0x80)) --stale_;
  if (r.stale) ++stale_;
}

}  // namespace fibnic
