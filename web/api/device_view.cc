#include "web/api/device_view.h"

#include <cstdlib>
#include <new>

namespace fibnic::web {

void DeviceView::FreeDeleter::operator()(uint8_t* p) const { std::free(p); }

DeviceView::DeviceView(Bar& bar) : bar_(bar) {
  // calloc of a large block maps fresh zero pages lazily.
  shadow_.reset(static_cast<uint8_t*>(std::calloc(bar.size() ? bar.size() : 1, 1)));
  if (!shadow_) throw std::bad_alloc();
}

DeviceView::~DeviceView() = default;

Status DeviceView::ReadRegion(uint64_t offset, size_t len) {
  if (offset + len > bar_.size()) {
    return OutOfRange("device BAR is " + std::to_string(bar_.size()) + " bytes; cannot read " + std::to_string(len) +
                      " at offset " + std::to_string(offset));
  }
  return bar_.Read(offset, shadow_.get() + offset, len).WithContext("reading device BAR");
}

StatusOr<BarHeader> DeviceView::Header() {
  RETURN_IF_ERROR(ReadRegion(0, regs::kOffPortMac));
  return DecodeBarHeader(shadow_.get(), bar_.size());
}

StatusOr<DeviceTables> DeviceView::Tables() {
  ASSIGN_OR_RETURN(BarHeader h, Header());
  const regs::Caps& c = h.caps;
  RETURN_IF_ERROR(ReadRegion(regs::kOffPortMac, regs::PortCountersOffset(c.ports) - regs::kOffPortMac));
  if (c.drop) RETURN_IF_ERROR(ReadRegion(regs::kOffDropCounters, regs::DropCounterOffset(c.ports) - regs::kOffDropCounters));
  RETURN_IF_ERROR(ReadRegion(regs::NexthopOffset(0), regs::kNexthopStride * c.nexthop_entries));
  RETURN_IF_ERROR(ReadRegion(regs::Tcam6Offset(0), regs::kTcam6Stride * c.tcam_entries));
  RETURN_IF_ERROR(ReadRegion(regs::NeighOffset(0), regs::kNeighStride * c.neigh_entries));
  const uint8_t* b = shadow_.get();
  DeviceTables t;
  t.header = h;
  for (uint32_t p = 0; p < c.ports; ++p) {
    MacAddr m;
    for (int i = 0; i < 6; ++i) m.b[i] = b[regs::PortMacOffset(p) + i];
    t.port_macs.push_back(m);
    std::vector<uint64_t> counters(regs::kPortCounterCount);
    for (int i = 0; i < regs::kPortCounterCount; ++i) {
      uint64_t v = 0;
      for (int k = 7; k >= 0; --k) v = (v << 8) | b[regs::PortCountersOffset(p) + 8 * i + k];
      counters[i] = v;
    }
    t.port_counters.push_back(std::move(counters));
    if (c.drop) {
      uint64_t v = 0;
      for (int k = 7; k >= 0; --k) v = (v << 8) | b[regs::DropCounterOffset(p) + k];
      t.drop_counters.push_back(v);
    }
  }
  for (uint32_t i = 0; i < c.nexthop_entries; ++i) t.nexthop.push_back(regs::NexthopEntry::Decode(b + regs::NexthopOffset(i)));
  for (uint32_t i = 0; i < c.tcam_entries; ++i) t.tcam.push_back(regs::Tcam6Entry::Decode(b + regs::Tcam6Offset(i)));
  for (uint32_t i = 0; i < c.neigh_entries; ++i) t.neigh.push_back(regs::NeighEntry::Decode(b + regs::NeighOffset(i)));
  return t;
}

StatusOr<HwDecision> DeviceView::Lookup(const IpAddr& dst) {
  ASSIGN_OR_RETURN(DeviceTables t, Tables());
  if (dst.is_v4()) {
    const uint32_t wb = regs::SramWordBytes(t.header.caps.code_bits);
    RETURN_IF_ERROR(ReadRegion(regs::kOffSram4 + uint64_t{regs::SramWordOf(dst.v4())} * wb, wb));
  }
  return HwLookup(shadow_.get(), bar_.size(), dst);
}

StatusOr<std::vector<uint8_t>> DeviceView::Sram() {
  ASSIGN_OR_RETURN(BarHeader h, Header());
  std::vector<uint8_t> out(h.caps.sram_bytes());
  RETURN_IF_ERROR(bar_.Read(regs::kOffSram4, out.data(), out.size()).WithContext("reading device SRAM4"));
  return out;
}

}  // namespace fibnic::web
