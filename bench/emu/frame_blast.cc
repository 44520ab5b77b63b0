// emu_frame_blast: offers UDP/IPv4 frames to an interface as fast as one
// core can (AF_PACKET, sendmmsg batches of 64) for a while and prints how
// many it sent. bench/emu/run.sh drives the kernel's forwarding and
// fibnic-emu's with it.
//
//   emu_frame_blast IFACE DST_MAC SRC_MAC DST_IP FRAME_BYTES SECONDS
//   (FRAME_BYTES counts the FCS the wire would add, as Ethernet sizes do)
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/emu/udp_frame.h"

int main(int argc, char** argv) {
  uint8_t dst[6], src[6];
  in_addr ip_dst{};
  if (argc != 7 || !emu_bench::ParseMac(argv[2], dst) || !emu_bench::ParseMac(argv[3], src) ||
      inet_pton(AF_INET, argv[4], &ip_dst) != 1) {
    std::fprintf(stderr, "usage: emu_frame_blast IFACE DST_MAC SRC_MAC DST_IP FRAME_BYTES SECONDS\n");
    return 2;
  }
  const long bytes = std::atol(argv[5]);
  const double seconds = std::atof(argv[6]);
  if (bytes < 64 || bytes > 1518 || seconds <= 0) {
    std::fprintf(stderr, "emu_frame_blast: FRAME_BYTES must be 64..1518 and SECONDS > 0\n");
    return 2;
  }
  const unsigned index = if_nametoindex(argv[1]);
  if (index == 0) {
    std::fprintf(stderr, "emu_frame_blast: no interface '%s'\n", argv[1]);
    return 1;
  }
  const int fd = socket(AF_PACKET, SOCK_RAW, 0);  // protocol 0: transmit only
  sockaddr_ll addr{};
  addr.sll_family = AF_PACKET;
  addr.sll_ifindex = static_cast<int>(index);
  const int one = 1;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one) != 0) {
    std::fprintf(stderr, "emu_frame_blast: packet socket on %s: %s\n", argv[1], std::strerror(errno));
    return 1;
  }
  std::vector<uint8_t> frame = emu_bench::Frame(dst, src, ip_dst, static_cast<size_t>(bytes - 4));
  constexpr size_t kBatch = 64;
  std::array<iovec, kBatch> iov{};
  std::array<mmsghdr, kBatch> msgs{};
  for (size_t i = 0; i < kBatch; ++i) {
    iov[i] = iovec{frame.data(), frame.size()};
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  unsigned long long sent = 0;
  while (std::chrono::steady_clock::now() < end) {
    const int n = sendmmsg(fd, msgs.data(), kBatch, 0);
    if (n > 0) sent += static_cast<unsigned>(n);
    else if (errno != ENOBUFS && errno != EAGAIN && errno != EINTR) {
      std::fprintf(stderr, "emu_frame_blast: sendmmsg on %s: %s\n", argv[1], std::strerror(errno));
      return 1;
    }
  }
  close(fd);
  std::printf("%llu\n", sent);
  return 0;
}
