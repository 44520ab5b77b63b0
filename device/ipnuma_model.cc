#include "device/ipnuma_model.h"
#include "common/hex.h"

#include <algorithm>
#include <cstring>

namespace fibnic::ipnuma_model {
namespace regs = ipnuma_regs;
namespace wire = ipnuma_wire;
namespace {

uint32_t Le32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}
uint64_t Le64(const uint8_t* p) { return Le32(p) | (uint64_t{Le32(p + 4)} << 32); }

regs::Caps CapsOf(std::span<const uint8_t> bar0) {
  return regs::Caps::Decode(Le32(bar0.data() + regs::kOffCaps0), Le32(bar0.data() + regs::kOffCaps1));
}

}  // namespace

// ---------------------------------------------------------------- Sender

regs::Caps Sender::caps() const { return CapsOf(bar0_); }

Status Sender::Resolve(uint64_t bar2_offset, Target* t) {
  const regs::Caps c = caps();
  const uint64_t page = bar2_offset / regs::kPageBytes;
  if (page >= c.pages) return OutOfRange("BAR2 offset " + Hex(bar2_offset) + " beyond the page region");
  if (regs::PagemapOffset(static_cast<uint32_t>(page)) + regs::kPagemapStride > bar0_.size()) {
    return OutOfRange("PAGEMAP[" + std::to_string(page) + "] beyond the BAR0 image");
  }
  const auto pm = regs::PagemapEntry::Decode(Le64(bar0_.data() + regs::PagemapOffset(static_cast<uint32_t>(page))));
  if (!pm.mapped()) return NotFound("page " + std::to_string(page) + " is unmapped");
  if (pm.pcid >= c.pcid_entries) {
    return NotFound("page " + std::to_string(page) + " names PC ID " + std::to_string(pm.pcid) + " beyond the table");
  }
  if (regs::PcidOffset(pm.pcid) + regs::kPcidStride > bar0_.size()) {
    return OutOfRange("PCID[" + std::to_string(pm.pcid) + "] beyond the BAR0 image");
  }
  const auto pe = regs::PcidEntry::Decode(bar0_.data() + regs::PcidOffset(pm.pcid));
  if (!pe.valid()) return NotFound("page " + std::to_string(page) + " names invalid PC ID " + std::to_string(pm.pcid));
  t->pcid = pm.pcid;
  t->ip = pe.ip;
  t->mac = pe.mac;
  t->remote = pm.remote_pa + bar2_offset % regs::kPageBytes;
  return OkStatus();
}

Status Sender::Enqueue(uint64_t bar2_offset, std::span<const uint8_t> data, uint32_t len, bool is_read) {
  if (len == 0) return OkStatus();
  const regs::WireParams wp = regs::DecodeWireParams(bar0_.data());
  const bool enabled = regs::DecodeLocalRegs(bar0_.data()).control & regs::kControlEnable;
  Status first;
  const uint64_t end = bar2_offset + len;
  for (uint64_t pos = bar2_offset; pos < end;) {
    // Pieces end on MAX_PAYLOAD boundaries, as write-combining buffers flush
    // whole aligned lines; with MAX_PAYLOAD <= 4096 no piece crosses a page.
    const uint64_t piece_end = std::min(end, (pos / wp.max_payload + 1) * wp.max_payload);
    const uint32_t n = static_cast<uint32_t>(piece_end - pos);
    Target t;
    Status st = enabled ? Resolve(pos, &t) : FailedPrecondition("CONTROL.enable is 0");
    Stream* s = nullptr;
    if (st.ok()) {
      auto [it, fresh] = streams_.try_emplace(t.ip);
      // EPOCH_BASE rises across NIC resets, so a receiver that still holds
      // the previous incarnation's stream takes this one as newer.
      if (fresh) it->second.epoch = wp.epoch_base;
      s = &it->second;
      if (s->down) {
        st = Unavailable("peer " + regs::Ipv4String(t.ip) + " (PC ID " + std::to_string(t.pcid) + ") is down");
      }
    }
    if (!st.ok()) {
      counters_[!enabled                                      ? regs::kTxDisabled
                : st.code() == StatusCode::kUnavailable ? regs::kTxPeerDownRefused
                                                              : regs::kTxUnmapped]++;
      if (first.ok()) first = st;
      pos = piece_end;
      continue;
    }
    s->mac = t.mac;
    Pending p;
    p.seq = s->next++;
    p.is_read = is_read;
    p.pcid = t.pcid;
    p.bar2_offset = pos;
    p.bytes = n;
    p.tlp = wire::TlpHeader::ForBytes(is_read ? wire::kFmtTypeMRd64 : wire::kFmtTypeMWr64, t.remote, n);
    wire::Packet pkt;
    pkt.type = is_read ? wire::PacketType::kReadRequest : wire::PacketType::kWrite;
    pkt.epoch = s->epoch;
    pkt.seq = p.seq;
    pkt.tlp = p.tlp;
    if (!is_read) {
      pkt.payload.assign(4u * p.tlp.length_dw, 0);
      std::memcpy(pkt.payload.data() + (t.remote & 3), data.data() + (pos - bar2_offset), n);
    }
    auto bytes = wire::Encode(pkt);
    if (!bytes.ok()) return bytes.status().WithContext("encoding the packet for BAR2 " + Hex(pos));
    p.wire = std::move(bytes).value();
    s->q.push_back(std::move(p));
    pos = piece_end;
  }
  return first;
}

Status Sender::Store(uint64_t bar2_offset, std::span<const uint8_t> data) {
  return Enqueue(bar2_offset, data, static_cast<uint32_t>(data.size()), false);
}

Status Sender::Load(uint64_t bar2_offset, uint32_t len) { return Enqueue(bar2_offset, {}, len, true); }

void Sender::GoDown(Stream& s) {
  s.down = true;
  counters_[regs::kPeersDown]++;
  for (const Pending& p : s.q) {
    events_.push_back(WriterEvent{WriterEvent::Kind::kPeerDown, p.pcid, p.bar2_offset, p.bytes, {}});
  }
  s.q.clear();
  s.sent = 0;
  s.base = s.next;
}

std::vector<Datagram> Sender::Poll(uint64_t now_ns) {
  const regs::WireParams wp = regs::DecodeWireParams(bar0_.data());
  std::vector<Datagram> out;
  for (auto& [ip, s] : streams_) {
    if (s.down) continue;
    if (s.sent > 0 && now_ns >= s.deadline) {
      if (s.retries >= wp.retry_limit) {
        GoDown(s);
        continue;
      }
      // Go-back-N: the receiver keeps nothing past a gap, so everything sent
      // after the oldest unacked packet is sent again, in order.
      s.retries++;
      for (size_t i = 0; i < s.sent; ++i) {
        out.push_back(Datagram{ip, s.mac, s.q[i].wire});
        counters_[regs::kRetransmits]++;
      }
      s.deadline = now_ns + wp.retx_timeout_ns;
    }
    while (s.sent < s.q.size() && s.sent < wp.tx_window) {
      // A read is a fence: a later request must not be applied before the
      // read's data is taken, or the read could return the later write.
      if (s.sent > 0 && std::any_of(s.q.begin(), s.q.begin() + static_cast<long>(s.sent),
                                    [](const Pending& p) { return p.is_read; })) {
        break;
      }
      if (s.sent == 0) s.deadline = now_ns + wp.retx_timeout_ns;
      const Pending& p = s.q[s.sent++];
      out.push_back(Datagram{ip, s.mac, p.wire});
      if (p.is_read) {
        counters_[regs::kTxReads]++;
      } else {
        counters_[regs::kTxWrites]++;
      }
    }
  }
  return out;
}

void Sender::Ack(Stream& s, uint32_t ack_seq, uint64_t now_ns) {
  const uint32_t n = ack_seq - s.base;  // serial arithmetic: sequences wrap
  if (n == 0 || n > s.sent) return;    // old or never sent: nothing to release
  s.q.erase(s.q.begin(), s.q.begin() + n);
  s.sent -= n;
  s.base = ack_seq;
  s.retries = 0;
  s.deadline = now_ns + regs::DecodeWireParams(bar0_.data()).retx_timeout_ns;
}

Status Sender::OnDatagram(uint32_t src_ip, std::span<const uint8_t> bytes, uint64_t now_ns) {
  auto decoded = wire::Decode(bytes);
  if (!decoded.ok()) {
    counters_[regs::kRxMalformed]++;
    return decoded.status();
  }
  const wire::Packet& p = *decoded;
  if (wire::IsRequest(p.type)) {
    return InvalidArgument(std::string(wire::PacketTypeName(p.type)) + " is for the receiver half");
  }
  auto it = streams_.find(src_ip);
  if (it == streams_.end() || it->second.epoch != p.epoch || it->second.down) {
    counters_[regs::kRxStaleEpoch]++;  // an answer to a stream that was reset or never existed
    return OkStatus();
  }
  Stream& s = it->second;
  counters_[regs::kAcksReceived]++;
  const uint32_t idx = p.seq - s.base;
  const bool in_window = p.type != wire::PacketType::kAck && idx < s.sent;
  if (p.type == wire::PacketType::kError) {
    counters_[regs::kErrorsReceived]++;
    if (in_window) {
      const Pending& q = s.q[idx];
      events_.push_back(WriterEvent{WriterEvent::Kind::kDenied, q.pcid, q.bar2_offset, q.bytes, {}});
    }
  } else if (p.type == wire::PacketType::kReadCompletion && p.reason != wire::Reason::kNone) {
    counters_[regs::kErrorsReceived]++;
  }
  if (p.type == wire::PacketType::kReadCompletion && in_window && s.q[idx].is_read) {
    const Pending& q = s.q[idx];
    WriterEvent ev{p.reason == wire::Reason::kNone ? WriterEvent::Kind::kReadData : WriterEvent::Kind::kDenied,
                   q.pcid, q.bar2_offset, q.bytes, {}};
    const uint64_t skip = q.tlp.first_byte() - q.tlp.address;
    ev.data.assign(p.payload.begin() + static_cast<long>(skip), p.payload.begin() + static_cast<long>(skip + q.bytes));
    events_.push_back(std::move(ev));
  }
  Ack(s, p.ack_seq, now_ns);
  return OkStatus();
}

void Sender::ResetPeer(uint16_t pcid) {
  const regs::Caps c = caps();
  if (pcid == regs::kPcidUnmapped || pcid >= c.pcid_entries ||
      regs::PcidOffset(pcid) + regs::kPcidStride > bar0_.size()) {
    return;
  }
  const auto pe = regs::PcidEntry::Decode(bar0_.data() + regs::PcidOffset(pcid));
  auto it = streams_.find(pe.ip);
  if (it == streams_.end()) return;
  Stream& s = it->second;
  for (const Pending& p : s.q) {
    events_.push_back(WriterEvent{WriterEvent::Kind::kPeerDown, p.pcid, p.bar2_offset, p.bytes, {}});
  }
  // A new epoch, so the receiver takes sequence 0 again and drops anything
  // still in flight from the old stream.
  const uint16_t epoch = static_cast<uint16_t>(s.epoch + 1);
  s = Stream{};
  s.epoch = epoch;
}

uint32_t Sender::PeerState(uint16_t pcid) const {
  const regs::Caps c = caps();
  if (pcid == regs::kPcidUnmapped || pcid >= c.pcid_entries ||
      regs::PcidOffset(pcid) + regs::kPcidStride > bar0_.size()) {
    return 0;
  }
  const auto pe = regs::PcidEntry::Decode(bar0_.data() + regs::PcidOffset(pcid));
  auto it = streams_.find(pe.ip);
  return it != streams_.end() && it->second.down ? regs::kPeerStateDown : 0;
}

size_t Sender::Outstanding() const {
  size_t n = 0;
  for (const auto& [ip, s] : streams_) n += s.q.size();
  return n;
}

std::vector<Sender::StreamInfo> Sender::Streams(uint64_t now_ns) const {
  std::vector<StreamInfo> out;
  out.reserve(streams_.size());
  for (const auto& [ip, s] : streams_) {
    StreamInfo i;
    i.ip = ip;
    i.epoch = s.epoch;
    i.base = s.base;
    i.next = s.next;
    i.unsent = s.q.size() - s.sent;
    i.read_in_flight = std::any_of(s.q.begin(), s.q.begin() + static_cast<long>(s.sent),
                                   [](const Pending& p) { return p.is_read; });
    i.down = s.down;
    i.retransmit_due = !s.down && s.sent > 0 && now_ns >= s.deadline;
    out.push_back(i);
  }
  return out;
}

Status Sender::Adopt(uint32_t ip, const MacAddr& mac, uint16_t pcid, uint64_t bar2_offset, uint32_t bytes,
                     std::span<const uint8_t> bytes_on_wire, uint64_t now_ns) {
  auto it = streams_.find(ip);
  if (it == streams_.end()) return NotFound("no stream to " + regs::Ipv4String(ip) + " to adopt a packet into");
  Stream& s = it->second;
  auto decoded = wire::Decode(bytes_on_wire);
  if (!decoded.ok()) return decoded.status().WithContext("adopting a packet to " + regs::Ipv4String(ip));
  const wire::Packet& p = *decoded;
  if (p.type != wire::PacketType::kWrite || p.epoch != s.epoch || p.seq != s.next || s.down ||
      s.sent != s.q.size()) {
    return FailedPrecondition("packet to " + regs::Ipv4String(ip) + " (" + wire::PacketTypeName(p.type) + ", epoch " +
                              std::to_string(p.epoch) + ", seq " + std::to_string(p.seq) +
                              ") is not the stream's next (epoch " + std::to_string(s.epoch) + ", seq " +
                              std::to_string(s.next) + (s.down ? ", down" : "") +
                              (s.sent != s.q.size() ? ", packets queued" : "") + ")");
  }
  s.mac = mac;
  Pending q;
  q.seq = s.next++;
  q.pcid = pcid;
  q.bar2_offset = bar2_offset;
  q.bytes = bytes;
  q.tlp = p.tlp;
  q.wire.assign(bytes_on_wire.begin(), bytes_on_wire.end());
  if (s.sent == 0) s.deadline = now_ns + regs::DecodeWireParams(bar0_.data()).retx_timeout_ns;
  s.q.push_back(std::move(q));
  s.sent++;
  return OkStatus();
}

// ---------------------------------------------------------------- Receiver

bool Receiver::Admitted(uint32_t src_ip, uint64_t first, uint64_t end) const {
  // A region reaching past the memory this model was given is a test set-up
  // error; refusing is the safe reading (real DMA would reach it).
  if (first < memory_base_ || end > memory_base_ + memory_.size()) return false;
  const regs::Caps c = CapsOf(bar0_);
  for (uint32_t i = 0; i < c.region_entries && regs::RegionOffset(i) + regs::kRegionStride <= bar0_.size(); ++i) {
    if (regs::RegionEntry::Decode(bar0_.data() + regs::RegionOffset(i)).Admits(src_ip, first, end - first)) return true;
  }
  return false;
}

std::vector<uint8_t> Receiver::Reply(const wire::Packet& req, const Peer& peer, wire::PacketType type,
                                     wire::Reason reason, std::vector<uint8_t> payload) {
  wire::Packet r;
  r.type = type;
  r.reason = reason;
  r.epoch = peer.epoch;
  r.ack_seq = peer.expected;
  if (type != wire::PacketType::kAck) {
    r.seq = req.seq;
    r.tlp = req.tlp;
  }
  r.payload = std::move(payload);
  if (type == wire::PacketType::kAck) counters_[regs::kAcks]++;
  if (reason != wire::Reason::kNone) counters_[regs::kErrorsSent]++;
  auto bytes = wire::Encode(r);
  return bytes.ok() ? std::move(bytes).value() : std::vector<uint8_t>{};  // req was valid, so r is
}

std::vector<uint8_t> Receiver::Apply(uint32_t src_ip, const wire::Packet& p, const Peer& peer) {
  const wire::TlpHeader& h = p.tlp;
  const bool ok = Admitted(src_ip, h.first_byte(), h.end_byte());
  if (p.type == wire::PacketType::kWrite) {
    if (!ok) {
      counters_[regs::kRxDenied]++;
      return Reply(p, peer, wire::PacketType::kError, wire::Reason::kDenied, {});
    }
    for (uint32_t i = 0; i < 4u * h.length_dw; ++i) {
      if (h.ByteEnabled(i)) memory_[h.address + i - memory_base_] = p.payload[i];
    }
    counters_[regs::kRxWrites]++;
    return Reply(p, peer, wire::PacketType::kAck, wire::Reason::kNone, {});
  }
  std::vector<uint8_t> data(4u * h.length_dw, 0);  // a denied read returns zeros
  if (ok) {
    for (uint32_t i = 0; i < data.size(); ++i) {
      if (h.ByteEnabled(i)) data[i] = memory_[h.address + i - memory_base_];
    }
  }
  counters_[ok ? regs::kRxReads : regs::kRxReadsDenied]++;  // both extended counters
  return Reply(p, peer, wire::PacketType::kReadCompletion, ok ? wire::Reason::kNone : wire::Reason::kDenied,
               std::move(data));
}

std::vector<uint8_t> Receiver::Execute(uint32_t src_ip, const wire::Packet& p, uint16_t epoch, uint32_t ack_seq) {
  return Apply(src_ip, p, Peer{epoch, ack_seq});
}

std::vector<uint8_t> Receiver::OnDatagram(uint32_t src_ip, std::span<const uint8_t> bytes) {
  auto decoded = wire::Decode(bytes);
  if (!decoded.ok()) {
    counters_[regs::kRxMalformed]++;
    return {};
  }
  const wire::Packet& p = *decoded;
  if (!wire::IsRequest(p.type)) return {};  // an answer: the sender half's
  if (!(regs::DecodeLocalRegs(bar0_.data()).control & regs::kControlEnable)) {
    counters_[regs::kRxDisabled]++;
    return {};
  }
  auto it = peers_.find(src_ip);
  if (it == peers_.end()) {
    // A stream is only ever joined at its start, so a packet of an older
    // stream cannot be mistaken for a new one mid-way.
    if (p.seq != 0) {
      counters_[regs::kRxOutOfOrder]++;
      return {};
    }
    if (peers_.size() >= CapsOf(bar0_).pcid_entries) {
      counters_[regs::kRxNoPeerState]++;
      return {};
    }
    it = peers_.emplace(src_ip, Peer{p.epoch, 0}).first;
  } else if (p.epoch != it->second.epoch) {
    const bool newer = static_cast<uint16_t>(p.epoch - it->second.epoch) < 0x8000;
    if (!newer) {
      counters_[regs::kRxStaleEpoch]++;
      return {};
    }
    if (p.seq != 0) {
      counters_[regs::kRxOutOfOrder]++;
      return {};
    }
    it->second = Peer{p.epoch, 0};
  }
  Peer& peer = it->second;
  const int32_t diff = static_cast<int32_t>(p.seq - peer.expected);
  if (diff > 0) {
    counters_[regs::kRxOutOfOrder]++;  // after a gap: the sender goes back to the gap
    return {};
  }
  if (diff < 0) {
    // Already applied: answer again (the first answer may have been lost) but
    // never apply again, or it could overwrite a newer write. The newest read
    // may be re-executed: its fence means no later request of this stream
    // has been applied since.
    counters_[regs::kRxDuplicate]++;
    if (p.type == wire::PacketType::kReadRequest && diff == -1) return Apply(src_ip, p, peer);
    return Reply(p, peer, wire::PacketType::kAck, wire::Reason::kNone, {});
  }
  peer.expected++;
  return Apply(src_ip, p, peer);
}

}  // namespace fibnic::ipnuma_model
