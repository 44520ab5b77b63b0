// A Verilated fibnic_top driven like the real card: BAR0 accesses over the
// host bus, one 8-bit GMII byte per clock on the line side.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "device/fibnic_regs.h"

namespace fibnic::fpga {

// One output frame as it left the pipeline: tag + frame bytes.
struct TxFrame {
  std::vector<uint8_t> bytes;
  uint64_t sof_cycle = 0;
};

template <typename V>
class SimDevice {
 public:
  SimDevice() : top_(std::make_unique<V>()) {
    top_->rst = 1;
    for (int i = 0; i < 4; ++i) Tick();
    top_->rst = 0;
    Tick();
  }

  // One clock: inputs as set now, outputs sampled after the rising edge.
  void Tick() {
    top_->clk = 0;
    top_->eval();
    top_->clk = 1;
    top_->eval();
    ++cycle_;
    if (top_->tx_dv) {
      if (top_->tx_sof) {
        current_.bytes.clear();
        current_.sof_cycle = cycle_;
        in_tx_ = true;
      }
      if (in_tx_) current_.bytes.push_back(top_->tx_data);
      if (top_->tx_eof && in_tx_) {
        tx_.push_back(std::move(current_));
        current_ = {};
        in_tx_ = false;
      }
    }
  }

  void Write32(uint32_t addr, uint32_t value, uint8_t strobes = 0xf) {
    top_->bar_we = 1;
    top_->bar_waddr = addr;
    top_->bar_wdata = value;
    top_->bar_wstrb = strobes;
    Tick();
    top_->bar_we = 0;
  }

  uint32_t Read32(uint32_t addr) {
    top_->bar_raddr = addr;
    top_->bar_re = 1;
    Tick();
    top_->bar_re = 0;
    for (int i = 0; i < 8; ++i) {
      Tick();
      if (top_->bar_rvalid) return top_->bar_rdata;
    }
    return 0xdeadbeef;  // never answered: the caller's comparison fails
  }

  // Writes [from, to) of a whole-BAR image, one 32-bit word per clock.
  void Load(const std::vector<uint8_t>& bar, uint32_t from, uint32_t to) {
    for (uint32_t a = from; a + 4 <= to && a + 4 <= bar.size(); a += 4)
      Write32(a, bar[a] | (bar[a + 1] << 8) | (bar[a + 2] << 16) | (uint32_t{bar[a + 3]} << 24));
  }

  // Sends one frame: 7 preamble bytes, SFD, the frame, then `gap` idle clocks.
  uint64_t Send(uint8_t port, const std::vector<uint8_t>& frame, int gap) {
    const uint64_t first = cycle_ + 1;
    top_->rx_port = port;
    for (int i = 0; i < 8; ++i) SendByte(i < 7 ? 0x55 : 0xd5);
    for (uint8_t b : frame) SendByte(b);
    top_->rx_dv = 0;
    top_->rx_data = 0;
    for (int i = 0; i < gap; ++i) Tick();
    return first;
  }

  void Idle(int clocks) {
    for (int i = 0; i < clocks; ++i) Tick();
  }

  std::vector<TxFrame>& tx() { return tx_; }
  uint64_t cycle() const { return cycle_; }

 private:
  void SendByte(uint8_t b) {
    top_->rx_dv = 1;
    top_->rx_data = b;
    Tick();
  }

  std::unique_ptr<V> top_;
  uint64_t cycle_ = 0;
  std::vector<TxFrame> tx_;
  TxFrame current_;
  bool in_tx_ = false;
};

}  // namespace fibnic::fpga
