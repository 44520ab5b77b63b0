// The IP-NUMA wire protocol's semantics as two deterministic state machines
// (docs/contract/IPNUMA.md, "Wire protocol"): the Sender half of a NIC turns
// BAR2 stores into sequenced WRITE packets and retransmits them until ACKed;
// the Receiver half checks each request against the REGION table and applies
// it to host memory in sequence order only. No I/O and no clock: the caller
// passes time in and carries the returned datagrams. RTL and the software
// emulator are held to these machines.
//
// Both read the NIC's configuration from a byte image of BAR0 through the
// ipnuma_regs codecs, at the moment of each store or packet, so a test (or the
// emulator) changes the tables by writing that image.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "common/ip.h"
#include "common/status.h"
#include "device/ipnuma_regs.h"
#include "device/ipnuma_wire.h"

namespace fibnic::ipnuma_model {

// One UDP datagram to send: the peer's IPv4 (host order), the MAC the frame
// goes to, and the UDP payload.
struct Datagram {
  uint32_t dst_ip = 0;
  MacAddr dst_mac;
  std::vector<uint8_t> bytes;
};

// Counters as BAR0 shows them (v1.0 block and the extended block).
struct NicCounters {
  ipnuma_regs::Counters base;
  ipnuma_regs::ExtCounters ext;
  uint64_t& operator[](ipnuma_regs::BaseCounter c) { return base.v[c]; }
  uint64_t& operator[](ipnuma_regs::ExtCounter c) { return ext.v[c]; }
  uint64_t operator[](ipnuma_regs::BaseCounter c) const { return base.v[c]; }
  uint64_t operator[](ipnuma_regs::ExtCounter c) const { return ext.v[c]; }
};

// What the writer (the host side of the sender) learns after a store.
struct WriterEvent {
  enum class Kind : uint8_t {
    kDenied,    // the receiver refused the write or read (ERROR / denied completion)
    kPeerDown,  // the packet was discarded when its peer went down
    kReadData,  // a read completed; data holds the bytes asked for
  };
  Kind kind = Kind::kDenied;
  uint16_t pcid = 0;
  uint64_t bar2_offset = 0;  // first byte of the packet's range in BAR2
  uint32_t bytes = 0;
  std::vector<uint8_t> data;
};

class Sender {
 public:
  // bar0 is the NIC's BAR0 image, at least up to kOffPeerState; table entries
  // CAPS names but the image does not hold read as absent (unmapped, no region).
  explicit Sender(std::span<const uint8_t> bar0) : bar0_(bar0) {}

  // A CPU store of data at BAR2 offset `bar2_offset`. Split into packets of at
  // most MAX_PAYLOAD bytes on MAX_PAYLOAD-aligned boundaries (so none crosses
  // a page) and queued per peer in order. A packet whose page is unmapped, whose
  // PC ID is invalid or whose peer is down is refused and counted; the others
  // are queued. Returns the first refusal (naming the page), or OK.
  Status Store(uint64_t bar2_offset, std::span<const uint8_t> data);
  // A CPU load of len bytes; the data arrives as a kReadData event. A read is a
  // fence: nothing after it is sent to that peer until it completes.
  Status Load(uint64_t bar2_offset, uint32_t len);

  // Everything due at now_ns: retransmissions of timed-out windows (go-back-N),
  // then new packets while the window has room.
  std::vector<Datagram> Poll(uint64_t now_ns);
  // An ACK, ERROR or READ_COMPLETION from src_ip (host order). A malformed
  // datagram is counted and refused; a request is refused uncounted (it is
  // the receiver half's); an answer to a stream that is down, reset or
  // unknown is counted as stale and changes nothing.
  Status OnDatagram(uint32_t src_ip, std::span<const uint8_t> bytes, uint64_t now_ns);

  // PEER_STATE[pcid] write of kPeerStateDown: reset the stream to that PC ID's
  // address (drop what is queued, new epoch, sequence 0, not down).
  void ResetPeer(uint16_t pcid);
  // PEER_STATE[pcid] as the register reads.
  uint32_t PeerState(uint16_t pcid) const;
  // Packets queued or unacked for any peer.
  size_t Outstanding() const;

  // A stream as another transmitter of this NIC sees it (the emulator's
  // kernel transmit path, which sends a stream's WRITEs while the model has
  // nothing of it to send).
  struct StreamInfo {
    uint32_t ip = 0;  // destination, host order
    uint16_t epoch = 0;
    uint32_t base = 0;       // oldest unacked sequence
    uint32_t next = 0;       // next sequence to assign
    size_t unsent = 0;       // packets queued but never sent
    bool read_in_flight = false;  // a sent read fences what follows it
    bool down = false;
    bool retransmit_due = false;  // at the time asked: Poll would retransmit or go down
  };
  std::vector<StreamInfo> Streams(uint64_t now_ns) const;
  // A WRITE another transmitter of this NIC already sent on stream `ip`:
  // taken as that stream's next packet, then retransmitted and acknowledged
  // like the model's own (and not counted again: its sender counted it).
  // Refused, changing nothing, unless it is a WRITE of the stream's epoch and
  // next sequence and nothing of the stream waits unsent or is down.
  Status Adopt(uint32_t ip, const MacAddr& mac, uint16_t pcid, uint64_t bar2_offset, uint32_t bytes,
               std::span<const uint8_t> wire, uint64_t now_ns);

  std::vector<WriterEvent> TakeEvents() { return std::exchange(events_, {}); }
  const NicCounters& counters() const { return counters_; }

 private:
  struct Pending {
    uint32_t seq = 0;
    bool is_read = false;
    uint16_t pcid = 0;
    uint64_t bar2_offset = 0;
    uint32_t bytes = 0;
    ipnuma_wire::TlpHeader tlp;
    std::vector<uint8_t> wire;  // the encoded packet, resent as is
  };
  // One stream per destination IPv4: the receiver tells streams apart by the
  // source address, so two PC IDs naming one address must share a stream.
  struct Stream {
    MacAddr mac;
    uint16_t epoch = 0;
    uint32_t base = 0;      // oldest unacked sequence
    uint32_t next = 0;      // next sequence to assign
    std::deque<Pending> q;  // q[i] has seq base + i
    size_t sent = 0;        // q[0..sent) were transmitted at least once
    uint64_t deadline = 0;  // retransmit time of q[0..sent)
    uint32_t retries = 0;   // retransmissions since the last ack progress
    bool down = false;
  };
  struct Target {
    uint16_t pcid = 0;
    uint32_t ip = 0;
    MacAddr mac;
    uint64_t remote = 0;
  };
  Status Resolve(uint64_t bar2_offset, Target* t);
  Status Enqueue(uint64_t bar2_offset, std::span<const uint8_t> data, uint32_t len, bool is_read);
  void GoDown(Stream& s);
  void Ack(Stream& s, uint32_t ack_seq, uint64_t now_ns);
  ipnuma_regs::Caps caps() const;

  std::span<const uint8_t> bar0_;
  std::map<uint32_t, Stream> streams_;  // by destination IPv4
  std::vector<WriterEvent> events_;
  NicCounters counters_;
};

class Receiver {
 public:
  // bar0: this NIC's BAR0 image (LOCAL regs, CAPS, REGION table). memory: the
  // host memory DMA reaches, starting at physical address memory_base.
  Receiver(std::span<const uint8_t> bar0, std::span<uint8_t> memory, uint64_t memory_base)
      : bar0_(bar0), memory_(memory), memory_base_(memory_base) {}

  // A datagram from src_ip (host order). Returns the reply to send back to
  // src_ip (ACK, ERROR or READ_COMPLETION), or nothing when the datagram is
  // dropped without reply (malformed, out of order, stale epoch, disabled).
  std::vector<uint8_t> OnDatagram(uint32_t src_ip, std::span<const uint8_t> bytes);

  // A request that stream state kept elsewhere accepted (ipnuma-emu's kernel
  // receive path keeps its own): applied and answered, and counted, as
  // OnDatagram does once it accepts one; no stream state here changes. The
  // answer carries epoch and ack_seq, that state's epoch and next sequence.
  std::vector<uint8_t> Execute(uint32_t src_ip, const ipnuma_wire::Packet& p, uint16_t epoch, uint32_t ack_seq);

  const NicCounters& counters() const { return counters_; }

 private:
  struct Peer {
    uint16_t epoch = 0;
    uint32_t expected = 0;  // next sequence to apply
  };
  bool Admitted(uint32_t src_ip, uint64_t first, uint64_t end) const;
  std::vector<uint8_t> Apply(uint32_t src_ip, const ipnuma_wire::Packet& p, const Peer& peer);
  std::vector<uint8_t> Reply(const ipnuma_wire::Packet& req, const Peer& peer, ipnuma_wire::PacketType type,
                             ipnuma_wire::Reason reason, std::vector<uint8_t> payload);

  std::span<const uint8_t> bar0_;
  std::span<uint8_t> memory_;
  uint64_t memory_base_;
  std::map<uint32_t, Peer> peers_;  // by source IPv4
  NicCounters counters_;
};

}  // namespace fibnic::ipnuma_model
