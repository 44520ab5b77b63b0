// Frame-level reference model of the FIBNIC lookup + rewrite pipeline: one
// frame in from an ingress port, out either to the host (punt, frame untouched)
// or to an egress port with the RFC 1812 rewrite applied. The table decision is
// hwif's HwLookup on the same BAR0 bytes the device holds; the framing checks
// and the rewrite (TTL, RFC 1624 checksum, MACs, FCS) are implemented here,
// independently of the RTL, so the Verilator bench can compare the two.
//
// Frames are as on the wire after the SFD: destination MAC .. FCS inclusive.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fpga/model/punt_reason.h"

namespace fibnic::fpga {

// The 8 bytes that replace the preamble and SFD on the pipeline's output
// (docs/fpga.md, "Leading port tag").
inline constexpr size_t kTagBytes = 8;
inline constexpr uint8_t kTagHost = 0x80;      // byte 0: destined to the host
inline constexpr uint8_t kTagNoTcam = 0xff;    // byte 4 when no TCAM entry won
inline constexpr uint8_t kTagTrailer = 0xd5;   // byte 7 (keeps an SFD in place)

struct PipelineResult {
  Reason reason = Reason::kRunt;
  uint8_t ingress_port = 0;
  uint8_t egress_port = 0;  // meaningful when forwarding
  uint8_t code = 0;         // next-hop code from SRAM4/TCAM6, 0 if none was read
  int tcam_index = -1;      // IPv6: winning TCAM6 entry
  // Forwarded: the rewritten frame with its FCS recomputed (complemented if the
  // received FCS was bad, so the error survives). Punted or dropped: the frame
  // as received.
  std::vector<uint8_t> frame;

  bool forward() const { return reason == Reason::kForward; }
  bool dropped() const { return reason == Reason::kDrop; }  // nothing leaves the pipeline
  std::array<uint8_t, kTagBytes> Tag() const;
};

// bar: the whole BAR0 (ID .. SRAM4) as the device holds it.
PipelineResult RunPipelineModel(std::span<const uint8_t> bar, uint8_t ingress_port,
                                std::span<const uint8_t> frame);

// The same pipeline on a frame as a Linux interface carries it: destination
// MAC .. payload, its FCS stripped after the interface found it good. The
// decision (reason, code, TCAM entry, egress port) is RunPipelineModel's on
// the frame with its correct FCS appended; a forwarded frame is rewritten in
// place (MACs, TTL, checksum), and no FCS is computed, as none is carried on.
// `frame` must hold at least kInPlaceMinBytes (every byte the checks read);
// the result's `frame` stays empty.
inline constexpr size_t kInPlaceMinBytes = 55;
PipelineResult RunPipelineInPlace(std::span<const uint8_t> bar, uint8_t ingress_port, std::span<uint8_t> frame);

}  // namespace fibnic::fpga
