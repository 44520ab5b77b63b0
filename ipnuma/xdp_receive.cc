#include "ipnuma/xdp_receive.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ipnuma/ipnuma_rx_object.h"  // generated from ipnuma/xdp/ipnuma_rx.bpf.c

namespace fibnic::ipnuma {
namespace {

// struct read_request and struct pool_span in ipnuma_rx.bpf.c.
struct ReadRecord {
  uint32_t src_ip;
  uint8_t src_mac[6];
  uint16_t src_port;
  uint16_t epoch;
  uint16_t duplicate;
  uint32_t ack_seq;
  uint8_t packet[40];
};
static_assert(sizeof(ReadRecord) == 60);
struct PoolSpan {
  uint64_t base, bytes;
};
// struct ack_record in ipnuma_rx.bpf.c.
struct AckRecord {
  uint32_t len;
  uint8_t frame[14 + 20 + 8 + 40];
};

std::string Why(const std::string& what) { return what + ": " + std::strerror(errno); }

}  // namespace

StatusOr<std::unique_ptr<XdpReceive>> XdpReceive::Attach(const Config& c) {
  if (c.region_entries > kMaxRegions) {
    return FailedPrecondition("the kernel receive path looks through at most " + std::to_string(kMaxRegions) +
                              " REGION entries; this NIC has " + std::to_string(c.region_entries));
  }
  const uint32_t ifindex = ::if_nametoindex(c.interface.c_str());
  if (ifindex == 0) return NotFound(Why("XDP: interface " + c.interface));
  std::unique_ptr<XdpReceive> x(new XdpReceive());
  LIBBPF_OPTS(bpf_object_open_opts, open_opts, .object_name = "ipnuma_rx");
  x->obj_ = bpf_object__open_mem(kIpnumaRxObject, sizeof kIpnumaRxObject, &open_opts);
  if (x->obj_ == nullptr) return IoError(Why("XDP: cannot open the BPF object"));
  bpf_map* bar = bpf_object__find_map_by_name(x->obj_, "bar");
  bpf_map* pool = bpf_object__find_map_by_name(x->obj_, "pool");
  bpf_map* peers = bpf_object__find_map_by_name(x->obj_, "peers");
  if (bar == nullptr || pool == nullptr || peers == nullptr) return Internal("XDP: the BPF object lacks its maps");
  if (bpf_map__reuse_fd(bar, c.bar0_map_fd) != 0) return IoError(Why("XDP: cannot give the program the BAR0 map"));
  if (bpf_map__reuse_fd(pool, c.pool_map_fd) != 0) return IoError(Why("XDP: cannot give the program the pool map"));
  if (bpf_map__set_max_entries(peers, c.pcid_entries) != 0) return IoError(Why("XDP: sizing the stream table"));
  if (c.tx_streams_fd >= 0 || c.tx_slot_fd >= 0) {
    bpf_map* streams = bpf_object__find_map_by_name(x->obj_, "tx_streams");
    bpf_map* slots = bpf_object__find_map_by_name(x->obj_, "tx_slot");
    if (streams == nullptr || slots == nullptr || bpf_map__reuse_fd(streams, c.tx_streams_fd) != 0 ||
        bpf_map__reuse_fd(slots, c.tx_slot_fd) != 0)
      return IoError(Why("XDP: cannot give the program the transmit path's stream slots"));
  }
  if (bpf_object__load(x->obj_) != 0)
    return FailedPrecondition(Why("XDP: the kernel refused the program (root or CAP_BPF+CAP_NET_ADMIN needed; "
                                  "the verifier's log is above)"));
  const uint32_t zero = 0;
  const PoolSpan span{c.pool_base, c.pool_bytes};
  if (bpf_map_update_elem(bpf_object__find_map_fd_by_name(x->obj_, "pool_at"), &zero, &span, BPF_ANY) != 0)
    return IoError(Why("XDP: pool_at"));
  x->ring_ = ring_buffer__new(bpf_object__find_map_fd_by_name(x->obj_, "reads"), &XdpReceive::OnRecord, x.get(),
                              nullptr);
  if (x->ring_ == nullptr) return IoError(Why("XDP: cannot open the read ring"));
  x->acks_ = ring_buffer__new(bpf_object__find_map_fd_by_name(x->obj_, "acks"), &XdpReceive::OnAck, x.get(), nullptr);
  if (x->acks_ == nullptr) return IoError(Why("XDP: cannot open the ACK ring"));
  bpf_program* prog = bpf_object__find_program_by_name(x->obj_, "ipnuma_rx");
  if (prog == nullptr) return Internal("XDP: the BPF object lacks its program");
  LIBBPF_OPTS(bpf_link_create_opts, link_opts, .flags = c.native ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE);
  x->link_ = bpf_link_create(bpf_program__fd(prog), static_cast<int>(ifindex), BPF_XDP, &link_opts);
  if (x->link_ < 0)
    return FailedPrecondition(Why("XDP: cannot attach the program to " + c.interface + " in " +
                                  (c.native ? "native" : "skb") +
                                  " mode (another XDP program there, a driver without native XDP, or a kernel "
                                  "without XDP links)"));
  return x;
}

XdpReceive::~XdpReceive() {
  if (link_ >= 0) ::close(link_);
  if (ring_ != nullptr) ring_buffer__free(ring_);
  if (acks_ != nullptr) ring_buffer__free(acks_);
  if (obj_ != nullptr) bpf_object__close(obj_);
}

int XdpReceive::fd() const { return ring_buffer__epoll_fd(ring_); }

int XdpReceive::OnRecord(void* self, void* data, size_t size) {
  auto* x = static_cast<XdpReceive*>(self);
  if (size < sizeof(ReadRecord) || x->take_ == nullptr) return 0;
  ReadRecord r;
  std::memcpy(&r, data, sizeof r);
  AcceptedRead a;
  a.src_ip = ntohl(r.src_ip);
  std::memcpy(a.src_mac.b.data(), r.src_mac, 6);
  a.src_port = ntohs(r.src_port);
  a.epoch = r.epoch;
  a.ack_seq = r.ack_seq;
  a.duplicate = r.duplicate != 0;
  a.packet = std::span<const uint8_t>(static_cast<const uint8_t*>(data) + offsetof(ReadRecord, packet), 40);
  (*x->take_)(a);
  return 0;
}

int XdpReceive::OnAck(void* self, void* data, size_t size) {
  auto* x = static_cast<XdpReceive*>(self);
  if (size < sizeof(AckRecord) || x->take_ack_ == nullptr) return 0;
  const auto* r = static_cast<const AckRecord*>(data);
  (*x->take_ack_)(std::span<const uint8_t>(r->frame, std::min<size_t>(r->len, sizeof r->frame)));
  return 0;
}

StatusOr<size_t> XdpReceive::DrainAcks(const std::function<void(std::span<const uint8_t>)>& take) {
  take_ack_ = &take;
  const int n = ring_buffer__consume(acks_);
  take_ack_ = nullptr;
  if (n < 0) return IoError("XDP: reading the ACK ring: " + std::string(std::strerror(-n)));
  return static_cast<size_t>(n);
}

StatusOr<size_t> XdpReceive::Drain(const std::function<void(const AcceptedRead&)>& take) {
  take_ = &take;
  const int n = ring_buffer__consume(ring_);
  take_ = nullptr;
  if (n < 0) return IoError("XDP: reading the read ring: " + std::string(std::strerror(-n)));
  return static_cast<size_t>(n);
}

}  // namespace fibnic::ipnuma
