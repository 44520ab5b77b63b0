// ipnuma-emu's receive path in the kernel (ipnuma/xdp/ipnuma_rx.bpf.c): the
// XDP program on the NIC's interface that applies WRITEs to host memory and
// answers them, loaded with BAR0's and the pool's maps (both pinned BPF maps,
// hwif/bpf_bar.h), attached through a BPF link (detached when the emulator
// exits, however it exits). The reads it accepted come back through a ring
// the emulator drains (Drain).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "common/ip.h"
#include "common/status.h"

struct bpf_object;
struct ring_buffer;

namespace fibnic::ipnuma {

// A READ_REQUEST the program accepted: the emulator reads the memory and sends
// the completion (EmuNic::OnAcceptedRead).
struct AcceptedRead {
  uint32_t src_ip = 0;  // host order
  MacAddr src_mac;
  uint16_t src_port = 0;
  uint16_t epoch = 0;
  uint32_t ack_seq = 0;   // the stream's next sequence once the read was taken
  bool duplicate = false; // the newest read again (already counted as a duplicate)
  std::span<const uint8_t> packet;  // the request as it came (40 bytes)
};

class XdpReceive {
 public:
  struct Config {
    int bar0_map_fd = -1;
    int pool_map_fd = -1;
    uint64_t pool_base = 0, pool_bytes = 0;
    uint16_t pcid_entries = 0;   // receive streams the program keeps (CAPS1)
    uint16_t region_entries = 0; // CAPS1; at most kMaxRegions
    std::string interface;
    bool native = false;  // in the driver; else skb (generic) mode
    // The transmit path's stream slots (ipnuma/xdp_transmit.h), when it
    // runs: ACKs for its streams move their windows in the kernel and come
    // up through DrainAcks. -1: every answer is passed up.
    int tx_streams_fd = -1, tx_slot_fd = -1;
  };
  // The REGION entries the program looks through per WRITE (a bound its
  // verifier must see); a NIC with more runs without the kernel path.
  static constexpr uint16_t kMaxRegions = 256;

  // Fails with the reason (no BPF support, a refused program, an interface
  // that takes no XDP program) and leaves nothing attached.
  static StatusOr<std::unique_ptr<XdpReceive>> Attach(const Config& c);
  ~XdpReceive();
  XdpReceive(const XdpReceive&) = delete;
  XdpReceive& operator=(const XdpReceive&) = delete;

  // Readable when accepted reads wait (for poll).
  int fd() const;
  // Hands every accepted read waiting to `take`; returns how many.
  StatusOr<size_t> Drain(const std::function<void(const AcceptedRead&)>& take);
  // Hands every ACK frame the program took for a transmit-path stream to
  // `take`, oldest first (it wakes nobody: drain it every round).
  StatusOr<size_t> DrainAcks(const std::function<void(std::span<const uint8_t>)>& take);

 private:
  XdpReceive() = default;
  static int OnRecord(void* self, void* data, size_t size);
  static int OnAck(void* self, void* data, size_t size);
  bpf_object* obj_ = nullptr;
  ring_buffer* ring_ = nullptr;
  ring_buffer* acks_ = nullptr;
  const std::function<void(std::span<const uint8_t>)>* take_ack_ = nullptr;
  int link_ = -1;
  const std::function<void(const AcceptedRead&)>* take_ = nullptr;
};

}  // namespace fibnic::ipnuma
