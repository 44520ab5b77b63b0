// Device counters for the daemon and the dashboard: the FIBNIC's per-port
// PORT_COUNTERS and the IP-NUMA NIC's COUNTERS block. Both are u64s the host
// reads as two 32-bit bus reads; ReadCounter64 makes such a pair consistent
// while the hardware keeps counting.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "hwif/bar.h"
#include "device/fibnic_regs.h"
#include "device/ipnuma_regs.h"

namespace fibnic {

// One u64 at offset (low word first in memory). Reads high, low, high again;
// if the high word moved, the low word wrapped in between and is read again.
StatusOr<uint64_t> ReadCounter64(Bar& bar, uint64_t offset);

// PORT_COUNTERS[p], in the spec's order (regs::kPortCounterNames).
struct PortCounters {
  uint64_t rx = 0;
  uint64_t forwarded = 0;
  uint64_t punted = 0;
  uint64_t drop_ttl = 0;
  uint64_t drop_fifo = 0;
  uint64_t tx = 0;
  uint64_t rx_bytes = 0;
  uint64_t tx_bytes = 0;
  // DROP_COUNTERS[p] (a device with CAPS2 DROP; 0 otherwise): not one of the
  // eight PORT_COUNTERS, so not in values().
  uint64_t drop_route = 0;
  std::array<uint64_t, regs::kPortCounterCount> values() const {
    return {rx, forwarded, punted, drop_ttl, drop_fifo, tx, rx_bytes, tx_bytes};
  }
  bool operator==(const PortCounters&) const = default;
};

// Counters of every port the CAPS announce (with DROP_COUNTERS where they announce DROP).
StatusOr<std::vector<PortCounters>> ReadPortCounters(Bar& bar, const regs::Caps& caps);

// The IP-NUMA NIC's COUNTERS block (ipnuma_regs::kCounterNames order).
StatusOr<ipnuma_regs::Counters> ReadIpnumaCounters(Bar& bar);

}  // namespace fibnic
