// Real FRR for the integration tests: zebra (-M dplane_fpm_nl) + bgpd in the
// test's own network namespace ("router"), and a second bgpd (no zebra) in a
// peer namespace joined by a veth pair. Every daemon gets its own config,
// pid file and vty socket directory, so nothing collides with a system FRR.
// The router's daemons may come from another Debian root (FrrOptions::root,
// run with chroot: FRR 10.x from scripts/frr-root.sh); the peers
// are always the host's FRR.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "rib/route.h"
#include "sources/netlink/netlink_ports.h"
#include "tests/support/netns_util.h"

namespace fibnic::testing {

struct FrrOptions {
  std::string root;                     // the router's FRR from this root (chroot); "" = the host's
  std::vector<std::string> zebra_args;  // added to zebra's command line
  std::string zebra_conf;               // lines added to zebra's config
  std::string router_bgp;               // lines added under the router's `router bgp`
  bool mgmtd = false;                   // FRR 10: zebra and bgpd want mgmtd
  // A second eBGP peer ("observer", AS 65003, 10.96.0.2 on r-eth2, not a
  // FIBNIC port) that only listens: what the router advertises.
  bool observer = false;
};

class FrrHarness {
 public:
  explicit FrrHarness(FrrOptions options = {});
  ~FrrHarness();

  // Sets up namespaces, links and config; zebra will connect to fpm_port.
  // nhg=false: `no fpm use-next-hop-groups` (next-hops inline in routes).
  void Setup(uint16_t fpm_port, const std::vector<std::string>& announced, bool nhg);
  void StartZebra();
  void StopZebra(int sig = SIGTERM);
  void StartRouterBgpd();
  void StartStaticd();
  void StopStaticd(int sig = SIGTERM);
  void StopRouterBgpd(int sig = SIGTERM);
  void StartPeer();
  void StartObserver();
  void KillPeer();  // SIGKILL: the session drops at once
  void PeerNetwork(const std::string& prefix, bool announce);
  bool BgpEstablished();
  bool ObserverEstablished();
  // The IPv4 prefixes the observer has received from the router.
  std::set<std::string> ObserverRoutes();
  // zebra's `show ip route PREFIX json` entry for the selected route, or null.
  nlohmann::json ZebraRoute(const std::string& prefix);
  bool ZebraAlive() { return procs_.Alive(zebra_); }

  // What zebra has selected and installed in table 254, as the RIB should
  // hold it: interface names mapped through `ports`, anything else to host.
  // Connected and kernel routes are left out unless with_system: the FPM
  // source leaves them to the kernel source (zebra never sends their
  // deletion over FPM); the image oracle wants everything FRR has.
  std::map<Prefix, std::vector<NextHop>> FrrFib(const PortNames& ports, bool with_system = false);
  // The peer's MAC on the FIBNIC port's segment (its side of the veth).
  MacAddr PeerMac();
  std::string Vtysh(const std::string& cmd, bool peer = false);
  std::string Logs();
  std::string ZebraLog();

  static PortNames Ports() { return {{"r-eth0", 1}}; }
  const std::string& dir() const { return host_dir_; }

 private:
  std::vector<std::string> Daemon(const std::string& name, std::vector<std::string> args);
  FrrOptions opt_;
  std::string dir_;       // as the router's daemons see it
  std::string host_dir_;  // the same on the host (under opt_.root)
  std::string peer_dir_, obs_dir_, ns_, obs_ns_;
  Processes procs_;
  pid_t zebra_ = -1, bgpd_ = -1, staticd_ = -1, peer_ = -1, mgmtd_ = -1, observer_ = -1;
};

}  // namespace fibnic::testing
