#include "ipnuma/nic.h"

#include <cstring>
#include <sstream>

namespace fibnic::ipnuma {
namespace {

std::string Hex32(uint32_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

uint32_t Word(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);  // little-endian host, as the BAR
  return v;
}

}  // namespace

StatusOr<regs::Caps> ProbeNic(Bar& bar) {
  if (bar.size() < regs::kOffPagemap) {
    return FailedPrecondition("IP-NUMA BAR0 is " + std::to_string(bar.size()) +
                              " bytes, smaller than the register map (" + std::to_string(regs::kOffPagemap) + ")");
  }
  ASSIGN_OR_RETURN(uint32_t id, bar.Read32(regs::kOffId));
  if (id != regs::kId) {
    return FailedPrecondition("IP-NUMA ID register (offset 0x0) holds " + Hex32(id) + ", expected " +
                              Hex32(regs::kId) + " ('IPNU'): not an IP-NUMA NIC");
  }
  ASSIGN_OR_RETURN(uint32_t version, bar.Read32(regs::kOffVersion));
  if ((version >> 16) != (regs::kVersion >> 16)) {
    return FailedPrecondition("IP-NUMA VERSION register (offset 0x4) holds " + Hex32(version) +
                              ", this ipnumad drives major version " + std::to_string(regs::kVersion >> 16));
  }
  ASSIGN_OR_RETURN(uint32_t c0, bar.Read32(regs::kOffCaps0));
  ASSIGN_OR_RETURN(uint32_t c1, bar.Read32(regs::kOffCaps1));
  regs::Caps caps = regs::Caps::Decode(c0, c1);
  RETURN_IF_ERROR(caps.Validate());
  if (bar.size() < caps.bar0_bytes()) {
    return FailedPrecondition("IP-NUMA BAR0 is " + std::to_string(bar.size()) + " bytes but CAPS0 announces " +
                              std::to_string(caps.pages) + " pages, whose page map needs " +
                              std::to_string(caps.bar0_bytes()));
  }
  return caps;
}

std::vector<uint8_t> IdentityBlock(const regs::Caps& caps) {
  std::vector<uint8_t> b(regs::kOffCaps1 + 4, 0);
  const uint32_t words[] = {regs::kId, regs::kVersion, caps.caps0(), caps.caps1()};
  const uint32_t offs[] = {regs::kOffId, regs::kOffVersion, regs::kOffCaps0, regs::kOffCaps1};
  for (int i = 0; i < 4; ++i) std::memcpy(b.data() + offs[i], &words[i], 4);
  return b;
}

NicTables DecodeNicTables(const uint8_t* bar0, const regs::Caps& caps) {
  NicTables t;
  t.caps = caps;
  t.local = regs::DecodeLocalRegs(bar0);
  t.counters = regs::Counters::Decode(bar0 + regs::kOffCounters);
  t.pcid.reserve(caps.pcid_entries);
  for (uint32_t i = 0; i < caps.pcid_entries; ++i) t.pcid.push_back(regs::PcidEntry::Decode(bar0 + regs::PcidOffset(i)));
  t.region.reserve(caps.region_entries);
  for (uint32_t i = 0; i < caps.region_entries; ++i) {
    t.region.push_back(regs::RegionEntry::Decode(bar0 + regs::RegionOffset(i)));
  }
  t.pagemap.reserve(caps.pages);
  for (uint32_t p = 0; p < caps.pages; ++p) {
    uint64_t w;
    std::memcpy(&w, bar0 + regs::PagemapOffset(p), 8);
    t.pagemap.push_back(regs::PagemapEntry::Decode(w));
  }
  return t;
}

StatusOr<NicTables> ReadNicTables(Bar& bar, const regs::Caps& caps) {
  std::vector<uint8_t> image(caps.bar0_bytes());
  RETURN_IF_ERROR(bar.Read(0, image.data(), image.size()));
  return DecodeNicTables(image.data(), caps);
}

Status NicWriter::WriteWords(uint64_t offset, const uint8_t* bytes, uint32_t from, uint32_t to) {
  for (uint32_t w = from; w < to; w += 4) RETURN_IF_ERROR(bar_.Write32(offset + w, Word(bytes + w)));
  return OkStatus();
}

Status NicWriter::WriteWireParams(uint32_t max_payload, uint32_t retry_limit, uint16_t epoch_base) {
  RETURN_IF_ERROR(bar_.Write32(regs::kOffMaxPayload, max_payload));
  RETURN_IF_ERROR(bar_.Write32(regs::kOffRetryLimit, retry_limit));
  RETURN_IF_ERROR(bar_.Write32(regs::kOffEpochBase, epoch_base));
  return bar_.Flush();
}

Status NicWriter::WriteLocal(const regs::LocalRegs& r) {
  for (auto [off, v] : regs::EncodeLocalRegs(r)) RETURN_IF_ERROR(bar_.Write32(off, v));
  return bar_.Flush();
}

Status NicWriter::WritePcid(uint16_t id, const regs::PcidEntry& e) {
  if (id == regs::kPcidUnmapped || id >= caps_.pcid_entries) {
    return Internal("PC ID " + std::to_string(id) + " is not a usable entry");
  }
  const uint64_t off = regs::PcidOffset(id);
  ASSIGN_OR_RETURN(uint32_t flags_word, bar_.Read32(off + regs::kPcidFlagsWord));
  RETURN_IF_ERROR(bar_.Write32(off + regs::kPcidFlagsWord, flags_word & 0x0000FFFFu));  // VALID=0, MAC kept
  regs::PcidEntry fields = e;
  fields.flags = static_cast<uint8_t>(e.flags & ~regs::kPcidValid);
  auto bytes = fields.Encode();
  RETURN_IF_ERROR(WriteWords(off, bytes.data(), 0, regs::kPcidStride));
  if (e.valid()) {
    bytes = e.Encode();
    RETURN_IF_ERROR(WriteWords(off, bytes.data(), regs::kPcidFlagsWord, regs::kPcidFlagsWord + 4));
  }
  return bar_.Flush();
}

Status NicWriter::ClearPcid(uint16_t id) { return WritePcid(id, regs::PcidEntry{}); }

Status NicWriter::WriteRegion(uint16_t slot, const regs::RegionEntry& e) {
  if (slot >= caps_.region_entries) return Internal("region slot " + std::to_string(slot) + " is out of range");
  const uint64_t off = regs::RegionOffset(slot);
  RETURN_IF_ERROR(bar_.Write32(off + regs::kRegionFlagsWord, 0));  // VALID=0 first
  regs::RegionEntry fields = e;
  fields.flags = static_cast<uint8_t>(e.flags & ~regs::kRegionValid);
  auto bytes = fields.Encode();
  RETURN_IF_ERROR(WriteWords(off, bytes.data(), 0, regs::kRegionFlagsWord));
  RETURN_IF_ERROR(WriteWords(off, bytes.data(), regs::kRegionFlagsWord + 4, regs::kRegionStride));
  if (e.valid()) {
    bytes = e.Encode();
    RETURN_IF_ERROR(WriteWords(off, bytes.data(), regs::kRegionFlagsWord, regs::kRegionFlagsWord + 4));
  }
  return bar_.Flush();
}

Status NicWriter::ClearRegion(uint16_t slot) { return WriteRegion(slot, regs::RegionEntry{}); }

Status NicWriter::MapPage(uint32_t page, const regs::PagemapEntry& e) {
  if (page >= caps_.pages) return Internal("page " + std::to_string(page) + " is outside the page map");
  const uint64_t off = regs::PagemapOffset(page);
  regs::PagemapEntry unmapped{e.remote_pa, regs::kPcidUnmapped};
  RETURN_IF_ERROR(bar_.Write32(off + regs::kPagemapHiWord, 0));
  RETURN_IF_ERROR(bar_.Write32(off, unmapped.lo()));
  return bar_.Write32(off + regs::kPagemapHiWord, e.hi());
}

Status NicWriter::ResetPeer(uint16_t id) {
  if (id == regs::kPcidUnmapped || id >= caps_.pcid_entries) {
    return Internal("PC ID " + std::to_string(id) + " is not a usable entry");
  }
  RETURN_IF_ERROR(bar_.Write32(regs::PeerStateOffset(id), regs::kPeerStateDown));
  return bar_.Flush();
}

StatusOr<bool> NicWriter::PeerDown(uint16_t id) {
  if (id == regs::kPcidUnmapped || id >= caps_.pcid_entries) return false;
  ASSIGN_OR_RETURN(uint32_t state, bar_.Read32(regs::PeerStateOffset(id)));
  return (state & regs::kPeerStateDown) != 0;
}

Status NicWriter::UnmapPage(uint32_t page) {
  if (page >= caps_.pages) return Internal("page " + std::to_string(page) + " is outside the page map");
  const uint64_t off = regs::PagemapOffset(page);
  RETURN_IF_ERROR(bar_.Write32(off + regs::kPagemapHiWord, 0));
  return bar_.Write32(off, 0);
}

}  // namespace fibnic::ipnuma
