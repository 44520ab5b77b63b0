// The host's copy of the FIBNIC's forwarding tables (what the compilers build)
// and the ordered change set between two such copies (what the push writes).
//
// DeviceDelta is the contract between fib/ (which decides) and hwif (which
// writes). Its phases are applied strictly in the order declared below, and
// the producer guarantees that applying them in that order — one bus write at
// a time — never routes a destination to a wrong next-hop:
//   1. nexthop_activate: entries that are unreferenced, or that keep their owner
//      (MAC/port change). Written VALID=0, then fields, then VALID=1.
//   2. neigh_activate:   NEIGH CAM entries added or changed (same VALID dance).
//   3. tcam:             TCAM6 writes in exactly this order (holes before the
//                        covering entry; covering entry removed before holes).
//   4. sram_words:       changed SRAM4 word indexes (ascending), each written
//                        with the value at the same position in sram_values
//                        (one Commit() may return several deltas that write
//                        the same word, so the final image is not the source);
//                        sram_before holds the value each word had before
//                        this delta (the writer keeps no copy of the SRAM: the
//                        bytes of a 32-bit bus word that this delta does not
//                        name keep the device's value, and for a word a later
//                        delta of the same commit changes that is its before).
//   5. neigh_retire:     NEIGH entries cleared (VALID=0).
//   6. nexthop_retire:   entries no code references any more (VALID=0).
//   then GENERATION. port_macs (source MACs, no forwarding decision hangs on
//   them) may be written at any point of the delta; contents come from the image. A slot that changes owner is retired in one delta and
//   activated in a later one, so phase 6 never races phase 1 of the same slot.
#pragma once

#include <cstdint>
#include <vector>

#include "device/fibnic_regs.h"

namespace fibnic {

struct DeviceImage {
  regs::Caps caps;
  uint32_t control = regs::kControlV4Enable | regs::kControlV6Enable;
  std::vector<MacAddr> port_macs;           // caps.ports
  std::vector<regs::NexthopEntry> nexthop;  // caps.nexthop_entries; [0] unused
  std::vector<regs::Tcam6Entry> tcam;       // caps.tcam_entries
  std::vector<regs::NeighEntry> neigh;      // caps.neigh_entries
  std::vector<uint8_t> sram;                // caps.sram_bytes()

  explicit DeviceImage(const regs::Caps& c = regs::Caps::Model2Bit())
      : caps(c), port_macs(c.ports), nexthop(c.nexthop_entries), tcam(c.tcam_entries),
        neigh(c.neigh_entries), sram(c.sram_bytes(), 0) {}

  uint8_t CodeOf24(uint32_t slash24) const { return regs::SramCode(sram.data(), caps.code_bits, slash24); }
  uint32_t sram_words() const { return uint32_t{1} << caps.sram_addr_bits; }
  bool operator==(const DeviceImage&) const = default;
};

// The code a TCAM answers a destination's first 64 bits with: the first
// valid entry that matches them (0: none, a punt).
inline uint8_t Tcam6Code(const std::vector<regs::Tcam6Entry>& tcam, uint64_t dst_hi) {
  for (const auto& e : tcam) {
    if (e.Matches(dst_hi)) return e.code;
  }
  return 0;
}

struct TcamWrite {
  uint32_t index = 0;
  regs::Tcam6Entry entry;
  bool operator==(const TcamWrite&) const = default;
};

struct NexthopWrite {
  uint32_t index = 0;
  regs::NexthopEntry entry;
  bool operator==(const NexthopWrite&) const = default;
};

struct NeighWrite {
  uint32_t index = 0;
  regs::NeighEntry entry;
  bool operator==(const NeighWrite&) const = default;
};

struct DeviceDelta {
  std::vector<NexthopWrite> nexthop_activate;
  std::vector<NeighWrite> neigh_activate;
  std::vector<TcamWrite> tcam;
  std::vector<uint32_t> sram_words;  // word indexes, ascending, no duplicates
  std::vector<uint16_t> sram_values; // parallel to sram_words: the word (8-bit codes: low byte)
  std::vector<uint16_t> sram_before; // parallel to sram_words: the word before this delta
  std::vector<NeighWrite> neigh_retire;
  std::vector<NexthopWrite> nexthop_retire;
  std::vector<uint32_t> port_macs;  // ports whose PORT_MAC changed

  bool empty() const {
    return port_macs.empty() && nexthop_activate.empty() && neigh_activate.empty() && tcam.empty() && sram_words.empty() &&
           neigh_retire.empty() && nexthop_retire.empty();
  }
};

}  // namespace fibnic
