#include "device/ipnuma_wire.h"
#include "common/hex.h"

#include <cstdio>

namespace fibnic::ipnuma_wire {
namespace {

void Put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
void Put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}
void Put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (56 - 8 * i));
}
uint16_t Get16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
uint32_t Get32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}
uint64_t Get64(const uint8_t* p) { return (uint64_t{Get32(p)} << 32) | Get32(p + 4); }

Status Bad(size_t offset, const std::string& what) {
  return InvalidArgument("ipnuma packet byte " + std::to_string(offset) + ": " + what);
}

int LowBit(uint8_t be) {
  for (int i = 0; i < 4; ++i)
    if (be & (1u << i)) return i;
  return 4;
}
int HighBit(uint8_t be) {
  for (int i = 3; i >= 0; --i)
    if (be & (1u << i)) return i;
  return -1;
}

// PCIe byte-enable rules for a request of length_dw DW (Base spec 2.2.5): one
// DW has no last BE; two DW may be sparse; three or more must be contiguous
// across the DW boundaries (first BE filled up to bit 3, last BE from bit 0).
Status CheckByteEnables(const TlpHeader& h) {
  const size_t off = kOffTlp + 7;
  if (h.first_be > 0xF || h.last_be > 0xF) return Bad(off, "byte enable wider than 4 bits");
  if (h.first_be == 0) return Bad(off, "first DW byte enable is 0 (zero-length request)");
  if (h.length_dw == 1) {
    if (h.last_be != 0) return Bad(off, "last DW byte enable " + Hex(h.last_be) + " with Length 1 DW (must be 0)");
    return OkStatus();
  }
  if (h.last_be == 0) return Bad(off, "last DW byte enable is 0 with Length " + std::to_string(h.length_dw) + " DW");
  if (h.length_dw >= 3) {
    const bool first_ok = h.first_be == 0x8 || h.first_be == 0xC || h.first_be == 0xE || h.first_be == 0xF;
    const bool last_ok = h.last_be == 0x1 || h.last_be == 0x3 || h.last_be == 0x7 || h.last_be == 0xF;
    if (!first_ok || !last_ok) {
      return Bad(off, "byte enables first " + Hex(h.first_be) + " last " + Hex(h.last_be) +
                          " not contiguous for Length " + std::to_string(h.length_dw) + " DW");
    }
  }
  return OkStatus();
}

bool TlpIsZero(const TlpHeader& h) { return h == TlpHeader{}; }

}  // namespace

const char* PacketTypeName(PacketType t) {
  switch (t) {
    case PacketType::kWrite: return "WRITE";
    case PacketType::kAck: return "ACK";
    case PacketType::kError: return "ERROR";
    case PacketType::kReadRequest: return "READ_REQUEST";
    case PacketType::kReadCompletion: return "READ_COMPLETION";
  }
  return "?";
}

bool IsRequest(PacketType t) { return t == PacketType::kWrite || t == PacketType::kReadRequest; }
bool CarriesData(PacketType t) { return t == PacketType::kWrite || t == PacketType::kReadCompletion; }

bool TlpHeader::ByteEnabled(uint32_t i) const {
  const uint32_t dw = i / 4, b = i % 4;
  if (dw >= length_dw) return false;
  if (dw == 0) return first_be & (1u << b);
  if (dw == length_dw - 1u) return last_be & (1u << b);
  return true;
}

uint64_t TlpHeader::first_byte() const { return address + static_cast<uint64_t>(LowBit(first_be)); }

uint64_t TlpHeader::end_byte() const {
  if (length_dw <= 1) return address + static_cast<uint64_t>(HighBit(first_be) + 1);
  return address + 4ull * (length_dw - 1u) + static_cast<uint64_t>(HighBit(last_be) + 1);
}

TlpHeader TlpHeader::ForBytes(uint8_t fmt_type, uint64_t addr, uint32_t len) {
  TlpHeader h;
  h.fmt_type = fmt_type;
  const uint64_t end = addr + len;
  h.address = addr & ~uint64_t{3};
  const uint64_t end_dw = (end + 3) & ~uint64_t{3};
  h.length_dw = static_cast<uint16_t>((end_dw - h.address) / 4);
  const unsigned lo = static_cast<unsigned>(addr & 3);
  const unsigned hi = static_cast<unsigned>((end - 1) & 3);  // last byte inside its DW
  if (h.length_dw == 1) {
    h.first_be = static_cast<uint8_t>(((0xFu << lo) & (0xFu >> (3 - hi))) & 0xF);
  } else {
    h.first_be = static_cast<uint8_t>((0xFu << lo) & 0xF);
    h.last_be = static_cast<uint8_t>(0xFu >> (3 - hi));
  }
  return h;
}

Status Validate(const Packet& p) {
  const TlpHeader& h = p.tlp;
  switch (p.type) {
    case PacketType::kWrite:
    case PacketType::kReadRequest:
    case PacketType::kError:
    case PacketType::kReadCompletion:
      break;
    case PacketType::kAck:
      if (!TlpIsZero(h)) return Bad(kOffTlp, "ACK carries a non-zero TLP header");
      if (p.reason != Reason::kNone) return Bad(kOffReason, "ACK with a reason");
      if (p.seq != 0) return Bad(kOffSeq, "ACK with a non-zero seq");
      if (!p.payload.empty()) return Bad(kHeaderBytes, "ACK with a payload");
      return OkStatus();
    default:
      return Bad(kOffType, "unknown packet type " + std::to_string(static_cast<int>(p.type)));
  }
  const char* name = PacketTypeName(p.type);
  if (p.reason != Reason::kNone && p.reason != Reason::kDenied) {
    return Bad(kOffReason, "unknown reason " + std::to_string(static_cast<int>(p.reason)));
  }
  if (p.type == PacketType::kError) {
    if (p.reason == Reason::kNone) return Bad(kOffReason, "ERROR without a reason");
  } else if (p.type != PacketType::kReadCompletion && p.reason != Reason::kNone) {
    return Bad(kOffReason, std::string(name) + " with a reason");
  }
  if (IsRequest(p.type) && p.ack_seq != 0) return Bad(kOffAckSeq, std::string(name) + " with a non-zero ack_seq");
  const bool want_mwr = p.type == PacketType::kWrite;
  const bool fmt_ok = p.type == PacketType::kError ? (h.fmt_type == kFmtTypeMWr64 || h.fmt_type == kFmtTypeMRd64)
                                                   : h.fmt_type == (want_mwr ? kFmtTypeMWr64 : kFmtTypeMRd64);
  if (!fmt_ok) return Bad(kOffTlp, std::string(name) + " with TLP Fmt/Type " + Hex(h.fmt_type));
  if (h.length_dw < 1 || h.length_dw > kMaxLengthDw) {
    return Bad(kOffTlp + 2, "TLP Length " + std::to_string(h.length_dw) + " DW (allowed 1..1024)");
  }
  if (h.address & 3) return Bad(kOffTlp + 15, "TLP address " + Hex(h.address) + " not DW aligned");
  if (h.address > ~uint64_t{0} - 4ull * h.length_dw) return Bad(kOffTlp + 8, "TLP address + length wraps");
  RETURN_IF_ERROR(CheckByteEnables(h));
  const size_t want_payload = CarriesData(p.type) ? 4u * h.length_dw : 0u;
  if (p.payload.size() != want_payload) {
    return Bad(kHeaderBytes, std::string(name) + " payload of " + std::to_string(p.payload.size()) +
                                 " bytes, TLP Length says " + std::to_string(want_payload));
  }
  return OkStatus();
}

StatusOr<std::vector<uint8_t>> Encode(const Packet& p) {
  RETURN_IF_ERROR(Validate(p));
  std::vector<uint8_t> out(kHeaderBytes + p.payload.size() + kEndBytes, 0);
  uint8_t* b = out.data();
  Put32(b + kOffMagic, kMagic);
  b[kOffVersion] = kVersion;
  b[kOffType] = static_cast<uint8_t>(p.type);
  b[kOffReason] = static_cast<uint8_t>(p.reason);
  Put16(b + kOffEpoch, p.epoch);
  Put32(b + kOffSeq, p.seq);
  Put32(b + kOffAckSeq, p.ack_seq);
  if (p.type != PacketType::kAck) {
    const TlpHeader& h = p.tlp;
    const uint16_t len_field = h.length_dw == kMaxLengthDw ? 0 : h.length_dw;
    b[kOffTlp] = h.fmt_type;
    b[kOffTlp + 2] = static_cast<uint8_t>(len_field >> 8);
    b[kOffTlp + 3] = static_cast<uint8_t>(len_field);
    Put16(b + kOffTlp + 4, h.requester_id);
    b[kOffTlp + 6] = h.tag;
    b[kOffTlp + 7] = static_cast<uint8_t>((h.last_be << 4) | h.first_be);
    Put64(b + kOffTlp + 8, h.address);
  }
  for (size_t i = 0; i < p.payload.size(); ++i) b[kHeaderBytes + i] = p.payload[i];
  Put32(b + out.size() - kEndBytes, kEndCode);
  return out;
}

StatusOr<Packet> Decode(std::span<const uint8_t> bytes) {
  const size_t n = bytes.size();
  if (n < kMinPacketBytes) {
    return Bad(n, "packet of " + std::to_string(n) + " bytes, shorter than the " +
                      std::to_string(kMinPacketBytes) + "-byte header and end code");
  }
  const uint8_t* b = bytes.data();
  if (Get32(b + kOffMagic) != kMagic) return Bad(kOffMagic, "bad magic " + Hex(Get32(b + kOffMagic)));
  if (b[kOffVersion] != kVersion) return Bad(kOffVersion, "unsupported version " + std::to_string(b[kOffVersion]));
  const uint8_t type = b[kOffType];
  if (type < 1 || type > 5) return Bad(kOffType, "unknown packet type " + std::to_string(type));
  if (b[kOffFlags] != 0) return Bad(kOffFlags, "reserved flags " + Hex(b[kOffFlags]) + " not 0");
  if (Get16(b + kOffReserved) != 0) return Bad(kOffReserved, "reserved field not 0");
  if (b[kOffTlp + 1] != 0 || (b[kOffTlp + 2] & 0xFC) != 0) {
    return Bad(kOffTlp + 1, "TLP DW0 attribute bits (TC/TD/EP/Attr/AT) not 0");
  }
  Packet p;
  p.type = static_cast<PacketType>(type);
  p.reason = static_cast<Reason>(b[kOffReason]);
  p.epoch = Get16(b + kOffEpoch);
  p.seq = Get32(b + kOffSeq);
  p.ack_seq = Get32(b + kOffAckSeq);
  TlpHeader& h = p.tlp;
  h.fmt_type = b[kOffTlp];
  const uint16_t len_field = static_cast<uint16_t>(((b[kOffTlp + 2] & 3) << 8) | b[kOffTlp + 3]);
  h.requester_id = Get16(b + kOffTlp + 4);
  h.tag = b[kOffTlp + 6];
  h.last_be = b[kOffTlp + 7] >> 4;
  h.first_be = b[kOffTlp + 7] & 0xF;
  h.address = Get64(b + kOffTlp + 8);
  if (p.type == PacketType::kAck) {
    h.length_dw = len_field;  // must be 0 like the rest; Validate says so
  } else {
    h.length_dw = len_field == 0 ? kMaxLengthDw : len_field;
  }
  // The payload length follows from the type and Length; the datagram must
  // hold exactly that plus the end code, so a truncated or padded packet is
  // rejected before any payload byte is read.
  const size_t payload = CarriesData(p.type) ? 4u * h.length_dw : 0u;
  if (n != kMinPacketBytes + payload) {
    return Bad(n, std::string(PacketTypeName(p.type)) + " of " + std::to_string(n) + " bytes, TLP Length says " +
                      std::to_string(kMinPacketBytes + payload));
  }
  const size_t end_off = n - kEndBytes;
  if (Get32(b + end_off) != kEndCode) return Bad(end_off, "bad end code " + Hex(Get32(b + end_off)));
  p.payload.assign(b + kHeaderBytes, b + kHeaderBytes + payload);
  RETURN_IF_ERROR(Validate(p));
  return p;
}

}  // namespace fibnic::ipnuma_wire
