// The two ends of each measurement of bench/ipnuma/run.sh, one process per
// host (network namespace). The side that times prints one JSON line.
//
// Ping-pong, 4 bytes, the thesis's method (§4.3): the pinger stores a
// sequence number into the peer's memory and waits until the peer's answer
// lands in its own; the ponger waits for each number and stores it back.
//   ipnuma_bench ipnuma-ping|ipnuma-pong PAGES_FILE TX_OFFSET POOL_FILE RX_OFFSET N [OPTION...]
//       a store is libipnuma's at BAR2 TX_OFFSET, which pages map onto the
//       peer's export; the answer is polled in this host's memory (its pool
//       file) at RX_OFFSET, where the peer's NIC writes it. Options:
//         posted  ipnuma_write_posted, as a CPU store is (one flush at the
//                 end checks them all); else ipnuma_write, acknowledged
//         yield   give the core away between looks at memory (for a
//                 machine with fewer cores than busy processes); else spin
//         busy    the acknowledged write's answer is busy-polled
//   ipnuma_bench udp-ping|tcp-ping ADDR PORT N [spin]   (udp-pong|tcp-pong PORT N [spin])
//       the same through sockets: blocking send/recv, TCP with TCP_NODELAY;
//       spin (UDP): non-blocking receive asked again at once, no sleep.
// Each ping prints {"n", "median_us", "mean_us", "p99_us", "min_us", "max_us"}
// over N timed round trips after N/10 (at most 1000) untimed ones.
//
// Write throughput, SIZE bytes per write, until BYTES are in the peer's memory:
//   ipnuma_bench ipnuma-stream PAGES_FILE TX_OFFSET SPAN SIZE BYTES [posted]
//       ipnuma_write after ipnuma_write over [TX_OFFSET, TX_OFFSET+SPAN):
//       each returns once the peer's NIC acknowledged it (in its memory);
//       posted: ipnuma_write_posted, and one ipnuma_flush at the end.
//   ipnuma_bench tcp-stream ADDR PORT SIZE BYTES    (tcp-sink PORT)
//       send() of SIZE bytes each; the sink answers one byte once it has all
//       BYTES, so both end when the data is in the peer's memory.
// Each prints {"size", "bytes", "seconds", "mb_per_s", "writes_per_s"}.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "ipnuma/emu_nic.h"

#include "ipnuma/client.h"

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void Die(const std::string& why) {
  std::fprintf(stderr, "ipnuma_bench: %s\n", why.c_str());
  std::exit(1);
}

[[noreturn]] void DieErrno(const std::string& what) { Die(what + ": " + std::strerror(errno)); }

uint64_t Num(const char* s) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s, &end, 0);
  if (*s == '\0' || *end != '\0' || errno != 0) Die(std::string("'") + s + "' is not a number");
  return v;
}

double Us(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

double Median(std::vector<double>& v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// store: how long each round trip's store call took (IP-NUMA), else empty.
void PrintLatency(std::vector<double>& rtt, std::vector<double> store = {}) {
  std::sort(rtt.begin(), rtt.end());
  const size_t n = rtt.size();
  const double mean = std::accumulate(rtt.begin(), rtt.end(), 0.0) / static_cast<double>(n);
  std::printf("{\"n\": %zu, \"median_us\": %.3f, \"mean_us\": %.3f, \"p99_us\": %.3f, \"min_us\": %.3f, "
              "\"max_us\": %.3f, \"store_median_us\": %.3f}\n",
              n, rtt[n / 2], mean, rtt[std::min(n - 1, n * 99 / 100)], rtt.front(), rtt.back(), Median(store));
}

void PrintThroughput(uint64_t size, uint64_t bytes, Clock::duration d) {
  const double s = std::chrono::duration<double>(d).count();
  std::printf("{\"size\": %llu, \"bytes\": %llu, \"seconds\": %.3f, \"mb_per_s\": %.1f, \"writes_per_s\": %.0f}\n",
              static_cast<unsigned long long>(size), static_cast<unsigned long long>(bytes), s,
              static_cast<double>(bytes) / s / 1e6, static_cast<double>(bytes / size) / s);
}

// Untimed round trips first: page faults, the emulators' and the kernel's
// first-time paths, and the scheduler settling.
size_t Warmup(size_t n) { return std::min<size_t>(1000, n / 10); }

// ---- IP-NUMA

struct Mapped {
  volatile uint32_t* word = nullptr;
};

// The 4-byte word at `offset` of this host's memory (the pool the NIC writes
// received stores into: a file, or a BPF map pinned on a bpffs when the
// kernel receive path writes it), mapped shared so the NIC's writes show.
Mapped MapWord(const char* pool, uint64_t offset) {
  auto r = fibnic::ipnuma::MappedFile::Open(pool);
  if (!r.ok()) Die(r.status().ToString());
  if (offset + 4 > (*r)->size() || offset % 4 != 0) Die(std::string(pool) + ": offset outside the pool or not 4-byte aligned");
  // The mapping lives as long as the process.
  static std::vector<std::unique_ptr<fibnic::ipnuma::MappedFile>> regions;
  regions.push_back(std::move(r).value());
  return {reinterpret_cast<volatile uint32_t*>(regions.back()->data() + offset)};
}

struct PingOptions {
  bool posted = false, yield = false;
};

void AwaitWord(const Mapped& m, uint32_t want, const PingOptions& o) {
  while (__atomic_load_n(m.word, __ATOMIC_ACQUIRE) != want) {
    if (o.yield) sched_yield();
    else __builtin_ia32_pause();
  }
}

void Check(ipnuma_client* c, const char* what, int rc) {
  if (rc != 0) Die(std::string(what) + ": " + std::strerror(-rc) + ": " + ipnuma_last_error(c));
}

void Store(ipnuma_client* c, uint64_t offset, uint32_t v, const PingOptions& o) {
  if (o.posted) Check(c, "ipnuma_write_posted", ipnuma_write_posted(c, offset, &v, sizeof v));
  else Check(c, "ipnuma_write", ipnuma_write(c, offset, &v, sizeof v));
}

ipnuma_client* OpenClient(const char* pages) {
  ipnuma_client* c = ipnuma_open(pages, nullptr);
  if (c == nullptr) DieErrno(std::string("ipnuma_open ") + pages);
  return c;
}

int IpnumaPingPong(bool ping, char** a, int extra) {
  ipnuma_client* c = OpenClient(a[0]);
  const uint64_t tx = Num(a[1]);
  const Mapped rx = MapWord(a[2], Num(a[3]));
  const size_t n = Num(a[4]);
  PingOptions o;
  for (int i = 0; i < extra; ++i) {
    const std::string opt = a[5 + i];
    if (opt == "posted") o.posted = true;
    else if (opt == "yield") o.yield = true;
    else if (opt == "busy") ipnuma_set_busy_poll(c, 1);
    else if (opt != "spin" && opt != "acked") Die("unknown option " + opt);
  }
  // Our own memory starts at 0: a number left from an earlier run would be
  // taken for an answer. The ponger clears before saying it is ready, the
  // pinger before its first store.
  __atomic_store_n(rx.word, 0u, __ATOMIC_RELEASE);
  const size_t warm = Warmup(n), total = warm + n;
  std::vector<double> rtt, store;
  rtt.reserve(n);
  store.reserve(n);
  if (!ping) {
    std::printf("ready\n");
    std::fflush(stdout);
  }
  for (size_t i = 0; i < total; ++i) {
    const uint32_t seq = static_cast<uint32_t>(i + 1);
    if (ping) {
      const auto t0 = Clock::now();
      Store(c, tx, seq, o);
      const auto t1 = Clock::now();
      AwaitWord(rx, seq, o);
      if (i >= warm) {
        rtt.push_back(Us(Clock::now() - t0));
        store.push_back(Us(t1 - t0));
      }
    } else {
      AwaitWord(rx, seq, o);
      Store(c, tx, seq, o);
    }
  }
  Check(c, "ipnuma_flush", ipnuma_flush(c));
  if (ping) PrintLatency(rtt, std::move(store));
  ipnuma_close(c);
  return 0;
}

int IpnumaStream(char** a, bool posted) {
  ipnuma_client* c = OpenClient(a[0]);
  const uint64_t base = Num(a[1]), span = Num(a[2]), size = Num(a[3]), bytes = Num(a[4]);

  if (size == 0 || size > span) Die("SIZE must be 1..SPAN");
  std::vector<uint8_t> buf(size);
  for (size_t i = 0; i < size; ++i) buf[i] = static_cast<uint8_t>(i * 7 + 1);
  const uint64_t writes = bytes / size;
  uint64_t off = 0;
  const auto t0 = Clock::now();
  for (uint64_t i = 0; i < writes; ++i) {
    if (off + size > span) off = 0;
    if (posted) Check(c, "ipnuma_write_posted", ipnuma_write_posted(c, base + off, buf.data(), size));
    else Check(c, "ipnuma_write", ipnuma_write(c, base + off, buf.data(), size));
    off += size;
  }
  Check(c, "ipnuma_flush", ipnuma_flush(c));
  PrintThroughput(size, writes * size, Clock::now() - t0);
  ipnuma_close(c);
  return 0;
}

// ---- sockets

sockaddr_in Addr(const char* ip, uint64_t port) {
  sockaddr_in s{};
  s.sin_family = AF_INET;
  s.sin_port = htons(static_cast<uint16_t>(port));
  if (ip != nullptr && ::inet_pton(AF_INET, ip, &s.sin_addr) != 1) Die(std::string("bad IPv4 address ") + ip);
  return s;
}

int Socket(int type) {
  const int fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
  if (fd < 0) DieErrno("socket");
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (type == SOCK_STREAM && ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) {
    DieErrno("TCP_NODELAY");
  }
  return fd;
}

void Bind(int fd, uint64_t port) {
  const sockaddr_in s = Addr(nullptr, port);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&s), sizeof s) != 0) DieErrno("bind");
}

void Connect(int fd, const char* ip, uint64_t port) {
  const sockaddr_in s = Addr(ip, port);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&s), sizeof s) != 0) DieErrno("connect");
}

// A TCP listener on PORT: says "ready", takes one connection.
int AcceptOne(uint64_t port) {
  const int l = Socket(SOCK_STREAM);
  Bind(l, port);
  if (::listen(l, 1) != 0) DieErrno("listen");
  std::printf("ready\n");
  std::fflush(stdout);
  const int fd = ::accept4(l, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) DieErrno("accept");
  ::close(l);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

void SendAll(int fd, const void* p, size_t len) {
  const auto* b = static_cast<const uint8_t*>(p);
  while (len > 0) {
    const ssize_t n = ::send(fd, b, len, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) DieErrno("send");
    b += n;
    len -= static_cast<size_t>(n);
  }
}

// Receives exactly len bytes (TCP) or one datagram of len bytes (UDP);
// spin: asks again at once instead of sleeping until data comes.
void RecvAll(int fd, void* p, size_t len, bool spin = false) {
  auto* b = static_cast<uint8_t*>(p);
  while (len > 0) {
    const ssize_t n = ::recv(fd, b, len, spin ? MSG_DONTWAIT : 0);
    if (n < 0 && (errno == EINTR || (spin && errno == EAGAIN))) continue;
    if (n <= 0) Die(n == 0 ? "peer closed" : std::string("recv: ") + std::strerror(errno));
    b += n;
    len -= static_cast<size_t>(n);
  }
}

int SocketPingPong(int fd, bool ping, size_t n, bool spin = false) {
  const size_t warm = Warmup(n), total = warm + n;
  std::vector<double> rtt;
  rtt.reserve(n);
  for (size_t i = 0; i < total; ++i) {
    uint32_t seq = static_cast<uint32_t>(i + 1), got = 0;
    if (ping) {
      const auto t0 = Clock::now();
      SendAll(fd, &seq, sizeof seq);
      RecvAll(fd, &got, sizeof got, spin);
      if (i >= warm) rtt.push_back(Us(Clock::now() - t0));
    } else {
      RecvAll(fd, &got, sizeof got, spin);
      SendAll(fd, &got, sizeof got);
    }
    if (got != seq) Die("ping-pong out of step: sent " + std::to_string(seq) + ", got " + std::to_string(got));
  }
  if (ping) PrintLatency(rtt);
  ::close(fd);
  return 0;
}

int UdpPing(const char* ip, uint64_t port, size_t n, bool spin) {
  const int fd = Socket(SOCK_DGRAM);
  Connect(fd, ip, port);
  return SocketPingPong(fd, true, n, spin);
}

int UdpPong(uint64_t port, size_t n, bool spin) {
  const int fd = Socket(SOCK_DGRAM);
  Bind(fd, port);
  std::printf("ready\n");
  std::fflush(stdout);
  // The first datagram names the pinger: answers go back to it.
  uint32_t first = 0;
  sockaddr_in from{};
  socklen_t from_len = sizeof from;
  if (::recvfrom(fd, &first, sizeof first, 0, reinterpret_cast<sockaddr*>(&from), &from_len) != sizeof first) {
    DieErrno("recvfrom");
  }
  if (::connect(fd, reinterpret_cast<sockaddr*>(&from), from_len) != 0) DieErrno("connect");
  SendAll(fd, &first, sizeof first);
  const size_t total = Warmup(n) + n;
  for (size_t i = 1; i < total; ++i) {
    uint32_t v = 0;
    RecvAll(fd, &v, sizeof v, spin);
    SendAll(fd, &v, sizeof v);
  }
  ::close(fd);
  return 0;
}

int TcpStream(const char* ip, uint64_t port, uint64_t size, uint64_t bytes) {
  const int fd = Socket(SOCK_STREAM);
  // Streaming: Nagle may merge writes, as it would for any program writing
  // a stream; the round trip measurements turn it off.
  const int zero = 0;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &zero, sizeof zero);
  Connect(fd, ip, port);
  std::vector<uint8_t> buf(size, 0x5a);
  const uint64_t writes = bytes / size;
  const uint64_t total = writes * size;
  SendAll(fd, &total, sizeof total);
  const auto t0 = Clock::now();
  for (uint64_t i = 0; i < writes; ++i) SendAll(fd, buf.data(), size);
  uint8_t done = 0;
  RecvAll(fd, &done, 1);
  PrintThroughput(size, total, Clock::now() - t0);
  ::close(fd);
  return 0;
}

int TcpSink(uint64_t port) {
  const int fd = AcceptOne(port);
  uint64_t total = 0;
  RecvAll(fd, &total, sizeof total);
  std::vector<uint8_t> buf(1 << 20);
  for (uint64_t got = 0; got < total;) {
    const ssize_t n = ::recv(fd, buf.data(), std::min<uint64_t>(buf.size(), total - got), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) Die("tcp-sink: stream ended early");
    got += static_cast<uint64_t>(n);
  }
  const uint8_t done = 1;
  SendAll(fd, &done, 1);
  ::close(fd);
  return 0;
}

[[noreturn]] void Usage() {
  std::fprintf(stderr,
               "usage: ipnuma_bench ipnuma-ping|ipnuma-pong PAGES_FILE TX_OFFSET POOL_FILE RX_OFFSET N "
               "[posted] [yield] [busy]\n"
               "       ipnuma_bench ipnuma-stream PAGES_FILE TX_OFFSET SPAN SIZE BYTES [posted]\n"
               "       ipnuma_bench udp-ping|tcp-ping ADDR PORT N [spin] | udp-pong|tcp-pong PORT N [spin]\n"
               "       ipnuma_bench tcp-stream ADDR PORT SIZE BYTES | tcp-sink PORT\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) Usage();
  const std::string mode = argv[1];
  char** a = argv + 2;
  const int n = argc - 2;
  if ((mode == "ipnuma-ping" || mode == "ipnuma-pong") && n >= 5) {
    return IpnumaPingPong(mode == "ipnuma-ping", a, n - 5);
  }
  if (mode == "ipnuma-stream" && (n == 5 || (n == 6 && std::string(a[5]) == "posted"))) return IpnumaStream(a, n == 6);
  const bool spin = n > 0 && std::string(a[n - 1]) == "spin";
  if (mode == "udp-ping" && n == 3 + spin) return UdpPing(a[0], Num(a[1]), Num(a[2]), spin);
  if (mode == "udp-pong" && n == 2 + spin) return UdpPong(Num(a[0]), Num(a[1]), spin);
  if (mode == "tcp-ping" && n == 3) {
    const int fd = Socket(SOCK_STREAM);
    Connect(fd, a[0], Num(a[1]));
    return SocketPingPong(fd, true, Num(a[2]));
  }
  if (mode == "tcp-pong" && n == 2) return SocketPingPong(AcceptOne(Num(a[0])), false, Num(a[1]));
  if (mode == "tcp-stream" && n == 4) return TcpStream(a[0], Num(a[1]), Num(a[2]), Num(a[3]));
  if (mode == "tcp-sink" && n == 1) return TcpSink(Num(a[0]));
  Usage();
}
