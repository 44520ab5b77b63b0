// ipnuma-emu's NIC: the contract's sender and receiver (device/ipnuma_model)
// on the live BAR0 file ipnumad provisions, with the page region (BAR2) and
// host memory (the buffer pool file) as shared file mappings. It turns
// doorbells into model stores, received frames into model datagrams, and the
// model's datagrams into Ethernet/IPv4/UDP frames; it publishes the counters
// and PEER_STATE where the contract puts them. No I/O of its own: the
// program (ipnuma_emu_main.cc) carries frames, doorbells and the clock.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "device/ipnuma_model.h"
#include "device/ipnuma_regs.h"
#include "hwif/bpf_bar.h"
#include "ipnuma/emu_doorbell.h"
#include "ipnuma/xdp_receive.h"
#include "ipnuma/xdp_transmit.h"

namespace fibnic::ipnuma {

// A file mapped shared, read-write: writes by other processes that map it
// (ipnumad, the client library) are seen at once, and ours by them. A path on
// a bpffs is a pinned BPF array map instead (mmapable, 4096-byte values, so
// its values lie end to end as one region): the memory an XDP program reads
// and writes too.
class MappedFile {
 public:
  // With create_size > 0 a missing regular file is created (sparse) with that
  // size; a map must already be pinned.
  static StatusOr<std::unique_ptr<MappedFile>> Open(const std::string& path, uint64_t create_size = 0);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<uint8_t> bytes() const { return {data_, size_}; }
  // The pinned map's file descriptor, kept open for a BPF program that uses
  // the map; -1 for a regular file.
  int map_fd() const { return map_ ? map_->map_fd() : -1; }

 private:
  MappedFile(uint8_t* data, size_t size) : data_(data), size_(size) {}
  static StatusOr<std::unique_ptr<MappedFile>> OpenMap(const std::string& path);
  std::unique_ptr<BpfBar> map_;  // a pinned map's mapping (owns it), or none for a file
  uint8_t* data_;
  size_t size_;
};

// A doorbell the NIC has not answered yet, and who waits for it.
struct DoorbellWaiter {
  int client = -1;  // the program's handle for the asking connection
  DoorbellRequest request;
  Status status;    // the first refusal met so far
  bool posted = false;  // kWritePosted: folded into posted_ when done, not answered
};

struct DoorbellDone {
  int client = -1;
  Status status;
};

class EmuNic {
 public:
  struct Files {
    std::string bar0, pages, pool;
    uint64_t pool_base = 0;
  };
  // Maps the three files; BAR0 must be an IP-NUMA NIC (ID, VERSION, CAPS) of
  // the size its CAPS0 implies (as a BPF map: rounded up to whole 4096-byte
  // values); a page region file is created when missing.
  static StatusOr<std::unique_ptr<EmuNic>> Open(const Files& files);

  const ipnuma_regs::Caps& caps() const { return caps_; }
  // The BPF maps BAR0 and the pool are in when their paths lie on a bpffs
  // (for an XDP program that shares them); -1 for a regular file.
  int bar0_map_fd() const { return bar0_->map_fd(); }
  int pool_map_fd() const { return pool_->map_fd(); }
  // Where host memory (the pool) starts on the bus, and its size.
  uint64_t pool_base() const { return pool_base_; }
  uint64_t pool_bytes() const { return pool_->size(); }

  // A frame from the wire at model time now_ns; frames to send are appended.
  void OnFrame(std::span<const uint8_t> frame, uint64_t now_ns, std::vector<std::vector<uint8_t>>& out);
  // From now on requests are the kernel receive path's (ipnuma/xdp_receive.h):
  // it keeps the receive streams, applies WRITEs and counts into BAR0 itself.
  // A request that still reaches OnFrame is one that path found broken.
  void SetKernelReceive() { kernel_receive_ = true; }
  // A READ_REQUEST the kernel receive path accepted: read and answered here.
  void OnAcceptedRead(const AcceptedRead& read, std::vector<std::vector<uint8_t>>& out);
  // Retransmissions and new packets due at now_ns.
  void Poll(uint64_t now_ns, std::vector<std::vector<uint8_t>>& out);
  // A doorbell from `client`. Refused at once (bad range) or queued; answered
  // through TakeDone once every packet it queued is acknowledged, refused or
  // discarded.
  void Ring(int client, const DoorbellRequest& request);
  std::vector<DoorbellDone> TakeDone();
  // A posted write whose bytes came with its doorbell (a doorbell frame the
  // kernel transmit path passed up): queued like kWritePosted over BAR2.
  // client -1: nobody to tell of a refusal (counted all the same).
  void StorePosted(int client, uint64_t bar2_offset, std::span<const uint8_t> data);
  // A WRITE the kernel transmit path already sent (ipnuma/xdp_transmit.h):
  // the sender adopts it, to retransmit it and take its answer, and its
  // refusal goes to `client`'s next flush as a posted write's does.
  Status Adopt(int client, const SentPacket& sent, uint64_t now_ns);
  std::vector<ipnuma_model::Sender::StreamInfo> Streams(uint64_t now_ns) const { return sender_.Streams(now_ns); }
  ipnuma_regs::WireParams wire_params() const { return ipnuma_regs::DecodeWireParams(bar0_->data()); }
  // A posted write refused before it reached the NIC (a broken ring entry):
  // kept for the connection's next flush, as the NIC's own refusals are.
  void RefusePosted(int client, Status status) { FoldPosted(client, std::move(status)); }
  // Forgets a client's waiting doorbells and posted refusals (its connection closed).
  void Forget(int client);
  bool Busy() const { return sender_.Outstanding() > 0 || !waiting_.empty(); }

  // Counters into BAR0 (added as the change since the last call: the kernel
  // receive path adds its own to the same words), and PEER_STATE when a stream went down or was reset
  // since the last call, or when all_peer_state (a PC ID entry may have been
  // rewritten to name another address: the caller asks now and then).
  // First, a DOWN bit this NIC showed that reads 0 now was cleared by the
  // driver (a write of 1 over a file or a BPF map, ipnuma/nic_memory_bar.h):
  // that stream is reset, as the register's write of 1 does on the hardware.
  void Publish(bool all_peer_state = true);
  const ipnuma_model::NicCounters& own_counters() const { return own_; }

 private:
  EmuNic(std::unique_ptr<MappedFile> bar0, std::unique_ptr<MappedFile> pages, std::unique_ptr<MappedFile> pool,
         uint64_t pool_base, const ipnuma_regs::Caps& caps);
  void Send(uint32_t dst_ip, const MacAddr& dst_mac, uint16_t dst_port, std::span<const uint8_t> payload,
            std::vector<std::vector<uint8_t>>& out);
  void TakeEvents();
  // Keeps the first refusal of a client's posted writes for its next flush.
  void FoldPosted(int client, Status status);

  std::unique_ptr<MappedFile> bar0_, pages_, pool_;
  uint64_t pool_base_ = 0;
  ipnuma_regs::Caps caps_;
  ipnuma_model::Sender sender_;
  ipnuma_model::Receiver receiver_;
  ipnuma_model::NicCounters own_;  // what only the framing sees: broken frames
  std::vector<DoorbellWaiter> waiting_;
  std::vector<DoorbellDone> done_;
  std::vector<DoorbellDone> posted_;  // per client: the first refusal of its posted writes since its last flush
  uint16_t ip_id_ = 0;
  bool kernel_receive_ = false;
  // What Publish has added to each BAR0 counter so far.
  ipnuma_model::NicCounters published_;
  // Resets the streams whose DOWN the driver cleared in the file.
  void TakeDriverResets();

  uint64_t peer_state_changes_ = 0;  // resets done here; with peers_down, when PEER_STATE moved
  uint64_t peer_state_published_ = ~uint64_t{0};
  std::vector<uint32_t> peer_state_shown_;  // PEER_STATE[i] as this NIC last stored it
  std::vector<uint16_t> shown_down_;        // the i whose stored word has DOWN
};

}  // namespace fibnic::ipnuma
