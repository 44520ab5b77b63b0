// Real FRR for the integration tests: zebra (-M dplane_fpm_nl) + bgpd in the
// test's own network namespace ("router"), and a second bgpd (no zebra) in a
// peer namespace joined by a veth pair. Every daemon gets its own config,
// pid file and vty socket directory, so nothing collides with a system FRR.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "sources/netlink/netlink_ports.h"
#include "rib/route.h"
#include "tests/sources/netns_util.h"

namespace fibnic::testing {

class FrrHarness {
 public:
  FrrHarness();
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
  void KillPeer();  // SIGKILL: the session drops at once
  void PeerNetwork(const std::string& prefix, bool announce);
  bool BgpEstablished();

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

  static PortNames Ports() { return {{"r-eth0", 1}}; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_, peer_dir_, ns_;
  Processes procs_;
  pid_t zebra_ = -1, bgpd_ = -1, staticd_ = -1, peer_ = -1;
};

}  // namespace fibnic::testing
