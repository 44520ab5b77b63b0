// The smallest XDP program: every frame passes on to the stack. Attached to
// the far end of a veth that fibnic-emu's XDP path redirects into (a peer's
// end of a wire), it gives that end the NAPI context a veth needs to receive
// redirected frames, without GRO's cost:
//   ip link set dev IF xdpdrv obj BUILD/emu/xdp/xdp_pass.bpf.o sec xdp
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_pass(struct xdp_md *ctx) {
  (void)ctx;
  return XDP_PASS;
}

char LICENSE[] SEC("license") = "Proprietary";
