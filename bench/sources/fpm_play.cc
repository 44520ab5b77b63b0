// Plays a route file (tools/make-routes) to an FPM listener as zebra's
// dplane_fpm_nl does with three BGP peers, one per gateway: the next-hop
// objects first, then one route per frame, each naming its gateway's object
// (or, with --inline, carrying the path). The connection stays open and
// stdin drives further phases, one command a line, "ok" on stdout when sent:
//   withdraw G   delete the routes of gateway G (that peer is lost)
//   announce G   send them again (it returns)
// End of stdin closes the connection. Ports are interfaces IFPREFIX<port>.
// fibnicd's offload replies are read and dropped, as FRR 8.4's zebra does: a
// peer that never reads would fill the socket, and fibnicd then re-walks
// every route at each quiet point to resend them — not the production path.
//   fpm_play ROUTES.txt HOST PORT [--inline] [--ifprefix h]
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sources/fpm/fpm_frame.h"
#include "sources/netlink/netlink_build.h"

namespace fibnic {
namespace {

struct FileRoute {
  Prefix prefix;
  IpAddr gateway;
  int port = 0;
  uint32_t nh_id = 0;  // the gateway's object (1-based, in order of first use)
};

[[noreturn]] void Die(const std::string& what) {
  std::cerr << "fpm_play: " << what << "\n";
  std::exit(1);
}

std::vector<FileRoute> ReadRoutes(const std::string& path) {
  std::vector<FileRoute> out;
  std::ifstream in(path);
  if (!in) Die("cannot read " + path);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    std::string p, gw;
    int port = -1;
    ss >> p >> gw >> port;
    auto pr = Prefix::Parse(p);
    auto g = IpAddr::Parse(gw);
    if (!pr.ok() || !g.ok() || port < 0) Die(path + ":" + std::to_string(lineno) + ": unusable route line '" + line + "'");
    out.push_back({*pr, *g, port, 0});
  }
  return out;
}

class Player {
 public:
  Player(int fd, std::string ifprefix, bool inline_paths)
      : fd_(fd), ifprefix_(std::move(ifprefix)), inline_(inline_paths) {}

  uint32_t Ifindex(int port) {
    const std::string name = ifprefix_ + std::to_string(port);
    const uint32_t i = if_nametoindex(name.c_str());
    if (i == 0) Die("no interface " + name);
    return i;
  }
  void Frame(const std::vector<uint8_t>& nl) {
    const auto f = EncodeFpmFrame(nl.data(), nl.size());
    buf_.insert(buf_.end(), f.begin(), f.end());
    if (buf_.size() >= (1 << 20)) Flush();
  }
  void Flush() {
    for (size_t off = 0; off < buf_.size();) {
      const ssize_t n = write(fd_, buf_.data() + off, buf_.size() - off);
      if (n <= 0) Die(std::string("write: ") + std::strerror(errno));
      off += static_cast<size_t>(n);
    }
    buf_.clear();
  }
  void Nexthop(uint32_t id, const FileRoute& r) {
    if (inline_) return;
    NlNexthop n;
    n.id = id;
    n.path.gateway = r.gateway;
    n.path.ifindex = Ifindex(r.port);
    Frame(BuildNexthopMessage(n));
  }
  void Route(const FileRoute& r, bool del) {
    NlRoute nr;
    nr.del = del;
    nr.prefix = r.prefix;
    nr.table = 254;
    nr.protocol = 186;  // bgp
    nr.type = 1;
    nr.priority = 20;
    if (!del) {
      if (inline_) {
        nr.paths.push_back(NlPath{r.gateway, Ifindex(r.port), 0, 1});
      } else {
        nr.nh_id = r.nh_id;
      }
    }
    Frame(BuildRouteMessage(nr));
  }

 private:
  int fd_;
  std::string ifprefix_;
  bool inline_;
  std::vector<uint8_t> buf_;
};

}  // namespace
}  // namespace fibnic

int main(int argc, char** argv) {
  using namespace fibnic;
  if (argc < 4) {
    std::cerr << "usage: fpm_play ROUTES.txt HOST PORT [--inline] [--ifprefix h]\n";
    return 2;
  }
  bool inline_paths = false;
  std::string ifprefix = "h";
  for (int i = 4; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--inline") {
      inline_paths = true;
    } else if (a == "--ifprefix" && i + 1 < argc) {
      ifprefix = argv[++i];
    } else {
      Die("unknown argument " + a);
    }
  }
  auto routes = ReadRoutes(argv[1]);
  std::map<std::string, uint32_t> nh_of;  // gateway text -> object id
  std::vector<std::string> gateways;       // by id - 1
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(std::stoi(argv[3])));
  if (inet_pton(AF_INET, argv[2], &sa.sin_addr) != 1) Die(std::string("bad host ") + argv[2]);
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) Die(std::string("connect: ") + std::strerror(errno));
  std::thread drain([fd] {
    uint8_t buf[65536];
    while (read(fd, buf, sizeof buf) > 0) {
    }
  });
  Player play(fd, ifprefix, inline_paths);
  for (auto& r : routes) {
    const std::string gw = r.gateway.ToString();
    auto [it, fresh] = nh_of.try_emplace(gw, static_cast<uint32_t>(nh_of.size() + 1));
    r.nh_id = it->second;
    if (fresh) {
      gateways.push_back(gw);
      play.Nexthop(r.nh_id, r);
    }
  }
  for (const auto& r : routes) play.Route(r, false);
  play.Flush();
  std::printf("ok %zu routes, %zu gateways\n", routes.size(), gateways.size());
  std::fflush(stdout);
  // A peer is its IPv4 gateway 10.G.0.1 and its IPv6 one (make-routes pairs them by index).
  std::string cmd;
  int g = 0;
  while (std::cin >> cmd >> g) {
    if (cmd != "withdraw" && cmd != "announce") Die("unknown command " + cmd);
    size_t n = 0;
    for (const auto& r : routes) {
      const bool v4 = r.prefix.family() == Family::kV4;
      const std::string want = v4 ? "10." + std::to_string(g) + ".0.1" : (g == 0 ? "fd00::1" : "fd00:" + std::to_string(g) + "::1");
      if (r.gateway.ToString() != want) continue;
      play.Route(r, cmd == "withdraw");
      ++n;
    }
    play.Flush();
    std::printf("ok %s %d: %zu routes\n", cmd.c_str(), g, n);
    std::fflush(stdout);
  }
  shutdown(fd, SHUT_RDWR);
  drain.join();
  close(fd);
  return 0;
}
