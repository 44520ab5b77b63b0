#include "tests/fib/delta_applier.h"

#include <cstring>

namespace fibnic::testing {
namespace {

// The VALID dance of one 16/32-byte entry whose flags byte is at flags_at.
template <size_t N>
void WriteEntry(uint8_t* at, const std::array<uint8_t, N>& bytes, size_t flags_at, const StepFn& step) {
  at[flags_at] = 0;
  step(std::nullopt);
  std::array<uint8_t, N> fields = bytes;
  fields[flags_at] = 0;
  std::memcpy(at, fields.data(), N);
  step(std::nullopt);
  std::memcpy(at, bytes.data(), N);
  step(std::nullopt);
}

}  // namespace

void ApplyStepwise(std::vector<uint8_t>& bar, const DeviceImage& img, const std::vector<DeviceDelta>& deltas,
                   const StepFn& step) {
  const uint32_t word_bytes = regs::SramWordBytes(img.caps.code_bits);
  for (const auto& d : deltas) {
    for (uint32_t p : d.port_macs) std::memcpy(&bar[regs::PortMacOffset(p)], img.port_macs[p].b.data(), 6);
    for (const auto& w : d.nexthop_activate) WriteEntry(&bar[regs::NexthopOffset(w.index)], w.entry.Encode(), 7, step);
    for (const auto& w : d.neigh_activate) WriteEntry(&bar[regs::NeighOffset(w.index)], w.entry.Encode(), 23, step);
    for (const auto& w : d.tcam) {
      const auto e = w.entry.Encode();
      std::memcpy(&bar[regs::Tcam6Offset(w.index)], e.data(), e.size());
      step(std::nullopt);
    }
    for (size_t k = 0; k < d.sram_words.size(); ++k) {
      const uint32_t w = d.sram_words[k];
      const uint16_t v = d.sram_values[k];
      bar[regs::kOffSram4 + word_bytes * w] = static_cast<uint8_t>(v);
      if (word_bytes == 2) bar[regs::kOffSram4 + 2 * w + 1] = static_cast<uint8_t>(v >> 8);
      step(w);
    }
    for (const auto& w : d.neigh_retire) {
      const auto e = w.entry.Encode();
      std::memcpy(&bar[regs::NeighOffset(w.index)], e.data(), e.size());
      step(std::nullopt);
    }
    for (const auto& w : d.nexthop_retire) {
      const auto e = w.entry.Encode();
      std::memcpy(&bar[regs::NexthopOffset(w.index)], e.data(), e.size());
      step(std::nullopt);
    }
  }
}

}  // namespace fibnic::testing
