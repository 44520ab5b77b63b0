// What the offload replies to zebra (sources/fpm/fpm_offload.h) need of the
// kernel's routes. zebra installs each route in the kernel before it sends
// it over FPM, so the kernel source's route store already holds every route
// zebra is to be answered about; it keeps beside each prefix two bits — what
// zebra was last told — and FPM keeps no per-route table of its own.
//
// A note lives and dies with the kernel's prefix: a prefix the kernel
// removes and adds again starts at 0 (zebra waits for a reply to the new
// route). All on the sources' loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "common/ip.h"

namespace fibnic {

class RouteNotes {
 public:
  struct Held {
    uint8_t protocol = 0;  // rtm_protocol of the prefix's route in the table asked for
    uint8_t note = 0;
  };
  virtual ~RouteNotes() = default;
  // p's route in routing table `table`, with p's note; nullopt when the
  // kernel holds none there.
  virtual std::optional<Held> Find(const Prefix& p, uint32_t table) const = 0;
  virtual void SetNote(const Prefix& p, uint8_t note) = 0;  // no-op when p is not held
  virtual void ClearNotes() = 0;
  // Up to `max` prefixes from `cursor` on (0 = the start); fn(prefix, held)
  // for those with a route in `table`, which may change held.note. Returns
  // where the next call goes on, 0 once the walk is through (prefixes added
  // or removed meanwhile may be missed or seen twice).
  virtual size_t Walk(size_t cursor, size_t max, uint32_t table,
                      const std::function<void(const Prefix&, Held&)>& fn) = 0;
};

}  // namespace fibnic
