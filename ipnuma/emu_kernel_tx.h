// ipnuma-emu's side of the transmit path in the kernel
// (ipnuma/xdp/ipnuma_tx_shared.h states the protocol): it hands each client
// an AF_PACKET socket on the host link, adopts every packet the XDP program
// sent into the NIC's sender (which retransmits it and takes its ACK), stores
// the doorbell frames the program passed up, and moves each stream between
// the program and the sender so that one of them alone assigns its sequences.
//
// The rule the emulator keeps: before the sender may assign a sequence or
// change a stream (any doorbell message, a ring entry, a passed-up frame, a
// retransmission or a reset), TakeAll; after the round, HandBack. A stream
// goes back to the program only while the sender has nothing of it unsent,
// no read in flight, no retransmission due, and every frame the program
// passed up for it has been stored: so no store of a program can overtake an
// earlier one of the same program.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "ipnuma/emu_nic.h"
#include "ipnuma/emu_sent_order.h"
#include "ipnuma/xdp_transmit.h"

namespace fibnic::ipnuma {

class KernelTransmit {
 public:
  struct Config {
    std::string link_nic;   // the NIC's end of the host link: the program runs here
    std::string link_host;  // the host's end: clients send doorbell frames into it
    std::string wire;       // the NIC's wire interface
    bool native = false;
  };
  static StatusOr<std::unique_ptr<KernelTransmit>> Open(EmuNic& nic, const Config& c);
  ~KernelTransmit();
  KernelTransmit(const KernelTransmit&) = delete;
  KernelTransmit& operator=(const KernelTransmit&) = delete;

  // For poll: sent records wait; passed-up frames wait.
  int sent_fd() const { return tx_->fd(); }
  int punt_fd() const { return punt_fd_; }
  // The slot maps (XdpReceive::Config's tx_streams_fd, tx_slot_fd).
  const XdpTransmit& program() const { return *tx_; }

  // A client's link: a new AF_PACKET socket on the host end (the caller
  // passes it on and closes it) and the tag its frames carry.
  StatusOr<int> OpenLink(int client, uint32_t* tag);
  void Forget(int client);
  // Each client's link frames taken so far, for its flow control.
  template <typename F>
  void ForEachLink(F&& f) const {
    for (const auto& [tag, l] : links_) f(l.client, l.seen);
  }

  // Adopts the packets the program sent and (punts) stores the frames it passed up.
  Status Drain(uint64_t now_ns, bool punts = true);
  // Every stream taken back from the program, and every packet it sent
  // adopted, so the sender alone assigns sequences now.
  Status TakeAll(uint64_t now_ns);
  // Whether a stream the program holds has a retransmission due (TakeAll
  // before the sender's Poll then: it may go down).
  bool RetransmitDue(uint64_t now_ns) const;
  // Whether the program holds any stream.
  bool Holding() const {
    for (bool k : kernel_) {
      if (k) return true;
    }
    return false;
  }
  // Waits (briefly) until `client`'s first `sent` link frames were taken;
  // frames the host link lost are refused to its next flush.
  Status CatchUp(int client, uint32_t sent, uint64_t now_ns);
  // Streams the sender may give the program, given; window limits updated.
  Status HandBack(uint64_t now_ns);

  // Frames adopted, passed up and lost, for tests and the log.
  struct Stats {
    uint64_t adopted = 0, punted = 0, lost = 0, handed_back = 0, taken = 0;
  };
  const Stats& stats() const { return stats_; }

 private:
  KernelTransmit(EmuNic& nic) : nic_(nic) {}
  Status TakePunts(uint64_t now_ns, bool* any);

  Status DrainSent(uint64_t now_ns, size_t* n);
  int ClientOf(uint32_t tag) const;
  void Seen(uint32_t tag);

  EmuNic& nic_;
  std::unique_ptr<XdpTransmit> tx_;
  int punt_fd_ = -1;
  int host_ifindex_ = 0;
  struct Link {
    int client = -1;
    uint32_t seen = 0;  // frames taken (adopted or passed up)
  };
  std::map<uint32_t, Link> links_;      // by tag
  std::vector<uint64_t> punts_taken_;   // per slot
  std::map<uint32_t, uint32_t> slot_of_;  // destination (host order) -> slot
  std::vector<bool> kernel_;             // per slot: handed to the program
  SentOrder order_;  // records put back in sequence order
  Stats stats_;
  uint64_t tag_state_ = 0;
};

}  // namespace fibnic::ipnuma
