#include "ipnuma/emu_sent_order.h"

#include <string>

#include "device/ipnuma_wire.h"

namespace fibnic::ipnuma {

uint32_t SentOrder::SeqOf(std::span<const uint8_t> packet) {
  constexpr size_t at = ipnuma_wire::kOffSeq;
  if (packet.size() < at + 4) return 0;
  return uint32_t{packet[at]} << 24 | uint32_t{packet[at + 1]} << 16 | uint32_t{packet[at + 2]} << 8 |
         packet[at + 3];
}

Status SentOrder::Take(const SentPacket& p, const NextOf& next_of, const Adopt& adopt) {
  const uint32_t seq = SeqOf(p.packet);
  const std::optional<uint32_t> next = next_of(p.dst_ip);
  if (next && static_cast<int32_t>(seq - *next) > 0) {
    Kept k{p, {p.packet.begin(), p.packet.end()}};
    k.sent.packet = {};
    if (!kept_[p.dst_ip].emplace(seq, std::move(k)).second) {
      return Internal("kernel transmit path: sequence " + std::to_string(seq) + " recorded twice");
    }
    return OkStatus();
  }
  RETURN_IF_ERROR(adopt(p));
  auto it = kept_.find(p.dst_ip);
  if (it == kept_.end()) return OkStatus();
  for (uint32_t s = seq + 1;; ++s) {
    auto e = it->second.find(s);
    if (e == it->second.end()) break;
    Kept k = std::move(e->second);
    it->second.erase(e);
    k.sent.packet = k.bytes;
    RETURN_IF_ERROR(adopt(k.sent));
  }
  if (it->second.empty()) kept_.erase(it);
  return OkStatus();
}

size_t SentOrder::waiting() const {
  size_t n = 0;
  for (const auto& [ip, m] : kept_) n += m.size();
  return n;
}

}  // namespace fibnic::ipnuma
