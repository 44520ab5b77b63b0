#include "device/fibnic_image_codec.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

namespace fibnic {
namespace {

void PutLe32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint32_t GetLe32(const uint8_t* p) { return p[0] | (p[1] << 8) | (p[2] << 16) | (uint32_t{p[3]} << 24); }

std::string Hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

}  // namespace

Status CheckCaps(const regs::Caps& c) {
  if (c.code_bits != 2 && c.code_bits != 4) {
    return FailedPrecondition("CAPS0 code bits " + std::to_string(c.code_bits) + " (want 2 or 4)");
  }
  if (c.sram_addr_bits != 22) {  // 22 address bits x 4 codes = every IPv4 /24
    return FailedPrecondition("CAPS0 SRAM address bits " + std::to_string(c.sram_addr_bits) + " (want 22)");
  }
  if (c.nexthop_entries != (1u << c.code_bits)) {
    return FailedPrecondition("CAPS1 next-hop entries " + std::to_string(c.nexthop_entries) + " != 2^code bits");
  }
  if (c.ports == 0 || regs::PortMacOffset(c.ports) > regs::kOffPortCounters) {
    return FailedPrecondition("CAPS0 ports " + std::to_string(c.ports) + " does not fit the PORT_MAC window");
  }
  if (regs::Tcam6Offset(c.tcam_entries) > regs::kOffNeigh) {
    return FailedPrecondition("CAPS1 TCAM entries " + std::to_string(c.tcam_entries) + " overflow the TCAM6 window");
  }
  if (c.neigh_entries == 0 || regs::NeighOffset(c.neigh_entries) > regs::kOffSram4) {
    return FailedPrecondition("CAPS2 neighbour entries " + std::to_string(c.neigh_entries) +
                              " do not fit the NEIGH window");
  }
  return OkStatus();
}

Status CheckNexthopEntry(const regs::Caps& caps, uint32_t index, const regs::NexthopEntry& e) {
  if (!e.drop()) return OkStatus();
  const std::string what = "NEXTHOP[" + std::to_string(index) + "] with the DROP flag";
  if (!caps.drop) return FailedPrecondition(what + ": this device's CAPS2 do not announce DROP (it would forward the entry)");
  if (e.connected()) return InvalidArgument(what + " and CONNECTED: a drop entry names no neighbour");
  return OkStatus();
}

Status EncodeBarInto(const DeviceImage& img, uint32_t generation, uint8_t* bar, size_t bar_size) {
  const auto& c = img.caps;
  RETURN_IF_ERROR(CheckCaps(c));
  if (bar_size < c.bar_bytes()) {
    return InvalidArgument("BAR buffer of " + std::to_string(bar_size) + " bytes, layout needs " +
                           std::to_string(c.bar_bytes()));
  }
  if (img.port_macs.size() != c.ports || img.nexthop.size() != c.nexthop_entries ||
      img.tcam.size() != c.tcam_entries || img.neigh.size() != c.neigh_entries || img.sram.size() != c.sram_bytes()) {
    return InvalidArgument("image tables do not match its caps");
  }
  for (uint32_t i = 0; i < c.nexthop_entries; ++i) RETURN_IF_ERROR(CheckNexthopEntry(c, i, img.nexthop[i]));
  std::memset(bar, 0, regs::kOffSram4);
  PutLe32(bar + regs::kOffId, regs::kId);
  PutLe32(bar + regs::kOffVersion, regs::kVersion);
  PutLe32(bar + regs::kOffCaps0, c.caps0());
  PutLe32(bar + regs::kOffCaps1, c.caps1());
  PutLe32(bar + regs::kOffCaps2, c.caps2());
  PutLe32(bar + regs::kOffControl, img.control);
  PutLe32(bar + regs::kOffGeneration, generation);
  for (uint32_t p = 0; p < c.ports; ++p) std::memcpy(bar + regs::PortMacOffset(p), img.port_macs[p].b.data(), 6);
  for (uint32_t i = 0; i < c.nexthop_entries; ++i) {
    auto e = img.nexthop[i].Encode();
    std::memcpy(bar + regs::NexthopOffset(i), e.data(), e.size());
  }
  for (uint32_t i = 0; i < c.tcam_entries; ++i) {
    auto e = img.tcam[i].Encode();
    std::memcpy(bar + regs::Tcam6Offset(i), e.data(), e.size());
  }
  for (uint32_t i = 0; i < c.neigh_entries; ++i) {
    auto e = img.neigh[i].Encode();
    std::memcpy(bar + regs::NeighOffset(i), e.data(), e.size());
  }
  std::memcpy(bar + regs::kOffSram4, img.sram.data(), img.sram.size());
  return OkStatus();
}

std::vector<uint8_t> EncodeBar(const DeviceImage& img, uint32_t generation) {
  std::vector<uint8_t> bar(img.caps.bar_bytes());
  // A DeviceImage built from its own caps always encodes; a malformed one
  // yields an all-zero BAR (ID 0), which every reader refuses.
  if (!EncodeBarInto(img, generation, bar.data(), bar.size()).ok()) std::fill(bar.begin(), bar.end(), 0);
  return bar;
}

namespace {

// The CSR block of a BAR of bar_size bytes, of which the first `readable`
// are at `bar`.
StatusOr<BarHeader> DecodeCsr(const uint8_t* bar, size_t readable, size_t bar_size) {
  if (bar_size < regs::kOffSram4 || readable < regs::kOffNeigh) {
    return FailedPrecondition("BAR of " + std::to_string(bar_size) + " bytes is shorter than the CSR/table area");
  }
  BarHeader h;
  h.id = GetLe32(bar + regs::kOffId);
  h.version = GetLe32(bar + regs::kOffVersion);
  if (h.id != regs::kId) return FailedPrecondition("not a FIBNIC: ID " + Hex(h.id) + " (want " + Hex(regs::kId) + ")");
  if ((h.version >> 16) != (regs::kVersion >> 16)) {
    return FailedPrecondition("FIBNIC VERSION " + Hex(h.version) + ": this host drives major " +
                              std::to_string(regs::kVersion >> 16));
  }
  h.caps = regs::Caps::Decode(GetLe32(bar + regs::kOffCaps0), GetLe32(bar + regs::kOffCaps1),
                              GetLe32(bar + regs::kOffCaps2));
  RETURN_IF_ERROR(CheckCaps(h.caps));
  if (bar_size < h.caps.bar_bytes()) {
    return FailedPrecondition("BAR of " + std::to_string(bar_size) + " bytes, CAPS say " +
                              std::to_string(h.caps.bar_bytes()));
  }
  if (readable < regs::NeighOffset(h.caps.neigh_entries)) {
    return FailedPrecondition("read " + std::to_string(readable) + " bytes of the BAR, its tables end at byte " +
                              std::to_string(regs::NeighOffset(h.caps.neigh_entries)));
  }
  h.control = GetLe32(bar + regs::kOffControl);
  h.generation = GetLe32(bar + regs::kOffGeneration);
  h.scratch = GetLe32(bar + regs::kOffScratch);
  return h;
}

}  // namespace

StatusOr<BarHeader> DecodeBarHeader(const uint8_t* bar, size_t bar_size) { return DecodeCsr(bar, bar_size, bar_size); }

StatusOr<DeviceImage> DecodeBarTables(const uint8_t* tables, size_t tables_size, size_t bar_size, BarHeader* header) {
  ASSIGN_OR_RETURN(BarHeader h, DecodeCsr(tables, tables_size, bar_size));
  DeviceImage img(h.caps);
  img.control = h.control;
  for (uint32_t p = 0; p < h.caps.ports; ++p) std::memcpy(img.port_macs[p].b.data(), tables + regs::PortMacOffset(p), 6);
  for (uint32_t i = 0; i < h.caps.nexthop_entries; ++i) img.nexthop[i] = regs::NexthopEntry::Decode(tables + regs::NexthopOffset(i));
  for (uint32_t i = 0; i < h.caps.tcam_entries; ++i) img.tcam[i] = regs::Tcam6Entry::Decode(tables + regs::Tcam6Offset(i));
  for (uint32_t i = 0; i < h.caps.neigh_entries; ++i) img.neigh[i] = regs::NeighEntry::Decode(tables + regs::NeighOffset(i));
  if (header) *header = h;
  return img;
}

StatusOr<DeviceImage> DecodeBar(const uint8_t* bar, size_t bar_size) {
  ASSIGN_OR_RETURN(DeviceImage img, DecodeBarTables(bar, bar_size, bar_size, nullptr));
  std::memcpy(img.sram.data(), bar + regs::kOffSram4, img.sram.size());
  return img;
}

}  // namespace fibnic
