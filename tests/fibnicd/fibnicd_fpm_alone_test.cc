// fibnicd with the FPM source on and the kernel source off (a config
// fibnicd accepts: zebra's routes over FPM, neighbours from a file). Only a
// kernel source knows the kernel's next-hop objects; without one, none of
// zebra's objects may be taken as refused by the kernel. fibnicd asked a
// kernel source that was not there, so at the end of zebra's replay every
// object counted as "not in the kernel" and every route by a next-hop
// object left the device (a8b49a8 fixed it; this is its test). A fake zebra
// (this test) sends objects and a route naming a group; the route must
// still forward after the replay is over. No root needed.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <regex>

#include "device/fibnic_lookup.h"
#include "sources/fpm/fpm_frame.h"
#include "sources/netlink/netlink_build.h"
#include "tests/fibnicd/daemon_harness.h"

namespace fibnic {
namespace {

using namespace std::chrono_literals;

constexpr uint8_t kZebra = 11, kBgp = 186;

std::string Slurp(const std::string& path) {
  auto v = testing::ReadFile(path);
  return std::string(v.begin(), v.end());
}

bool WaitUntil(const std::function<bool()>& ok, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!ok()) {
    if (std::chrono::steady_clock::now() > end) return false;
    usleep(20000);
  }
  return true;
}

TEST(FibnicdFpmAlone, RoutesByNexthopObjectsStayAfterTheReplay) {
  const std::string dir = ::testing::TempDir() + "/fibnicd_fpm_alone";
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  // The file source brings the gateway's neighbour (and a route of its own).
  testing::WriteFile(dir + "/routes.txt", "203.0.113.0/24 192.0.2.1 0\n");
  testing::WriteFile(dir + "/neigh.txt", "192.0.2.1 52:54:00:00:00:01 0\n");
  testing::WriteFile(dir + "/fibnicd.yaml",
                     "device: {backend: file, path: " + dir + "/bar0.img}\n"
                     "ports:\n  - {interface: lo, port: 0, mac: '02:00:00:00:00:01'}\n"
                     "sources:\n"
                     "  kernel: {enabled: false}\n"
                     "  fpm: {enabled: true, listen: 127.0.0.1:0}\n"
                     "  file: {routes: " + dir + "/routes.txt, neighbors: " + dir + "/neigh.txt}\n"
                     "policies: {stale_hold: 1s}\n"
                     "web: {enabled: false}\n");
  testing::NotifySocket notify(dir + "/notify");
  ASSERT_TRUE(notify.ok());
  testing::Child daemon({"/bin/sh", "-c", std::string("exec ") + FIBNICD_BIN + " --config " + dir + "/fibnicd.yaml 2>" + dir + "/log"},
                        {"NOTIFY_SOCKET=" + notify.path()});
  std::vector<std::string> notes;
  ASSERT_TRUE(notify.WaitFor("READY=1", 30s, &notes)) << Slurp(dir + "/log");
  std::smatch m;
  const std::string started = Slurp(dir + "/log");
  ASSERT_TRUE(std::regex_search(started, m, std::regex("FPM source listening on 127\\.0\\.0\\.1:(\\d+)"))) << started;
  const int port = std::stoi(m[1]);
  auto hw = [&](const std::string& dst) {
    const std::vector<char> bar = testing::ReadFile(dir + "/bar0.img");
    return HwLookup(reinterpret_cast<const uint8_t*>(bar.data()), bar.size(), *IpAddr::Parse(dst));
  };
  auto forwards = [&](const std::string& dst) {
    const HwDecision d = hw(dst);
    return d.forward && d.port == 0 && d.dst_mac == *MacAddr::Parse("52:54:00:00:00:01");
  };
  ASSERT_TRUE(WaitUntil([&] { return forwards("203.0.113.1"); }, 10s)) << hw("203.0.113.1").ToString();

  // zebra: object 10 via 192.0.2.1 on lo (FIBNIC port 0), group 20 of it,
  // 198.51.100.0/24 by group 20.
  const int zebra = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(zebra, reinterpret_cast<sockaddr*>(&to), sizeof to), 0) << strerror(errno);
  NlNexthop one;
  one.id = 10;
  one.protocol = kZebra;
  one.path = NlPath{*IpAddr::Parse("192.0.2.1"), 1};
  NlNexthop group;
  group.id = 20;
  group.protocol = kZebra;
  group.group = {NlGroupMember{10, 1}};
  NlRoute route;
  route.prefix = *Prefix::Parse("198.51.100.0/24");
  route.table = 254;
  route.protocol = kBgp;
  route.type = 1;  // RTN_UNICAST
  route.nh_id = 20;
  std::vector<uint8_t> stream;
  for (const std::vector<uint8_t>& msg : {BuildNexthopMessage(one), BuildNexthopMessage(group), BuildRouteMessage(route)}) {
    const std::vector<uint8_t> frame = EncodeFpmFrame(msg.data(), msg.size());
    stream.insert(stream.end(), frame.begin(), frame.end());
  }
  ASSERT_EQ(send(zebra, stream.data(), stream.size(), MSG_NOSIGNAL), static_cast<ssize_t>(stream.size()));
  EXPECT_TRUE(WaitUntil([&] { return forwards("198.51.100.1"); }, 10s)) << hw("198.51.100.1").ToString();

  // The replay is over 1 s (stale_hold) after the last route: the route by
  // the group stays on the device.
  ASSERT_TRUE(WaitUntil([&] { return Slurp(dir + "/log").find("replay over") != std::string::npos; }, 20s))
      << Slurp(dir + "/log");
  EXPECT_TRUE(forwards("198.51.100.1")) << hw("198.51.100.1").ToString() << "\n" << Slurp(dir + "/log");
  EXPECT_EQ(Slurp(dir + "/log").find("not in the kernel"), std::string::npos) << Slurp(dir + "/log");
  close(zebra);
  notify.Drain(0ms);
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(20s, [&] { notify.Drain(0ms); }), 0);
}

}  // namespace
}  // namespace fibnic
