#include "hwif/device_writer.h"

#include <algorithm>
#include <cstring>

namespace fibnic {
namespace {

void Note(VerifyReport& r, const char* table, uint32_t index) {
  ++r.drift_total;
  if (r.drift.size() < VerifyReport::kMaxListed) r.drift.push_back({table, index});
}

template <typename Entry>
void CompareTable(VerifyReport& r, const char* table, const std::vector<Entry>& want, const std::vector<Entry>& held) {
  for (size_t i = 0; i < want.size() && i < held.size(); ++i) {
    if (!(want[i] == held[i])) Note(r, table, static_cast<uint32_t>(i));
  }
}

}  // namespace

VerifyReport CompareImages(const DeviceImage& want, const DeviceImage& held, uint32_t held_generation) {
  VerifyReport r;
  r.generation = held_generation;
  if (!(want.caps == held.caps)) {
    Note(r, "caps", 0);
    return r;  // the tables are laid out differently: nothing else compares
  }
  if (want.control != held.control) Note(r, "control", 0);
  CompareTable(r, "port_mac", want.port_macs, held.port_macs);
  CompareTable(r, "nexthop", want.nexthop, held.nexthop);
  CompareTable(r, "tcam6", want.tcam, held.tcam);
  CompareTable(r, "neigh", want.neigh, held.neigh);
  // SRAM4 by 32-bit bus word: the unit the device is written in.
  const size_t n = std::min(want.sram.size(), held.sram.size());
  for (size_t off = 0; off < n; off += 4) {
    if (std::memcmp(want.sram.data() + off, held.sram.data() + off, std::min<size_t>(4, n - off)) != 0) {
      Note(r, "sram4", static_cast<uint32_t>(off / 4));
    }
  }
  return r;
}

}  // namespace fibnic
