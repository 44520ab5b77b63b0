// ipnuma-emu's transmit path in the kernel: the contract's sender half
// (device/ipnuma_model.cc, Sender::Store and the first send of Poll) as an
// XDP program on the NIC's end of the host link. A program's doorbell frame
// (a posted store, ipnuma_tx_shared.h) becomes the WRITE on the wire in the
// sender's own system call: resolved through the live BAR0 tables, given
// the stream's next sequence, recorded for the emulator (which retransmits
// and takes the ACKs) and redirected to the wire interface.
//
// The program sends only what it can send exactly as the model would, at
// once: one piece of one store (the model's pieces end on MAX_PAYLOAD
// boundaries), to a stream the emulator handed it (KERNEL set), within the
// window. Everything else passes up to the emulator unchanged but for
// punt_slot, and a stream's KERNEL is cleared first, so every later store of
// that stream follows the one passed up.
#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "ipnuma/xdp/ipnuma_xdp.h"

// Counter index (BaseCounter).
#define C_TX_WRITES 0
// DecodeWireParams: MAX_PAYLOAD 0 reads as 64; else the largest power of two
// not above it, within [64, 4096].
#define MAX_PAYLOAD_MIN 64
#define MAX_PAYLOAD_MAX 4096
// A doorbell frame's headers (ipnuma_tx_shared.h).
#define DB_BYTES (ETH_BYTES + sizeof(struct ipnuma_doorbell))
// How often the program tries to take a sequence while other CPUs take
// that stream's before it; then it passes the store up.
#define SEQ_TRIES 8

// BAR0: replaced at load time by the map ipnumad provisions (page-sized
// values laid end to end, hwif/bpf_bar.h).
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __type(key, __u32);
  __type(value, struct page);
  __uint(max_entries, 1);
} bar SEC(".maps");

// 4 MiB: about a thousand records, a full window of 64 for 16 streams.
struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 4 << 20);
} tx_sent SEC(".maps");

// Keep in step with ipnuma/xdp_transmit.cc.
struct tx_config {
  __u32 wire_ifindex;
};

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __type(key, __u32);
  __type(value, struct tx_config);
  __uint(max_entries, 1);
} tx_config SEC(".maps");

// Passes the frame up, counted for slot idx (0: no slot). `punted` first,
// then the word's count of frames passed up, then KERNEL clear: the
// emulator's hand-back, a compare-and-swap from a word it read before it
// read `punted`, then fails unless it saw this frame counted.
static __always_inline int punt(struct xdp_md *ctx, struct ipnuma_tx_stream *st, __u32 idx) {
  __sync_fetch_and_add(&st->punted, 1);
  if (idx) {
    __sync_fetch_and_add(&st->word, IPNUMA_TX_PUNTS_ONE);
    __sync_fetch_and_and(&st->word, ~IPNUMA_TX_KERNEL);
  }
  __u8 *d = (void *)(long)ctx->data, *e = (void *)(long)ctx->data_end;
  struct ipnuma_doorbell *db = (void *)(d + ETH_BYTES);
  if ((void *)(db + 1) <= (void *)e) db->punt_slot = idx;
  return XDP_PASS;
}

SEC("xdp")
int ipnuma_tx(struct xdp_md *ctx) {
  __u8 *d = (void *)(long)ctx->data, *e = (void *)(long)ctx->data_end;
  if (d + ETH_BYTES > e || *(__u16 *)(d + 12) != bpf_htons(IPNUMA_DOORBELL_ETHERTYPE)) return XDP_PASS;
  __u32 k0 = 0;
  struct ipnuma_tx_stream *none = bpf_map_lookup_elem(&tx_streams, &k0);
  __u8 *b0 = bpf_map_lookup_elem(&bar, &k0);
  struct tx_config *cfg = bpf_map_lookup_elem(&tx_config, &k0);
  if (!none) return XDP_PASS;
  if (!b0 || !cfg || cfg->wire_ifindex == 0) return punt(ctx, none, 0);

  // The doorbell, read whole before the frame is rewritten over it.
  struct ipnuma_doorbell *db = (void *)(d + ETH_BYTES);
  if ((void *)(db + 1) > (void *)e) return punt(ctx, none, 0);
  const __u32 length = db->length, client = db->client;
  const __u64 offset = db->offset;
  if (db->magic != IPNUMA_DOORBELL_MAGIC || db->op != IPNUMA_DOORBELL_POSTED_WRITE || length == 0 ||
      length > IPNUMA_DOORBELL_MAX_DATA || DB_BYTES + length > (__u64)(e - d))
    return punt(ctx, none, 0);
  if (!(*(volatile __u32 *)(b0 + OFF_CONTROL) & 1)) return punt(ctx, none, 0);

  // Sender::Resolve over the live tables: page -> PAGEMAP -> PC ID -> PCID.
  const __u64 page = offset / PAGE;
  if (page >= *(volatile __u32 *)(b0 + OFF_CAPS0)) return punt(ctx, none, 0);
  const __u64 pm_off = OFF_PAGEMAP + 8 * page;
  __u32 key = (__u32)(pm_off / PAGE);
  __u8 *pg = bpf_map_lookup_elem(&bar, &key);
  if (!pg) return punt(ctx, none, 0);
  const __u64 pm = *(volatile __u64 *)(pg + (pm_off & (PAGE - 8)));
  const __u32 pcid = (__u32)(pm >> 48);
  if (pcid == 0 || pcid >= (*(volatile __u32 *)(b0 + OFF_CAPS1) & 0xffff)) return punt(ctx, none, 0);
  const __u32 pc_off = OFF_PCID + PCID_STRIDE * pcid;
  key = pc_off / PAGE;
  pg = bpf_map_lookup_elem(&bar, &key);
  if (!pg) return punt(ctx, none, 0);
  __u8 *pe = pg + (pc_off & (PAGE - PCID_STRIDE));
  if (!(pe[10] & PCID_VALID)) return punt(ctx, none, 0);
  const __u32 dst_ip = *(volatile __u32 *)pe;  // network order, as the slot table keys it
  __u8 dst_mac[6];
  __builtin_memcpy(dst_mac, pe + 4, 6);
  const __u64 remote = (pm & PA_MASK) + (offset & (PAGE - 1));

  // The stream's slot: from here every frame passed up is counted there.
  __u32 *found = bpf_map_lookup_elem(&tx_slot, &dst_ip);
  if (!found) return punt(ctx, none, 0);
  __u32 idx = *found;
  struct ipnuma_tx_stream *st = bpf_map_lookup_elem(&tx_streams, &idx);
  if (!idx || !st || *(volatile __u32 *)&st->ip != dst_ip) return punt(ctx, none, 0);

  // One model piece: the store ends in the MAX_PAYLOAD line it starts in.
  const __u32 mp_reg = *(volatile __u32 *)(b0 + OFF_MAX_PAYLOAD);
  __u32 mp = MAX_PAYLOAD_MIN;
#pragma unroll
  for (int i = 0; i < 6; i++)
    if (mp * 2 <= mp_reg && mp * 2 <= MAX_PAYLOAD_MAX) mp *= 2;
  if (offset / mp != (offset + length - 1) / mp) return punt(ctx, st, idx);
  __u64 w = *(volatile __u64 *)&st->word;
  if (!(w & IPNUMA_TX_KERNEL) || (__s32)(*(volatile __u32 *)&st->limit - (__u32)w) <= 0) return punt(ctx, st, idx);

  // The packet's shape (TlpHeader::ForBytes): the data at remote & 3 in whole DWs.
  const __u32 lead = (__u32)(remote & 3);
  const __u32 ldw = (lead + length + 3) / 4;
  if (ldw > MAX_DW) return punt(ctx, st, idx);  // cannot be: one line of at most 4096 bytes
  const __u32 pkt_len = MIN_PKT + 4 * ldw;
  const __u32 frame_len = PKT_OFF + pkt_len;

  // The record first: a sequence taken must be recorded, or the stream
  // would wait for a packet the emulator never heard of. The packet is
  // built there (Encode) and copied into the frame once it has its sequence.
  struct ipnuma_tx_record *rec = bpf_ringbuf_reserve(&tx_sent, sizeof *rec, 0);
  if (!rec) return punt(ctx, st, idx);
  __u8 *p = rec->packet;
  // Lengths as masks bound them, so the verifier sees the bounds on the
  // registers the calls take (a test on a copy, or against 0 on kernel 6.1,
  // is lost to it). Each mask keeps the value: length <= 4096, ldw <= 1024.
  const __u64 at = HDR_BYTES + (lead & 3), n = ((length - 1) & (IPNUMA_DOORBELL_MAX_DATA - 1)) + 1;
  const __u64 last_dw = HDR_BYTES + 4 * ((ldw - 1) & (MAX_DW - 1)), plen = last_dw + 8;
  // The zeros around the data in its first and last DW, then the data over them.
  *(__u32 *)(p + HDR_BYTES) = 0;
  *(__u32 *)(p + last_dw) = 0;
  if (bpf_xdp_load_bytes(ctx, DB_BYTES, p + at, n) != 0) {
    bpf_ringbuf_discard(rec, 0);
    return punt(ctx, st, idx);
  }
  *(__u32 *)(p + last_dw + 4) = bpf_htonl(END_CODE);
  *(__u32 *)p = bpf_htonl(MAGIC);
  p[4] = 1;
  p[5] = T_WRITE;
  p[6] = 0;
  p[7] = 0;
  *(__u16 *)(p + 10) = 0;
  *(__u32 *)(p + 16) = 0;
  const __u32 len_field = ldw == MAX_DW ? 0 : ldw;
  const __u32 last = (lead + length - 1) & 3;  // the last byte inside its DW
  __u8 fbe = (0xf << lead) & 0xf, lbe = 0xf >> (3 - last);
  if (ldw == 1) {
    fbe &= lbe;
    lbe = 0;
  }
  __u8 *tlp = p + OFF_TLP;
  tlp[0] = FMT_MWR64;
  tlp[1] = 0;
  tlp[2] = (__u8)(len_field >> 8);
  tlp[3] = (__u8)len_field;
  *(__u16 *)(tlp + 4) = 0;
  tlp[6] = 0;
  tlp[7] = (__u8)((lbe << 4) | fbe);
  *(__u64 *)(tlp + 8) = bpf_cpu_to_be64(remote & ~3ULL);

  // The frame to the WRITE's length, at the front: a frame from a socket
  // may have no room behind its end (veth's native mode keeps such an skb's
  // buffer), while every XDP frame has headroom. Undone if no sequence is had.
  const int grow = (int)frame_len - (int)(e - d);
  if ((grow > 0 ? bpf_xdp_adjust_head(ctx, -grow) : bpf_xdp_adjust_tail(ctx, grow)) != 0) {
    bpf_ringbuf_discard(rec, 0);
    return punt(ctx, st, idx);
  }
  int got = 0;
  for (int i = 0; i < SEQ_TRIES && got == 0; i++) {
    w = *(volatile __u64 *)&st->word;
    if (!(w & IPNUMA_TX_KERNEL) || (__s32)(*(volatile __u32 *)&st->limit - (__u32)w) <= 0) break;
    const __u64 next = (w & ~IPNUMA_TX_SEQ_MASK) | (__u32)((__u32)w + 1);
    if (__sync_val_compare_and_swap(&st->word, w, next) == w) got = 1;
  }
  if (!got) {
    if (grow > 0) {
      bpf_xdp_adjust_head(ctx, grow);
    } else {
      bpf_xdp_adjust_tail(ctx, -grow);
    }
    bpf_ringbuf_discard(rec, 0);
    return punt(ctx, st, idx);
  }
  const __u16 epoch = (__u16)(w >> IPNUMA_TX_EPOCH_SHIFT);
  const __u32 seq = (__u32)w;
  *(__u16 *)(p + 8) = bpf_htons(epoch);
  *(__u32 *)(p + 12) = bpf_htonl(seq);
  rec->client = client;
  rec->slot = idx;
  rec->dst_ip = dst_ip;
  rec->pcid = (__u16)pcid;
  __builtin_memcpy(rec->dst_mac, dst_mac, 6);
  rec->bar2_offset = offset;
  rec->bytes = length;
  rec->packet_len = pkt_len;

  // The frame (BuildUdpFrame around the packet). Its length was made
  // frame_len above, so these checks are the verifier's.
  d = (void *)(long)ctx->data;
  e = (void *)(long)ctx->data_end;
  if (d + PKT_OFF > e || bpf_xdp_store_bytes(ctx, PKT_OFF, p, plen) != 0) {
    // The sequence is taken: the record goes out, and the emulator's
    // retransmission sends the packet, as after a loss on the wire.
    bpf_ringbuf_submit(rec, 0);
    return XDP_DROP;
  }
  __u8 *ip = d + ETH_BYTES, *udp = ip + IP_BYTES;
  const __u16 port = *(volatile __u16 *)(b0 + OFF_UDP_PORT);  // little-endian register
  const __u32 src_ip = *(volatile __u32 *)(b0 + OFF_LOCAL_IP);
  __builtin_memcpy(d, dst_mac, 6);
  __builtin_memcpy(d + 6, b0 + OFF_LOCAL_MAC, 6);
  *(__u16 *)(d + 12) = bpf_htons(0x0800);
  ip[0] = 0x45;
  ip[1] = 0;
  *(__u16 *)(ip + 2) = bpf_htons((__u16)(IP_BYTES + UDP_BYTES + pkt_len));
  *(__u16 *)(ip + 4) = bpf_htons((__u16)seq);  // informational with DF set
  *(__u16 *)(ip + 6) = bpf_htons(0x4000);
  ip[8] = 64;
  ip[9] = 17;
  *(__u16 *)(ip + 10) = 0;
  *(__u32 *)(ip + 12) = src_ip;
  *(__u32 *)(ip + 16) = dst_ip;
  __u64 s = 0;
  for (int i = 0; i < 5; i++) s += *(__u32 *)(ip + 4 * i);
  *(__u16 *)(ip + 10) = ~fold(s);
  *(__u16 *)udp = bpf_htons(port);
  *(__u16 *)(udp + 2) = bpf_htons(port);
  *(__u16 *)(udp + 4) = bpf_htons((__u16)(UDP_BYTES + pkt_len));
  *(__u16 *)(udp + 6) = 0;

  // The UDP checksum over the datagram (0 would mean "no checksum").
  const __u32 udp_len = UDP_BYTES + pkt_len;
  s = (__u64)src_ip + dst_ip + bpf_htons(17) + bpf_htons((__u16)udp_len);
  struct sum_walk sw = {.ctx = ctx, .udp_len = udp_len, .sum = s};
  bpf_loop((UDP_BYTES + MIN_PKT + 4 * MAX_DW) / (4 * WORDS_PER_STEP) + 1, sum_step, &sw, 0);
  __u16 sum = ~fold(sw.sum);
  d = (void *)(long)ctx->data;
  e = (void *)(long)ctx->data_end;
  if (sw.short_frame || d + PKT_OFF > e) {
    bpf_ringbuf_submit(rec, 0);
    return XDP_DROP;
  }
  *(__u16 *)(d + ETH_BYTES + IP_BYTES + 6) = sum ? sum : 0xffff;

  // Wakes nobody: the emulator takes records every round (at least every
  // millisecond while it holds none of them), and a process woken per store
  // would take the core from the very program waiting for the answer.
  bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
  __sync_fetch_and_add((__u64 *)(b0 + OFF_COUNTERS + 8 * C_TX_WRITES), 1);
  return bpf_redirect(cfg->wire_ifindex, 0);
}

char LICENSE[] SEC("license") = "GPL";
