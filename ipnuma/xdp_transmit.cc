#include "ipnuma/xdp_transmit.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "ipnuma/ipnuma_tx_object.h"  // generated from ipnuma/xdp/ipnuma_tx.bpf.c

namespace fibnic::ipnuma {
namespace {

// struct tx_config in ipnuma_tx.bpf.c.
struct TxConfig {
  uint32_t wire_ifindex;
};

std::string Why(const std::string& what) { return what + ": " + std::strerror(errno); }

}  // namespace

StatusOr<std::unique_ptr<XdpTransmit>> XdpTransmit::Attach(const Config& c) {
  const uint32_t link_ifindex = ::if_nametoindex(c.link.c_str());
  if (link_ifindex == 0) return NotFound(Why("XDP: interface " + c.link));
  const uint32_t wire_ifindex = ::if_nametoindex(c.wire.c_str());
  if (wire_ifindex == 0) return NotFound(Why("XDP: interface " + c.wire));
  std::unique_ptr<XdpTransmit> x(new XdpTransmit());
  // Slot 0 counts what has no slot; 1 .. pcid_entries are the streams.
  x->slot_count_ = std::max<uint32_t>(c.pcid_entries, 1) + 1;
  LIBBPF_OPTS(bpf_object_open_opts, open_opts, .object_name = "ipnuma_tx");
  x->obj_ = bpf_object__open_mem(kIpnumaTxObject, sizeof kIpnumaTxObject, &open_opts);
  if (x->obj_ == nullptr) return IoError(Why("XDP: cannot open the BPF object"));
  bpf_map* bar = bpf_object__find_map_by_name(x->obj_, "bar");
  bpf_map* streams = bpf_object__find_map_by_name(x->obj_, "tx_streams");
  bpf_map* slots = bpf_object__find_map_by_name(x->obj_, "tx_slot");
  if (bar == nullptr || streams == nullptr || slots == nullptr) return Internal("XDP: the BPF object lacks its maps");
  if (bpf_map__reuse_fd(bar, c.bar0_map_fd) != 0) return IoError(Why("XDP: cannot give the program the BAR0 map"));
  if (bpf_map__set_max_entries(streams, x->slot_count_) != 0 ||
      bpf_map__set_max_entries(slots, x->slot_count_ - 1) != 0)
    return IoError(Why("XDP: sizing the stream slots"));
  if (bpf_object__load(x->obj_) != 0)
    return FailedPrecondition(Why("XDP: the kernel refused the program (root or CAP_BPF+CAP_NET_ADMIN needed; "
                                  "the verifier's log is above)"));
  const uint32_t zero = 0;
  const TxConfig cfg{wire_ifindex};
  if (bpf_map_update_elem(bpf_object__find_map_fd_by_name(x->obj_, "tx_config"), &zero, &cfg, BPF_ANY) != 0)
    return IoError(Why("XDP: tx_config"));
  x->slot_map_fd_ = bpf_map__fd(slots);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  x->slots_bytes_ = (sizeof(ipnuma_tx_stream) * x->slot_count_ + page - 1) / page * page;
  void* m = ::mmap(nullptr, x->slots_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(streams), 0);
  if (m == MAP_FAILED) return IoError(Why("XDP: cannot map the stream slots"));
  x->slots_ = static_cast<ipnuma_tx_stream*>(m);
  x->ring_ = ring_buffer__new(bpf_object__find_map_fd_by_name(x->obj_, "tx_sent"), &XdpTransmit::OnRecord, x.get(),
                              nullptr);
  if (x->ring_ == nullptr) return IoError(Why("XDP: cannot open the sent ring"));
  bpf_program* prog = bpf_object__find_program_by_name(x->obj_, "ipnuma_tx");
  if (prog == nullptr) return Internal("XDP: the BPF object lacks its program");
  LIBBPF_OPTS(bpf_link_create_opts, link_opts, .flags = c.native ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE);
  x->link_ = bpf_link_create(bpf_program__fd(prog), static_cast<int>(link_ifindex), BPF_XDP, &link_opts);
  if (x->link_ < 0)
    return FailedPrecondition(Why("XDP: cannot attach the program to " + c.link + " in " +
                                  (c.native ? "native" : "skb") +
                                  " mode (another XDP program there, a driver without native XDP, or a kernel "
                                  "without XDP links)"));
  return x;
}

XdpTransmit::~XdpTransmit() {
  if (link_ >= 0) ::close(link_);
  if (ring_ != nullptr) ring_buffer__free(ring_);
  if (slots_ != nullptr) ::munmap(slots_, slots_bytes_);
  if (obj_ != nullptr) bpf_object__close(obj_);
}

int XdpTransmit::fd() const { return ring_buffer__epoll_fd(ring_); }

int XdpTransmit::OnRecord(void* self, void* data, size_t size) {
  auto* x = static_cast<XdpTransmit*>(self);
  if (size < offsetof(ipnuma_tx_record, packet) || x->take_ == nullptr) return 0;
  ipnuma_tx_record r;
  std::memcpy(&r, data, offsetof(ipnuma_tx_record, packet));
  SentPacket p;
  p.client = r.client;
  p.slot = r.slot;
  p.dst_ip = ntohl(r.dst_ip);
  p.pcid = r.pcid;
  std::memcpy(p.dst_mac.b.data(), r.dst_mac, 6);
  p.bar2_offset = r.bar2_offset;
  p.bytes = r.bytes;
  const size_t n = std::min<size_t>({r.packet_len, IPNUMA_TX_MAX_PACKET, size - offsetof(ipnuma_tx_record, packet)});
  p.packet = std::span<const uint8_t>(static_cast<const uint8_t*>(data) + offsetof(ipnuma_tx_record, packet), n);
  (*x->take_)(p);
  return 0;
}

StatusOr<size_t> XdpTransmit::Drain(const std::function<void(const SentPacket&)>& take) {
  take_ = &take;
  const int n = ring_buffer__consume(ring_);
  take_ = nullptr;
  if (n < 0) return IoError("XDP: reading the sent ring: " + std::string(std::strerror(-n)));
  return static_cast<size_t>(n);
}

int XdpTransmit::streams_map_fd() const { return bpf_object__find_map_fd_by_name(obj_, "tx_streams"); }

Status XdpTransmit::MapAddress(uint32_t ip, uint32_t slot) {
  if (slot == 0 || slot >= slot_count_) return InvalidArgument("XDP: no stream slot " + std::to_string(slot));
  const uint32_t key = htonl(ip);
  if (bpf_map_update_elem(slot_map_fd_, &key, &slot, BPF_ANY) != 0) return IoError(Why("XDP: tx_slot"));
  return OkStatus();
}

Status XdpTransmit::UnmapAddress(uint32_t ip) {
  const uint32_t key = htonl(ip);
  if (bpf_map_delete_elem(slot_map_fd_, &key) != 0 && errno != ENOENT) return IoError(Why("XDP: tx_slot"));
  return OkStatus();
}

}  // namespace fibnic::ipnuma
