// ipnuma-emu's transmit path in the kernel (ipnuma/xdp/ipnuma_tx.bpf.c, the
// layout it shares in ipnuma/xdp/ipnuma_tx_shared.h): the XDP program on the
// NIC's end of the host link that turns a program's doorbell frame (a posted
// store) into a WRITE on the wire, loaded with BAR0's map, attached through a
// BPF link (detached when the emulator exits, however it exits). The packets
// it sent come back through a ring the emulator drains (Drain) and adopts
// into its sender; the stream slots are mapped here for the emulator's side
// of the hand-over (ipnuma/xdp/ipnuma_tx_shared.h says who may change what).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "common/ip.h"
#include "common/status.h"
#include "ipnuma/xdp/ipnuma_tx_shared.h"

struct bpf_object;
struct ring_buffer;

namespace fibnic::ipnuma {

// A packet the program sent (struct ipnuma_tx_record), addresses in host order.
struct SentPacket {
  uint32_t client = 0;
  uint32_t slot = 0;
  uint32_t dst_ip = 0;
  uint16_t pcid = 0;
  MacAddr dst_mac;
  uint64_t bar2_offset = 0;
  uint32_t bytes = 0;
  std::span<const uint8_t> packet;  // the UDP payload as sent
};

class XdpTransmit {
 public:
  struct Config {
    int bar0_map_fd = -1;
    uint16_t pcid_entries = 0;  // CAPS1: the slots are 1 .. pcid_entries
    std::string link;           // the NIC's end of the host link: the program runs here
    std::string wire;           // the NIC's wire interface: WRITEs leave here
    bool native = false;        // in the driver; else skb (generic) mode
  };
  // Fails with the reason and leaves nothing attached.
  static StatusOr<std::unique_ptr<XdpTransmit>> Attach(const Config& c);
  ~XdpTransmit();
  XdpTransmit(const XdpTransmit&) = delete;
  XdpTransmit& operator=(const XdpTransmit&) = delete;

  // Readable when sent records wait (for poll).
  int fd() const;
  // Hands every sent record waiting to `take`, oldest first; returns how many.
  StatusOr<size_t> Drain(const std::function<void(const SentPacket&)>& take);

  // The slots (tx_streams, mapped shared): slot(0) counts frames passed up
  // without a slot; 1 .. slot_count()-1 are streams. Change `word` only by
  // compare-and-swap (std::atomic_ref), `limit` by a plain release store.
  ipnuma_tx_stream& slot(uint32_t i) const { return slots_[i]; }
  uint32_t slot_count() const { return slot_count_; }
  // tx_slot: the program finds address ip's (host order) slot; write the
  // slot first. Clearing removes the address (the program passes its stores up).
  Status MapAddress(uint32_t ip, uint32_t slot);
  // The slot maps, for the receive path that moves windows on ACKs.
  int streams_map_fd() const;
  int slot_map_fd() const { return slot_map_fd_; }
  Status UnmapAddress(uint32_t ip);

 private:
  XdpTransmit() = default;
  static int OnRecord(void* self, void* data, size_t size);
  bpf_object* obj_ = nullptr;
  ring_buffer* ring_ = nullptr;
  int link_ = -1;
  ipnuma_tx_stream* slots_ = nullptr;
  size_t slots_bytes_ = 0;
  uint32_t slot_count_ = 0;
  int slot_map_fd_ = -1;
  const std::function<void(const SentPacket&)>* take_ = nullptr;
};

}  // namespace fibnic::ipnuma
