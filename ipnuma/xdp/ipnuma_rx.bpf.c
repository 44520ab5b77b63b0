// ipnuma-emu's receive path in the kernel: the contract's receiver half
// (device/ipnuma_model.cc, Receiver) as an XDP program on the NIC's wire.
// A WRITE is checked, applied to host memory (the pool map) and answered
// (ACK or ERROR, XDP_TX) before the frame ever reaches user space, so a
// program polling that memory sees the bytes with no process woken between.
// This is what a NIC's DMA engine does; the user-space emulator stays the
// NIC's sender half and its slow path.
//
// Who owns what:
// - the receive streams (epoch and next sequence per source address) are
//   this program's alone (`peers`): every request is accepted or refused
//   here, so no second copy of that state can disagree;
// - a READ_REQUEST it accepts (or re-executes, as the model does for the
//   newest duplicate) goes to the emulator through `reads`, which reads the
//   memory and sends the completion (the sender fences reads, so no later
//   write of that stream can land first);
// - everything it does not take returns XDP_PASS unchanged: answers (the
//   sender half's), other traffic, and every frame that breaks a rule. The
//   emulator's parser and codec then count a broken one as rx_malformed,
//   exactly as without this program, so the program never needs to know why
//   a frame is broken, only that it is not sure it is whole.
//
// Counters are added to BAR0 (the map ipnumad provisions) atomically, before
// the answer leaves, so whoever sees the answer finds it counted.
#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "ipnuma/xdp/ipnuma_xdp.h"

// The emulator refuses its XDP mode for a NIC with more region entries: the
// verifier must see every loop end.
#define MAX_REGIONS 256
// Counter indexes (BaseCounter and ExtCounter).
#define C_RX_WRITES 1
#define C_RX_DENIED 2
#define C_ACKS 4
#define C_ERRORS_SENT 5
#define X_RX_DUPLICATE 8
#define X_RX_OUT_OF_ORDER 9
#define X_RX_STALE_EPOCH 10
#define X_RX_NO_PEER_STATE 11
#define X_RX_DISABLED 12
// An answer's frame: headers and a packet without data.
#define REPLY_FRAME (PKT_OFF + MIN_PKT)

// BAR0 and host memory: replaced at load time by the maps ipnumad and the
// emulator share (page-sized values laid end to end, hwif/bpf_bar.h).
#define PAGE_MAP(name)                  \
  struct {                              \
    __uint(type, BPF_MAP_TYPE_ARRAY);   \
    __uint(map_flags, BPF_F_MMAPABLE);  \
    __type(key, __u32);                 \
    __type(value, struct page);         \
    __uint(max_entries, 1);             \
  } name SEC(".maps")
PAGE_MAP(bar);
PAGE_MAP(pool);

// One receive stream per source IPv4 (network order); sized to CAPS1's PC ID
// entries at load time, as the model bounds its table. One word, changed
// only by compare-and-swap: [31:0] the next sequence to apply, [47:32] the
// epoch, bit 48 set while a WRITE is being copied into memory, so a second
// CPU never applies that stream's next request before it.
#define STREAM_BUSY (1ULL << 48)
struct peer {
  __u64 state;
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __type(key, __u32);
  __type(value, struct peer);
  __uint(max_entries, 1);
} peers SEC(".maps");

// Accepted reads, for the emulator (keep in step with ipnuma/xdp_receive.cc).
struct read_request {
  __u32 src_ip;  // network order
  __u8 src_mac[6];
  __u16 src_port;  // network order
  __u16 epoch;
  __u16 duplicate;  // 1: the newest read again (counted as a duplicate here)
  __u32 ack_seq;
  __u8 packet[MIN_PKT];  // the READ_REQUEST as it came
};

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 64 * 1024);
} reads SEC(".maps");

// The transmit path's stream slots (tx_streams, tx_slot in ipnuma_xdp.h) are
// given at load time when the emulator runs it (else they stay empty): an
// ACK for a stream the transmit program holds moves that stream's window
// here, so the sender's next store need not wait for the emulator to run,
// and the ACK itself goes to the emulator through `acks` without waking it
// (it takes them on its next round, as it would from its socket).
#define ACK_FRAME (PKT_OFF + MIN_PKT)
// Keep in step with ipnuma/xdp_receive.cc.
struct ack_record {
  __u32 len;
  __u8 frame[ACK_FRAME];
};

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 256 * 1024);
} acks SEC(".maps");

// Where host memory starts on the bus and how long it is (keep in step with
// ipnuma/xdp_receive.cc).
struct pool_span {
  __u64 base, bytes;
};

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __type(key, __u32);
  __type(value, struct pool_span);
  __uint(max_entries, 1);
} pool_at SEC(".maps");

static __always_inline void count(__u8 *bar0, __u32 off) { __sync_fetch_and_add((__u64 *)(bar0 + off), 1); }

static __always_inline int low_bit(__u8 be) {
  return be & 1 ? 0 : be & 2 ? 1 : be & 4 ? 2 : be & 8 ? 3 : 4;
}
static __always_inline int high_bit(__u8 be) {
  return be & 8 ? 3 : be & 4 ? 2 : be & 2 ? 1 : be & 1 ? 0 : -1;
}

// Loops run as bpf_loop callbacks (see sum_step in ipnuma_xdp.h), 16 words
// a step.
struct region_walk {
  __u32 src, entries, admitted;
  __u64 first, len;
};

static long region_step(__u32 i, void *arg) {
  struct region_walk *w = arg;
  if (i >= w->entries) return 1;
  __u32 key = (OFF_REGION + REGION_STRIDE * i) / PAGE;
  __u8 *pg = bpf_map_lookup_elem(&bar, &key);
  if (!pg) return 1;
  __u8 *r = pg + ((REGION_STRIDE * i) & (PAGE - REGION_STRIDE));
  if (!(r[24] & REGION_VALID)) return 0;
  __u64 base = *(volatile __u64 *)r, length = *(volatile __u64 *)(r + 8);
  __u32 peer_ip = *(volatile __u32 *)(r + 16), mask = *(volatile __u32 *)(r + 20);
  if ((w->src & mask) != (peer_ip & mask)) return 0;
  if (w->first >= base && w->len <= length && w->first - base <= length - w->len) {
    w->admitted = 1;
    return 1;
  }
  return 0;
}

// RegionEntry::Admits over the live REGION table, and the model's bound of
// the memory it was given (the pool).
static __always_inline int admitted(__u8 *bar0, const struct pool_span *pool_span, __u32 src, __u64 first,
                                    __u64 end) {
  if (first < pool_span->base || end > pool_span->base + pool_span->bytes || end <= first) return 0;
  struct region_walk w = {.src = src, .entries = *(volatile __u32 *)(bar0 + OFF_CAPS1) >> 16, .first = first,
                          .len = end - first};
  bpf_loop(MAX_REGIONS, region_step, &w, 0);
  return w.admitted;
}

// A WRITE's payload into host memory, DW by DW: m0 is the page of its first
// byte, m1 the next (a packet spans at most two).
struct copy_walk {
  struct xdp_md *ctx;
  __u8 *m0, *m1;
  __u32 in, ldw;
  __u8 fbe, lbe;
};

static long copy_step(__u32 step, void *arg) {
  struct copy_walk *w = arg;
  __u8 *d = (void *)(long)w->ctx->data, *e = (void *)(long)w->ctx->data_end;
#pragma unroll
  for (int k = 0; k < WORDS_PER_STEP; k++) {
    const __u32 i = WORDS_PER_STEP * step + k;
    if (i >= w->ldw) return 1;
    __u8 *q = d + PKT_OFF + HDR_BYTES + ((4 * i) & 0x3fff);
    if (q + 4 > e) return 1;  // cannot be: the length was checked
    __u32 o = w->in + 4 * i;
    __u8 *dst = o < PAGE ? w->m0 : w->m1;
    if (!dst) return 1;
    o &= PAGE - 4;
    const __u8 be = i == 0 ? w->fbe : i == w->ldw - 1 ? w->lbe : 0xf;
    if (be == 0xf) {
      *(__u32 *)(dst + o) = *(__u32 *)q;
    } else {
      // A partial DW: only its enabled bytes, so a 1-byte store leaves its
      // neighbours as they are.
      if (be & 1) dst[o] = q[0];
      if (be & 2) dst[o + 1] = q[1];
      if (be & 4) dst[o + 2] = q[2];
      if (be & 8) dst[o + 3] = q[3];
    }
  }
  return 0;
}

enum action { A_DROP, A_WRITE, A_DENY, A_ACK, A_READ, A_READ_AGAIN };

// An ACK, whole by Decode's rules (the checksums were checked), for a stream
// the transmit program holds: its window moves to ack_seq + TX_WINDOW, and
// the frame goes to the emulator through `acks`. Anything else, or a full
// ring, is passed up as before.
static __always_inline int take_ack(struct xdp_md *ctx, __u8 *b0, __u8 *ip, __u8 *p, __u32 n) {
  if (n != MIN_PKT || *(__u32 *)p != bpf_htonl(MAGIC) || p[4] != 1 || p[6] != 0 || p[7] != 0 ||
      *(__u16 *)(p + 10) != 0 || *(__u32 *)(p + 12) != 0 || *(__u32 *)(p + MIN_PKT - 4) != bpf_htonl(END_CODE))
    return XDP_PASS;
  __u8 *tlp = p + OFF_TLP;
  if (*(__u64 *)tlp != 0 || *(__u64 *)(tlp + 8) != 0) return XDP_PASS;
  const __u32 src = *(__u32 *)(ip + 12);
  __u32 *found = bpf_map_lookup_elem(&tx_slot, &src);
  if (!found) return XDP_PASS;
  __u32 idx = *found;
  struct ipnuma_tx_stream *st = bpf_map_lookup_elem(&tx_streams, &idx);
  if (!idx || !st || *(volatile __u32 *)&st->ip != src) return XDP_PASS;
  const __u64 w = *(volatile __u64 *)&st->word;
  const __u16 epoch = bpf_ntohs(*(__u16 *)(p + 8));
  const __u32 ack = bpf_ntohl(*(__u32 *)(p + 16));
  // Only the stream as the transmit program holds it, and only a sequence
  // it gave out: a stale or forged ACK moves nothing (the emulator's sender
  // judges it, as ever).
  if (!(w & IPNUMA_TX_KERNEL) || (__u16)(w >> IPNUMA_TX_EPOCH_SHIFT) != epoch || (__s32)((__u32)w - ack) < 0)
    return XDP_PASS;
  struct ack_record *rec = bpf_ringbuf_reserve(&acks, sizeof *rec, 0);
  if (!rec) return XDP_PASS;
  if (bpf_xdp_load_bytes(ctx, 0, rec->frame, ACK_FRAME) != 0) {
    bpf_ringbuf_discard(rec, 0);
    return XDP_PASS;
  }
  rec->len = ACK_FRAME;
  __u32 window = *(volatile __u32 *)(b0 + OFF_CAPS2) & 0xffff;
  if (!window) window = TX_WINDOW_DEFAULT;
  const __u32 limit = ack + window;
  // `limit` and `ip` share one 64-bit word (the BPF target's compare-and-swap
  // is 64-bit); `ip` does not change while the slot is mapped.
  __u64 *pair = (__u64 *)&st->limit;
  for (int i = 0; i < 8; i++) {
    const __u64 cur = *(volatile __u64 *)pair;
    if ((__s32)(limit - (__u32)cur) <= 0 ||
        __sync_val_compare_and_swap(pair, cur, (cur & 0xffffffff00000000ULL) | limit) == cur)
      break;
  }
  bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
  return XDP_DROP;
}

SEC("xdp")
int ipnuma_rx(struct xdp_md *ctx) {
  __u8 *d = (void *)(long)ctx->data, *e = (void *)(long)ctx->data_end;
  __u32 k0 = 0;
  __u8 *b0 = bpf_map_lookup_elem(&bar, &k0);
  if (!b0) return XDP_PASS;
  // Shorter than a whole request: nothing this program takes.
  if (d + PKT_OFF + MIN_PKT > e) return XDP_PASS;
  // Ours: LOCAL_MAC, IPv4 to LOCAL_IP, UDP to UDP_PORT (read per frame, as
  // ipnumad may change them live).
  if (*(__u32 *)d != *(volatile __u32 *)(b0 + OFF_LOCAL_MAC) ||
      *(__u16 *)(d + 4) != *(volatile __u16 *)(b0 + OFF_LOCAL_MAC + 4) || *(__u16 *)(d + 12) != bpf_htons(0x0800))
    return XDP_PASS;
  __u8 *ip = d + ETH_BYTES;
  if (*(__u32 *)(ip + 16) != *(volatile __u32 *)(b0 + OFF_LOCAL_IP) || ip[9] != 17) return XDP_PASS;
  if (ip[0] != 0x45 || (*(__u16 *)(ip + 6) & bpf_htons(0x3fff))) return XDP_PASS;
  __u64 s = 0;
  for (int i = 0; i < 5; i++) s += *(__u32 *)(ip + 4 * i);
  if (fold(s) != 0xffff) return XDP_PASS;
  const __u32 ip_len = bpf_ntohs(*(__u16 *)(ip + 2));
  if (ip_len < IP_BYTES + UDP_BYTES || ETH_BYTES + ip_len > (__u64)(e - d)) return XDP_PASS;
  __u8 *udp = ip + IP_BYTES;
  const __u32 udp_len = bpf_ntohs(*(__u16 *)(udp + 4));
  if (udp_len != ip_len - IP_BYTES) return XDP_PASS;
  const __u16 port = *(volatile __u16 *)(b0 + OFF_UDP_PORT);  // little-endian register
  if (*(__u16 *)(udp + 2) != bpf_htons(port) || *(__u16 *)(udp + 6) == 0) return XDP_PASS;
  const __u32 n = udp_len - UDP_BYTES;  // the IP-NUMA packet
  // A request is 40 bytes plus whole DWs; anything else is for the codec to refuse.
  if (n < MIN_PKT || n > MAX_PKT || (n & 3)) return XDP_PASS;
  // The UDP checksum, summed in 32-bit words of the packet's own byte order
  // (RFC 1071's sum does not depend on it; a whole datagram sums to 0xffff).
  s = (__u64) * (__u32 *)(ip + 12) + *(__u32 *)(ip + 16) + bpf_htons(17) + bpf_htons((__u16)udp_len);
  struct sum_walk sw = {.ctx = ctx, .udp_len = udp_len, .sum = s};
  bpf_loop((UDP_BYTES + MAX_PKT) / (4 * WORDS_PER_STEP) + 1, sum_step, &sw, 0);
  if (sw.short_frame) return XDP_PASS;
  s = sw.sum;
  if (fold(s) != 0xffff) return XDP_PASS;

  // The header, by Decode's and Validate's rules for a request.
  __u8 *p = udp + UDP_BYTES;
  const __u8 type = p[5];
  if (type == T_ACK) return take_ack(ctx, b0, ip, p, n);
  if (*(__u32 *)p != bpf_htonl(MAGIC) || p[4] != 1 || (type != T_WRITE && type != T_READ)) return XDP_PASS;
  __u8 *tlp = p + OFF_TLP;
  if (p[6] != 0 || p[7] != 0 || *(__u16 *)(p + 10) != 0 || *(__u32 *)(p + 16) != 0) return XDP_PASS;
  if (tlp[1] != 0 || (tlp[2] & 0xfc) != 0 || tlp[0] != (type == T_WRITE ? FMT_MWR64 : FMT_MRD64)) return XDP_PASS;
  const __u32 len_field = ((__u32)(tlp[2] & 3) << 8) | tlp[3];
  const __u32 ldw = len_field ? len_field : MAX_DW;
  if (n != MIN_PKT + (type == T_WRITE ? 4 * ldw : 0)) return XDP_PASS;
  __u8 *end_code = p + ((n - 4) & 0x1fff);  // n < 8192: the mask only bounds it for the verifier
  if (end_code + 4 > e || *(__u32 *)end_code != bpf_htonl(END_CODE)) return XDP_PASS;
  const __u8 fbe = tlp[7] & 0xf, lbe = tlp[7] >> 4;
  const __u64 addr = bpf_be64_to_cpu(*(__u64 *)(tlp + 8));
  if ((addr & 3) || addr > ~0ULL - 4ULL * ldw || fbe == 0) return XDP_PASS;
  if (ldw == 1 ? lbe != 0 : lbe == 0) return XDP_PASS;
  if (ldw >= 3 && ((fbe != 0x8 && fbe != 0xc && fbe != 0xe && fbe != 0xf) ||
                   (lbe != 0x1 && lbe != 0x3 && lbe != 0x7 && lbe != 0xf)))
    return XDP_PASS;

  // A well-formed request: from here every outcome is this program's.
  if (!(*(volatile __u32 *)(b0 + OFF_CONTROL) & 1)) {
    count(b0, OFF_EXT_COUNTERS + 8 * X_RX_DISABLED);
    return XDP_DROP;
  }
  const __u16 epoch = bpf_ntohs(*(__u16 *)(p + 8));
  const __u32 seq = bpf_ntohl(*(__u32 *)(p + 12));
  const __u32 src = *(__u32 *)(ip + 12);

  // The range a region check sees, and the memory pages a write touches
  // (looked up first: no call may be made while the stream is locked).
  const __u64 first = addr + low_bit(fbe);
  const __u64 end = ldw == 1 ? addr + high_bit(fbe) + 1 : addr + 4ULL * (ldw - 1) + high_bit(lbe) + 1;
  const struct pool_span *span = bpf_map_lookup_elem(&pool_at, &k0);
  if (!span) return XDP_PASS;
  const int ok = type == T_WRITE && admitted(b0, span, src, first, end);
  __u8 *m0 = 0, *m1 = 0;
  __u32 in = 0;
  if (ok) {
    const __u64 off = addr - span->base;  // addr >= base: first is, and both are DW aligned
    __u32 pg = (__u32)(off / PAGE), pg1 = pg + 1;
    in = (__u32)(off & (PAGE - 1));
    m0 = bpf_map_lookup_elem(&pool, &pg);
    m1 = bpf_map_lookup_elem(&pool, &pg1);
    if (!m0) return XDP_PASS;  // cannot be: admitted says the range is in the pool
    if (!m1) m1 = m0;          // never used: the range ends in m0's page
  }

  struct peer *ps = bpf_map_lookup_elem(&peers, &src);
  if (!ps) {
    // A stream is only ever joined at its start.
    if (seq != 0) {
      count(b0, OFF_EXT_COUNTERS + 8 * X_RX_OUT_OF_ORDER);
      return XDP_DROP;
    }
    struct peer fresh = {.state = (__u64)epoch << 32};
    // Fails when another CPU made it meanwhile (found below) or the table is full.
    (void)bpf_map_update_elem(&peers, &src, &fresh, BPF_NOEXIST);
    ps = bpf_map_lookup_elem(&peers, &src);
    if (!ps) {
      count(b0, OFF_EXT_COUNTERS + 8 * X_RX_NO_PEER_STATE);
      return XDP_DROP;
    }
  }

  enum action act = A_DROP;
  __u32 dropped = 0, ack_seq = 0;
  const __u64 old = *(volatile __u64 *)&ps->state;
  __u16 stream_epoch = (__u16)(old >> 32);
  __u32 expected = (__u32)old;
  if (old & STREAM_BUSY) {
    // Its predecessor is still being applied on another CPU: dropped as a
    // request after a gap is, and the sender goes back to it.
    dropped = OFF_EXT_COUNTERS + 8 * X_RX_OUT_OF_ORDER;
  } else if (stream_epoch != epoch && (__u16)(epoch - stream_epoch) >= 0x8000) {
    dropped = OFF_EXT_COUNTERS + 8 * X_RX_STALE_EPOCH;
  } else if (stream_epoch != epoch && seq != 0) {
    dropped = OFF_EXT_COUNTERS + 8 * X_RX_OUT_OF_ORDER;
  } else {
    if (stream_epoch != epoch) {  // a newer stream from that address starts
      stream_epoch = epoch;
      expected = 0;
    }
    const __s32 diff = (__s32)(seq - expected);
    if (diff > 0) {
      dropped = OFF_EXT_COUNTERS + 8 * X_RX_OUT_OF_ORDER;  // after a gap: the sender goes back to it
    } else if (diff < 0) {
      // Applied already: answered again, never applied again (it could
      // overwrite a newer write); the newest read may run again.
      act = type == T_READ && diff == -1 ? A_READ_AGAIN : A_ACK;
      ack_seq = expected;
    } else {
      act = type == T_READ ? A_READ : ok ? A_WRITE : A_DENY;
      ack_seq = expected + 1;
      const __u64 next = ((__u64)stream_epoch << 32) | ack_seq;
      const __u64 claim = act == A_WRITE ? (((__u64)stream_epoch << 32) | expected | STREAM_BUSY) : next;
      if (__sync_val_compare_and_swap(&ps->state, old, claim) != old) {
        dropped = OFF_EXT_COUNTERS + 8 * X_RX_OUT_OF_ORDER;  // another CPU took the stream first
      } else if (act == A_WRITE) {
        struct copy_walk cw = {.ctx = ctx, .m0 = m0, .m1 = m1, .in = in, .ldw = ldw, .fbe = fbe, .lbe = lbe};
        bpf_loop(MAX_DW / WORDS_PER_STEP, copy_step, &cw, 0);
        __sync_val_compare_and_swap(&ps->state, claim, next);
      }
    }
  }
  if (dropped) {
    count(b0, dropped);
    return XDP_DROP;
  }

  if (act == A_READ || act == A_READ_AGAIN) {
    if (act == A_READ_AGAIN) count(b0, OFF_EXT_COUNTERS + 8 * X_RX_DUPLICATE);
    struct read_request *r = bpf_ringbuf_reserve(&reads, sizeof *r, 0);
    if (!r) return XDP_DROP;  // as if lost: the sender retransmits, and the newest read runs again
    r->src_ip = src;
    __builtin_memcpy(r->src_mac, d + 6, 6);
    r->src_port = *(__u16 *)udp;
    r->epoch = stream_epoch;
    r->duplicate = act == A_READ_AGAIN;
    r->ack_seq = ack_seq;
    __builtin_memcpy(r->packet, p, MIN_PKT);
    bpf_ringbuf_submit(r, 0);
    return XDP_DROP;
  }

  if (act == A_WRITE) {
    count(b0, OFF_COUNTERS + 8 * C_RX_WRITES);
  } else if (act == A_DENY) {
    count(b0, OFF_COUNTERS + 8 * C_RX_DENIED);
    count(b0, OFF_COUNTERS + 8 * C_ERRORS_SENT);
  } else {
    count(b0, OFF_EXT_COUNTERS + 8 * X_RX_DUPLICATE);
  }
  if (act != A_DENY) count(b0, OFF_COUNTERS + 8 * C_ACKS);

  // The answer, written over the request: back to the MAC, address and port
  // it came from, from ours (Receiver::Reply, then BuildUdpFrame).
  __u8 mac[6];
  __builtin_memcpy(mac, d + 6, 6);
  __builtin_memcpy(d, mac, 6);
  __builtin_memcpy(d + 6, b0 + OFF_LOCAL_MAC, 6);
  *(__u32 *)(ip + 16) = src;
  *(__u32 *)(ip + 12) = *(volatile __u32 *)(b0 + OFF_LOCAL_IP);
  *(__u16 *)(ip + 2) = bpf_htons(IP_BYTES + UDP_BYTES + MIN_PKT);
  *(__u16 *)(ip + 6) = bpf_htons(0x4000);
  ip[8] = 64;
  *(__u16 *)(ip + 10) = 0;
  s = 0;
  for (int i = 0; i < 5; i++) s += *(__u32 *)(ip + 4 * i);
  *(__u16 *)(ip + 10) = ~fold(s);
  *(__u16 *)(udp + 2) = *(__u16 *)udp;
  *(__u16 *)udp = bpf_htons(port);
  *(__u16 *)(udp + 4) = bpf_htons(UDP_BYTES + MIN_PKT);
  *(__u16 *)(udp + 6) = 0;
  p[5] = act == A_DENY ? T_ERROR : T_ACK;
  p[6] = act == A_DENY ? R_DENIED : 0;
  *(__u16 *)(p + 8) = bpf_htons(stream_epoch);
  *(__u32 *)(p + 16) = bpf_htonl(ack_seq);
  if (act != A_DENY) {
    *(__u32 *)(p + 12) = 0;  // an ACK carries no seq and a zero TLP header
    __builtin_memset(tlp, 0, 16);
  }
  *(__u32 *)(p + HDR_BYTES) = bpf_htonl(END_CODE);
  s = (__u64) * (__u32 *)(ip + 12) + *(__u32 *)(ip + 16) + bpf_htons(17) + bpf_htons(UDP_BYTES + MIN_PKT);
  for (int i = 0; i < (UDP_BYTES + MIN_PKT) / 4; i++) s += *(__u32 *)(udp + 4 * i);
  __u16 sum = ~fold(s);
  *(__u16 *)(udp + 6) = sum ? sum : 0xffff;  // 0 would mean "no checksum"
  const int shrink = (int)(REPLY_FRAME - (e - d));
  if (shrink < 0 && bpf_xdp_adjust_tail(ctx, shrink) != 0) return XDP_DROP;
  return XDP_TX;
}

char LICENSE[] SEC("license") = "GPL";
