#include "tests/sources/frr_harness.h"

#include <unistd.h>

#include <fstream>

namespace fibnic::testing {
namespace {

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

const char* kPeerBgp = R"(hostname peer
router bgp 65002
 bgp router-id 10.99.0.2
 no bgp ebgp-requires-policy
 no bgp network import-check
 neighbor 10.99.0.1 remote-as 65001
 neighbor 10.99.0.1 timers 3 10
 neighbor 10.99.0.1 timers connect 1
 address-family ipv4 unicast
)";

const char* kRouterBgp = R"(hostname router
router bgp 65001
 bgp router-id 10.99.0.1
 no bgp ebgp-requires-policy
 neighbor 10.99.0.2 remote-as 65002
 neighbor 10.99.0.2 timers 3 10
 neighbor 10.99.0.2 timers connect 1
)";

}  // namespace

FrrHarness::FrrHarness() {
  const std::string id = std::to_string(getpid());
  dir_ = "/tmp/fibnic-frr-" + id;
  peer_dir_ = dir_ + "/peer";
  ns_ = "fibnic-peer-" + id;
}

FrrHarness::~FrrHarness() {
  for (pid_t* p : {&peer_, &bgpd_, &staticd_, &zebra_}) {
    procs_.Kill(*p);
    *p = -1;
  }
  Sh("ip netns del " + ns_ + " 2>/dev/null");
  if (!::testing::Test::HasFailure()) Sh("rm -rf " + dir_);
}

void FrrHarness::Setup(uint16_t fpm_port, const std::vector<std::string>& announced, bool nhg) {
  MustSh("mkdir -p " + peer_dir_);
  // A FIBNIC port to the peer, and a second link that is not a FIBNIC port.
  MustSh("ip netns add " + ns_);
  MustSh("ip link add r-eth0 type veth peer name p-eth0");
  MustSh("ip link set p-eth0 netns " + ns_);
  MustSh("ip addr add 10.99.0.1/24 dev r-eth0 && ip link set r-eth0 up");
  MustSh("ip -6 addr add 2001:db8:99::1/64 dev r-eth0 nodad");
  MustSh("ip netns exec " + ns_ + " sh -c 'ip link set lo up && ip addr add 10.99.0.2/24 dev p-eth0 && ip -6 addr add 2001:db8:99::2/64 dev p-eth0 nodad && ip link set p-eth0 up'");
  MustSh("ip link add r-eth1 type veth peer name r-eth1p && ip addr add 10.98.0.1/24 dev r-eth1 && ip link set r-eth1 up && ip link set r-eth1p up");
  Write(dir_ + "/zebra.conf", "hostname router\nfpm address 127.0.0.1 port " + std::to_string(fpm_port) + "\n" +
                                  (nhg ? "" : "no fpm use-next-hop-groups\n"));
  Write(dir_ + "/bgpd.conf", kRouterBgp);
  // Statics the FIBNIC must punt: a blackhole, and a route via the link
  // that is not a FIBNIC port. And an IPv6 route via the peer (the BGP
  // session carries IPv4 only).
  Write(dir_ + "/staticd.conf",
        "ip route 10.200.0.0/16 blackhole\nip route 10.97.0.0/16 10.98.0.2\nipv6 route 2001:db8:100::/48 2001:db8:99::2\n");
  std::string peer = kPeerBgp;
  for (const auto& p : announced) peer += "  network " + p + "\n";
  Write(peer_dir_ + "/bgpd.conf", peer + " exit-address-family\n");
  MustSh("chown -R frr:frr " + dir_ + " && chmod -R 755 " + dir_);
}

void FrrHarness::StartZebra() {
  zebra_ = procs_.Start({"/usr/lib/frr/zebra", "-f", dir_ + "/zebra.conf", "-i", dir_ + "/zebra.pid", "-z",
                         dir_ + "/zserv.api", "--vty_socket", dir_, "-u", "frr", "-g", "frr", "-M", "dplane_fpm_nl",
                         "-P", "0", "--log", "stdout"},
                        dir_ + "/zebra.log");
  WaitFor([&] { return access((dir_ + "/zebra.vty").c_str(), F_OK) == 0; }, std::chrono::seconds(10));
}

void FrrHarness::StopZebra(int sig) {
  procs_.Kill(zebra_, sig);
  zebra_ = -1;
  Sh("rm -f " + dir_ + "/zebra.vty");
}

void FrrHarness::StartRouterBgpd() {
  bgpd_ = procs_.Start({"/usr/lib/frr/bgpd", "-f", dir_ + "/bgpd.conf", "-i", dir_ + "/bgpd.pid", "-z",
                        dir_ + "/zserv.api", "--vty_socket", dir_, "-u", "frr", "-g", "frr", "-P", "0", "--log",
                        "stdout"},
                       dir_ + "/bgpd.log");
}

void FrrHarness::StopRouterBgpd(int sig) {
  procs_.Kill(bgpd_, sig);
  bgpd_ = -1;
}

void FrrHarness::StartStaticd() {
  staticd_ = procs_.Start({"/usr/lib/frr/staticd", "-f", dir_ + "/staticd.conf", "-i", dir_ + "/staticd.pid", "-z",
                           dir_ + "/zserv.api", "--vty_socket", dir_, "-u", "frr", "-g", "frr", "-P", "0", "--log",
                           "stdout"},
                          dir_ + "/staticd.log");
}

void FrrHarness::StopStaticd(int sig) {
  procs_.Kill(staticd_, sig);
  staticd_ = -1;
}

void FrrHarness::StartPeer() {
  peer_ = procs_.Start({"/bin/sh", "-c",
                        "exec ip netns exec " + ns_ + " /usr/lib/frr/bgpd -Z -f " + peer_dir_ + "/bgpd.conf -i " +
                            peer_dir_ + "/bgpd.pid -z " + peer_dir_ + "/zserv.api --vty_socket " + peer_dir_ +
                            " -u frr -g frr -P 0 --log stdout"},
                       peer_dir_ + "/bgpd.log");
  WaitFor([&] { return access((peer_dir_ + "/bgpd.vty").c_str(), F_OK) == 0; }, std::chrono::seconds(10));
}

void FrrHarness::KillPeer() {
  procs_.Kill(peer_, SIGKILL);
  peer_ = -1;
}

std::string FrrHarness::Vtysh(const std::string& cmd, bool peer) {
  return Sh("vtysh --vty_socket " + (peer ? peer_dir_ : dir_) + " " + cmd + " 2>&1");
}

void FrrHarness::PeerNetwork(const std::string& prefix, bool announce) {
  Vtysh("-c 'configure terminal' -c 'router bgp 65002' -c 'address-family ipv4 unicast' -c '" +
            std::string(announce ? "" : "no ") + "network " + prefix + "'",
        true);
}

bool FrrHarness::BgpEstablished() {
  auto j = nlohmann::json::parse(Vtysh("-d bgpd -c 'show bgp ipv4 unicast summary json'"), nullptr, false);
  if (j.is_discarded() || !j.contains("peers")) return false;
  return j["peers"].value("10.99.0.2", nlohmann::json::object()).value("state", "") == "Established";
}

std::map<Prefix, std::vector<NextHop>> FrrHarness::FrrFib(const PortNames& ports, bool with_system) {
  std::map<Prefix, std::vector<NextHop>> out;
  for (const char* cmd : {"show ip route json", "show ipv6 route json"}) {
    auto j = nlohmann::json::parse(Vtysh("-d zebra -c '" + std::string(cmd) + "'"), nullptr, false);
    if (j.is_discarded() || !j.is_object()) return {};
    for (const auto& [pfx, entries] : j.items()) {
      for (const auto& e : entries) {
        if (!e.value("selected", false) || !e.value("installed", false) || e.value("table", 254) != 254) continue;
        const std::string proto = e.value("protocol", "");
        if (!with_system && (proto == "connected" || proto == "kernel")) continue;
        std::vector<NextHop> paths;
        bool host = false;
        for (const auto& nh : e["nexthops"]) {
          if (!nh.value("fib", false)) continue;
          if (nh.contains("unreachable") || nh.contains("blackhole")) {
            host = true;
            continue;
          }
          auto port = ports.find(nh.value("interfaceName", ""));
          if (port == ports.end()) {
            host = true;
            continue;
          }
          NextHop hop{std::nullopt, port->second};
          if (nh.contains("ip")) hop.gateway = *IpAddr::Parse(nh["ip"].get<std::string>());
          paths.push_back(hop);
        }
        std::sort(paths.begin(), paths.end());
        paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
        if (host || paths.empty()) paths = {NextHop::ToHost()};
        out[*Prefix::Parse(pfx)] = paths;
      }
    }
  }
  return out;
}

MacAddr FrrHarness::PeerMac() {
  const std::string text = Sh("ip netns exec " + ns_ + " cat /sys/class/net/p-eth0/address");
  auto mac = MacAddr::Parse(text.substr(0, text.find('\n')));
  EXPECT_TRUE(mac.ok()) << "peer MAC: " << text;
  return mac.ok() ? *mac : MacAddr{};
}

std::string FrrHarness::Logs() {
  return Sh("tail -n 30 " + dir_ + "/zebra.log " + dir_ + "/bgpd.log " + dir_ + "/staticd.log " + peer_dir_ + "/bgpd.log 2>&1");
}

}  // namespace fibnic::testing
