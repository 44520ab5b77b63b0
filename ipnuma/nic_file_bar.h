// An IP-NUMA NIC's BAR0 kept in a regular file (ipnumad's file backend; the
// device behind it is ipnuma-emu, which maps the same file). A file is
// memory, not a device: a write of 1 to a write-1-to-clear bit that already
// reads 1 (PEER_STATE's DOWN) changes no byte, so whoever plays the device
// could not tell it happened. This Bar therefore shows such a write the way
// the register reads once a device took it: the bits written are cleared in
// the file. ipnuma-emu sees DOWN drop without having cleared it itself and
// resets the stream, as the contract's write of 1 does on the hardware.
// Every other access is the file's, unchanged.
#pragma once

#include <memory>

#include "hwif/file_bar.h"

namespace fibnic::ipnuma {

class NicFileBar : public Bar {
 public:
  explicit NicFileBar(std::unique_ptr<FileBar> file) : file_(std::move(file)) {}

  size_t size() const override { return file_->size(); }
  Status Read(uint64_t offset, void* dst, size_t len) override { return file_->Read(offset, dst, len); }
  // PEER_STATE words: the written 1 bits are cleared (one atomic and on the
  // shared mapping, so the emulator's own update of the word is never lost).
  Status Write32(uint64_t offset, uint32_t value) override;
  // As successive Write32, so a range over PEER_STATE behaves the same.
  Status Write(uint64_t offset, const void* src, size_t len) override;
  Status Flush() override { return file_->Flush(); }

 private:
  std::unique_ptr<FileBar> file_;
};

}  // namespace fibnic::ipnuma
