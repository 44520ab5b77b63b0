// An IP-NUMA NIC's BAR0 kept in memory that another process plays the device
// on: a regular file (FileBar) or a BPF array map pinned on a bpffs (BpfBar),
// ipnumad's backends for ipnuma-emu, which maps the same bytes. Memory is not
// a device: a write of 1 to a write-1-to-clear bit that already reads 1
// (PEER_STATE's DOWN) changes no byte, so whoever plays the device could not
// tell it happened. This Bar therefore shows such a write the way the
// register reads once a device took it: the bits written are cleared in the
// memory. ipnuma-emu sees DOWN drop without having cleared it itself and
// resets the stream, as the contract's write of 1 does on the hardware.
// Every other access is the memory's, unchanged.
#pragma once

#include <memory>

#include "hwif/mapped_bar.h"

namespace fibnic::ipnuma {

class NicMemoryBar : public Bar {
 public:
  explicit NicMemoryBar(std::unique_ptr<MappedBar> memory) : memory_(std::move(memory)) {}

  size_t size() const override { return memory_->size(); }
  Status Read(uint64_t offset, void* dst, size_t len) override { return memory_->Read(offset, dst, len); }
  // PEER_STATE words: the written 1 bits are cleared (one atomic and on the
  // shared mapping, so the emulator's own update of the word is never lost).
  Status Write32(uint64_t offset, uint32_t value) override;
  // As successive Write32, so a range over PEER_STATE behaves the same.
  Status Write(uint64_t offset, const void* src, size_t len) override;
  Status Flush() override { return memory_->Flush(); }

 private:
  std::unique_ptr<MappedBar> memory_;
};

}  // namespace fibnic::ipnuma
