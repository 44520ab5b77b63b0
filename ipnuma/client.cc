#include "ipnuma/client.h"

#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "common/status.h"
#include "ipnuma/emu_doorbell.h"
#include "ipnuma/xdp/ipnuma_tx_shared.h"

struct ipnuma_client {
  int sock = -1;
  uint8_t* pages = nullptr;
  size_t pages_size = 0;
  bool busy_poll = false;
  // The ring posted writes go through (none with an emulator that has no
  // rings: then every doorbell is a message).
  fibnic::ipnuma::DoorbellRing* ring = nullptr;
  // The host link posted writes go through instead (an emulator whose
  // transmit path is in the kernel): one frame per store, no emulator woken.
  int link = -1;
  uint32_t link_tag = 0;
  uint32_t link_sent = 0;  // frames sent, told with every message
  size_t link_max_data = 0;
  std::vector<uint8_t> frame;
  std::string error;
};

namespace {

using fibnic::StatusCode;
using fibnic::ipnuma::DoorbellAnswer;
using fibnic::ipnuma::DoorbellOp;
using fibnic::ipnuma::DoorbellRequest;
using fibnic::ipnuma::DoorbellRing;
using fibnic::ipnuma::kDoorbellRingSlots;

int ErrnoOf(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return 0;
    case StatusCode::kPermissionDenied: return -EACCES;
    case StatusCode::kUnavailable: return -EHOSTDOWN;
    case StatusCode::kNotFound: return -ENXIO;
    case StatusCode::kFailedPrecondition: return -ENETDOWN;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange: return -EINVAL;
    default: return -EIO;
  }
}

int Fail(ipnuma_client* c, int err, const std::string& why) {
  c->error = why;
  return err;
}

int Send(ipnuma_client* c, DoorbellOp op, uint64_t offset, uint32_t length) {
  DoorbellRequest req;
  req.op = static_cast<uint32_t>(op);
  req.offset = offset;
  req.length = length;
  req.link_sent = c->link_sent;
  if (::send(c->sock, &req, sizeof req, MSG_NOSIGNAL) != sizeof req) {
    return Fail(c, -EIO, std::string("doorbell: ") + std::strerror(errno));
  }
  return 0;
}

// One doorbell and its answer.
int Ring(ipnuma_client* c, DoorbellOp op, uint64_t offset, uint32_t length) {
  if (int rc = Send(c, op, offset, length); rc != 0) return rc;
  DoorbellAnswer ans;
  ssize_t got;
  do {
    got = ::recv(c->sock, &ans, sizeof ans, c->busy_poll ? MSG_DONTWAIT : 0);
  } while (got < 0 && (errno == EINTR || (c->busy_poll && errno == EAGAIN)));
  if (got != sizeof ans) return Fail(c, -EIO, "doorbell: ipnuma-emu did not answer");
  ans.message[sizeof ans.message - 1] = '\0';
  c->error = ans.message;
  return ErrnoOf(static_cast<StatusCode>(ans.code));
}

int CheckRange(ipnuma_client* c, uint64_t offset, size_t len) {
  if (offset > c->pages_size || len > c->pages_size - offset) {
    return Fail(c, -EINVAL, "BAR2 range is outside the page region of " + std::to_string(c->pages_size) + " bytes");
  }
  c->error.clear();
  return 0;
}

// A posted write's doorbell into the ring: no system call unless the ring is
// full or the emulator sleeps.
int Post(ipnuma_client* c, uint64_t offset, uint32_t length) {
  DoorbellRing* r = c->ring;
  const uint32_t tail = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);  // written here only
  for (uint32_t spins = 1; tail - __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) >= kDoorbellRingSlots; ++spins) {
    // Full: the emulator is behind, or asleep (then told), or gone.
    if (__atomic_load_n(&r->asleep, __ATOMIC_SEQ_CST) != 0 && Send(c, DoorbellOp::kKick, 0, 0) != 0) return -EIO;
    if (spins % 1024 == 0) {
      pollfd p{c->sock, 0, 0};
      if (::poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)))
        return Fail(c, -EIO, "doorbell: ipnuma-emu went away with the ring full");
    }
    sched_yield();
  }
  DoorbellRequest req;
  req.op = static_cast<uint32_t>(DoorbellOp::kWritePosted);
  req.offset = offset;
  req.length = length;
  std::memcpy(&r->slot[tail % kDoorbellRingSlots], &req, sizeof req);
  __atomic_store_n(&r->tail, tail + 1, __ATOMIC_RELEASE);
  // Against the emulator's store of asleep and load of tail (DoorbellRing).
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  if (__atomic_load_n(&r->asleep, __ATOMIC_RELAXED) != 0) return Send(c, DoorbellOp::kKick, 0, 0);
  return 0;
}

// Hands the emulator a ring for posted writes; without one (an emulator that
// refuses it) posted doorbells stay messages.
void AttachRing(ipnuma_client* c) {
  const int fd = ::memfd_create("ipnuma-doorbells", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return;
  void* m = MAP_FAILED;
  // Sealed at its size: the emulator maps only a ring that cannot shrink under it.
  if (::ftruncate(fd, sizeof(DoorbellRing)) == 0 &&
      ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0) {
    m = ::mmap(nullptr, sizeof(DoorbellRing), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  fibnic::ipnuma::DoorbellMessage m_out;
  m_out.req.op = static_cast<uint32_t>(DoorbellOp::kAttachRing);
  m_out.req.length = sizeof(DoorbellRing);
  cmsghdr* h = CMSG_FIRSTHDR(&m_out.msg);
  h->cmsg_level = SOL_SOCKET;
  h->cmsg_type = SCM_RIGHTS;
  h->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(h), &fd, sizeof fd);
  DoorbellAnswer ans;
  const bool sent = m != MAP_FAILED && ::sendmsg(c->sock, &m_out.msg, MSG_NOSIGNAL) == sizeof m_out.req;
  ::close(fd);
  if (sent && ::recv(c->sock, &ans, sizeof ans, 0) == sizeof ans && ans.code == 0) {
    c->ring = static_cast<DoorbellRing*>(m);
    return;
  }
  if (m != MAP_FAILED) ::munmap(m, sizeof(DoorbellRing));
}

// Asks for the host link; without one (an emulator whose transmit path is
// not in the kernel, or that refuses) posted writes keep the ring.
void OpenLink(ipnuma_client* c) {
  if (Send(c, DoorbellOp::kOpenLink, 0, 0) != 0) return;
  DoorbellAnswer ans;
  fibnic::ipnuma::DoorbellMessage m;  // only its control buffer is used
  iovec iov{&ans, sizeof ans};
  m.msg.msg_iov = &iov;
  const ssize_t got = ::recvmsg(c->sock, &m.msg, MSG_CMSG_CLOEXEC);
  int fd = -1;
  for (cmsghdr* h = got > 0 ? CMSG_FIRSTHDR(&m.msg) : nullptr; h != nullptr; h = CMSG_NXTHDR(&m.msg, h)) {
    if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) std::memcpy(&fd, CMSG_DATA(h), sizeof(int));
  }
  if (got != sizeof ans || ans.code != 0 || fd < 0) {
    if (fd >= 0) ::close(fd);
    return;
  }
  // A frame holds the link's MTU beyond its Ethernet header.
  ifreq ifr{};
  sockaddr_ll sa{};
  socklen_t sl = sizeof sa;
  int mtu = 1500;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &sl) == 0 &&
      ::if_indextoname(static_cast<unsigned>(sa.sll_ifindex), ifr.ifr_name) != nullptr &&
      ::ioctl(fd, SIOCGIFMTU, &ifr) == 0) {
    mtu = ifr.ifr_mtu;
  }
  if (mtu <= static_cast<int>(sizeof(ipnuma_doorbell))) {
    ::close(fd);
    return;
  }
  c->link = fd;
  c->link_tag = ans.value;
  c->link_max_data = std::min<size_t>(IPNUMA_DOORBELL_MAX_DATA, static_cast<size_t>(mtu) - sizeof(ipnuma_doorbell));
}

// A posted write as doorbell frames, one per MAX_PAYLOAD line as the
// emulator shows it in the ring (the kernel sends a frame within one line at
// once; one that crosses a line, as MAX_PAYLOAD shrinks under it, goes
// through the emulator, which splits it: slower, the same bytes in order).
int PostOnLink(ipnuma_client* c, uint64_t offset, const uint8_t* data, size_t len) {
  constexpr size_t kEth = 14;
  size_t line = c->ring != nullptr ? __atomic_load_n(&c->ring->line, __ATOMIC_RELAXED) : 4096;
  if (line < 64 || line > 4096 || (line & (line - 1)) != 0) line = 4096;  // WireParams' range: powers of two
  for (size_t done = 0; done < len;) {
    const uint64_t at = offset + done;
    const size_t n = std::min({len - done, c->link_max_data, line - static_cast<size_t>(at % line)});
    c->frame.assign(kEth + sizeof(ipnuma_doorbell) + n, 0);
    uint8_t* f = c->frame.data();
    std::memset(f, 0xff, 6);  // the NIC's end takes any destination
    f[6] = 0x02;              // locally administered source
    f[12] = IPNUMA_DOORBELL_ETHERTYPE >> 8;
    f[13] = IPNUMA_DOORBELL_ETHERTYPE & 0xff;
    if (c->ring != nullptr) {
      // Credit: the emulator takes frames it could not send at once from a
      // socket of bounded size; a writer faster than it waits here.
      for (uint32_t spins = 1; c->link_sent - __atomic_load_n(&c->ring->link_taken, __ATOMIC_ACQUIRE) >=
                               fibnic::ipnuma::kLinkCredit;
           ++spins) {
        if (spins % 1024 == 0) {
          pollfd p{c->sock, 0, 0};
          if (::poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)))
            return Fail(c, -EIO, "doorbell: ipnuma-emu went away with the host link's credit used up");
        }
        sched_yield();
      }
    }
    ipnuma_doorbell h{};
    h.magic = IPNUMA_DOORBELL_MAGIC;
    h.op = IPNUMA_DOORBELL_POSTED_WRITE;
    h.length = static_cast<uint16_t>(n);
    h.client = c->link_tag;
    h.offset = at;
    std::memcpy(f + kEth, &h, sizeof h);
    std::memcpy(f + kEth + sizeof h, data + done, n);
    ssize_t sent;
    // ENOBUFS: a native-mode link's ring to the NIC is full (the frame was
    // not taken); it drains within microseconds.
    do {
      sent = ::send(c->link, f, c->frame.size(), 0);
      if (sent < 0 && errno == ENOBUFS) sched_yield();
    } while (sent < 0 && (errno == EINTR || errno == ENOBUFS));
    if (sent != static_cast<ssize_t>(c->frame.size())) {
      return Fail(c, -EIO, std::string("host link: ") + std::strerror(errno));
    }
    c->link_sent++;
    done += n;
  }
  return 0;
}

// Copies into BAR2 and rings, in pieces the emulator queues at once; a
// posted write's doorbell is not answered.
int StoreAndRing(ipnuma_client* c, DoorbellOp op, uint64_t page_offset, const void* data, size_t len) {
  if (int rc = CheckRange(c, page_offset, len); rc != 0) return rc;
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (size_t done = 0; done < len;) {
    const uint32_t n = static_cast<uint32_t>(std::min<size_t>(len - done, fibnic::ipnuma::kDoorbellMaxLength));
    std::memcpy(c->pages + page_offset + done, bytes + done, n);
    const int rc = op != DoorbellOp::kWritePosted ? Ring(c, op, page_offset + done, n)
                   : c->link >= 0                 ? PostOnLink(c, page_offset + done, bytes + done, n)
                   : c->ring != nullptr           ? Post(c, page_offset + done, n)
                                                  : Send(c, op, page_offset + done, n);
    if (rc != 0) return rc;
    done += n;
  }
  return 0;
}

}  // namespace

extern "C" {

ipnuma_client* ipnuma_open(const char* pages_file, const char* socket_path) {
  const std::string sock_path = socket_path != nullptr ? socket_path : std::string(pages_file) + ".sock";
  sockaddr_un addr{};
  if (sock_path.size() >= sizeof addr.sun_path) {
    errno = ENAMETOOLONG;
    return nullptr;
  }
  const int fd = ::open(pages_file, O_RDWR | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st {};
  void* map = MAP_FAILED;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    map = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  const int map_err = st.st_size > 0 ? errno : EINVAL;
  ::close(fd);
  if (map == MAP_FAILED) {
    errno = map_err;
    return nullptr;
  }
  auto* c = new ipnuma_client;
  c->pages = static_cast<uint8_t*>(map);
  c->pages_size = static_cast<size_t>(st.st_size);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, sock_path.c_str(), sock_path.size() + 1);
  c->sock = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (c->sock < 0 || ::connect(c->sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    ipnuma_close(c);
    errno = err;
    return nullptr;
  }
  AttachRing(c);
  OpenLink(c);
  return c;
}

void ipnuma_close(ipnuma_client* c) {
  if (c == nullptr) return;
  if (c->sock >= 0) ::close(c->sock);
  if (c->link >= 0) ::close(c->link);
  if (c->ring != nullptr) ::munmap(c->ring, sizeof(DoorbellRing));
  if (c->pages != nullptr) ::munmap(c->pages, c->pages_size);
  delete c;
}

int ipnuma_write(ipnuma_client* c, uint64_t page_offset, const void* data, size_t len) {
  return StoreAndRing(c, DoorbellOp::kWrite, page_offset, data, len);
}

int ipnuma_write_posted(ipnuma_client* c, uint64_t page_offset, const void* data, size_t len) {
  return StoreAndRing(c, DoorbellOp::kWritePosted, page_offset, data, len);
}

int ipnuma_flush(ipnuma_client* c) { return Ring(c, DoorbellOp::kFlush, 0, 0); }

void ipnuma_set_busy_poll(ipnuma_client* c, int on) { c->busy_poll = on != 0; }

int ipnuma_read(ipnuma_client* c, uint64_t page_offset, void* data, size_t len) {
  if (int rc = CheckRange(c, page_offset, len); rc != 0) return rc;
  auto* bytes = static_cast<uint8_t*>(data);
  for (size_t done = 0; done < len;) {
    const uint32_t n = static_cast<uint32_t>(std::min<size_t>(len - done, fibnic::ipnuma::kDoorbellMaxLength));
    if (int rc = Ring(c, DoorbellOp::kRead, page_offset + done, n); rc != 0) return rc;
    std::memcpy(bytes + done, c->pages + page_offset + done, n);
    done += n;
  }
  return 0;
}

int ipnuma_reset_peer(ipnuma_client* c, uint16_t pcid) { return Ring(c, DoorbellOp::kResetPeer, pcid, 0); }

const char* ipnuma_last_error(const ipnuma_client* c) { return c->error.c_str(); }

}  // extern "C"
