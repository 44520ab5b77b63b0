// emu_xdp_frame_gen: offers UDP/IPv4 frames to an interface the way a NIC's
// driver hands them on, for a while, and prints how many it offered. The
// kernel's XDP traffic generator does the work: BPF_PROG_RUN with
// BPF_F_TEST_XDP_LIVE_FRAMES runs xdp/frame_gen.bpf.c over the frame, which
// returns XDP_REDIRECT to IFACE. Each copy lives in a page-pool page with
// XDP's full headroom and enters IFACE as an xdp_frame (ndo_xdp_xmit): a
// veth puts it on its peer's ring and the peer's NAPI takes it from there,
// without a socket buffer until the peer's stack wants one. emu_frame_blast
// (AF_PACKET) offers the same frame as socket buffers with little headroom.
//
//   emu_xdp_frame_gen IFACE DST_MAC SRC_MAC DST_IP FRAME_BYTES SECONDS [BATCH]
//   (arguments as emu_frame_blast's; BATCH: frames per run of the program
//   between two flushes to IFACE, 1..256, default 64)
//
// How the kernel runs it (net/bpf/test_run.c): the calling thread, pinned to
// its CPU for the call, runs the program BATCH times with bottom halves off,
// then flushes the redirected frames to IFACE; a veth schedules its peer's
// NAPI on that CPU, so when bottom halves come back on, the same thread's
// softirq carries the batch through the peer and whatever forwards it. As
// with emu_frame_blast's sendmmsg, one core does all of a path's work, and
// the rate is that core's. A veth whose peer has no NAPI (no XDP program,
// GRO off) refuses the frames, and the kernel drops them uncounted (the
// redirect fails before the veth sees them): only the receiver's count shows
// it.
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <net/if.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/emu/frame_gen_object.h"  // generated from bench/emu/xdp/frame_gen.bpf.c
#include "bench/emu/udp_frame.h"

namespace {

// struct gen_config in xdp/frame_gen.bpf.c.
struct GenConfig {
  uint32_t ifindex;
  uint32_t pad;
  uint8_t headers[emu_bench::kUdpHeaders];
};
// The map's value size: 8 + 42 bytes, padded to the struct's 4-byte alignment.
static_assert(sizeof(GenConfig) == 52);

int Fail(const char* what) {
  std::fprintf(stderr, "emu_xdp_frame_gen: %s: %s\n", what, std::strerror(errno));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  uint8_t dst[6], src[6];
  in_addr ip_dst{};
  if ((argc != 7 && argc != 8) || !emu_bench::ParseMac(argv[2], dst) || !emu_bench::ParseMac(argv[3], src) ||
      inet_pton(AF_INET, argv[4], &ip_dst) != 1) {
    std::fprintf(stderr, "usage: emu_xdp_frame_gen IFACE DST_MAC SRC_MAC DST_IP FRAME_BYTES SECONDS [BATCH]\n");
    return 2;
  }
  const long bytes = std::atol(argv[5]);
  const double seconds = std::atof(argv[6]);
  const long batch = argc == 8 ? std::atol(argv[7]) : 64;
  if (bytes < 64 || bytes > 1518 || seconds <= 0 || batch < 1 || batch > 256) {
    std::fprintf(stderr, "emu_xdp_frame_gen: FRAME_BYTES must be 64..1518, SECONDS > 0, BATCH 1..256\n");
    return 2;
  }
  const std::string ifname = argv[1];
  const unsigned ifindex = if_nametoindex(ifname.c_str());
  if (ifindex == 0) {
    std::fprintf(stderr, "emu_xdp_frame_gen: no interface '%s'\n", ifname.c_str());
    return 1;
  }

  LIBBPF_OPTS(bpf_object_open_opts, open_opts, .object_name = "frame_gen");
  bpf_object* obj = bpf_object__open_mem(kFrameGenObject, sizeof kFrameGenObject, &open_opts);
  if (obj == nullptr) return Fail("cannot open the BPF object");
  if (bpf_object__load(obj) != 0) return Fail("the kernel refused the program (root needed)");
  bpf_program* prog = bpf_object__find_program_by_name(obj, "frame_gen");
  const int config_fd = bpf_object__find_map_fd_by_name(obj, "config");
  if (prog == nullptr || config_fd < 0) {
    std::fprintf(stderr, "emu_xdp_frame_gen: the BPF object lacks its program or map\n");
    return 1;
  }
  const std::vector<uint8_t> frame = emu_bench::Frame(dst, src, ip_dst, static_cast<size_t>(bytes - 4));
  GenConfig config{};
  config.ifindex = ifindex;
  std::memcpy(config.headers, frame.data(), sizeof config.headers);
  const uint32_t key = 0;
  if (bpf_map_update_elem(config_fd, &key, &config, BPF_ANY) != 0) return Fail("writing the program's config");

  LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = frame.data(), .data_size_in = static_cast<uint32_t>(frame.size()),
              .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = static_cast<uint32_t>(batch));
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  // Each call runs `repeat` frames without returning; the first is short, and
  // later ones last about 10 ms at the rate measured so far, and never much
  // past the end, so the run lasts SECONDS as emu_frame_blast's does.
  uint64_t sent = 0;
  double repeat = static_cast<double>(batch) * 16;
  for (auto now = start; now < end; now = Clock::now()) {
    run.repeat = static_cast<int>(repeat);
    if (bpf_prog_test_run_opts(bpf_program__fd(prog), &run) != 0) return Fail("BPF_PROG_RUN (live frames)");
    sent += static_cast<uint64_t>(run.repeat);
    const auto after = Clock::now();
    const double elapsed = std::chrono::duration<double>(after - start).count();
    const double rate = static_cast<double>(sent) / std::max(elapsed, 1e-6);
    const double left = std::chrono::duration<double>(end - after).count();
    repeat = std::clamp(std::min(rate * 0.01, rate * left), static_cast<double>(batch), double{1 << 22});
  }
  bpf_object__close(obj);
  std::printf("%llu\n", static_cast<unsigned long long>(sent));
  return 0;
}
