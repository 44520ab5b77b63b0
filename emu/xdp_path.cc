#include "emu/xdp_path.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "emu/fibnic_xdp_object.h"  // generated from emu/xdp/fibnic_xdp.bpf.c

namespace fibnic::emu {
namespace {

// One port's entry of the program's per-CPU `counts` map (struct xdp_counts
// in fibnic_xdp.bpf.c).
struct XdpCounts {
  uint64_t rx, rx_bytes, forwarded, tx, tx_bytes, drop_route;
};

std::string Why(const std::string& what) { return what + ": " + std::strerror(errno); }

// With a program attached, a veth receives through NAPI, where GRO (when on)
// would merge the TCP segments it passes up into one large frame: the
// user-space path would then see frames no wire carries. The card's wire
// delivers frames as they came, so GRO goes off on its wires.
Status GroOff(const std::string& ifname) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return IoError(Why("socket for ethtool"));
  ethtool_value v{};
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
  ifr.ifr_data = reinterpret_cast<char*>(&v);
  v.cmd = ETHTOOL_GGRO;
  Status st;
  if (::ioctl(fd, SIOCETHTOOL, &ifr) != 0) {
    st = IoError(Why("reading GRO of " + ifname));
  } else if (v.data != 0) {
    v.cmd = ETHTOOL_SGRO;
    v.data = 0;
    if (::ioctl(fd, SIOCETHTOOL, &ifr) != 0) st = IoError(Why("switching GRO off on " + ifname));
    else std::printf("fibnic-emu: GRO switched off on %s (a wire delivers frames as they came)\n", ifname.c_str());
  }
  ::close(fd);
  return st;
}

}  // namespace

StatusOr<std::unique_ptr<XdpPath>> XdpPath::Attach(int bar_map_fd, const std::vector<XdpWire>& wires, XdpMode mode) {
  std::unique_ptr<XdpPath> x(new XdpPath());
  LIBBPF_OPTS(bpf_object_open_opts, open_opts, .object_name = "fibnic_xdp");
  x->obj_ = bpf_object__open_mem(kFibnicXdpObject, sizeof kFibnicXdpObject, &open_opts);
  if (x->obj_ == nullptr) return IoError(Why("XDP: cannot open the BPF object"));
  bpf_map* bar = bpf_object__find_map_by_name(x->obj_, "bar");
  if (bar == nullptr || bpf_map__reuse_fd(bar, bar_map_fd) != 0)
    return IoError(Why("XDP: cannot give the program the BAR map"));
  if (bpf_object__load(x->obj_) != 0)
    return FailedPrecondition(Why("XDP: the kernel refused the program (root or CAP_BPF+CAP_NET_ADMIN needed; "
                                  "the verifier's log is above)"));
  bpf_program* prog = bpf_object__find_program_by_name(x->obj_, "fibnic_xdp");
  const int tx_fd = bpf_object__find_map_fd_by_name(x->obj_, "tx_ports");
  const int rx_fd = bpf_object__find_map_fd_by_name(x->obj_, "rx_ports");
  x->counts_fd_ = bpf_object__find_map_fd_by_name(x->obj_, "counts");
  if (prog == nullptr || tx_fd < 0 || rx_fd < 0 || x->counts_fd_ < 0)
    return Internal("XDP: the BPF object lacks its program or maps");

  for (const auto& w : wires) {
    const uint32_t ifindex = ::if_nametoindex(w.ifname.c_str());
    if (ifindex == 0) return NotFound(Why("XDP: interface " + w.ifname));
    const uint32_t port = w.port;
    if (bpf_map_update_elem(tx_fd, &port, &ifindex, BPF_ANY) != 0)
      return IoError(Why("XDP: " + w.ifname + " cannot be a redirect target (its driver has no XDP transmit)"));
    if (bpf_map_update_elem(rx_fd, &ifindex, &port, BPF_ANY) != 0) return IoError(Why("XDP: rx_ports"));
  }
  const bool native = mode == XdpMode::kNative;
  for (const auto& w : wires) {
    if (native) RETURN_IF_ERROR(GroOff(w.ifname));
    LIBBPF_OPTS(bpf_link_create_opts, link_opts, .flags = native ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE);
    const int link = bpf_link_create(bpf_program__fd(prog), static_cast<int>(::if_nametoindex(w.ifname.c_str())),
                                     BPF_XDP, &link_opts);
    if (link < 0)
      return FailedPrecondition(Why(std::string("XDP: cannot attach the program to ") + w.ifname + " in " +
                                    (native ? "native" : "skb") +
                                    " mode (another XDP program there, a driver without native XDP, or a kernel "
                                    "without XDP links)"));
    x->links_.push_back(link);
  }
  return x;
}

XdpPath::~XdpPath() {
  for (int l : links_) ::close(l);
  if (obj_ != nullptr) bpf_object__close(obj_);
}

Status XdpPath::AddCounts(std::vector<PortCounters>& into) const {
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) return Internal("XDP: cannot count the possible CPUs");
  std::vector<XdpCounts> per_cpu(static_cast<size_t>(cpus));
  for (size_t p = 0; p < into.size(); ++p) {
    const uint32_t key = static_cast<uint32_t>(p);
    if (bpf_map_lookup_elem(counts_fd_, &key, per_cpu.data()) != 0) return IoError(Why("XDP: reading counts"));
    PortCounters& c = into[p];
    for (const XdpCounts& v : per_cpu) {
      c.rx += v.rx;
      c.rx_bytes += v.rx_bytes;
      c.forwarded += v.forwarded;
      c.tx += v.tx;
      c.tx_bytes += v.tx_bytes;
      c.drop_route += v.drop_route;
    }
  }
  return OkStatus();
}

StatusOr<std::pair<uint64_t, uint64_t>> XdpPath::Handled(int ports) const {
  std::vector<PortCounters> c(static_cast<size_t>(ports));
  RETURN_IF_ERROR(AddCounts(c));
  std::pair<uint64_t, uint64_t> out{0, 0};
  for (const auto& p : c) {
    out.first += p.forwarded;
    out.second += p.drop_route;
  }
  return out;
}

}  // namespace fibnic::emu
