#include "ipnuma/emu_kernel_tx.h"

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>

namespace fibnic::ipnuma {
namespace {

std::string Why(const std::string& what) { return what + ": " + std::strerror(errno); }

// `limit` only rises while the program holds a stream: it shares a 64-bit
// word with `ip` so that the receive program, whose compare-and-swap is
// 64-bit, can raise it too.
void RaiseLimit(ipnuma_tx_stream& t, uint32_t limit) {
  static_assert(offsetof(ipnuma_tx_stream, limit) % 8 == 0 && offsetof(ipnuma_tx_stream, ip) == offsetof(ipnuma_tx_stream, limit) + 4);
  auto* pair = reinterpret_cast<uint64_t*>(reinterpret_cast<char*>(&t) + offsetof(ipnuma_tx_stream, limit));
  uint64_t cur = __atomic_load_n(pair, __ATOMIC_SEQ_CST);
  while (static_cast<int32_t>(limit - static_cast<uint32_t>(cur)) > 0 &&
         !__atomic_compare_exchange_n(pair, &cur, (cur & 0xffffffff00000000ull) | limit, true, __ATOMIC_SEQ_CST,
                                      __ATOMIC_SEQ_CST)) {
  }
}


uint64_t LoadWord(const uint64_t& w) { return std::atomic_ref<const uint64_t>(w).load(std::memory_order_seq_cst); }

// How long a sequence the program assigned may take to show up as its
// record (it submits the record before the frame leaves), and how long
// frames a client says it sent may take to come through the host link.
constexpr auto kRecordWait = std::chrono::milliseconds(20);
constexpr auto kLinkWait = std::chrono::milliseconds(20);

}  // namespace

StatusOr<std::unique_ptr<KernelTransmit>> KernelTransmit::Open(EmuNic& nic, const Config& c) {
  std::unique_ptr<KernelTransmit> k(new KernelTransmit(nic));
  if (nic.bar0_map_fd() < 0) {
    return InvalidArgument("the kernel transmit path needs BAR0 in a pinned BPF map (--bar on a bpffs)");
  }
  k->host_ifindex_ = static_cast<int>(::if_nametoindex(c.link_host.c_str()));
  if (k->host_ifindex_ == 0) return NotFound(Why("host link " + c.link_host));
  const int nic_ifindex = static_cast<int>(::if_nametoindex(c.link_nic.c_str()));
  if (nic_ifindex == 0) return NotFound(Why("host link " + c.link_nic));
  XdpTransmit::Config x;
  x.bar0_map_fd = nic.bar0_map_fd();
  x.pcid_entries = nic.caps().pcid_entries;
  x.link = c.link_nic;
  x.wire = c.wire;
  x.native = c.native;
  ASSIGN_OR_RETURN(k->tx_, XdpTransmit::Attach(x));
  // Only doorbell frames: the program passes up nothing else it was sent.
  k->punt_fd_ = ::socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(IPNUMA_DOORBELL_ETHERTYPE));
  if (k->punt_fd_ < 0) return IoError(Why("host link: AF_PACKET socket"));
  // A frame this socket drops was counted by the program: its stream would
  // stay with the emulator for good (slower, still in order).
  const int rcvbuf = 8 << 20;
  (void)::setsockopt(k->punt_fd_, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf);
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(IPNUMA_DOORBELL_ETHERTYPE);
  sll.sll_ifindex = nic_ifindex;
  if (::bind(k->punt_fd_, reinterpret_cast<sockaddr*>(&sll), sizeof sll) != 0) {
    return IoError(Why("host link: binding to " + c.link_nic));
  }
  k->punts_taken_.assign(k->tx_->slot_count(), 0);
  k->kernel_.assign(k->tx_->slot_count(), false);
  if (::getrandom(&k->tag_state_, sizeof k->tag_state_, 0) != sizeof k->tag_state_) {
    return IoError(Why("host link: getrandom"));
  }
  return k;
}

KernelTransmit::~KernelTransmit() {
  if (punt_fd_ >= 0) ::close(punt_fd_);
}

StatusOr<int> KernelTransmit::OpenLink(int client, uint32_t* tag) {
  // Sends only (protocol 0 receives nothing), so the client is never woken
  // by the link; frames skip the qdisc as a NIC's doorbell skips any queue.
  const int fd = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
  if (fd < 0) return IoError(Why("host link: AF_PACKET socket"));
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_ifindex = host_ifindex_;
  const int one = 1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sll), sizeof sll) != 0 ||
      ::setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one) != 0) {
    const Status st = IoError(Why("host link: binding the client's socket"));
    ::close(fd);
    return st;
  }
  // Tags are unguessable (splitmix64 over a random start), so one program
  // cannot have its refusals charged to another by naming its tag.
  uint32_t t = 0;
  do {
    uint64_t z = (tag_state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    t = static_cast<uint32_t>(z ^ (z >> 31));
  } while (t == 0 || links_.count(t) != 0);
  links_[t] = Link{client, 0};
  *tag = t;
  return fd;
}

void KernelTransmit::Forget(int client) {
  std::erase_if(links_, [client](const auto& l) { return l.second.client == client; });
}

int KernelTransmit::ClientOf(uint32_t tag) const {
  auto it = links_.find(tag);
  return it == links_.end() ? -1 : it->second.client;
}

void KernelTransmit::Seen(uint32_t tag) {
  auto it = links_.find(tag);
  if (it != links_.end()) it->second.seen++;
}

Status KernelTransmit::DrainSent(uint64_t now_ns, size_t* n) {
  Status first;
  const SentOrder::NextOf next_of = [&](uint32_t ip) -> std::optional<uint32_t> {
    for (const auto& s : nic_.Streams(now_ns)) {
      if (s.ip == ip) return s.next;
    }
    return std::nullopt;
  };
  // The program assigns a stream's sequences only while the sender has
  // nothing of it to send, so adopting cannot fail unless the two disagree
  // on who owns the stream: a bug that would corrupt the stream, so it
  // stops the emulator.
  const SentOrder::Adopt adopt = [&](const SentPacket& p) {
    Status st = nic_.Adopt(ClientOf(p.client), p, now_ns);
    return st.ok() ? st : Internal("kernel transmit path: " + st.ToString());
  };
  auto taken = tx_->Drain([&](const SentPacket& p) {
    Seen(p.client);
    stats_.adopted++;
    if (Status st = order_.Take(p, next_of, adopt); !st.ok() && first.ok()) first = st;
  });
  if (!taken.ok()) return taken.status();
  if (n != nullptr) *n = *taken;
  return first;
}

Status KernelTransmit::TakePunts(uint64_t now_ns, bool* any) {
  alignas(8) uint8_t buf[ETH_HLEN + sizeof(ipnuma_doorbell) + IPNUMA_DOORBELL_MAX_DATA + 64];
  for (;;) {
    const ssize_t got = ::recv(punt_fd_, buf, sizeof buf, MSG_DONTWAIT | MSG_TRUNC);
    if (got < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return OkStatus();
      if (errno == EINTR) continue;
      return IoError(Why("host link: reading passed-up doorbells"));
    }
    // The program counted every frame of this EtherType it passed up: in the
    // slot it wrote into the frame, or in slot 0 when the frame has no room
    // for one.
    ipnuma_doorbell h{};
    if (static_cast<size_t>(got) < ETH_HLEN + sizeof h) {
      punts_taken_[0]++;
      continue;
    }
    std::memcpy(&h, buf + ETH_HLEN, sizeof h);
    punts_taken_[h.punt_slot < punts_taken_.size() ? h.punt_slot : 0]++;
    if (h.magic != IPNUMA_DOORBELL_MAGIC) continue;  // not a doorbell: nobody's store
    Seen(h.client);
    stats_.punted++;
    if (!*any) {
      // A passed-up store takes a sequence from the sender: the program must hold none.
      RETURN_IF_ERROR(TakeAll(now_ns));
      *any = true;
    }
    const int client = ClientOf(h.client);
    const size_t data_at = ETH_HLEN + sizeof h;
    if (h.op != IPNUMA_DOORBELL_POSTED_WRITE || h.length == 0 || h.length > IPNUMA_DOORBELL_MAX_DATA ||
        static_cast<size_t>(got) > sizeof buf || static_cast<size_t>(got) < data_at + h.length) {
      nic_.RefusePosted(client, InvalidArgument("doorbell frame (op " + std::to_string(h.op) + ", " +
                                                std::to_string(h.length) + " data bytes in a frame of " +
                                                std::to_string(got) + ") is not a posted write this NIC takes"));
      continue;
    }
    nic_.StorePosted(client, h.offset, std::span<const uint8_t>(buf + data_at, h.length));
  }
}

Status KernelTransmit::Drain(uint64_t now_ns, bool punts) {
  RETURN_IF_ERROR(DrainSent(now_ns, nullptr));
  bool any = false;
  return punts ? TakePunts(now_ns, &any) : OkStatus();
}

Status KernelTransmit::TakeAll(uint64_t now_ns) {
  // Each stream the program held: taken back, and the next sequence it
  // would have assigned remembered.
  std::map<uint32_t, uint32_t> next_of;  // destination (host order) -> next sequence
  for (const auto& [ip, slot] : slot_of_) {
    if (!kernel_[slot]) continue;
    std::atomic_ref<uint64_t> word(tx_->slot(slot).word);
    uint64_t w = word.load();
    while (!word.compare_exchange_weak(w, w & ~IPNUMA_TX_KERNEL)) {
    }
    kernel_[slot] = false;
    stats_.taken++;
    next_of[ip] = static_cast<uint32_t>(w & IPNUMA_TX_SEQ_MASK);
  }
  if (next_of.empty()) return OkStatus();
  // Every sequence it assigned is recorded before its frame leaves: wait for
  // the records of those still being sent.
  const auto deadline = std::chrono::steady_clock::now() + kRecordWait;
  for (;;) {
    RETURN_IF_ERROR(DrainSent(now_ns, nullptr));
    bool behind = false;
    for (const auto& s : nic_.Streams(now_ns)) {
      auto it = next_of.find(s.ip);
      if (it != next_of.end() && s.next != it->second) behind = true;
    }
    if (!behind) return OkStatus();
    if (std::chrono::steady_clock::now() > deadline) {
      return Internal("kernel transmit path: a sequence the program assigned was never recorded");
    }
  }
}

bool KernelTransmit::RetransmitDue(uint64_t now_ns) const {
  bool held = false;
  for (bool k : kernel_) held = held || k;
  if (!held) return false;
  for (const auto& s : nic_.Streams(now_ns)) {
    auto it = slot_of_.find(s.ip);
    if (it != slot_of_.end() && kernel_[it->second] && s.retransmit_due) return true;
  }
  return false;
}

Status KernelTransmit::CatchUp(int client, uint32_t sent, uint64_t now_ns) {
  Link* link = nullptr;
  for (auto& [tag, l] : links_) {
    if (l.client == client) link = &l;
  }
  if (link == nullptr) return OkStatus();
  const auto deadline = std::chrono::steady_clock::now() + kLinkWait;
  while (static_cast<int32_t>(sent - link->seen) > 0) {
    RETURN_IF_ERROR(Drain(now_ns));
    if (std::chrono::steady_clock::now() > deadline) {
      const uint32_t lost = sent - link->seen;
      stats_.lost += lost;
      link->seen = sent;
      nic_.RefusePosted(client, Unavailable(std::to_string(lost) +
                                            " posted stores sent on the host link never reached the NIC "
                                            "(the link dropped them)"));
      break;
    }
  }
  return OkStatus();
}

Status KernelTransmit::HandBack(uint64_t now_ns) {
  const uint32_t window = nic_.wire_params().tx_window;
  const uint64_t punted_unslotted = LoadWord(tx_->slot(0).punted);
  for (const auto& s : nic_.Streams(now_ns)) {
    auto it = slot_of_.find(s.ip);
    uint32_t slot = it == slot_of_.end() ? 0 : it->second;
    if (slot != 0 && kernel_[slot]) {
      // The window moves as the sender takes ACKs; the receive program may
      // have moved it further already (on ACKs this sender has not read).
      RaiseLimit(tx_->slot(slot), s.base + window);
      continue;
    }
    if (s.down || s.unsent > 0 || s.read_in_flight || s.retransmit_due) continue;
    const bool fresh = slot == 0;
    uint64_t read_word = fresh ? 0 : std::atomic_ref<uint64_t>(tx_->slot(slot).word).load();
    if (fresh) {
      // A new address: not while a store the program passed up without a
      // slot may still be on its way (it may be this address's).
      if (punted_unslotted != punts_taken_[0] || slot_of_.size() + 1 >= tx_->slot_count()) continue;
      slot = static_cast<uint32_t>(slot_of_.size() + 1);  // slots are never freed: a NIC has few peers
      ipnuma_tx_stream& t = tx_->slot(slot);
      t.ip = htonl(s.ip);
      std::atomic_ref<uint64_t>(t.punted).store(0);
      std::atomic_ref<uint64_t>(t.word).store(0);  // nothing can be passed up for it before MapAddress
      punts_taken_[slot] = 0;
    } else if (LoadWord(tx_->slot(slot).punted) != punts_taken_[slot]) {
      continue;  // a store it passed up is still on its way
    }
    ipnuma_tx_stream& t = tx_->slot(slot);
    std::atomic_ref<uint32_t>(t.limit).store(s.base + window, std::memory_order_release);
    std::atomic_ref<uint64_t> word(t.word);
    // The word was read before `punted` (above): the program advances its
    // count of frames passed up after `punted`, so if one was passed up
    // since, the swap fails and the stream stays here this round.
    uint64_t w = read_word;
    const uint64_t given = (w & ~(IPNUMA_TX_KERNEL | (uint64_t{0xffff} << IPNUMA_TX_EPOCH_SHIFT) | IPNUMA_TX_SEQ_MASK)) |
                           IPNUMA_TX_KERNEL | (uint64_t{s.epoch} << IPNUMA_TX_EPOCH_SHIFT) | s.next;
    if (!word.compare_exchange_strong(w, given)) continue;
    kernel_[slot] = true;
    stats_.handed_back++;
    if (fresh) {
      RETURN_IF_ERROR(tx_->MapAddress(s.ip, slot));
      slot_of_[s.ip] = slot;
    }
  }
  return OkStatus();
}

}  // namespace fibnic::ipnuma
