// ipnuma-emu: a software IP-NUMA NIC (docs/ipnuma-emu.md). It maps
// the BAR0 file ipnumad provisions, the page region programs store into and
// the buffer pool file that stands for host memory, and carries the
// contract's UDP frames on one Linux interface.
//
//   ipnuma-emu --bar BAR0_FILE --pages BAR2_FILE --pool POOL_FILE --pool-base ADDR
//              --interface IFACE [--socket PATH] [--time-scale N] [--busy-poll]
//              [--xdp | --xdp-native] [--host-link NIC_END:HOST_END]
//
// --busy-poll: the loop never sleeps in poll; it looks at the wire and the
// doorbells again at once, giving the core away (sched_yield) after a round
// that found nothing. A frame or a doorbell is then taken without a wake-up
// (tens of microseconds on a busy host), at the price of a core the
// scheduler sees as always runnable.
//
// --xdp: requests are taken in the kernel (ipnuma/xdp/ipnuma_rx.bpf.c, skb
// mode; --xdp-native in the driver): a WRITE lands in host memory and is
// answered before any process runs. BAR0 and the pool must then be BPF maps
// pinned on a bpffs (--bar, --pool), the only memory an XDP program reaches.
//
// --host-link NIC_END:HOST_END (with --xdp or --xdp-native): a veth pair in
// the emulator's namespace is the NIC's host link, and the transmit half runs
// in the kernel too (ipnuma/xdp/ipnuma_tx.bpf.c on NIC_END): a program's
// posted store is a doorbell frame into HOST_END that leaves as a WRITE on
// the wire within the program's own send, with no process woken. The
// emulator adopts those packets, retransmits them and takes their ACKs
// (ipnuma/emu_kernel_tx.h). Frames over 1500 bytes need the pair's MTU raised.
//
// Programs ring its doorbell (ipnuma/client.h) on the unix socket PATH
// (default BAR2_FILE.sock) after storing into BAR2_FILE.
//
// A --bar, --pool or --pages path on a bpffs names a pinned BPF array map
// (what ipnumad makes there), mapped the same way: the memory an XDP
// receive path can read and write.
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/packet_socket.h"
#include "ipnuma/emu_kernel_tx.h"
#include "ipnuma/emu_nic.h"
#include "ipnuma/emu_rings.h"
#include "ipnuma/xdp_receive.h"

namespace fibnic::ipnuma {
namespace {

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

struct Options {
  std::string bar, pages, pool, interface, socket;
  uint64_t pool_base = 0;
  bool pool_base_set = false;
  uint64_t time_scale = 1000;
  bool busy_poll = false;
  bool xdp = false, xdp_native = false;
  std::string link_nic, link_host;
};

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr,
               "ipnuma-emu: %s\nusage: ipnuma-emu --bar BAR0_FILE --pages BAR2_FILE --pool POOL_FILE --pool-base ADDR "
               "--interface IFACE [--socket PATH] [--time-scale N] [--busy-poll] [--xdp | --xdp-native] "
               "[--host-link NIC_END:HOST_END]\n",
               why.c_str());
  std::exit(2);
}

uint64_t Number(const std::string& flag, const std::string& v) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(v.c_str(), &end, 0);
  if (v.empty() || *end != '\0' || errno != 0 || v[0] == '-') Usage(flag + " '" + v + "' is not a number");
  return n;
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") Usage("a software IP-NUMA NIC (docs/ipnuma.md)");
    if (a == "--busy-poll") {
      o.busy_poll = true;
      continue;
    }
    if (a == "--xdp" || a == "--xdp-native") {
      if (o.xdp) Usage("--xdp and --xdp-native are one choice");
      o.xdp = true;
      o.xdp_native = a == "--xdp-native";
      continue;
    }
    if (i + 1 >= argc) Usage("missing value after " + a);
    const std::string v = argv[++i];
    if (a == "--bar") o.bar = v;
    else if (a == "--pages") o.pages = v;
    else if (a == "--pool") o.pool = v;
    else if (a == "--pool-base") o.pool_base = Number(a, v), o.pool_base_set = true;
    else if (a == "--interface") o.interface = v;
    else if (a == "--socket") o.socket = v;
    else if (a == "--time-scale") o.time_scale = Number(a, v);
    else if (a == "--host-link") {
      const size_t colon = v.find(':');
      if (colon == std::string::npos || colon == 0 || colon + 1 == v.size()) Usage("--host-link wants NIC_END:HOST_END");
      o.link_nic = v.substr(0, colon);
      o.link_host = v.substr(colon + 1);
    }
    else Usage("unknown argument '" + a + "'");
  }
  if (o.bar.empty()) Usage("--bar BAR0_FILE is required");
  if (o.pages.empty()) Usage("--pages BAR2_FILE is required");
  if (o.pool.empty() || !o.pool_base_set) Usage("--pool POOL_FILE and --pool-base ADDR are required");
  if (o.interface.empty()) Usage("--interface IFACE is required");
  if (o.time_scale == 0 || o.time_scale > 1'000'000) Usage("--time-scale must be 1..1000000");
  if (o.socket.empty()) o.socket = o.pages + ".sock";
  if (!o.link_nic.empty() && !o.xdp) Usage("--host-link needs --xdp or --xdp-native (the transmit path in the kernel)");
  return o;
}

StatusOr<int> ListenDoorbell(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) return InvalidArgument("socket path " + path + " is too long");
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return IoError(std::string("cannot open a unix socket: ") + std::strerror(errno));
  ::unlink(path.c_str());  // a socket left by an emulator that did not stop cleanly
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 16) != 0) {
    const int err = errno;
    ::close(fd);
    return IoError("cannot listen on " + path + ": " + std::strerror(err));
  }
  return fd;
}

int Fail(const Status& st) {
  std::fprintf(stderr, "ipnuma-emu: %s\n", st.ToString().c_str());
  return 1;
}

int Run(const Options& opt) {
  auto nic = EmuNic::Open({opt.bar, opt.pages, opt.pool, opt.pool_base});
  if (!nic.ok()) return Fail(nic.status());
  // Frame by frame: every packet waits for its answer, so a frame held back
  // for a ring block to fill would add a millisecond to each round trip.
  auto port = PacketSocket::Open(opt.interface, PacketSocket::Receive::kPerFrame);
  if (!port.ok()) return Fail(port.status());
  auto listener = ListenDoorbell(opt.socket);
  if (!listener.ok()) return Fail(listener.status());
  // PEER_STATE as a NIC that just came up shows it, before anyone rings
  // (its counters were zeroed when it opened BAR0).
  (*nic)->Publish();
  // The transmit path first: the receive path moves its streams' windows.
  std::unique_ptr<KernelTransmit> kernel_tx;
  if (!opt.link_nic.empty()) {
    auto k = KernelTransmit::Open(**nic, {opt.link_nic, opt.link_host, opt.interface, opt.xdp_native});
    if (!k.ok()) return Fail(k.status());
    kernel_tx = std::move(k).value();
  }
  std::unique_ptr<XdpReceive> kernel_rx;
  if (opt.xdp) {
    EmuNic& n = **nic;
    if (n.bar0_map_fd() < 0 || n.pool_map_fd() < 0) {
      return Fail(InvalidArgument("--xdp needs --bar and --pool on a bpffs (pinned BPF maps): an XDP program "
                                  "reaches no other memory"));
    }
    n.SetKernelReceive();
    XdpReceive::Config c;
    c.bar0_map_fd = n.bar0_map_fd();
    c.pool_map_fd = n.pool_map_fd();
    c.pool_base = n.pool_base();
    c.pool_bytes = n.pool_bytes();
    c.pcid_entries = n.caps().pcid_entries;
    c.region_entries = n.caps().region_entries;
    c.interface = opt.interface;
    c.native = opt.xdp_native;
    if (kernel_tx) {
      c.tx_streams_fd = kernel_tx->program().streams_map_fd();
      c.tx_slot_fd = kernel_tx->program().slot_map_fd();
    }
    auto x = XdpReceive::Attach(c);
    if (!x.ok()) return Fail(x.status());
    kernel_rx = std::move(x).value();
  }

  struct sigaction sa {};
  sa.sa_handler = OnSignal;  // no SA_RESTART: poll returns at once
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client that went away is noticed by send's error

  std::printf("ipnuma-emu: NIC %s on %s%s%s, pages %s, pool %s, doorbell %s\n", opt.bar.c_str(), opt.interface.c_str(),
              !opt.xdp ? "" : opt.xdp_native ? " (receive in the kernel: XDP, native)" : " (receive in the kernel: XDP, skb)",
              kernel_tx ? (", transmit in the kernel from host link " + opt.link_host).c_str() : "",
              opt.pages.c_str(), opt.pool.c_str(), opt.socket.c_str());
  std::fflush(stdout);

  // The model's clock runs time_scale times slower than the host's: its
  // timers (RETX_TIMEOUT_NS, 3-40 us for the FPGA) must outlast a software
  // round trip, tens of microseconds idle but milliseconds whenever the
  // scheduler runs something else, or a busy host would see peers go down.
  // Everything else about the protocol is unchanged.
  const auto start = std::chrono::steady_clock::now();
  auto model_now = [&] {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start);
    return static_cast<uint64_t>(ns.count()) / opt.time_scale;
  };

  EmuNic& n = **nic;
  PacketSocket& wire = **port;
  std::vector<int> clients;
  DoorbellRings rings;
  std::vector<std::vector<uint8_t>> out;
  auto answer = [](int c, const Status& st) {
    DoorbellAnswer ans;
    ans.code = static_cast<int32_t>(st.code());
    std::snprintf(ans.message, sizeof ans.message, "%s", st.message().c_str());
    (void)::send(c, &ans, sizeof ans, MSG_NOSIGNAL);
  };
  // An answer with a file descriptor beside it (kOpenLink's socket).
  auto answer_with_fd = [](int c, const Status& st, int fd, uint32_t value) {
    DoorbellAnswer ans;
    ans.code = static_cast<int32_t>(st.code());
    ans.value = value;
    std::snprintf(ans.message, sizeof ans.message, "%s", st.message().c_str());
    iovec iov{&ans, sizeof ans};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    if (fd >= 0) {
      m.msg_control = control;
      m.msg_controllen = sizeof control;
      cmsghdr* h = CMSG_FIRSTHDR(&m);
      h->cmsg_level = SOL_SOCKET;
      h->cmsg_type = SCM_RIGHTS;
      h->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(h), &fd, sizeof fd);
    }
    (void)::sendmsg(c, &m, MSG_NOSIGNAL);
  };
  auto last_peer_state = start;
  Status failed;
  std::vector<pollfd> fds;
  auto transmit = [&] {
    for (const auto& f : out) {
      if (Status st = wire.Queue(f); !st.ok()) failed = st;
    }
    out.clear();
    if (Status st = wire.Flush(); !st.ok() && failed.ok()) failed = st;
  };
  while (!g_stop && failed.ok()) {
    fds.assign({{wire.fd(), POLLIN, 0}, {*listener, POLLIN, 0}});
    for (int c : clients) fds.push_back({c, POLLIN, 0});
    const size_t clients_end = fds.size();
    if (kernel_rx) fds.push_back({kernel_rx->fd(), POLLIN, 0});
    const size_t kernel_tx_at = fds.size();
    if (kernel_tx) {
      fds.push_back({kernel_tx->sent_fd(), POLLIN, 0});
      fds.push_back({kernel_tx->punt_fd(), POLLIN, 0});
    }
    // The sender alone assigns sequences from here to the round's end
    // (ipnuma/emu_kernel_tx.h) whenever it may queue or retransmit.
    auto own_streams = [&] {
      if (kernel_tx && failed.ok()) {
        if (Status st = kernel_tx->TakeAll(model_now()); !st.ok()) failed = st;
      }
    };
    auto poll_sender = [&] {
      if (kernel_tx && kernel_tx->RetransmitDue(model_now())) own_streams();
      n.Poll(model_now(), out);
    };
    // Posted stores first: they are in memory, no system call to take them.
    if (kernel_tx && rings.Waiting()) own_streams();
    rings.SetLine(n.wire_params().max_payload);
    const bool stored = rings.DrainAll(n);
    if (stored && opt.busy_poll) {
      // Busy polling, a store leaves before anything else is looked at:
      // between the program's store and the wire, no system call but the send.
      poll_sender();
      n.Publish(false);
      transmit();
    }
    // While packets are unacknowledged the timers need the clock often.
    // The kernel transmit path's records and ACKs wake nobody: while it holds
    // a stream, a round every millisecond takes them.
    int timeout = opt.busy_poll || stored ? 0 : n.Busy() || (kernel_tx && kernel_tx->Holding()) ? 1 : 200;
    if (timeout > 0 && rings.Sleep()) timeout = 0;  // a store came as we went to sleep
    const int ready = ::poll(fds.data(), fds.size(), timeout);
    if (timeout > 0) rings.Awake();
    if (ready < 0 && errno != EINTR) {
      failed = IoError(std::string("poll: ") + std::strerror(errno));
      break;
    }
    // Busy polling, a round with nothing to take and no timer running costs
    // only the poll: the core goes to whoever else wants it.
    if (ready == 0 && opt.busy_poll && !stored && !n.Busy() &&
        std::chrono::steady_clock::now() - last_peer_state < std::chrono::milliseconds(100)) {
      sched_yield();
      continue;
    }
    // What the kernel sent is adopted before any answer to it is read.
    // The ACKs the kernel took for its streams wake nobody: every round
    // takes them, after the packets they answer.
    if (kernel_tx) {
      if (Status st = kernel_tx->Drain(model_now(), fds[kernel_tx_at + 1].revents != 0); !st.ok()) failed = st;
      kernel_tx->ForEachLink([&](int c, uint32_t taken) { rings.SetLinkTaken(c, taken); });
      auto acks = kernel_rx->DrainAcks([&](std::span<const uint8_t> f) { n.OnFrame(f, model_now(), out); });
      if (!acks.ok()) failed = acks.status();
    }
    // Each system call counts in a round trip of microseconds: none where
    // poll saw nothing.
    if (fds[0].revents & POLLIN) {
      const size_t frames = wire.Drain([&](std::span<const uint8_t> frame) { n.OnFrame(frame, model_now(), out); });
      // Busy polling, the program that waits for what just landed in memory
      // may share this core: it gets the core before the answers go out,
      // and its next store's doorbell leaves in the same send as they do.
      if (opt.busy_poll && frames > 0) {
        sched_yield();
        (void)::poll(fds.data() + 1, fds.size() - 1, 0);
      }
    }
    if (fds[1].revents & POLLIN) {
      for (int c; (c = ::accept4(*listener, nullptr, nullptr, SOCK_CLOEXEC)) >= 0;) clients.push_back(c);
    }
    if (kernel_rx && fds[clients_end].revents != 0) {  // reads the kernel accepted
      auto taken = kernel_rx->Drain([&](const AcceptedRead& r) { n.OnAcceptedRead(r, out); });
      if (!taken.ok()) failed = taken.status();
    }
    for (size_t i = 2; i < clients_end; ++i) {
      if (fds[i].revents == 0) continue;
      const int c = fds[i].fd;
      DoorbellMessage m;
      const DoorbellRequest& req = m.req;
      const ssize_t got = ::recvmsg(c, &m.msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
      int passed_fd = -1;  // a ring's memory file (kAttachRing)
      for (cmsghdr* h = got > 0 ? CMSG_FIRSTHDR(&m.msg) : nullptr; h != nullptr; h = CMSG_NXTHDR(&m.msg, h)) {
        if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) std::memcpy(&passed_fd, CMSG_DATA(h), sizeof(int));
      }
      if (got == sizeof req) {
        // What the connection posted before this message goes first: on its
        // host link, then in its ring.
        if (kernel_tx && req.op != static_cast<uint32_t>(DoorbellOp::kKick)) {
          if (Status st = kernel_tx->CatchUp(c, req.link_sent, model_now()); !st.ok()) failed = st;
          own_streams();
        }
        rings.Drain(c, n);
        if (req.op == static_cast<uint32_t>(DoorbellOp::kOpenLink)) {
          uint32_t tag = 0;
          auto link = kernel_tx ? kernel_tx->OpenLink(c, &tag)
                                : StatusOr<int>(InvalidArgument("this NIC's transmit path is not in the kernel "
                                                                "(ipnuma-emu --host-link)"));
          answer_with_fd(c, link.status(), link.ok() ? *link : -1, tag);
          if (link.ok()) ::close(*link);
        } else if (req.op == static_cast<uint32_t>(DoorbellOp::kAttachRing)) {
          answer(c, passed_fd >= 0 ? rings.Attach(c, passed_fd)
                                   : InvalidArgument("a doorbell ring without its memory file"));
          passed_fd = -1;
        } else if (req.op != static_cast<uint32_t>(DoorbellOp::kKick)) {
          n.Ring(c, req);
        }
      } else if (got > 0) {
        answer(c, InvalidArgument("doorbell of " + std::to_string(got) + " bytes, expected " +
                                  std::to_string(sizeof req)));
      } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
        n.Forget(c);
        rings.Detach(c);
        if (kernel_tx) kernel_tx->Forget(c);
        ::close(c);
        std::erase(clients, c);
      }
      if (passed_fd >= 0) ::close(passed_fd);
    }
    poll_sender();
    // Counters first: whoever sees a frame or an answer of this round must
    // find it counted (a test reads B's rx_denied once A's writer has its ERROR).
    const auto now = std::chrono::steady_clock::now();
    const bool all_peer_state = now - last_peer_state >= std::chrono::milliseconds(100);
    if (all_peer_state) last_peer_state = now;
    n.Publish(all_peer_state);
    transmit();
    // Frames the ring or the interface lost are lost on the wire: the
    // protocol's retransmission covers them. (The kernel's count is a
    // system call: asked now and then, only to reset it.)
    (void)wire.TakeTxDrops();
    if (all_peer_state) (void)wire.TakeRingDrops();
    for (const DoorbellDone& d : n.TakeDone()) answer(d.client, d.status);
    if (kernel_tx && failed.ok()) {
      if (Status st = kernel_tx->HandBack(model_now()); !st.ok()) failed = st;
    }
  }
  n.Publish();
  if (kernel_tx) {
    const auto& k = kernel_tx->stats();
    std::printf("ipnuma-emu: kernel transmit: %llu sent in the kernel, %llu passed up, %llu lost on the host link, "
                "%llu streams handed to the kernel, %llu taken back\n",
                static_cast<unsigned long long>(k.adopted), static_cast<unsigned long long>(k.punted),
                static_cast<unsigned long long>(k.lost), static_cast<unsigned long long>(k.handed_back),
                static_cast<unsigned long long>(k.taken));
  }
  for (int c : clients) ::close(c);
  ::close(*listener);
  ::unlink(opt.socket.c_str());
  if (!failed.ok()) return Fail(failed);
  std::printf("ipnuma-emu: stopped\n");
  return 0;
}

}  // namespace
}  // namespace fibnic::ipnuma

int main(int argc, char** argv) { return fibnic::ipnuma::Run(fibnic::ipnuma::ParseArgs(argc, argv)); }
