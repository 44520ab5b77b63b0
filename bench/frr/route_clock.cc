// route_clock BAR_FILE PROTOCOL — the clock of bench/frr's and bench/bird's
// watch (route_watch.py): stamps each kernel route event of PROTOCOL (an
// rtm_protocol number) and each next-hop object event as it is read, and
// each change of the device's GENERATION (read from the BAR file every
// millisecond or so). Run in the router's namespace.
//
// Why not the watch's own Python: a routing daemon deletes or installs a
// table at about 100k routes a second, faster than a Python reader parses, and
// a reader that falls behind stamps a change late — or ages a misforward from
// an older change of a covering route while the destination's own event is
// still unread. This reader keeps up, on a thread of its own.
//
// Requests on stdin, one a line; one answer line each (times are
// CLOCK_MONOTONIC seconds, Python's time.monotonic()):
//   "state"          → kernel_last device_last events overruns busy_max busy_last
//                      ("-" for a time not yet seen; busy: the longest run
//                      of reads that found more waiting, and the run that
//                      read the last change — how late a stamp can be)
//   "sample N"       → up to N first addresses of changed routes, at random
//   "age T ADDR ..." → per address, when the kernel last changed a route
//                      covering it (any length) or any next-hop object, as of
//                      time T: a stamp after T gives way to the one before
//                      it; "?" when both came after T; 0 when none
//   "gen_time G"     → when GENERATION was first seen at G or past it ("-":
//                      not yet); with fibnicd's safe_generation, when the
//                      device was right for everything it had been handed,
//                      before the IPv6 entry choice's writes that followed
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/mapped_region.h"
#include "device/fibnic_regs.h"

namespace {

#ifndef RTNLGRP_NEXTHOP
constexpr int RTNLGRP_NEXTHOP = 32;
#endif
#ifndef RTM_NEWNEXTHOP
constexpr int RTM_NEWNEXTHOP = 104;
constexpr int RTM_DELNEXTHOP = 105;
#endif

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// A route's destination: family, length and the address (IPv4 in the first 4 bytes).
struct Key {
  uint8_t family = 0, len = 0;
  std::array<uint8_t, 16> addr{};
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    uint64_t a, b;
    std::memcpy(&a, k.addr.data(), 8);
    std::memcpy(&b, k.addr.data() + 8, 8);
    return std::hash<uint64_t>()(a * 0x9E3779B97F4A7C15ull ^ b ^ (uint64_t{k.family} << 8 | k.len));
  }
};
// Latest stamp and the one before it.
struct Stamps {
  double last = 0, before = 0;
  void Set(double t) {
    before = last;
    last = t;
  }
  // As of t: the latest at or before it; -1 when both came after.
  double AsOf(double t) const { return last <= t ? last : before <= t ? before : -1; }
};

struct Clock {
  std::mutex mu;
  std::unordered_map<Key, Stamps, KeyHash> spans;
  Stamps objects;  // any next-hop object: it moves every route using it
  std::unordered_set<Key, KeyHash> seen;  // first addresses (len 0) of changed routes
  std::vector<Key> addrs;                  // the same, for sampling
  double kernel_last = -1, device_last = -1, busy_max = 0, busy_last = 0;
  std::vector<std::pair<uint32_t, double>> generations;  // each GENERATION seen, when
  uint64_t events = 0, overruns = 0;
};

void Stamp(Clock& c, const nlmsghdr* h, int proto, double t) {
  if (h->nlmsg_type == RTM_NEWNEXTHOP || h->nlmsg_type == RTM_DELNEXTHOP) {
    c.objects.Set(t);
    c.kernel_last = t;
    return;
  }
  if (h->nlmsg_type != RTM_NEWROUTE && h->nlmsg_type != RTM_DELROUTE) return;
  if (h->nlmsg_len < NLMSG_LENGTH(sizeof(rtmsg))) return;
  const auto* rt = static_cast<const rtmsg*>(NLMSG_DATA(h));
  if (rt->rtm_protocol != proto) return;
  ++c.events;
  c.kernel_last = t;
  Key k;
  k.family = rt->rtm_family;
  k.len = rt->rtm_dst_len;
  const size_t alen = rt->rtm_family == AF_INET6 ? 16 : 4;
  int left = static_cast<int>(RTM_PAYLOAD(h));
  for (const rtattr* a = RTM_RTA(rt); RTA_OK(a, left); a = RTA_NEXT(a, left)) {
    if (a->rta_type == RTA_DST && RTA_PAYLOAD(a) >= alen) std::memcpy(k.addr.data(), RTA_DATA(a), alen);
  }
  c.spans[k].Set(t);
  Key first = k;
  first.len = 0;
  if (c.seen.insert(first).second) c.addrs.push_back(first);
}

// GENERATION as the BAR holds it now (a load from the pages the host's
// mapping writes: a BAR file, or the BAR map on a bpffs).
uint32_t Generation(const fibnic::MappedRegion& bar) { return bar.Read32(fibnic::regs::kOffGeneration); }

void Read(Clock& c, int fd, int proto, const fibnic::MappedRegion& bar, std::atomic<bool>& stop) {
  std::vector<uint8_t> buf(1 << 20);
  uint32_t gen = Generation(bar);
  while (!stop) {
    pollfd p{fd, POLLIN, 0};
    poll(&p, 1, 1);
    const double t0 = Now();
    bool read_any = false, got_last = false;
    for (;;) {
      const ssize_t n = recv(fd, buf.data(), buf.size(), MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == ENOBUFS) {
          std::lock_guard<std::mutex> lock(c.mu);
          ++c.overruns;
          continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
          std::fprintf(stderr, "route_clock: netlink receive failed: %s; no more events stamped\n",
                       std::strerror(errno));
          stop = true;
        }
        break;  // caught up
      }
      const double t = Now();
      read_any = true;
      std::lock_guard<std::mutex> lock(c.mu);
      const double before = c.kernel_last;
      int left = static_cast<int>(n);
      for (auto* h = reinterpret_cast<const nlmsghdr*>(buf.data()); NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
        Stamp(c, h, proto, t);
      }
      got_last = got_last || c.kernel_last != before;
    }
    const uint32_t g = Generation(bar);
    std::lock_guard<std::mutex> lock(c.mu);
    if (read_any) {
      const double busy = Now() - t0;
      c.busy_max = std::max(c.busy_max, busy);
      if (got_last) c.busy_last = busy;
    }
    if (g != gen) {
      gen = g;
      c.device_last = Now();
      c.generations.emplace_back(g, c.device_last);
    }
  }
}

std::string Time(double t) {
  if (t < 0) return "-";
  char s[32];
  std::snprintf(s, sizeof s, "%.6f", t);
  return s;
}

std::string Addr(const Key& k) {
  char s[INET6_ADDRSTRLEN];
  inet_ntop(k.family, k.addr.data(), s, sizeof s);
  return s;
}

// The age request's answer for one address.
std::string AsOf(const Clock& c, const std::string& word, double t) {
  Key k;
  k.family = word.find(':') != std::string::npos ? AF_INET6 : AF_INET;
  if (inet_pton(k.family, word.c_str(), k.addr.data()) != 1) return "?";
  const int bits = k.family == AF_INET6 ? 128 : 32;
  double latest = c.objects.AsOf(t);
  if (latest < 0) return "?";
  for (int len = 0; len <= bits; ++len) {
    Key p = k;
    p.len = static_cast<uint8_t>(len);
    for (int i = 0; i < 16; ++i) {
      const int keep = std::clamp(len - 8 * i, 0, 8);
      p.addr[i] &= static_cast<uint8_t>(keep == 8 ? 0xFF : (0xFF00 >> keep) & 0xFF);
    }
    const auto it = c.spans.find(p);
    if (it == c.spans.end()) continue;
    const double s = it->second.AsOf(t);
    if (s < 0) return "?";
    latest = std::max(latest, s);
  }
  return Time(latest);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: route_clock BAR_FILE PROTOCOL\n");
    return 2;
  }
  auto bar = fibnic::MappedRegion::Open(argv[1]);
  if (!bar.ok() || bar->size() < fibnic::regs::kOffGeneration + 4) {
    std::fprintf(stderr, "route_clock: cannot read GENERATION from BAR image '%s'\n", argv[1]);
    return 1;
  }
  char* end = nullptr;
  const long proto = std::strtol(argv[2], &end, 10);
  if (end == argv[2] || *end != '\0' || proto < 0 || proto > 255) {
    std::fprintf(stderr, "route_clock: PROTOCOL '%s' is not an rtm_protocol number (0-255)\n", argv[2]);
    return 2;
  }
  const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  sockaddr_nl sa{};
  sa.nl_family = AF_NETLINK;
  sa.nl_groups = (1u << (RTNLGRP_IPV4_ROUTE - 1)) | (1u << (RTNLGRP_IPV6_ROUTE - 1));
  int rcvbuf = 256 << 20;  // a whole table arrives in bursts
  const int group = RTNLGRP_NEXTHOP;
  if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) != 0 ||
      bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
      setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof group) != 0) {
    std::fprintf(stderr, "route_clock: netlink socket: %s\n", std::strerror(errno));
    return 1;
  }
  Clock c;
  std::atomic<bool> stop{false};
  std::thread reader(Read, std::ref(c), fd, static_cast<int>(proto), std::cref(*bar), std::ref(stop));
  std::mt19937_64 rng(std::random_device{}());
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream words(line);
    std::string verb;
    words >> verb;
    std::string out;
    std::lock_guard<std::mutex> lock(c.mu);
    if (verb == "state") {
      out = Time(c.kernel_last) + ' ' + Time(c.device_last) + ' ' + std::to_string(c.events) + ' ' +
            std::to_string(c.overruns) + ' ' + Time(c.busy_max) + ' ' + Time(c.busy_last);
    } else if (verb == "sample") {
      size_t n = 0;
      words >> n;
      for (size_t i = 0; i < n && !c.addrs.empty(); ++i) {
        if (!out.empty()) out += ' ';
        out += Addr(c.addrs[rng() % c.addrs.size()]);
      }
    } else if (verb == "gen_time") {
      uint32_t g = 0;
      words >> g;
      out = "-";
      for (const auto& [seen, t] : c.generations) {
        if (static_cast<int32_t>(seen - g) >= 0) {  // GENERATION wraps
          out = Time(t);
          break;
        }
      }
    } else if (verb == "age") {
      double t = 0;
      words >> t;
      std::string word;
      while (words >> word) {
        if (!out.empty()) out += ' ';
        out += AsOf(c, word, t);
      }
    }
    std::cout << out << '\n' << std::flush;
  }
  stop = true;
  reader.join();
  return 0;
}
