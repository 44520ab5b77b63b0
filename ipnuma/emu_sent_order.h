// The kernel transmit path's sent records, put back in sequence order per
// stream before the sender adopts them. The program reserves a record before
// it takes a sequence, so when two CPUs send on one stream a record can come
// before one with a lower sequence; the sender takes only its next.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "common/status.h"
#include "ipnuma/xdp_transmit.h"

namespace fibnic::ipnuma {

class SentOrder {
 public:
  // The sender's next sequence for a destination (host order), if it has a stream there.
  using NextOf = std::function<std::optional<uint32_t>(uint32_t ip)>;
  using Adopt = std::function<Status(const SentPacket&)>;

  // p, and every record it makes next, to adopt in sequence order; a record
  // ahead of its stream's next is kept. An error is adopt's, or a record
  // behind its stream's next (sent twice, or by a stream the sender never
  // gave away).
  Status Take(const SentPacket& p, const NextOf& next_of, const Adopt& adopt);
  // Records kept, waiting for one before them.
  size_t waiting() const;

  // The sequence a packet carries (device/ipnuma_wire.h, kOffSeq).
  static uint32_t SeqOf(std::span<const uint8_t> packet);

 private:
  struct Kept {
    SentPacket sent;  // packet points into bytes when taken out
    std::vector<uint8_t> bytes;
  };
  std::map<uint32_t, std::map<uint32_t, Kept>> kept_;  // destination -> sequence -> record
};

}  // namespace fibnic::ipnuma
