// What the device actually holds, read through the narrow Bar interface for
// the API (status, tables, lookup, SRAM picture). Only the regions a question
// needs are read: a lookup reads the CSRs, the small tables and one SRAM word,
// not the 20 MiB BAR.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/status.h"
#include "hwif/bar.h"
#include "device/fibnic_image_codec.h"
#include "device/fibnic_lookup.h"
#include "device/fibnic_regs.h"

namespace fibnic::web {

struct DeviceTables {
  BarHeader header;
  std::vector<MacAddr> port_macs;
  std::vector<regs::NexthopEntry> nexthop;
  std::vector<regs::Tcam6Entry> tcam;
  std::vector<regs::NeighEntry> neigh;
  std::vector<std::vector<uint64_t>> port_counters;  // [port][regs::kPortCounterNames index]
  std::vector<uint64_t> drop_counters;               // [port] DROP_COUNTERS; empty without CAPS2 DROP
};

class DeviceView {
 public:
  explicit DeviceView(Bar& bar);
  ~DeviceView();
  DeviceView(const DeviceView&) = delete;
  DeviceView& operator=(const DeviceView&) = delete;

  // ID/VERSION/CAPS checked (a BAR that is not a FIBNIC v1 is an error).
  StatusOr<BarHeader> Header();
  StatusOr<DeviceTables> Tables();
  // What the hardware does for dst, decoded from the live BAR.
  StatusOr<HwDecision> Lookup(const IpAddr& dst);
  // The whole SRAM4 region (caps.sram_bytes() bytes).
  StatusOr<std::vector<uint8_t>> Sram();

 private:
  Status ReadRegion(uint64_t offset, size_t len);

  Bar& bar_;
  // A BAR-sized host buffer that only ever holds the regions read for the
  // current question; untouched pages are never faulted in.
  struct FreeDeleter {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, FreeDeleter> shadow_;
};

}  // namespace fibnic::web
