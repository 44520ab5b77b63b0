// The card's per-frame job in software: what the FIBNIC does with a frame
// from one of its wire ports or from its host-facing NIC function, decided by
// the frame model (fpga/model RunPipelineModel on the live BAR bytes: the one
// implementation of the contract's semantics) and counted into PORT_COUNTERS
// the way the RTL counts them (docs/fpga.md). No sockets here: the lab's
// packet loop and the RTL replay test feed it the same way.
//
// Frames are as an AF_PACKET socket carries them: destination MAC .. payload,
// without the FCS, which the interface found good (a veth has none to find
// bad). The model's in-place form (fpga::RunPipelineInPlace) decides them as
// the frame model decides the frame with its correct FCS appended, and
// rewrites a forwarded frame where it lies: no copy, and no CRC, since the
// FCS it would compute is stripped on the way out. A frame too short for
// that (shorter than the headers the checks may read) takes the model on a
// copy with its FCS appended.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fpga/model/frame_model.h"
#include "hwif/counters.h"

namespace fibnic::emu {

// Where a frame leaves the card.
enum class Exit : uint8_t {
  kWire,  // transmitted on wire port `port`
  kHost,  // handed to the host through port `port`'s NIC function (a punt)
  kNone,  // dropped in the card (a DROP next-hop entry): sent nowhere
};

struct Verdict {
  Exit exit = Exit::kHost;
  uint8_t port = 0;
  fpga::Reason reason = fpga::Reason::kForward;
  // The bytes to send, without FCS: always the frame passed in, rewritten in
  // place when forwarding, else as received.
  std::span<const uint8_t> frame;
};

class Forwarder {
 public:
  // bar: the whole BAR0 (regs::Caps::bar_bytes()), read live at every frame;
  // ports: the CAPS' port count.
  Forwarder(std::span<const uint8_t> bar, int ports);

  // A frame received on wire port `port`: forward (rewritten, to a wire) or
  // punt (unchanged, to this port's host side) or drop (nowhere). Counts rx,
  // forwarded/punted, drop_ttl, tx of the egress port, and a drop in
  // drop_route (DROP_COUNTERS) of the port it came in on.
  Verdict FromWire(uint8_t port, std::span<uint8_t> frame);

  // A frame the host sent through port `port`'s NIC function: out on that
  // wire, unchanged. Not a pipeline frame, so no counter moves (as on the RTL).
  Verdict FromHost(uint8_t port, std::span<const uint8_t> frame) const;

  // Frames lost inside the card (its receive ring overflowed, or the egress
  // refused them), on the port they came in on.
  void CountFifoDrops(uint8_t port, uint64_t n);

  const std::vector<PortCounters>& counters() const { return counters_; }

 private:
  std::span<const uint8_t> bar_;
  std::vector<PortCounters> counters_;
  std::vector<uint8_t> with_fcs_;  // scratch for a short frame: the frame + its FCS
};

// Writes `counters` into the BAR's PORT_COUNTERS (and DROP_COUNTERS where the
// CAPS announce DROP), one aligned 64-bit store per counter: a reader (hwif
// ReadCounter64's high-low-high) never sees a torn value.
void PublishCounters(uint8_t* bar, const std::vector<PortCounters>& counters);

}  // namespace fibnic::emu
