#include "common/packet_socket.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fibnic {
namespace {

// 64 blocks of 256 KiB: 16 MiB per interface, room for a few milliseconds of
// line-rate bursts while the loop serves the other ports. A block is handed
// over when full or after kBlockTimeoutMs, which bounds the added latency.
constexpr unsigned kBlockBytes = 1u << 18;
constexpr unsigned kBlocks = 64;
constexpr unsigned kBlockTimeoutMs = 1;

std::string Errno(const std::string& what, const std::string& interface) {
  return what + " on interface " + interface + ": " + std::strerror(errno);
}

}  // namespace

StatusOr<std::unique_ptr<PacketSocket>> PacketSocket::Open(const std::string& interface, Receive receive) {
  const unsigned index = ::if_nametoindex(interface.c_str());
  if (index == 0) return NotFound("no network interface '" + interface + "' in this namespace");
  std::unique_ptr<PacketSocket> s(new PacketSocket());
  s->name_ = interface;
  s->fd_ = ::socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
  if (s->fd_ < 0) return IoError(Errno("cannot open a packet socket (needs CAP_NET_RAW)", interface));

  const int one = 1;
  const int version = TPACKET_V3;
  if (::setsockopt(s->fd_, SOL_PACKET, PACKET_VERSION, &version, sizeof version) != 0)
    return IoError(Errno("cannot select TPACKET_V3", interface));
  if (::setsockopt(s->fd_, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one) != 0)
    return IoError(Errno("cannot ignore outgoing frames", interface));
  if (::setsockopt(s->fd_, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one) != 0)
    return IoError(Errno("cannot bypass the qdisc", interface));

  if (receive == Receive::kPerFrame) {
    s->rx_buf_.resize(kRxBatch);
  } else {
    RETURN_IF_ERROR(s->MapRing());
  }

  sockaddr_ll addr{};
  addr.sll_family = AF_PACKET;
  addr.sll_protocol = htons(ETH_P_ALL);
  addr.sll_ifindex = static_cast<int>(index);
  if (::bind(s->fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return IoError(Errno("cannot bind a packet socket", interface));
  packet_mreq mreq{};
  mreq.mr_ifindex = static_cast<int>(index);
  mreq.mr_type = PACKET_MR_PROMISC;
  if (::setsockopt(s->fd_, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq, sizeof mreq) != 0)
    return IoError(Errno("cannot enter promiscuous mode", interface));
  s->TakeRingDrops();  // frames from before the bind are not the card's
  return s;
}

Status PacketSocket::MapRing() {
  tpacket_req3 req{};
  req.tp_block_size = kBlockBytes;
  req.tp_block_nr = kBlocks;
  req.tp_frame_size = kMaxFrame;
  req.tp_frame_nr = kBlockBytes / kMaxFrame * kBlocks;
  req.tp_retire_blk_tov = kBlockTimeoutMs;
  if (::setsockopt(fd_, SOL_PACKET, PACKET_RX_RING, &req, sizeof req) != 0)
    return IoError(Errno("cannot set up the receive ring", name_));
  block_bytes_ = kBlockBytes;
  blocks_ = kBlocks;
  ring_bytes_ = size_t{kBlockBytes} * kBlocks;
  void* ring = ::mmap(nullptr, ring_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_LOCKED, fd_, 0);
  if (ring == MAP_FAILED) ring = ::mmap(nullptr, ring_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (ring == MAP_FAILED) return IoError(Errno("cannot map the receive ring", name_));
  ring_ = static_cast<uint8_t*>(ring);
  return OkStatus();
}

PacketSocket::~PacketSocket() {
  if (ring_ != nullptr) ::munmap(ring_, ring_bytes_);
  if (fd_ >= 0) ::close(fd_);
}

uint8_t* PacketSocket::ReadyBlock() {
  uint8_t* block = ring_ + current_ * block_bytes_;
  auto* desc = reinterpret_cast<tpacket_block_desc*>(block);
  if ((__atomic_load_n(&desc->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER) == 0) return nullptr;
  return block;
}

void PacketSocket::ReleaseBlock() {
  auto* desc = reinterpret_cast<tpacket_block_desc*>(ring_ + current_ * block_bytes_);
  __atomic_store_n(&desc->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
  current_ = (current_ + 1) % blocks_;
}

size_t PacketSocket::FramesOf(uint8_t* block, uint8_t*& first) {
  auto* desc = reinterpret_cast<tpacket_block_desc*>(block);
  first = block + desc->hdr.bh1.offset_to_first_pkt;
  return desc->hdr.bh1.num_pkts;
}

RingFrame FrameAt(uint8_t* hdr, uint8_t** next) {
  auto* h = reinterpret_cast<tpacket3_hdr*>(hdr);
  *next = hdr + h->tp_next_offset;
  return RingFrame{hdr + h->tp_mac, h->tp_snaplen, h->tp_snaplen < h->tp_len, (h->tp_status & TP_STATUS_LOSING) != 0};
}

Status PacketSocket::Queue(std::span<const uint8_t> frame) {
  if (frame.size() > kMaxFrame) {
    ++tx_drops_;
    return OkStatus();
  }
  std::memcpy(tx_buf_[tx_count_].data(), frame.data(), frame.size());
  tx_iov_[tx_count_] = iovec{tx_buf_[tx_count_].data(), frame.size()};
  if (++tx_count_ == kTxBatch) return Flush();
  return OkStatus();
}

Status PacketSocket::QueueInPlace(std::span<const uint8_t> frame) {
  if (frame.size() > kMaxFrame) {
    ++tx_drops_;
    return OkStatus();
  }
  // sendmmsg only reads the bytes (it copies them into the kernel's buffers).
  tx_iov_[tx_count_] = iovec{const_cast<uint8_t*>(frame.data()), frame.size()};
  if (++tx_count_ == kTxBatch) return Flush();
  return OkStatus();
}

Status PacketSocket::Flush() {
  if (tx_count_ == 0) return OkStatus();
  std::array<mmsghdr, kTxBatch> msgs{};
  for (size_t i = 0; i < tx_count_; ++i) {
    msgs[i].msg_hdr.msg_iov = &tx_iov_[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  size_t sent = 0;
  while (sent < tx_count_) {
    const int n = ::sendmmsg(fd_, msgs.data() + sent, static_cast<unsigned>(tx_count_ - sent), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == ENOBUFS || errno == EAGAIN || errno == ENETDOWN || errno == ENXIO || errno == EMSGSIZE) {
        ++tx_drops_;  // this frame is lost, like a full output FIFO; the rest go on
        ++sent;
        continue;
      }
      const Status st = IoError(Errno("cannot transmit", name_));
      tx_count_ = 0;
      return st;
    }
    sent += static_cast<size_t>(n);
  }
  tx_count_ = 0;
  return OkStatus();
}

size_t PacketSocket::ReceiveBatch() {
  std::array<iovec, kRxBatch> iov{};
  std::array<mmsghdr, kRxBatch> msgs{};
  for (size_t i = 0; i < kRxBatch; ++i) {
    iov[i] = iovec{rx_buf_[i].data(), kMaxFrame};
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  int n;
  do {
    n = ::recvmmsg(fd_, msgs.data(), kRxBatch, MSG_DONTWAIT, nullptr);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return 0;  // nothing waiting (or the interface went away: nothing to read)
  for (int i = 0; i < n; ++i) {
    rx_len_[i] = msgs[i].msg_len;
    rx_cut_[i] = (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) != 0;
  }
  return static_cast<size_t>(n);
}

uint64_t PacketSocket::TakeRingDrops() {
  tpacket_stats_v3 st{};
  socklen_t len = sizeof st;
  const uint64_t cut = cut_;
  cut_ = 0;
  losing_ = false;
  if (::getsockopt(fd_, SOL_PACKET, PACKET_STATISTICS, &st, &len) != 0) return cut;
  return cut + st.tp_drops;  // the kernel resets its statistics on every read
}

Status PacketSocket::TakeError() {
  int err = 0;
  socklen_t len = sizeof err;
  (void)::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
  if (::if_nametoindex(name_.c_str()) == 0) return Unavailable("interface " + name_ + " is gone");
  return OkStatus();
}

uint64_t PacketSocket::TakeTxDrops() {
  const uint64_t n = tx_drops_;
  tx_drops_ = 0;
  return n;
}

}  // namespace fibnic
