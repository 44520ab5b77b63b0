// What the kernel-path tests of ipnuma-emu share: BPF page maps standing in
// for BAR0 and host memory, and raw sockets on the veth ends they watch.
#pragma once

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace fibnic::ipnuma {

// A BPF array map of page-sized values, mapped: BAR0 or host memory as the
// emulator shares them (hwif/bpf_bar.h).
struct PageMap {
  int fd = -1;
  uint8_t* data = nullptr;
  size_t size = 0;
  static std::optional<PageMap> Make(size_t bytes) {
    LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
    PageMap m;
    m.size = bytes;
    m.fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "test_pages", 4, 4096, static_cast<uint32_t>(bytes / 4096), &o);
    if (m.fd < 0) return std::nullopt;
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, m.fd, 0);
    if (p == MAP_FAILED) return std::nullopt;
    m.data = static_cast<uint8_t*>(p);
    return m;
  }
  void Close() {
    if (data != nullptr) munmap(data, size);
    if (fd >= 0) close(fd);
  }
};

// Every frame on ifname but the ones this host sends itself.
inline int RawSocket(const char* ifname) {
  const int s = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
  if (s < 0) return -1;
  sockaddr_ll a{};
  a.sll_family = AF_PACKET;
  a.sll_protocol = htons(ETH_P_ALL);
  a.sll_ifindex = static_cast<int>(if_nametoindex(ifname));
  int one = 1;
  setsockopt(s, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
  if (bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return -1;
  return s;
}

// The next frame on s that `want` accepts, within timeout.
inline std::optional<std::vector<uint8_t>> Receive(int s, const std::function<bool(const std::vector<uint8_t>&)>& want,
                                                   int timeout_ms) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::vector<uint8_t> buf(9000);
  for (;;) {
    const int left = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()).count());
    if (left < 0) return std::nullopt;
    pollfd p{s, POLLIN, 0};
    if (poll(&p, 1, left) <= 0) return std::nullopt;
    const ssize_t n = recv(s, buf.data(), buf.size(), MSG_DONTWAIT);
    if (n <= 0) continue;
    std::vector<uint8_t> f(buf.begin(), buf.begin() + n);
    if (want(f)) return f;
  }
}

}  // namespace fibnic::ipnuma
