// fibnic-emu's XDP fast path (emu/xdp/fibnic_xdp.bpf.c) on the card's wire
// ports: loaded with the BAR map as its BAR (the program reads the live BAR
// at every frame), attached through BPF links (detached when the emulator
// exits, however it exits), and its per-CPU counts read back for
// PORT_COUNTERS. Frames it is not sure of reach the user-space path as
// before (XDP_PASS).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "hwif/counters.h"

struct bpf_object;

namespace fibnic::emu {

// Where the program runs. kSkb (generic XDP): after the interface built the
// socket buffer, on any interface; a redirect is an ordinary transmit, so a
// veth's far end needs nothing. kNative: in the driver; a redirect into a
// veth is received by the far end's NAPI, which exists only while that end
// runs an XDP program (emu/xdp/xdp_pass.bpf.c) or has GRO on.
enum class XdpMode : uint8_t { kSkb, kNative };

struct XdpWire {
  uint8_t port;
  std::string ifname;
};

class XdpPath {
 public:
  // bar_map_fd: the pinned BAR map (hwif/bpf_bar.h); wires: every wire port.
  // Fails with the reason (no BPF support, a refused program, an interface
  // that takes no XDP program) and leaves nothing attached.
  static StatusOr<std::unique_ptr<XdpPath>> Attach(int bar_map_fd, const std::vector<XdpWire>& wires, XdpMode mode);
  ~XdpPath();
  XdpPath(const XdpPath&) = delete;
  XdpPath& operator=(const XdpPath&) = delete;

  // Adds what the program alone handled (forwarded and dropped frames: rx,
  // rx_bytes, forwarded, tx, tx_bytes, drop_route), summed over CPUs, to
  // `into` (indexed by port).
  Status AddCounts(std::vector<PortCounters>& into) const;
  // Frames the program forwarded and dropped so far, all ports.
  StatusOr<std::pair<uint64_t, uint64_t>> Handled(int ports) const;

 private:
  XdpPath() = default;
  bpf_object* obj_ = nullptr;
  std::vector<int> links_;  // BPF link descriptors: closing one detaches its program
  int counts_fd_ = -1;
};

}  // namespace fibnic::emu
