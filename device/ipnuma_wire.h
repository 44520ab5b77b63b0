// IP-NUMA wire format v1 (docs/contract/IPNUMA.md, "Wire format"): the UDP
// payload one NIC sends another. Encode and Decode are the only code that
// knows a field's offset; the model, the emulator and tests go through them.
//
// Byte order: every multi-byte field is big-endian (network order), as the
// PCIe TLP header it carries is.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"

namespace fibnic::ipnuma_wire {

inline constexpr uint32_t kMagic = 0x49504E4D;    // 'I','P','N','M'
inline constexpr uint32_t kEndCode = 0x49504E45;  // 'I','P','N','E'
inline constexpr uint8_t kVersion = 1;

// Byte offsets inside the UDP payload.
inline constexpr size_t kOffMagic = 0;
inline constexpr size_t kOffVersion = 4;
inline constexpr size_t kOffType = 5;
inline constexpr size_t kOffReason = 6;
inline constexpr size_t kOffFlags = 7;     // reserved, 0
inline constexpr size_t kOffEpoch = 8;
inline constexpr size_t kOffReserved = 10; // 2 bytes, 0
inline constexpr size_t kOffSeq = 12;
inline constexpr size_t kOffAckSeq = 16;
inline constexpr size_t kOffTlp = 20;      // 4-DW PCIe request header
inline constexpr size_t kHeaderBytes = 36;
inline constexpr size_t kEndBytes = 4;
inline constexpr size_t kMinPacketBytes = kHeaderBytes + kEndBytes;
inline constexpr uint32_t kMaxLengthDw = 1024;  // PCIe Length field; 0 encodes 1024
inline constexpr size_t kMaxPacketBytes = kMinPacketBytes + 4 * kMaxLengthDw;

enum class PacketType : uint8_t {
  kWrite = 1,           // carries data; sequenced
  kAck = 2,             // cumulative: every seq before ack_seq is done
  kError = 3,           // a request was refused (reason), plus the cumulative ack
  kReadRequest = 4,     // sequenced; answered by a READ_COMPLETION
  kReadCompletion = 5,  // the data read (zeros if denied), plus the cumulative ack
};
const char* PacketTypeName(PacketType t);

enum class Reason : uint8_t {
  kNone = 0,
  kDenied = 1,  // no valid REGION admits the source IP and the byte range
};

// PCIe Fmt/Type byte (DW0 bits 31:24) of the 4-DW request a packet carries.
inline constexpr uint8_t kFmtTypeMWr64 = 0x60;  // Fmt 011 (4 DW, data), Type 00000
inline constexpr uint8_t kFmtTypeMRd64 = 0x20;  // Fmt 001 (4 DW, no data), Type 00000

// The 4-DW TLP header: DW0 Fmt/Type + Length, DW1 requester ID, tag and byte
// enables, DW2-DW3 the 64-bit DW-aligned address. The byte enables say which
// bytes of the first and last DW the request covers, so a 1-byte store does
// not overwrite its neighbours.
struct TlpHeader {
  uint8_t fmt_type = 0;
  uint16_t length_dw = 0;  // 1..1024
  uint16_t requester_id = 0;
  uint8_t tag = 0;
  uint8_t first_be = 0;    // 4 bits
  uint8_t last_be = 0;     // 4 bits; 0 when length_dw == 1
  uint64_t address = 0;    // bits [1:0] are 0

  // Whether byte i (0 .. 4*length_dw-1) of the payload is enabled.
  bool ByteEnabled(uint32_t i) const;
  // The first and one-past-last enabled byte addresses (the range a region check sees).
  uint64_t first_byte() const;
  uint64_t end_byte() const;
  // The header for a contiguous byte range [addr, addr+len), len >= 1, that
  // spans at most 1024 DW.
  static TlpHeader ForBytes(uint8_t fmt_type, uint64_t addr, uint32_t len);
  bool operator==(const TlpHeader&) const = default;
};

struct Packet {
  PacketType type = PacketType::kWrite;
  Reason reason = Reason::kNone;
  uint16_t epoch = 0;
  uint32_t seq = 0;      // WRITE/READ_REQUEST: its own; ERROR/READ_COMPLETION: the request's; ACK: 0
  uint32_t ack_seq = 0;  // ACK/ERROR/READ_COMPLETION: next seq expected; requests: 0
  TlpHeader tlp;         // ACK: all zero; ERROR/READ_COMPLETION: the request's header
  std::vector<uint8_t> payload;  // WRITE/READ_COMPLETION: 4 * length_dw bytes
  bool operator==(const Packet&) const = default;
};

bool IsRequest(PacketType t);
bool CarriesData(PacketType t);

// Checks every rule Decode checks, so Encode never emits what Decode rejects.
Status Validate(const Packet& p);
StatusOr<std::vector<uint8_t>> Encode(const Packet& p);
// Never reads outside `bytes`; an error names the field and its byte offset.
StatusOr<Packet> Decode(std::span<const uint8_t> bytes);

}  // namespace fibnic::ipnuma_wire
