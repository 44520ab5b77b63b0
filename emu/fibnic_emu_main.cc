// fibnic-emu: a software FIBNIC. It maps the BAR file fibnicd's file backend
// writes and forwards frames between Linux interfaces that are its ports,
// deciding every frame with the frame model (fpga/model) on the live BAR,
// exactly as the contract says (docs/emu.md).
//
//   fibnic-emu [--xdp|--xdp-native] --bar FILE --port K=WIRE_IF --host K=HOST_IF [--port ... --host ...]
//
// --xdp adds the XDP fast path (emu/xdp_path.h) on the wire ports: frames
// the model forwards or drops are handled in the kernel's receive path, the
// rest reach the user-space path below unchanged. It needs the BAR in a BPF
// map (FILE on a bpffs), so the program reads the same live bytes.
// --xdp runs it as generic (skb) XDP, --xdp-native in the driver (a veth's
// far end then needs NAPI: docs/emu.md).
//
// WIRE_IF is port K's wire; HOST_IF is the card's NIC function for port K
// (the interface whose other end the host sees): punted frames leave there,
// and what the host sends there goes out on wire K unchanged.
#include <poll.h>
#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <cstring>
#include <tuple>
#include <vector>

#include "emu/device_bar.h"
#include "emu/forwarder.h"
#include "emu/xdp_path.h"
#include "common/packet_socket.h"

namespace fibnic::emu {
namespace {

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

struct Options {
  bool xdp = false;
  XdpMode xdp_mode = XdpMode::kSkb;
  std::string bar;
  std::map<int, std::string> wire, host;
};

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr,
               "fibnic-emu: %s\nusage: fibnic-emu [--xdp|--xdp-native] --bar FILE --port K=WIRE_IF --host K=HOST_IF "
               "[--port K=... --host K=...]\n",
               why.c_str());
  std::exit(2);
}

void ParsePortArg(const std::string& flag, const std::string& value, std::map<int, std::string>& into) {
  const size_t eq = value.find('=');
  const std::string number = eq == std::string::npos ? std::string() : value.substr(0, eq);
  char* end = nullptr;
  const long k = number.empty() ? -1 : std::strtol(number.c_str(), &end, 10);
  if (number.empty() || *end != '\0' || k < 0 || k > 255 || eq + 1 == value.size())
    Usage(flag + " '" + value + "': expected PORT=INTERFACE, e.g. " + flag + " 0=w0");
  if (!into.emplace(static_cast<int>(k), value.substr(eq + 1)).second)
    Usage(flag + " given twice for port " + std::to_string(k));
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") Usage("a software FIBNIC (docs/emu.md)");
    if (a == "--xdp") {
      o.xdp = true;
      continue;
    }
    if (a == "--xdp-native") {
      o.xdp = true;
      o.xdp_mode = XdpMode::kNative;
      continue;
    }
    if (i + 1 >= argc) Usage("missing value after " + a);
    const std::string v = argv[++i];
    if (a == "--bar") o.bar = v;
    else if (a == "--port") ParsePortArg(a, v, o.wire);
    else if (a == "--host") ParsePortArg(a, v, o.host);
    else Usage("unknown argument '" + a + "'");
  }
  if (o.bar.empty()) Usage("--bar FILE is required");
  if (o.wire.empty()) Usage("give at least one --port K=WIRE_IF");
  for (const auto& [k, _] : o.wire)
    if (!o.host.count(k)) Usage("port " + std::to_string(k) + " has no --host " + std::to_string(k) + "=IF for its punts");
  for (const auto& [k, _] : o.host)
    if (!o.wire.count(k)) Usage("--host " + std::to_string(k) + " names no --port " + std::to_string(k));
  return o;
}

// One pollable receive ring and what it is.
struct Endpoint {
  PacketSocket* socket;
  uint8_t port;
  bool wire;
};

int Run(const Options& opt) {
  auto bar = OpenDeviceBar(opt.bar);
  if (!bar.ok()) {
    std::fprintf(stderr, "fibnic-emu: %s\n", bar.status().ToString().c_str());
    return 1;
  }
  const int ports = bar->caps.ports;
  if (opt.xdp && bar->map_fd < 0) {
    std::fprintf(stderr,
                 "fibnic-emu: --xdp needs the BAR in a BPF map, which its XDP program reads live: %s is a "
                 "regular file; give a path on a bpffs (e.g. /sys/fs/bpf/fibnic/bar0), the same for fibnicd\n",
                 opt.bar.c_str());
    return 1;
  }
  std::vector<std::unique_ptr<PacketSocket>> wire(ports), host(ports);
  std::vector<Endpoint> endpoints;
  for (const auto& [k, name] : opt.wire) {
    if (k >= ports) {
      std::fprintf(stderr, "fibnic-emu: port %d: the device in %s has %d ports\n", k, opt.bar.c_str(), ports);
      return 1;
    }
    for (auto [sockets, ifname, is_wire] : {std::tuple{&wire, name, true}, std::tuple{&host, opt.host.at(k), false}}) {
      auto s = PacketSocket::Open(ifname);
      if (!s.ok()) {
        std::fprintf(stderr, "fibnic-emu: port %d: %s\n", k, s.status().ToString().c_str());
        return 1;
      }
      (*sockets)[k] = std::move(*s);
      endpoints.push_back(Endpoint{(*sockets)[k].get(), static_cast<uint8_t>(k), is_wire});
    }
  }

  std::unique_ptr<XdpPath> xdp;
  if (opt.xdp) {
    std::vector<XdpWire> wires;
    for (const auto& [k, name] : opt.wire) wires.push_back(XdpWire{static_cast<uint8_t>(k), name});
    auto attached = XdpPath::Attach(bar->map_fd, wires, opt.xdp_mode);
    if (!attached.ok()) {
      std::fprintf(stderr, "fibnic-emu: %s\n", attached.status().ToString().c_str());
      return 1;
    }
    xdp = std::move(*attached);
  }

  uint8_t* bar_bytes = const_cast<uint8_t*>(bar->bar->data());
  Forwarder fwd(std::span<const uint8_t>(bar_bytes, bar->bar->size()), ports);
  // PORT_COUNTERS: the user-space path's counts plus the XDP program's.
  std::vector<PortCounters> published;
  auto publish = [&] {
    published = fwd.counters();
    if (xdp != nullptr)
      if (Status st = xdp->AddCounts(published); !st.ok()) std::fprintf(stderr, "fibnic-emu: %s\n", st.ToString().c_str());
    PublishCounters(bar_bytes, published);
  };
  publish();  // a card starts counting from 0 at power-on

  struct sigaction sa {};
  sa.sa_handler = OnSignal;  // no SA_RESTART: poll returns at once
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  std::printf("fibnic-emu: forwarding on %s (%d-bit codes, %d ports%s):", opt.bar.c_str(), bar->caps.code_bits, ports,
              xdp == nullptr ? "" : opt.xdp_mode == XdpMode::kNative ? ", native XDP" : ", skb-mode XDP");
  for (const auto& [k, name] : opt.wire) std::printf(" %d=%s/%s", k, name.c_str(), opt.host.at(k).c_str());
  std::printf("\n");
  std::fflush(stdout);

  uint64_t user_frames = 0;  // wire frames the user-space path decided
  std::vector<pollfd> fds;
  for (const auto& e : endpoints) fds.push_back(pollfd{e.socket->fd(), POLLIN, 0});
  Status failed;
  while (!g_stop && failed.ok()) {
    // The XDP path's frames wake nobody: its counts are published on the
    // timeout, so PORT_COUNTERS lag them by at most that much.
    const int ready = ::poll(fds.data(), fds.size(), xdp != nullptr ? 50 : 200);
    if (ready < 0 && errno != EINTR) {
      failed = IoError(std::string("poll: ") + std::strerror(errno));
      break;
    }
    for (size_t i = 0; i < fds.size(); ++i)
      if (fds[i].revents & (POLLERR | POLLHUP | POLLNVAL))
        if (Status st = endpoints[i].socket->TakeError(); !st.ok() && failed.ok()) failed = st;
    // Frames leave straight from the receive ring they arrived in (rewritten
    // there): every output is flushed before a block goes back to the kernel.
    auto flush_all = [&] {
      for (int p = 0; p < ports; ++p)
        for (PacketSocket* s : {wire[p].get(), host[p].get()})
          if (s != nullptr)
            if (Status st = s->Flush(); !st.ok() && failed.ok()) failed = st;
    };
    size_t frames = 0;
    for (const auto& e : endpoints) {
      frames += e.socket->Drain(
          [&](std::span<uint8_t> frame) {
            if (!failed.ok()) return;
            if (e.wire) ++user_frames;
            const Verdict v = e.wire ? fwd.FromWire(e.port, frame) : fwd.FromHost(e.port, frame);
            if (v.exit == Exit::kNone) return;  // dropped in the card, counted by the forwarder
            PacketSocket* out = v.exit == Exit::kWire ? wire[v.port].get() : host[v.port].get();
            // A forward to a port this emulator was not given a wire for is lost
            // like a frame on an unplugged port.
            if (out == nullptr) {
              fwd.CountFifoDrops(e.port, 1);
              return;
            }
            failed = out->QueueInPlace(v.frame);
          },
          flush_all);
    }
    for (int p = 0; p < ports; ++p) {
      for (PacketSocket* s : {wire[p].get(), host[p].get()}) {
        if (s == nullptr) continue;
        // The ring's loss count costs a system call: asked when a frame
        // showed a loss, or when idle.
        const uint64_t lost = s->TakeTxDrops() + (ready == 0 || s->RingLosing() ? s->TakeRingDrops() : 0);
        if (lost) fwd.CountFifoDrops(static_cast<uint8_t>(p), lost);
      }
    }
    if (frames > 0 || (xdp != nullptr && ready == 0)) publish();
  }
  publish();
  if (!failed.ok()) {
    std::fprintf(stderr, "fibnic-emu: %s\n", failed.ToString().c_str());
    return 1;
  }
  if (xdp != nullptr) {
    // What each path handled: the XDP path's forwards and drops never reach user space.
    auto handled = xdp->Handled(ports);
    if (handled.ok())
      std::printf("fibnic-emu: XDP path forwarded %llu and dropped %llu frames; user-space path saw %llu from wires\n",
                  static_cast<unsigned long long>(handled->first), static_cast<unsigned long long>(handled->second),
                  static_cast<unsigned long long>(user_frames));
  }
  std::printf("fibnic-emu: stopped\n");
  return 0;
}

}  // namespace
}  // namespace fibnic::emu

int main(int argc, char** argv) { return fibnic::emu::Run(fibnic::emu::ParseArgs(argc, argv)); }
