// One Linux interface as a port of a software card (fibnic-emu, ipnuma-emu):
// an AF_PACKET socket that receives through a TPACKET_V3 ring (blocks of
// frames handed over by the kernel at once, no copy and no system call per
// frame) or, for a card that waits on single frames, frame by frame, and
// transmits in batches with sendmmsg: frames copied into the socket's own
// buffers (Queue) or sent from where they lie (QueueInPlace: a forwarder
// sends a frame straight out of the receive ring it arrived in, no copy in
// user space). The interface is put in promiscuous mode (a wire port
// receives frames for the card's MACs, not the interface's own) and the
// socket ignores its own transmissions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <span>
#include <string>
#include <vector>

#include <sys/uio.h>

#include "common/status.h"

namespace fibnic {

class PacketSocket {
 public:
  static constexpr size_t kMaxFrame = 2048;  // MTU 1500 frames, jumbo frames are not received
  static constexpr size_t kTxBatch = 64;

  // kRing: frames arrive a block at a time, when the block fills or after a
  // 1 ms timeout: the rate a forwarder needs. kPerFrame: poll wakes for every
  // frame and a batch of frames costs one recvmmsg: the latency a
  // request/acknowledge protocol needs, where a frame waits for its answer.
  enum class Receive : uint8_t { kRing, kPerFrame };
  static constexpr size_t kRxBatch = 32;

  static StatusOr<std::unique_ptr<PacketSocket>> Open(const std::string& interface,
                                                      Receive receive = Receive::kRing);
  ~PacketSocket();
  PacketSocket(const PacketSocket&) = delete;
  PacketSocket& operator=(const PacketSocket&) = delete;

  int fd() const { return fd_; }
  const std::string& name() const { return name_; }

  // Calls on_frame(span) for every frame of the ring's ready blocks (at most
  // max_blocks of them), then before_release(), then gives the block back;
  // returns the frames seen. Frame by frame: at most max_blocks batches of
  // kRxBatch frames, before_release() after each. The span is writable (a
  // forwarder rewrites the frame where it lies) and valid until
  // before_release() returns: that is where frames queued in place from it
  // must be flushed.
  template <typename F, typename G>
  size_t Drain(F&& on_frame, G&& before_release, int max_blocks = 8);
  template <typename F>
  size_t Drain(F&& on_frame, int max_blocks = 8) {
    return Drain(std::forward<F>(on_frame), [] {}, max_blocks);
  }

  // Queues a copy of the frame; sends the batch once it is full.
  Status Queue(std::span<const uint8_t> frame);
  // Queues the frame where it lies, no copy: its bytes must stay as they are
  // until the next Flush (or the Queue/QueueInPlace that fills the batch).
  Status QueueInPlace(std::span<const uint8_t> frame);
  // Sends what is queued.
  Status Flush();

  // Frames lost on receive since the last call: the ring was full (the
  // kernel's count) or the frame was longer than kMaxFrame (seen cut, dropped).
  uint64_t TakeRingDrops();
  // True when Drain saw a sign of such a loss since the last TakeRingDrops:
  // a cut frame, or a frame the kernel marked TP_STATUS_LOSING (it marks
  // every frame while its drop count is not zero). Asking the kernel is a
  // system call; a forwarder asks only then, and when idle (a loss with no
  // frame after it marks none).
  bool RingLosing() const { return losing_ || cut_ > 0; }

  // Clears the error the kernel posts on the socket when the interface goes
  // down (poll reports POLLERR until it is read: a loop would spin). An
  // interface that is gone altogether is an error; one that is only down
  // receives again once it is up.
  Status TakeError();
  // Frames the interface refused on transmit, since the last call.
  uint64_t TakeTxDrops();

 private:
  PacketSocket() = default;
  // Sets up and maps the receive ring.
  Status MapRing();
  // The ring's current block if the kernel handed it over, else null.
  uint8_t* ReadyBlock();
  void ReleaseBlock();
  // Frames of one block, for Drain.
  static size_t FramesOf(uint8_t* block, uint8_t*& first);
  // Frame by frame: receives up to kRxBatch frames into rx_buf_ without waiting.
  size_t ReceiveBatch();

  std::string name_;
  int fd_ = -1;
  uint8_t* ring_ = nullptr;
  size_t ring_bytes_ = 0;
  size_t block_bytes_ = 0;
  size_t blocks_ = 0;
  size_t current_ = 0;
  std::array<std::array<uint8_t, kMaxFrame>, kTxBatch> tx_buf_{};  // Queue's copies
  std::array<iovec, kTxBatch> tx_iov_{};  // the queued frames, copied or in place
  size_t tx_count_ = 0;
  std::vector<std::array<uint8_t, kMaxFrame>> rx_buf_;  // frame by frame only
  std::array<size_t, kRxBatch> rx_len_{};
  std::array<bool, kRxBatch> rx_cut_{};
  uint64_t tx_drops_ = 0;
  uint64_t cut_ = 0;
  bool losing_ = false;
};

// Walks a TPACKET_V3 block: tpacket3_hdr entries chained by tp_next_offset.
struct RingFrame {
  uint8_t* data;
  size_t len;
  bool cut;     // longer than the ring's frame: only its start is there
  bool losing;  // the kernel has dropped frames since its count was last read
};
RingFrame FrameAt(uint8_t* hdr, uint8_t** next);

template <typename F, typename G>
size_t PacketSocket::Drain(F&& on_frame, G&& before_release, int max_blocks) {
  size_t seen = 0;
  if (ring_ == nullptr) {
    for (int b = 0; b < max_blocks; ++b) {
      const size_t n = ReceiveBatch();
      for (size_t i = 0; i < n; ++i) {
        if (rx_cut_[i]) ++cut_;
        else on_frame(std::span<uint8_t>(rx_buf_[i].data(), rx_len_[i]));
      }
      before_release();
      seen += n;
      if (n < kRxBatch) break;
    }
    return seen;
  }
  for (int b = 0; b < max_blocks; ++b) {
    uint8_t* block = ReadyBlock();
    if (block == nullptr) break;
    uint8_t* hdr = nullptr;
    const size_t n = FramesOf(block, hdr);
    for (size_t i = 0; i < n; ++i) {
      uint8_t* next = nullptr;
      const RingFrame f = FrameAt(hdr, &next);
      losing_ |= f.losing;
      if (f.cut) ++cut_;
      else on_frame(std::span<uint8_t>(f.data, f.len));
      hdr = next;
    }
    seen += n;
    before_release();
    ReleaseBlock();
  }
  return seen;
}

}  // namespace fibnic
