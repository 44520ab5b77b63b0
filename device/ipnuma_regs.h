// IP-NUMA NIC BAR0 register map, v1.0 — the single source of truth for offsets
// and entry encodings (docs/contract/IPNUMA.md). No other file may hard-code an
// IP-NUMA offset; everything goes through these constants and codecs.
//
// Byte order: registers and table integers are little-endian; IPv4 addresses
// and MACs are stored in network order (as on the wire).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "common/ip.h"
#include "common/status.h"

namespace fibnic::ipnuma_regs {

inline constexpr uint32_t kId = 0x554E5049;  // 'I','P','N','U' little-endian
inline constexpr uint32_t kVersion = 0x00010000;

// CSR block
inline constexpr uint32_t kOffId = 0x000000;
inline constexpr uint32_t kOffVersion = 0x000004;
inline constexpr uint32_t kOffCaps0 = 0x000008;  // number of pages
inline constexpr uint32_t kOffCaps1 = 0x00000C;  // [15:0] PC ID entries, [31:16] region entries
inline constexpr uint32_t kOffControl = 0x000014;
inline constexpr uint32_t kControlEnable = 1u << 0;
inline constexpr uint32_t kOffLocalIp = 0x000020;   // 4 bytes, network order
inline constexpr uint32_t kOffNetmask = 0x000024;   // 4 bytes, network order
inline constexpr uint32_t kOffGatewayIp = 0x000028; // 4 bytes, network order
inline constexpr uint32_t kOffLocalMac = 0x000030;  // 6 bytes, network order
inline constexpr uint32_t kOffUdpPort = 0x000038;   // u16 little-endian (low half of its word)
inline constexpr uint32_t kOffRetxTimeoutNs = 0x00003C;

// Retransmit timeout range a data centre wants (thesis ch.4: 3-40 us).
inline constexpr uint32_t kRetxTimeoutMinNs = 3'000;
inline constexpr uint32_t kRetxTimeoutMaxNs = 40'000;

inline constexpr uint32_t kOffCounters = 0x000100;  // six u64
inline constexpr int kCounterCount = 6;
inline constexpr const char* kCounterNames[kCounterCount] = {
    "tx_writes", "rx_writes", "rx_denied", "retransmits", "acks", "errors_sent"};

// Wire-protocol registers in space v1.0 left reserved (docs/contract/IPNUMA.md,
// "BAR0 additions for the wire protocol"). Every one reads 0 on a device that
// predates them, and 0 always means the documented default, so a v1.0 reader
// and a v1.0 device both stay correct; VERSION is unchanged.
inline constexpr uint32_t kOffCaps2 = 0x000010;  // RO [15:0] tx window (packets unacked per peer)
inline constexpr uint32_t kOffMaxPayload = 0x000040;  // RW u32 bytes per WRITE packet
inline constexpr uint32_t kOffRetryLimit = 0x000044;  // RW u32 retransmissions before peer down
inline constexpr uint32_t kOffEpochBase = 0x000048;   // RW [15:0] first epoch of every new stream
inline constexpr uint16_t kTxWindowDefault = 64;
inline constexpr uint32_t kMaxPayloadDefault = 64;   // one write-combined TLP (thesis 3.3.2)
inline constexpr uint32_t kMaxPayloadMax = 4096;     // PCIe Length field limit (1024 DW)
inline constexpr uint32_t kRetryLimitDefault = 8;
inline constexpr uint32_t kRetryLimitMax = 255;

// Extended counters: sixteen u64 after the six of v1.0, one per drop reason
// the wire protocol adds, so every dropped or refused packet is counted once.
inline constexpr uint32_t kOffExtCounters = 0x000200;
enum ExtCounter : int {
  kTxUnmapped = 0,      // BAR2 store to an unmapped page or an invalid PC ID: not sent
  kTxPeerDownRefused,   // packet refused because its peer is down
  kTxDisabled,          // packet refused because CONTROL.enable is 0
  kTxReads,             // READ_REQUEST packets sent (first transmissions)
  kAcksReceived,        // ACKs (and the ack part of ERROR/READ_COMPLETION) taken by the sender
  kErrorsReceived,      // ERROR packets received
  kPeersDown,           // peers marked down after the retry limit
  kRxMalformed,         // datagrams the codec rejected (dropped, no reply)
  kRxDuplicate,         // requests already applied (re-ACKed, never re-applied)
  kRxOutOfOrder,        // requests after a gap (dropped, no reply)
  kRxStaleEpoch,        // requests of a reset stream (dropped, no reply)
  kRxNoPeerState,       // new source while the receive-state table is full
  kRxDisabled,          // requests dropped because CONTROL.enable is 0
  kRxReads,             // READ_REQUESTs answered with data
  kRxReadsDenied,       // READ_REQUESTs answered with zeros + DENIED
  kExtReserved15,
  kExtCounterCount
};
inline constexpr const char* kExtCounterNames[kExtCounterCount] = {
    "tx_unmapped",     "tx_peer_down_refused", "tx_disabled",     "tx_reads",
    "acks_received",   "errors_received",      "peers_down",      "rx_malformed",
    "rx_duplicate",    "rx_out_of_order",      "rx_stale_epoch",  "rx_no_peer_state",
    "rx_disabled",     "rx_reads",             "rx_reads_denied", "reserved15"};
// Index of each v1.0 counter in Counters::v.
enum BaseCounter : int { kTxWrites = 0, kRxWrites, kRxDenied, kRetransmits, kAcks, kErrorsSent };

// Per-PC-ID peer state: one u32 per PC ID entry. bit0 DOWN (RO: the stream to
// that PC ID's IPv4 address passed the retry limit). Writing 1 to bit0 resets
// the stream (clears DOWN, drops unacked packets, starts a new epoch).
inline constexpr uint32_t kOffPeerState = 0x004000;  // + 4i
inline constexpr uint32_t kPeerStateStride = 4;
inline constexpr uint32_t kPeerStateDown = 1u << 0;

inline constexpr uint32_t kOffPcid = 0x010000;  // + 16i
inline constexpr uint32_t kPcidStride = 16;
inline constexpr uint32_t kOffRegion = 0x020000;  // + 32i
inline constexpr uint32_t kRegionStride = 32;
inline constexpr uint32_t kOffPagemap = 0x100000;  // + 8p
inline constexpr uint32_t kPagemapStride = 8;

inline constexpr uint32_t kPageBytes = 4096;      // BAR2 page size
inline constexpr uint32_t kBufferAlign = 64;      // region base/length granularity
inline constexpr uint16_t kPcidUnmapped = 0;      // PC ID 0: reserved, "unmapped"
inline constexpr uint64_t kPaMask = (uint64_t{1} << 48) - 1;

// Flags
inline constexpr uint8_t kPcidValid = 1u << 0;
inline constexpr uint8_t kPcidViaGateway = 1u << 1;
inline constexpr uint8_t kRegionValid = 1u << 0;

// The largest tables the BAR0 layout leaves room for (PC ID table ends where the
// region table starts; the region table ends where the page map starts).
inline constexpr uint32_t kMaxPcidEntries = (kOffRegion - kOffPcid) / kPcidStride;
inline constexpr uint32_t kMaxRegionEntries = (kOffPagemap - kOffRegion) / kRegionStride;
static_assert(kOffPeerState + kPeerStateStride * kMaxPcidEntries <= kOffPcid, "PEER_STATE overlaps PCID");
static_assert(kOffExtCounters + 8 * kExtCounterCount <= kOffPeerState, "counters overlap PEER_STATE");

struct Caps {
  uint32_t pages = 262'144;       // CAPS0: 1 GiB page region
  uint16_t pcid_entries = 4'096;  // CAPS1[15:0], entry 0 reserved
  uint16_t region_entries = 64;   // CAPS1[31:16]

  uint32_t caps0() const { return pages; }
  uint32_t caps1() const { return pcid_entries | (uint32_t{region_entries} << 16); }
  static Caps Decode(uint32_t c0, uint32_t c1);
  // A model the layout can hold: page count > 0, PC ID entries 2..kMaxPcidEntries
  // (entry 0 is reserved), region entries 1..kMaxRegionEntries.
  Status Validate() const;
  // Whole BAR0 size (ends with the page map).
  size_t bar0_bytes() const { return kOffPagemap + size_t{kPagemapStride} * pages; }
  // BAR2 (page region) size.
  uint64_t bar2_bytes() const { return uint64_t{kPageBytes} * pages; }
  // The KC705 prototype's table sizes (spec v1.0).
  static Caps Standard() { return Caps{}; }
  bool operator==(const Caps&) const = default;
};

// Local NIC registers (0x014..0x03F).
struct LocalRegs {
  uint32_t control = 0;
  uint32_t local_ip = 0;    // host-order integer, stored network order
  uint32_t netmask = 0;     // host-order integer, stored network order
  uint32_t gateway_ip = 0;  // host-order integer, stored network order
  MacAddr local_mac;
  uint16_t udp_port = 0;
  uint32_t retx_timeout_ns = 0;
  bool operator==(const LocalRegs&) const = default;
};

// One PC ID table entry: the peer's IPv4 address and the MAC frames go to.
struct PcidEntry {
  uint32_t ip = 0;  // host-order integer, stored network order
  MacAddr mac;
  uint8_t flags = 0;  // kPcidValid | kPcidViaGateway
  bool valid() const { return flags & kPcidValid; }
  bool via_gateway() const { return flags & kPcidViaGateway; }
  std::array<uint8_t, kPcidStride> Encode() const;
  static PcidEntry Decode(const uint8_t* p);
  bool operator==(const PcidEntry&) const = default;
};

// One shared-region entry: physical memory a peer (ip/mask) may write.
struct RegionEntry {
  uint64_t base = 0;    // physical address, 64-byte aligned
  uint64_t length = 0;  // bytes, multiple of 64
  uint32_t peer_ip = 0; // host-order integer, stored network order
  uint32_t mask = 0;    // host-order integer, stored network order
  uint8_t flags = 0;    // kRegionValid
  bool valid() const { return flags & kRegionValid; }
  // Whether a write of len bytes at pa from src is inside this (valid) region.
  bool Admits(uint32_t src, uint64_t pa, uint64_t len) const {
    return valid() && (src & mask) == (peer_ip & mask) && pa >= base && len <= length &&
           pa - base <= length - len;
  }
  std::array<uint8_t, kRegionStride> Encode() const;
  static RegionEntry Decode(const uint8_t* p);
  bool operator==(const RegionEntry&) const = default;
};

// One page map word: [47:0] remote physical address (4 KiB aligned), [63:48] PC ID.
// The device reads it as two 32-bit halves; lo() then hi() name them.
struct PagemapEntry {
  uint64_t remote_pa = 0;
  uint16_t pcid = kPcidUnmapped;
  bool mapped() const { return pcid != kPcidUnmapped; }
  uint64_t Encode() const { return (remote_pa & kPaMask) | (uint64_t{pcid} << 48); }
  static PagemapEntry Decode(uint64_t word) {
    return PagemapEntry{word & kPaMask, static_cast<uint16_t>(word >> 48)};
  }
  uint32_t lo() const { return static_cast<uint32_t>(Encode()); }
  uint32_t hi() const { return static_cast<uint32_t>(Encode() >> 32); }
  bool operator==(const PagemapEntry&) const = default;
};

struct Counters {
  std::array<uint64_t, kCounterCount> v{};
  static Counters Decode(const uint8_t* p);  // 48 bytes at kOffCounters
  bool operator==(const Counters&) const = default;
};

struct ExtCounters {
  std::array<uint64_t, kExtCounterCount> v{};
  static ExtCounters Decode(const uint8_t* p);  // 128 bytes at kOffExtCounters
  std::array<uint8_t, 8 * kExtCounterCount> Encode() const;
  bool operator==(const ExtCounters&) const = default;
};

// The wire-protocol parameters, with a register's 0 read as its default, the
// payload rounded down to a power of two in [64, 4096] and the retry limit
// capped at 255 (a device never runs with a window of 0 or a payload that
// could cross a 4 KiB page). RETX_TIMEOUT_NS 0 reads as 3 us.
struct WireParams {
  uint16_t tx_window = kTxWindowDefault;
  uint32_t max_payload = kMaxPayloadDefault;
  uint32_t retry_limit = kRetryLimitDefault;
  uint32_t retx_timeout_ns = kRetxTimeoutMinNs;
  uint16_t epoch_base = 0;
  bool operator==(const WireParams&) const = default;
};
WireParams DecodeWireParams(const uint8_t* bar0);

// Byte offset of each entry.
inline constexpr uint32_t PcidOffset(uint32_t i) { return kOffPcid + kPcidStride * i; }
inline constexpr uint32_t RegionOffset(uint32_t i) { return kOffRegion + kRegionStride * i; }
inline constexpr uint32_t PeerStateOffset(uint32_t i) { return kOffPeerState + kPeerStateStride * i; }
inline constexpr uint64_t PagemapOffset(uint32_t p) { return kOffPagemap + uint64_t{kPagemapStride} * p; }
// Offsets of the 32-bit words whose write order the update rules fix.
inline constexpr uint32_t kPcidFlagsWord = 8;     // MAC[4..5] | flags | pad
inline constexpr uint32_t kRegionFlagsWord = 24;  // flags | pad
inline constexpr uint32_t kPagemapHiWord = 4;     // PA[47:32] | PC ID

// Decodes the local-register block from BAR0 bytes [0, 0x40).
LocalRegs DecodeLocalRegs(const uint8_t* bar0);
// The 32-bit words of the local-register block in write order (offset, value);
// CONTROL last so the NIC is enabled only once it is configured.
std::array<std::pair<uint32_t, uint32_t>, 8> EncodeLocalRegs(const LocalRegs& r);

// Dotted-quad of a host-order IPv4 integer (for messages).
std::string Ipv4String(uint32_t host_order);

}  // namespace fibnic::ipnuma_regs
