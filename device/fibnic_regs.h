// FIBNIC BAR0 register map, v1.0 — the single source of truth for offsets and
// entry encodings (docs/contract/FIBNIC.md). No other file may hard-code a
// FIBNIC offset; everything goes through these constants and codecs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "common/ip.h"

namespace fibnic::regs {

inline constexpr uint32_t kId = 0x4E424946;  // 'F','I','B','N' little-endian
inline constexpr uint32_t kVersion = 0x00010000;

// CSR block
inline constexpr uint32_t kOffId = 0x000000;
inline constexpr uint32_t kOffVersion = 0x000004;
inline constexpr uint32_t kOffCaps0 = 0x000008;   // [7:0] sram addr bits, [11:8] code bits, [23:16] ports
inline constexpr uint32_t kOffCaps1 = 0x00000C;   // [15:0] next-hop entries, [31:16] TCAM entries
inline constexpr uint32_t kOffCaps2 = 0x000010;   // [15:0] neighbour CAM entries, [16] DROP
inline constexpr uint32_t kOffControl = 0x000014; // bit0 IPv4 fwd enable, bit1 IPv6 fwd enable
inline constexpr uint32_t kOffGeneration = 0x000018;
inline constexpr uint32_t kOffScratch = 0x00001C;
inline constexpr uint32_t kControlV4Enable = 1u << 0;
inline constexpr uint32_t kControlV6Enable = 1u << 1;

inline constexpr uint32_t kOffPortMac = 0x000040;  // + 8p, 6 bytes
inline constexpr uint32_t kPortMacStride = 8;
inline constexpr uint32_t kOffPortCounters = 0x000100;  // + 64p, eight u64
inline constexpr uint32_t kPortCountersStride = 64;
inline constexpr int kPortCounterCount = 8;
inline constexpr const char* kPortCounterNames[kPortCounterCount] = {
    "rx", "forwarded", "punted", "drop_ttl", "drop_fifo", "tx", "rx_bytes", "tx_bytes"};

// DROP_COUNTERS[p]: frames received on port p that a VALID|DROP next-hop
// entry dropped (a device with CAPS2 DROP; reserved space otherwise).
inline constexpr uint32_t kOffDropCounters = 0x000800;  // + 8p, one u64
inline constexpr uint32_t kDropCounterStride = 8;

inline constexpr uint32_t kOffNexthop = 0x001000;  // + 16i
inline constexpr uint32_t kNexthopStride = 16;
inline constexpr uint32_t kOffTcam6 = 0x002000;  // + 32i
inline constexpr uint32_t kTcam6Stride = 32;
inline constexpr uint32_t kOffNeigh = 0x004000;  // + 32i
inline constexpr uint32_t kNeighStride = 32;
inline constexpr uint32_t kOffSram4 = 0x1000000;

// Flags
inline constexpr uint8_t kNexthopValid = 1u << 0;
inline constexpr uint8_t kNexthopConnected = 1u << 1;
// VALID|DROP: the frame is dropped in the card (a blackhole route), counted in
// DROP_COUNTERS of its ingress port. Only on a device whose CAPS2 say DROP:
// an older device would take the entry for a forward to port 0.
inline constexpr uint8_t kNexthopDrop = 1u << 2;
inline constexpr uint32_t kCaps2Drop = 1u << 16;
inline constexpr uint8_t kTcamValid = 1u << 0;
inline constexpr uint8_t kNeighValid = 1u << 0;

// Device models the host knows how to drive (CAPS decoded).
struct Caps {
  uint8_t sram_addr_bits = 22;
  uint8_t code_bits = 2;     // 2 (4 MiB SRAM) or 4 (8 MiB SRAM)
  uint8_t ports = 4;
  uint16_t nexthop_entries = 4;  // 2^code_bits, entry 0 unused
  uint16_t tcam_entries = 32;
  uint16_t neigh_entries = 256;
  bool drop = true;  // CAPS2 DROP: the NEXTHOP DROP flag and DROP_COUNTERS are implemented

  uint32_t caps0() const { return sram_addr_bits | (uint32_t{code_bits} << 8) | (uint32_t{ports} << 16); }
  uint32_t caps1() const { return nexthop_entries | (uint32_t{tcam_entries} << 16); }
  uint32_t caps2() const { return neigh_entries | (drop ? kCaps2Drop : 0u); }
  static Caps Decode(uint32_t c0, uint32_t c1, uint32_t c2);
  // Bytes of SRAM: 2^addr_bits words of 8 (2-bit codes) or 16 (4-bit codes) bits.
  size_t sram_bytes() const { return (size_t{1} << sram_addr_bits) * (code_bits == 4 ? 2 : 1); }
  // Whole BAR0 size.
  size_t bar_bytes() const { return kOffSram4 + sram_bytes(); }
  // Usable hardware next-hop codes: 1 .. 2^code_bits - 1.
  int slots() const { return (1 << code_bits) - 1; }
  // The two standard models (with DROP, as the RTL builds them).
  static Caps Model2Bit();
  static Caps Model4Bit();
  bool operator==(const Caps&) const = default;
  // The same model but for the DROP capability (a device built before it).
  bool SameModel(const Caps& o) const;
};

struct NexthopEntry {
  MacAddr dst_mac;
  uint8_t port = 0;
  uint8_t flags = 0;  // kNexthopValid | kNexthopConnected | kNexthopDrop
  bool valid() const { return flags & kNexthopValid; }
  bool connected() const { return flags & kNexthopConnected; }
  bool drop() const { return flags & kNexthopDrop; }
  std::array<uint8_t, kNexthopStride> Encode() const;
  static NexthopEntry Decode(const uint8_t* p);
  bool operator==(const NexthopEntry&) const = default;
};

struct Tcam6Entry {
  uint64_t value = 0;  // first 64 bits of the prefix (host-order integer, stored network order)
  uint64_t mask = 0;
  uint8_t code = 0;
  uint8_t flags = 0;  // kTcamValid
  bool valid() const { return flags & kTcamValid; }
  bool Matches(uint64_t dst_hi) const { return valid() && (dst_hi & mask) == value; }
  std::array<uint8_t, kTcam6Stride> Encode() const;
  static Tcam6Entry Decode(const uint8_t* p);
  bool operator==(const Tcam6Entry&) const = default;
};

struct NeighEntry {
  std::array<uint8_t, 16> addr{};  // IPv4 as ::ffff:a.b.c.d
  MacAddr mac;
  uint8_t port = 0;
  uint8_t flags = 0;  // kNeighValid
  bool valid() const { return flags & kNeighValid; }
  std::array<uint8_t, kNeighStride> Encode() const;
  static NeighEntry Decode(const uint8_t* p);
  bool operator==(const NeighEntry&) const = default;
};

// Byte offset of the entry, for each table.
inline constexpr uint32_t NexthopOffset(uint32_t i) { return kOffNexthop + kNexthopStride * i; }
inline constexpr uint32_t Tcam6Offset(uint32_t i) { return kOffTcam6 + kTcam6Stride * i; }
inline constexpr uint32_t NeighOffset(uint32_t i) { return kOffNeigh + kNeighStride * i; }
inline constexpr uint32_t PortMacOffset(uint32_t p) { return kOffPortMac + kPortMacStride * p; }
inline constexpr uint32_t PortCountersOffset(uint32_t p) { return kOffPortCounters + kPortCountersStride * p; }
inline constexpr uint32_t DropCounterOffset(uint32_t p) { return kOffDropCounters + kDropCounterStride * p; }

// SRAM4 addressing: word a = dst >> 10, sub-index s = (dst >> 8) & 3.
inline constexpr uint32_t SramWordOf(uint32_t dst) { return dst >> 10; }
inline constexpr uint32_t SramSubOf(uint32_t dst) { return (dst >> 8) & 3; }
// Bytes per SRAM word and the word's byte offset inside the SRAM region.
inline constexpr uint32_t SramWordBytes(int code_bits) { return code_bits == 4 ? 2 : 1; }

// Code of a /24 (index = dst >> 8) in an SRAM byte image.
uint8_t SramCode(const uint8_t* sram, int code_bits, uint32_t slash24);

}  // namespace fibnic::regs
