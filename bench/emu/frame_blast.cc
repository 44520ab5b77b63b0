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

namespace {

bool ParseMac(const char* s, uint8_t* out) {
  unsigned b[6];
  if (std::sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6) return false;
  for (int i = 0; i < 6; ++i) out[i] = static_cast<uint8_t>(b[i]);
  return true;
}

uint16_t Checksum(const uint8_t* p, size_t n) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < n; i += 2) sum += (p[i] << 8) | p[i + 1];
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// Ethernet + IPv4 (TTL 64, valid checksum) + UDP (checksum 0: none).
std::vector<uint8_t> Frame(const uint8_t* dst, const uint8_t* src, in_addr ip_dst, size_t bytes) {
  std::vector<uint8_t> f(bytes, 0);
  std::memcpy(&f[0], dst, 6);
  std::memcpy(&f[6], src, 6);
  f[12] = 0x08;
  uint8_t* ip = &f[14];
  const size_t ip_len = bytes - 14;
  ip[0] = 0x45;
  ip[2] = static_cast<uint8_t>(ip_len >> 8);
  ip[3] = static_cast<uint8_t>(ip_len);
  ip[8] = 64;
  ip[9] = 17;
  const uint8_t ip_src[4] = {192, 0, 2, 1};
  std::memcpy(ip + 12, ip_src, 4);
  std::memcpy(ip + 16, &ip_dst, 4);
  const uint16_t c = Checksum(ip, 20);
  ip[10] = static_cast<uint8_t>(c >> 8);
  ip[11] = static_cast<uint8_t>(c);
  uint8_t* udp = ip + 20;
  udp[0] = 0x9c;  // ports 40000 -> 9 (discard)
  udp[1] = 0x40;
  udp[3] = 9;
  const size_t udp_len = ip_len - 20;
  udp[4] = static_cast<uint8_t>(udp_len >> 8);
  udp[5] = static_cast<uint8_t>(udp_len);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  uint8_t dst[6], src[6];
  in_addr ip_dst{};
  if (argc != 7 || !ParseMac(argv[2], dst) || !ParseMac(argv[3], src) || inet_pton(AF_INET, argv[4], &ip_dst) != 1) {
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
  std::vector<uint8_t> frame = Frame(dst, src, ip_dst, static_cast<size_t>(bytes - 4));
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
