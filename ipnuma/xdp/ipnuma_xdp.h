// What ipnuma-emu's two XDP programs (ipnuma_rx.bpf.c, ipnuma_tx.bpf.c)
// share: the BAR0 offsets, framing and wire-format constants they read by
// (device/ipnuma_regs.h, ipnuma/emu_frames.h, device/ipnuma_wire.h), the
// transmit path's stream slots (ipnuma_tx_shared.h), and the UDP checksum's
// sum. BPF only.
#pragma once

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "ipnuma/xdp/ipnuma_tx_shared.h"

#define PAGE 4096
// BAR0 offsets (device/ipnuma_regs.h).
#define OFF_CAPS0 0x08
#define OFF_CAPS1 0x0c
#define OFF_CAPS2 0x10
#define OFF_CONTROL 0x14
#define OFF_LOCAL_IP 0x20
#define OFF_LOCAL_MAC 0x30
#define OFF_UDP_PORT 0x38
#define OFF_MAX_PAYLOAD 0x40
#define OFF_COUNTERS 0x100
#define OFF_EXT_COUNTERS 0x200
#define OFF_PCID 0x10000
#define PCID_STRIDE 16
#define PCID_VALID 1
#define OFF_REGION 0x20000
#define REGION_STRIDE 32
#define REGION_VALID 1
#define OFF_PAGEMAP 0x100000
#define PA_MASK ((1ULL << 48) - 1)
// DecodeWireParams: a register's 0 reads as its default.
#define TX_WINDOW_DEFAULT 64

// Framing (ipnuma/emu_frames.h) and the wire format (device/ipnuma_wire.h).
#define ETH_BYTES 14
#define IP_BYTES 20
#define UDP_BYTES 8
#define PKT_OFF (ETH_BYTES + IP_BYTES + UDP_BYTES)
#define HDR_BYTES 36
#define MIN_PKT 40
#define MAX_DW 1024
#define MAX_PKT (MIN_PKT + 4 * MAX_DW)
#define MAGIC 0x49504E4D
#define END_CODE 0x49504E45
#define T_WRITE 1
#define T_ACK 2
#define T_ERROR 3
#define T_READ 4
#define R_DENIED 1
#define FMT_MWR64 0x60
#define FMT_MRD64 0x20
#define OFF_TLP 20

struct page {
  __u8 b[PAGE];
};

// The transmit path's stream slots and the address -> slot table, sized at
// load time (ipnuma/xdp_transmit.cc); the receive program gets the same
// maps when both run (ipnuma/xdp_receive.h).
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __type(key, __u32);
  __type(value, struct ipnuma_tx_stream);
  __uint(max_entries, 2);
} tx_streams SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __type(key, __u32);
  __type(value, __u32);
  __uint(max_entries, 1);
} tx_slot SEC(".maps");

static __always_inline __u16 fold(__u64 s) {
  s = (s & 0xffffffff) + (s >> 32);
  s = (s & 0xffff) + (s >> 16);
  s = (s & 0xffff) + (s >> 16);
  s = (s & 0xffff) + (s >> 16);
  return (__u16)s;
}

// Loops run as bpf_loop callbacks: the verifier checks a callback once,
// where an open-coded loop of a thousand steps would be walked step by step
// through every path after it.
struct sum_walk {
  struct xdp_md *ctx;
  __u32 udp_len;
  __u32 short_frame;
  __u64 sum;
};

// A step takes 16 words (64 bytes): a call per word would cost more than
// the sum.
#define WORDS_PER_STEP 16

// The UDP datagram's words (from the UDP header on), summed into w->sum.
static long sum_step(__u32 i, void *arg) {
  struct sum_walk *w = arg;
  __u8 *d = (void *)(long)w->ctx->data, *e = (void *)(long)w->ctx->data_end;
#pragma unroll
  for (int k = 0; k < WORDS_PER_STEP; k++) {
    const __u32 off = 4 * (WORDS_PER_STEP * i + k);
    if (off >= w->udp_len) return 1;
    __u8 *q = d + ETH_BYTES + IP_BYTES + (off & 0x1fff);
    if (q + 4 > e) {
      w->short_frame = 1;
      return 1;
    }
    w->sum += *(__u32 *)q;
  }
  return 0;
}
