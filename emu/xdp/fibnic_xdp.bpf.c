// fibnic-emu's fast path: the FIBNIC's forward and drop decisions as an XDP
// program on the card's wire ports, reading the live BAR (the BAR map fibnicd
// writes, hwif/bpf_bar.h) at every frame, exactly as the frame model
// (fpga/model/frame_model.cc) and HwLookup (device/fibnic_lookup.cc) read it.
//
// The program acts only where it is sure to do what the model does: a frame
// the model forwards leaves rewritten (MACs, TTL/hop limit, RFC 1624
// checksum) through XDP_REDIRECT, and a frame a VALID|DROP entry discards is
// dropped. Everything else returns XDP_PASS unchanged: punts (ARP, NDP,
// broadcast, not our MAC, TTL <= 1, options, code 0, invalid entries, a
// NEIGH miss, ...), short frames, unknown CAPS, an egress port without a
// wire. The emulator's user-space path receives those through its packet
// socket and runs the model on them as before, so the program never needs to
// know why a frame punts, only that it is not sure.
//
// Counters: a per-CPU array, one entry per port, of what the program alone
// handled; the emulator adds them to its own counts when it publishes
// PORT_COUNTERS and DROP_COUNTERS into the BAR.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define BAR_PAGE 4096
#define OFF_CAPS0 0x08
#define OFF_CAPS1 0x0c
#define OFF_CAPS2 0x10
#define OFF_CONTROL 0x14
#define OFF_PORT_MAC 0x40
#define PAGE_NEXTHOP 1  // 0x001000
#define PAGE_TCAM6 2    // 0x002000
#define PAGE_NEIGH 4    // 0x004000, two pages of 128 entries
#define OFF_SRAM4 0x1000000
#define NH_VALID 1
#define NH_CONNECTED 2
#define NH_DROP 4
#define CAPS2_DROP (1u << 16)
// The in-place model's shortest frame (kInPlaceMinBytes): every header byte
// a check may read. Shorter frames go to the model in user space.
#define MIN_FRAME 55
#define FCS_BYTES 4

struct bar_page {
  __u8 b[BAR_PAGE];
};

// The BAR: replaced at load time by the map the emulator opened.
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __type(key, __u32);
  __type(value, struct bar_page);
  __uint(max_entries, 1);
} bar SEC(".maps");

// Card port -> ifindex of its wire (the egress of a redirect).
struct {
  __uint(type, BPF_MAP_TYPE_DEVMAP);
  __type(key, __u32);
  __type(value, __u32);
  __uint(max_entries, 256);
} tx_ports SEC(".maps");

// ifindex of a wire -> its card port (the ingress of a frame).
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __type(key, __u32);
  __type(value, __u32);
  __uint(max_entries, 256);
} rx_ports SEC(".maps");

// Keep in step with emu/xdp_path.cc.
struct xdp_counts {
  __u64 rx, rx_bytes, forwarded, tx, tx_bytes, drop_route;
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __type(key, __u32);
  __type(value, struct xdp_counts);
  __uint(max_entries, 256);
} counts SEC(".maps");

static __always_inline const __u8 *page(__u32 index) { return bpf_map_lookup_elem(&bar, &index); }

// Little-endian register words, as the contract lays them out.
static __always_inline __u32 le32(const __u8 *p) {
  return p[0] | (p[1] << 8) | (p[2] << 16) | ((__u32)p[3] << 24);
}
static __always_inline __u16 be16(const __u8 *p) { return (p[0] << 8) | p[1]; }

static __always_inline int mac_eq(const __u8 *a, const __u8 *b) {
  return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3] && a[4] == b[4] && a[5] == b[5];
}

static __always_inline int bytes_eq16(const __u8 *a, const __u8 *b) {
  __u64 a0, a1, b0, b1;
  __builtin_memcpy(&a0, a, 8);
  __builtin_memcpy(&a1, a + 8, 8);
  __builtin_memcpy(&b0, b, 8);
  __builtin_memcpy(&b1, b + 8, 8);
  return a0 == b0 && a1 == b1;
}

static __always_inline __u16 fold(__u32 s) {
  s = (s & 0xffff) + (s >> 16);
  s = (s & 0xffff) + (s >> 16);
  return (__u16)s;
}

// The option-less IPv4 header sums to 0xffff (Ipv4HeaderVerifies).
static __always_inline int ipv4_header_verifies(const __u8 *ip) {
  __u32 s = 0;
#pragma unroll
  for (int i = 0; i < 20; i += 2) s += be16(ip + i);
  return fold(s) == 0xffff;
}

// SRAM4's code for an IPv4 destination (host order), regs::SramCode.
static __always_inline int sram_code(__u32 dst, __u32 code_bits) {
  __u32 word = dst >> 10, sub = (dst >> 8) & 3;
  if (code_bits == 2) {
    __u32 off = OFF_SRAM4 + word;
    const __u8 *p = page(off / BAR_PAGE);
    if (!p) return -1;
    return (p[off & (BAR_PAGE - 1)] >> (2 * sub)) & 3;
  }
  __u32 off = OFF_SRAM4 + 2 * word;
  const __u8 *p = page(off / BAR_PAGE);
  if (!p) return -1;
  const __u8 *w = p + (off & (BAR_PAGE - 2));
  return ((w[0] | (w[1] << 8)) >> (4 * sub)) & 15;
}

// The lowest-index VALID TCAM6 entry matching the destination's first 64
// bits; its code, or -1 when none matches.
static __always_inline int tcam_code(const __u8 *dst) {
  const __u8 *t = page(PAGE_TCAM6);
  if (!t) return -1;
  __u64 hi;
  __builtin_memcpy(&hi, dst, 8);
  for (__u32 i = 0; i < 32; ++i) {
    const __u8 *e = t + 32 * i;
    if (!(e[17] & 1)) continue;
    __u64 value, mask;
    __builtin_memcpy(&value, e, 8);
    __builtin_memcpy(&mask, e + 8, 8);
    if ((hi & mask) == value) return e[16];
  }
  return -1;
}

// A CONNECTED next hop: the first VALID NEIGH entry holding the whole
// destination (IPv4 as ::ffff:a.b.c.d). Fills mac and port; 0 on a miss.
static __always_inline int neigh_find(const __u8 want[16], __u8 mac[6], __u32 *port) {
  for (__u32 half = 0; half < 2; ++half) {
    const __u8 *n = page(PAGE_NEIGH + half);
    if (!n) return 0;
    for (__u32 i = 0; i < 128; ++i) {
      const __u8 *e = n + 32 * i;
      // MAC, port and flags (bytes 16..23) in one aligned load, as for NEXTHOP.
      const __u64 tail = *(const volatile __u64 *)(e + 16);
      if (((tail >> 56) & 1) && bytes_eq16(e, want)) {
        __builtin_memcpy(mac, &tail, 6);
        *port = (tail >> 48) & 0xff;
        return 1;
      }
    }
  }
  return 0;
}

static __always_inline struct xdp_counts *counts_of(__u32 port) { return bpf_map_lookup_elem(&counts, &port); }

SEC("xdp")
int fibnic_xdp(struct xdp_md *ctx) {
  __u8 *f = (__u8 *)(long)ctx->data;
  const __u8 *end = (const __u8 *)(long)ctx->data_end;
  if (f + MIN_FRAME > end) return XDP_PASS;
  const __u64 wire_bytes = (__u64)(end - f) + FCS_BYTES;

  __u32 ifindex = ctx->ingress_ifindex;
  const __u32 *in_port = bpf_map_lookup_elem(&rx_ports, &ifindex);
  if (!in_port) return XDP_PASS;
  const __u32 port = *in_port;
  const __u8 *csr = page(0);
  if (!csr) return XDP_PASS;

  // The two device models the emulator implements; anything else is the
  // model's to judge.
  const __u32 caps0 = le32(csr + OFF_CAPS0), caps1 = le32(csr + OFF_CAPS1), caps2 = le32(csr + OFF_CAPS2);
  const __u32 code_bits = (caps0 >> 8) & 0xf, ports = (caps0 >> 16) & 0xff;
  if ((caps0 & 0xff) != 22 || (code_bits != 2 && code_bits != 4) || (caps1 & 0xffff) != (1u << code_bits) ||
      (caps1 >> 16) != 32 || (caps2 & 0xffff) != 256)
    return XDP_PASS;

  // Framing (PreCheck): unicast to this port's own MAC, option-less IPv4 with
  // a good header checksum or IPv6 without hop-by-hop, TTL/hop limit > 1, not
  // NDP.
  if (f[0] & 1) return XDP_PASS;  // broadcast or multicast
  if (port >= ports || port > 255) return XDP_PASS;
  // Each variable offset into the BAR is masked where it is used: an older
  // verifier (kernel 6.1) does not carry a bound checked on one copy of a
  // value to the copy the compiler reloads from the stack.
  if (!mac_eq(f, csr + OFF_PORT_MAC + 8 * (port & 0xff))) return XDP_PASS;
  const __u16 type = be16(f + 12);
  __u8 *ip = f + 14;
  const __u32 control = le32(csr + OFF_CONTROL);
  int code;
  __u8 want[16] = {0};  // the destination as NEIGH holds it
  if (type == 0x0800) {
    if (ip[0] != 0x45 || !ipv4_header_verifies(ip) || ip[8] <= 1) return XDP_PASS;
    if (!(control & 1)) return XDP_PASS;
    const __u32 dst = ((__u32)ip[16] << 24) | (ip[17] << 16) | (ip[18] << 8) | ip[19];
    code = sram_code(dst, code_bits);
    want[10] = want[11] = 0xff;
    __builtin_memcpy(want + 12, ip + 16, 4);
  } else if (type == 0x86dd) {
    const __u8 next = ip[6];
    if ((ip[0] >> 4) != 6 || next == 0 || ip[7] <= 1) return XDP_PASS;
    if (next == 58 && ip[40] >= 133 && ip[40] <= 137) return XDP_PASS;  // NDP
    if (!(control & 2)) return XDP_PASS;
    code = tcam_code(ip + 24);
    __builtin_memcpy(want, ip + 24, 16);
  } else {
    return XDP_PASS;
  }
  if (code <= 0 || code > 15) return XDP_PASS;  // no match, or code 0

  const __u8 *nhp = page(PAGE_NEXTHOP);
  if (!nhp) return XDP_PASS;
  // MAC, port and flags in one aligned 64-bit load: the entry as it is at
  // one instant between the host's 32-bit writes, never half of each.
  const __u64 entry = *(const volatile __u64 *)(nhp + 16 * (code & 15));
  const __u8 flags = entry >> 56;
  if (!(flags & NH_VALID)) return XDP_PASS;
  struct xdp_counts *in = counts_of(port);
  if (!in) return XDP_PASS;
  if ((caps2 & CAPS2_DROP) && (flags & NH_DROP)) {
    in->rx += 1;
    in->rx_bytes += wire_bytes;
    in->drop_route += 1;
    return XDP_DROP;
  }
  __u8 mac[6];
  __builtin_memcpy(mac, &entry, 6);  // little-endian: bytes 0..5 of the entry
  __u32 egress = (entry >> 48) & 0xff;
  if ((flags & NH_CONNECTED) && !neigh_find(want, mac, &egress)) return XDP_PASS;
  if (egress >= ports || egress > 255) return XDP_PASS;
  struct xdp_counts *out = counts_of(egress);
  if (!out) return XDP_PASS;
  // A port the emulator has no wire for: the model's path counts the loss.
  const long act = bpf_redirect_map(&tx_ports, egress, XDP_PASS);
  if (act != XDP_REDIRECT) return XDP_PASS;

  // The rewrite (RFC 1812 5.3.1, RFC 1624 eqn. 3), as the model's Rewrite.
  __builtin_memcpy(f, mac, 6);
  __builtin_memcpy(f + 6, csr + OFF_PORT_MAC + 8 * (egress & 0xff), 6);
  if (type == 0x0800) {
    const __u16 m_old = be16(ip + 8);
    ip[8] -= 1;
    const __u16 m_new = be16(ip + 8);
    const __u16 hc = be16(ip + 10);
    const __u16 sum = ~fold((__u32)(__u16)~hc + (__u16)~m_old + m_new);
    ip[10] = sum >> 8;
    ip[11] = sum & 0xff;
  } else {
    ip[7] -= 1;
  }
  in->rx += 1;
  in->rx_bytes += wire_bytes;
  in->forwarded += 1;
  out->tx += 1;
  out->tx_bytes += wire_bytes;
  return XDP_REDIRECT;
}

char LICENSE[] SEC("license") = "Proprietary";
