#include "ipnuma/nic_memory_bar.h"

#include "device/ipnuma_regs.h"
#include "hwif/bar_words.h"

namespace fibnic::ipnuma {

namespace regs = ::fibnic::ipnuma_regs;

Status NicMemoryBar::Write32(uint64_t offset, uint32_t value) {
  const uint64_t end = regs::kOffPeerState + uint64_t{regs::kPeerStateStride} * regs::kMaxPcidEntries;
  if (offset < regs::kOffPeerState || offset >= end) return memory_->Write32(offset, value);
  if (offset % 4 != 0) return InvalidArgument("bus write at " + HexOffset(offset) + " is not 4-byte aligned");
  RETURN_IF_ERROR(CheckRange("write", offset, 4, memory_->size()));
  // The mapping is shared memory; MappedBar hands it out read-only for
  // decoders, and this is the one read-modify-write the device model needs.
  auto* word = reinterpret_cast<uint32_t*>(const_cast<uint8_t*>(memory_->data()) + offset);
  __atomic_fetch_and(word, ~value, __ATOMIC_SEQ_CST);
  return OkStatus();
}

Status NicMemoryBar::Write(uint64_t offset, const void* src, size_t len) {
  return WriteAsWords(*this, offset, src, len);
}

}  // namespace fibnic::ipnuma
