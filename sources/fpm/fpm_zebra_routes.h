// Which routes zebra says it installed, as FPM tells them: a prefix and the
// rtm_protocol zebra sent, and what fibnicd last replied about it (the
// offload replies, fpm_offload.h). Nothing here reaches the RIB: zebra sends
// a route over FPM only after the kernel took it, and fibnicd follows the
// kernel (the kernel source) for every route the host forwards by — FPM
// tells only whom to answer and with which protocol.
//
// One frame is one unit: every message of a frame is parsed before anything
// is applied, so a malformed frame changes nothing. zebra replays its whole
// table at each connect with no end marker and no deletions: MarkAllStale at
// the connect, and the routes not replayed are forgotten by SweepStale once
// the replay is over (fpm_replay.h).
//
// A route is its prefix and one word in a PrefixWordMap (~10-12 B at a full
// table).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "common/ip.h"
#include "common/prefix_word_map.h"
#include "common/status.h"

namespace fibnic {

struct FpmZebraRoute {
  uint8_t protocol = 0;  // rtm_protocol zebra sent (its replies must carry it)
  uint8_t replied = 0;   // FpmOffload last replied (0-3); 0 = zebra waits for one
  bool stale = false;    // marked at a (re)connect, cleared when zebra re-sends it
};

struct FpmZebraCounts {
  uint64_t messages = 0;  // route messages of the table taken
  uint64_t ignored = 0;   // other tables, families, next-hop groups, protocols
  // Routes a frame brought that were not held, or held stale: the progress
  // of a replay (updates of what is held are not).
  uint64_t replayed = 0;
  uint64_t stale_swept = 0;
};

class FpmZebraRoutes {
 public:
  // table: zebra's table id followed (254 = main). ignore_protocols: routes
  // zebra sends that it never says it deleted (RTPROT_KERNEL: its connected
  // and kernel routes) are not held, and one replacing a held route ends it.
  // sent_max: routes remembered for TakeSent between two calls.
  FpmZebraRoutes(uint32_t table, std::set<uint8_t> ignore_protocols, size_t sent_max);

  Status ApplyFrame(const uint8_t* payload, size_t len);

  void MarkAllStale();
  size_t SweepStale();  // returns the routes forgotten
  size_t stale_count() const { return stale_; }

  size_t size() const { return words_.size(); }
  std::optional<FpmZebraRoute> Find(const Prefix& p) const;
  void Put(const Prefix& p, const FpmZebraRoute& r);
  // Routes zebra sent (added, changed or replayed; each waits for a reply:
  // `replied` is reset) since the last call, up to sent_max; false when more
  // came (then walk for `replied == 0`).
  bool TakeSent(std::vector<Prefix>& out);
  // Up to `max` routes from `cursor` on (PrefixWordMap::Walk); fn(prefix,
  // FpmZebraRoute&) may change `replied`.
  template <typename Fn>
  size_t Walk(size_t cursor, size_t max, Fn&& fn) {
    return words_.Walk(cursor, max, [&](const Prefix& p, uint32_t& w) {
      FpmZebraRoute r = Decode(w);
      fn(p, r);
      w = Encode(r);
    });
  }
  const FpmZebraCounts& counts() const { return counts_; }
  size_t memory() const { return words_.memory() + sent_.capacity() * sizeof(Prefix); }

 private:
  // The word: bit 7 stale, bits 8-9 replied, bits 16-23 protocol.
  static FpmZebraRoute Decode(uint32_t w) {
    return {static_cast<uint8_t>(w >> 16), static_cast<uint8_t>((w >> 8) & 3), (w & 0x80) != 0};
  }
  static uint32_t Encode(const FpmZebraRoute& r) {
    return (r.stale ? 0x80u : 0) | (uint32_t{r.replied & 3u} << 8) | (uint32_t{r.protocol} << 16);
  }
  void Sent(const Prefix& p);

  uint32_t table_;
  std::set<uint8_t> ignore_protocols_;
  size_t sent_max_;
  PrefixWordMap words_;
  size_t stale_ = 0;
  std::vector<Prefix> sent_;
  bool sent_overflow_ = false;
  FpmZebraCounts counts_;
};

}  // namespace fibnic
