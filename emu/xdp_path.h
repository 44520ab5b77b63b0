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
#include <vector>

#include "common/status.h"
#include "hwif/counters.h"

struct bpf_object;
struct bpf_link;

namespace fibnic::emu {

struct XdpWire {
  uint8_t port;
  std::string ifname;
};

class XdpPath {
 public:
  // bar_map_fd: the pinned BAR map (hwif/bpf_bar.h); wires: every wire port.
  // Fails with the reason (no BPF support, a refused program, an interface
  // that takes no XDP program) and leaves nothing attached.
  static StatusOr<std::unique_ptr<XdpPath>> Attach(int bar_map_fd, const std::vector<XdpWire>& wires);
  ~XdpPath();
  XdpPath(const XdpPath&) = delete;
  XdpPath& operator=(const XdpPath&) = delete;

  // Adds what the program alone handled (forwarded and dropped frames: rx,
  // rx_bytes, forwarded, tx, tx_bytes, drop_route), summed over CPUs, to
  // `into` (indexed by port).
  Status AddCounts(std::vector<PortCounters>& into) const;

 private:
  XdpPath() = default;
  bpf_object* obj_ = nullptr;
  std::vector<bpf_link*> links_;
  int counts_fd_ = -1;
};

}  // namespace fibnic::emu
