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

FrrHarness::FrrHarness(FrrOptions options) : opt_(std::move(options)) {
  const std::string id = std::to_string(getpid());
  dir_ = "/tmp/fibnic-frr-" + id;
  host_dir_ = opt_.root + dir_;
  peer_dir_ = host_dir_ + "/peer";
  obs_dir_ = host_dir_ + "/observer";
  ns_ = "fibnic-peer-" + id;
  obs_ns_ = "fibnic-obs-" + id;
}

FrrHarness::~FrrHarness() {
  for (pid_t* p : {&observer_, &peer_, &bgpd_, &staticd_, &zebra_, &mgmtd_}) {
    procs_.Kill(*p);
    *p = -1;
  }
  Sh("ip netns del " + ns_ + " 2>/dev/null");
  Sh("ip netns del " + obs_ns_ + " 2>/dev/null");
  if (!::testing::Test::HasFailure()) Sh("rm -rf " + host_dir_);
}

// The router's daemon `name` with the common arguments, from opt_.root if set.
std::vector<std::string> FrrHarness::Daemon(const std::string& name, std::vector<std::string> args) {
  std::vector<std::string> argv;
  if (!opt_.root.empty()) argv = {"/usr/sbin/chroot", opt_.root};
  argv.push_back("/usr/lib/frr/" + name);
  for (const std::string& a : {std::string("-i"), dir_ + "/" + name + ".pid", std::string("-z"), dir_ + "/zserv.api",
                               std::string("--vty_socket"), dir_, std::string("-u"), std::string("frr"),
                               std::string("-g"), std::string("frr"), std::string("-P"), std::string("0"),
                               std::string("--log"), std::string("stdout")}) {
    argv.push_back(a);
  }
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

void FrrHarness::Setup(uint16_t fpm_port, const std::vector<std::string>& announced, bool nhg) {
  MustSh("mkdir -p " + peer_dir_ + " " + obs_dir_);
  // A FIBNIC port to the peer, and a second link that is not a FIBNIC port.
  MustSh("ip netns add " + ns_);
  MustSh("ip link add r-eth0 type veth peer name p-eth0");
  MustSh("ip link set p-eth0 netns " + ns_);
  MustSh("ip addr add 10.99.0.1/24 dev r-eth0 && ip link set r-eth0 up");
  MustSh("ip -6 addr add 2001:db8:99::1/64 dev r-eth0 nodad");
  MustSh("ip netns exec " + ns_ + " sh -c 'ip link set lo up && ip addr add 10.99.0.2/24 dev p-eth0 && ip -6 addr add 2001:db8:99::2/64 dev p-eth0 nodad && ip link set p-eth0 up'");
  MustSh("ip link add r-eth1 type veth peer name r-eth1p && ip addr add 10.98.0.1/24 dev r-eth1 && ip link set r-eth1 up && ip link set r-eth1p up");
  if (opt_.observer) {
    MustSh("ip netns add " + obs_ns_);
    MustSh("ip link add r-eth2 type veth peer name o-eth0 && ip link set o-eth0 netns " + obs_ns_);
    MustSh("ip addr add 10.96.0.1/24 dev r-eth2 && ip link set r-eth2 up");
    MustSh("ip netns exec " + obs_ns_ + " sh -c 'ip link set lo up && ip addr add 10.96.0.2/24 dev o-eth0 && ip link set o-eth0 up'");
    Write(obs_dir_ + "/bgpd.conf",
          "hostname observer\nrouter bgp 65003\n bgp router-id 10.96.0.2\n no bgp ebgp-requires-policy\n"
          " neighbor 10.96.0.1 remote-as 65001\n neighbor 10.96.0.1 timers 3 10\n neighbor 10.96.0.1 timers connect 1\n");
  }
  Write(host_dir_ + "/zebra.conf", "hostname router\n" + opt_.zebra_conf + "fpm address 127.0.0.1 port " + std::to_string(fpm_port) + "\n" +
                                       (nhg ? "" : "no fpm use-next-hop-groups\n"));
  Write(host_dir_ + "/mgmtd.conf", "hostname router\n");
  Write(host_dir_ + "/bgpd.conf",
        kRouterBgp + opt_.router_bgp +
            (opt_.observer ? " neighbor 10.96.0.2 remote-as 65003\n neighbor 10.96.0.2 timers 3 10\n"
                             " neighbor 10.96.0.2 timers connect 1\n"
                           : ""));
  // Statics the FIBNIC must not forward: a blackhole (dropped), and a route
  // via the link that is not a FIBNIC port (punted). And an IPv6 route via the peer (the BGP
  // session carries IPv4 only).
  Write(host_dir_ + "/staticd.conf",
        "ip route 10.200.0.0/16 blackhole\nip route 10.97.0.0/16 10.98.0.2\nipv6 route 2001:db8:100::/48 2001:db8:99::2\n");
  std::string peer = kPeerBgp;
  for (const auto& p : announced) peer += "  network " + p + "\n";
  Write(peer_dir_ + "/bgpd.conf", peer + " exit-address-family\n");
  // The router's frr user is its root's; the peers' the host's.
  MustSh((opt_.root.empty() ? "" : "chroot " + opt_.root + " ") + "chown -R frr:frr " + dir_);
  MustSh("chown -R frr:frr " + peer_dir_ + " " + obs_dir_ + " && chmod -R 755 " + host_dir_);
}

void FrrHarness::StartZebra() {
  if (opt_.mgmtd && mgmtd_ < 0) {
    mgmtd_ = procs_.Start(Daemon("mgmtd", {"-f", dir_ + "/mgmtd.conf"}), host_dir_ + "/mgmtd.log");
    WaitFor([&] { return access((host_dir_ + "/mgmtd.vty").c_str(), F_OK) == 0; }, std::chrono::seconds(10));
  }
  std::vector<std::string> args{"-f", dir_ + "/zebra.conf", "-M", "dplane_fpm_nl"};
  args.insert(args.end(), opt_.zebra_args.begin(), opt_.zebra_args.end());
  zebra_ = procs_.Start(Daemon("zebra", args), host_dir_ + "/zebra.log");
  WaitFor([&] { return access((host_dir_ + "/zebra.vty").c_str(), F_OK) == 0; }, std::chrono::seconds(10));
}

void FrrHarness::StopZebra(int sig) {
  procs_.Kill(zebra_, sig);
  zebra_ = -1;
  Sh("rm -f " + host_dir_ + "/zebra.vty");
}

void FrrHarness::StartRouterBgpd() {
  bgpd_ = procs_.Start(Daemon("bgpd", {"-f", dir_ + "/bgpd.conf"}), host_dir_ + "/bgpd.log");
}

void FrrHarness::StopRouterBgpd(int sig) {
  procs_.Kill(bgpd_, sig);
  bgpd_ = -1;
}

void FrrHarness::StartStaticd() {
  staticd_ = procs_.Start(Daemon("staticd", {"-f", dir_ + "/staticd.conf"}), host_dir_ + "/staticd.log");
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

void FrrHarness::StartObserver() {
  observer_ = procs_.Start({"/bin/sh", "-c",
                            "exec ip netns exec " + obs_ns_ + " /usr/lib/frr/bgpd -Z -f " + obs_dir_ + "/bgpd.conf -i " +
                                obs_dir_ + "/bgpd.pid -z " + obs_dir_ + "/zserv.api --vty_socket " + obs_dir_ +
                                " -u frr -g frr -P 0 --log stdout"},
                           obs_dir_ + "/bgpd.log");
  WaitFor([&] { return access((obs_dir_ + "/bgpd.vty").c_str(), F_OK) == 0; }, std::chrono::seconds(10));
}

bool FrrHarness::ObserverEstablished() {
  auto j = nlohmann::json::parse(Sh("vtysh --vty_socket " + obs_dir_ + " -d bgpd -c 'show bgp ipv4 unicast summary json' 2>&1"),
                                 nullptr, false);
  if (j.is_discarded() || !j.contains("peers")) return false;
  return j["peers"].value("10.96.0.1", nlohmann::json::object()).value("state", "") == "Established";
}

std::set<std::string> FrrHarness::ObserverRoutes() {
  std::set<std::string> out;
  auto j = nlohmann::json::parse(Sh("vtysh --vty_socket " + obs_dir_ + " -d bgpd -c 'show bgp ipv4 unicast json' 2>&1"),
                                 nullptr, false);
  if (j.is_discarded() || !j.contains("routes")) return out;
  for (const auto& [p, paths] : j["routes"].items()) out.insert(p);
  return out;
}

nlohmann::json FrrHarness::ZebraRoute(const std::string& prefix) {
  auto j = nlohmann::json::parse(Vtysh("-d zebra -c 'show ip route " + prefix + " json'"), nullptr, false);
  if (j.is_discarded() || !j.contains(prefix)) return nullptr;
  for (const auto& e : j[prefix]) {
    if (e.value("selected", false)) return e;
  }
  return nullptr;
}

void FrrHarness::KillPeer() {
  procs_.Kill(peer_, SIGKILL);
  peer_ = -1;
}

std::string FrrHarness::Vtysh(const std::string& cmd, bool peer) {
  if (peer) return Sh("vtysh --vty_socket " + peer_dir_ + " " + cmd + " 2>&1");
  return Sh((opt_.root.empty() ? "" : "chroot " + opt_.root + " ") + "vtysh --vty_socket " + dir_ + " " + cmd + " 2>&1");
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
        bool host = false, drop = false;
        for (const auto& nh : e["nexthops"]) {
          if (!nh.value("fib", false)) continue;
          // zebra marks every blackhole next hop "unreachable", and says which:
          // a plain "blackhole" is the kernel's RTN_BLACKHOLE, dropped; a
          // "reject" or "admin-prohibited" one is punted (the host sends the ICMP).
          if (nh.contains("blackhole") && !nh.contains("reject") && !nh.contains("admin-prohibited")) {
            drop = true;
            continue;
          }
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
        if (drop && !host && paths.empty()) {
          paths = {NextHop::Drop()};
        } else if (host || paths.empty()) {
          paths = {NextHop::ToHost()};
        }
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

std::string FrrHarness::ZebraLog() { return Sh("cat " + host_dir_ + "/zebra.log"); }

std::string FrrHarness::Logs() {
  return Sh("tail -n 30 " + host_dir_ + "/zebra.log " + host_dir_ + "/bgpd.log " + host_dir_ + "/staticd.log " +
            peer_dir_ + "/bgpd.log " + obs_dir_ + "/bgpd.log 2>&1");
}

}  // namespace fibnic::testing
