// The traffic source of emu_xdp_frame_gen: run by BPF_PROG_RUN in live-frames
// mode over a frame the kernel keeps in page-pool pages, it sends each copy
// out of one interface (XDP_REDIRECT), as a NIC's driver would hand a
// received frame on.
//
// A page comes back to the pool with whatever the path behind the interface
// wrote into it (a forwarder's TTL and MAC rewrites), and the kernel copies
// the frame into a page only when the pool allocates it, not on reuse; so
// every run writes the headers again from the template in `config`.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

// The headers rewritten: Ethernet, IPv4, UDP (udp_frame.h's kUdpHeaders).
#define GEN_HEADERS 42

// Written once by emu_xdp_frame_gen before the first run.
struct gen_config {
  __u32 ifindex;
  __u32 pad;
  __u16 headers[GEN_HEADERS / 2];
};

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct gen_config);
} config SEC(".maps");

SEC("xdp")
int frame_gen(struct xdp_md *ctx) {
  __u16 *data = (__u16 *)(long)ctx->data;
  void *end = (void *)(long)ctx->data_end;
  __u32 key = 0;
  struct gen_config *c = bpf_map_lookup_elem(&config, &key);
  if (c == 0 || (void *)data + GEN_HEADERS > end) return XDP_ABORTED;
#pragma unroll
  for (int i = 0; i < GEN_HEADERS / 2; ++i) data[i] = c->headers[i];
  return bpf_redirect(c->ifindex, 0);
}

char LICENSE[] SEC("license") = "Proprietary";
