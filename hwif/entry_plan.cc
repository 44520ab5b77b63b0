#include "hwif/entry_plan.h"

#include <cstring>

namespace fibnic {
namespace {

uint32_t WordAt(std::span<const uint8_t> bytes, size_t w) {
  uint32_t v;
  std::memcpy(&v, bytes.data() + 4 * w, 4);
  return v;
}

size_t CountChangedBytes(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  size_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += a[i] != b[i];
  return n;
}

}  // namespace

void PlanFill(WritePlan& plan, uint64_t base, std::span<const uint8_t> from, std::span<const uint8_t> to,
              const EntryLayout& layout) {
  const size_t words = to.size() / 4, flags_word = layout.flags_byte / 4;
  for (size_t w = 0; w < words; ++w) {
    if (w != flags_word && WordAt(from, w) != WordAt(to, w)) plan.Add(base + 4 * w, WordAt(to, w));
  }
  if (WordAt(from, flags_word) != WordAt(to, flags_word)) plan.Add(base + 4 * flags_word, WordAt(to, flags_word));
}

void PlanInvalidate(WritePlan& plan, uint64_t base, std::span<const uint8_t> from, std::span<const uint8_t> to,
                    const EntryLayout& layout, std::span<uint8_t> now) {
  std::memcpy(now.data(), from.data(), from.size());
  const bool from_valid = from[layout.flags_byte] & layout.valid_bit;
  if (!from_valid || std::memcmp(from.data(), to.data(), from.size()) == 0) return;
  const size_t fw = layout.flags_byte / 4;
  // The flags word as it will finally be, with VALID cleared: its other bytes
  // then need no second change unless VALID is set again.
  std::memcpy(now.data() + 4 * fw, to.data() + 4 * fw, 4);
  now[layout.flags_byte] &= static_cast<uint8_t>(~layout.valid_bit);
  plan.Add(base + 4 * fw, WordAt(std::span<const uint8_t>(now.data(), now.size()), fw));
}

void PlanEntry(WritePlan& plan, uint64_t base, std::span<const uint8_t> from, std::span<const uint8_t> to,
               const EntryLayout& layout) {
  const size_t words = to.size() / 4;
  size_t changed = 0, last = 0;
  for (size_t w = 0; w < words; ++w) {
    if (WordAt(from, w) != WordAt(to, w)) {
      ++changed;
      last = w;
    }
  }
  if (changed == 0) return;
  plan.AddChangedBytes(CountChangedBytes(from, to));
  const bool from_valid = from[layout.flags_byte] & layout.valid_bit;
  const bool to_valid = to[layout.flags_byte] & layout.valid_bit;
  if (from_valid && to_valid && changed == 1) {
    plan.Add(base + 4 * last, WordAt(to, last));
    return;
  }
  uint8_t now[64];
  PlanInvalidate(plan, base, from, to, layout, std::span<uint8_t>(now, from.size()));
  PlanFill(plan, base, std::span<const uint8_t>(now, from.size()), to, layout);
}

}  // namespace fibnic
