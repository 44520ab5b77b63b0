// The IP-NUMA NIC as ipnumad drives it: identity probe, whole-table readback,
// and the only code that writes its tables — each write sequence in the order
// the spec's update rules demand (entries VALID=0 first and VALID=1 last;
// page map words unmapped before they are remapped).
#pragma once

#include <cstdint>
#include <vector>

#include "hwif/bar.h"
#include "device/ipnuma_regs.h"

namespace fibnic::ipnuma {

namespace regs = ::fibnic::ipnuma_regs;

// Checks ID, VERSION (same major) and CAPS, and that the BAR is large enough
// for the page map CAPS0 announces. Refuses anything else, naming the register.
StatusOr<regs::Caps> ProbeNic(Bar& bar);

// The read-only identity block (ID, VERSION, CAPS0, CAPS1) a NIC of this
// model shows at offset 0: what a file-backed emulated NIC is created with.
std::vector<uint8_t> IdentityBlock(const regs::Caps& caps);

// Everything the NIC holds, decoded.
struct NicTables {
  regs::Caps caps;
  regs::LocalRegs local;
  regs::Counters counters;
  std::vector<regs::PcidEntry> pcid;      // caps.pcid_entries
  std::vector<regs::RegionEntry> region;  // caps.region_entries
  std::vector<regs::PagemapEntry> pagemap;  // caps.pages
  bool operator==(const NicTables&) const = default;
};

// Decodes a BAR0 byte image (at least caps.bar0_bytes() long).
NicTables DecodeNicTables(const uint8_t* bar0, const regs::Caps& caps);
StatusOr<NicTables> ReadNicTables(Bar& bar, const regs::Caps& caps);

class NicWriter {
 public:
  NicWriter(Bar& bar, const regs::Caps& caps) : bar_(bar), caps_(caps) {}

  // Local registers, CONTROL last (enable only once configured).
  Status WriteLocal(const regs::LocalRegs& r);
  // VALID=0, the fields, then the flags with VALID (when e is valid).
  Status WritePcid(uint16_t id, const regs::PcidEntry& e);
  Status ClearPcid(uint16_t id);
  Status WriteRegion(uint16_t slot, const regs::RegionEntry& e);
  Status ClearRegion(uint16_t slot);
  // MAX_PAYLOAD, RETRY_LIMIT and EPOCH_BASE (before CONTROL enables the NIC).
  Status WriteWireParams(uint32_t max_payload, uint32_t retry_limit, uint16_t epoch_base);
  // High half with PC ID 0, then the low address bits, then address high bits
  // with the PC ID: the page is never mapped with a half-old address.
  Status MapPage(uint32_t page, const regs::PagemapEntry& e);
  // High half with PC ID 0 first (unmapped from then on), then the address.
  Status UnmapPage(uint32_t page);
  // Writes 1 to PEER_STATE[id] bit0: the NIC resets the stream to the entry's
  // address (DOWN clears, a new epoch, sequence 0). Only once the entry is
  // VALID for the address meant, and before pages are mapped to it.
  Status ResetPeer(uint16_t id);
  StatusOr<bool> PeerDown(uint16_t id);
  Status Flush() { return bar_.Flush(); }

 private:
  Status WriteWords(uint64_t offset, const uint8_t* bytes, uint32_t from, uint32_t to);
  Bar& bar_;
  regs::Caps caps_;
};

}  // namespace fibnic::ipnuma
