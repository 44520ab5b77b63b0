// The FPM source against the kernel's interface names (root: its own network
// namespace). zebra re-sends nothing when an interface is renamed — its
// routes keep their ifindex — so the source alone must notice that a
// next-hop's interface now has another name, and so another FIBNIC port or
// none (issue #14, 6(d)). The oracle is the kernel: the name it gives each
// route's ifindex now, through the configured port map.
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <utility>
#include <boost/asio.hpp>
#include <iostream>
#include <thread>

#include "sources/fpm/fpm_frame.h"
#include "sources/fpm/fpm_source.h"
#include "tests/sources/netns_util.h"
#include "tests/sources/recording_sink.h"
#include "tests/sources/test_util.h"

namespace fibnic {
namespace {

using namespace std::chrono_literals;
using testing::A;
using testing::MustSh;
using testing::P;
using testing::RecordingSink;
using testing::Via;

const PortNames kPorts{{"fa", 0}};  // only the interface named "fa" is a FIBNIC port

class FpmSourcePortMap : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::EnterNewNetns();
    MustSh("ip link add fa type veth peer name fa-peer");
    MustSh("ip link add fb type veth peer name fb-peer");
    MustSh("ip link set fa up && ip link set fb up");
    FpmSourceConfig cfg;
    cfg.port = 0;
    cfg.ports = kPorts;
    cfg.port_name_max_age = 300ms;
    cfg.log = [](const std::string& m) { std::cout << "fpm: " << m << std::endl; };
    source = std::make_unique<FpmSource>(io, sink, cfg);
    ASSERT_TRUE(source->Start().ok());
    io_thread = std::thread([this] { io.run(); });
  }
  void TearDown() override {
    if (zebra >= 0) close(zebra);
    if (source) boost::asio::post(io, [this] { source->Stop(); });
    work.reset();
    io.stop();
    if (io_thread.joinable()) io_thread.join();
  }

  // Plays zebra: connects and sends one FPM frame with these routes.
  void Announce(const std::vector<NlRoute>& routes) {
    zebra = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(zebra, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(source->port());
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(zebra, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
    std::vector<std::vector<uint8_t>> msgs;
    for (const NlRoute& r : routes) msgs.push_back(BuildRouteMessage(r));
    const auto payload = testing::Concat(std::move(msgs));
    const auto frame = EncodeFpmFrame(payload.data(), payload.size());
    ASSERT_EQ(write(zebra, frame.data(), frame.size()), static_cast<ssize_t>(frame.size()));
  }

  // What the RIB must hold for a route via `gw` on `ifindex`, by the
  // kernel's name for that index now.
  static std::vector<NextHop> KernelSays(const std::string& gw, uint32_t ifindex) {
    char name[IF_NAMESIZE] = {};
    if (if_indextoname(ifindex, name) == nullptr) return {NextHop::ToHost()};
    auto it = kPorts.find(name);
    if (it == kPorts.end()) return {NextHop::ToHost()};
    return {NextHop{A(gw), it->second}};
  }

  // Waits until every route in `want` (prefix → gateway, ifindex) holds
  // what the kernel's names say.
  void ExpectFollows(const std::string& step, const std::map<std::string, std::pair<std::string, uint32_t>>& want) {
    std::string diff;
    const bool ok = testing::WaitFor(
        [&] {
          diff.clear();
          const auto rib = sink.routes();
          for (const auto& [p, via] : want) {
            const auto expect = KernelSays(via.first, via.second);
            auto it = rib.find(P(p));
            if (it == rib.end()) {
              diff += "  " + p + ": missing\n";
            } else if (it->second.paths != expect) {
              diff += "  " + p + ": RIB " + it->second.paths.front().ToString() + ", kernel names say " +
                      expect.front().ToString() + "\n";
            }
          }
          return diff.empty();
        },
        5s);
    EXPECT_TRUE(ok) << step << " (no FPM message since):\n" << diff;
    if (ok) std::cout << step << ": the RIB follows the kernel's interface names" << std::endl;
  }

  boost::asio::io_context io;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work{io.get_executor()};
  std::thread io_thread;
  RecordingSink sink;
  std::unique_ptr<FpmSource> source;
  int zebra = -1;
};

TEST_F(FpmSourcePortMap, RenamedInterfacesMoveTheirRoutesWithoutAMessage) {
  const uint32_t a = if_nametoindex("fa"), b = if_nametoindex("fb");
  ASSERT_NE(a, 0u);
  ASSERT_NE(b, 0u);
  // Two routes share one next-hop set on "fa" (port 0); one via "fb" punts.
  const std::map<std::string, std::pair<std::string, uint32_t>> routes{
      {"10.1.0.0/16", {"192.0.2.1", a}}, {"10.2.0.0/16", {"192.0.2.1", a}}, {"10.3.0.0/16", {"198.51.100.1", b}}};
  std::vector<NlRoute> msgs;
  for (const auto& [p, via] : routes) msgs.push_back(testing::InlineRoute(p, {Via(via.first, via.second)}));
  Announce(msgs);
  ExpectFollows("announced", routes);
  ASSERT_EQ(sink.routes().at(P("10.1.0.0/16")).paths, (std::vector<NextHop>{{A("192.0.2.1"), 0}}));

  // The names swap (down, rename, up: older kernels rename only a link that
  // is down): the port's name now belongs to fb's index. zebra would send
  // nothing; neither does this one.
  MustSh("ip link set fa down && ip link set fa name fz && ip link set fz up");
  MustSh("ip link set fb down && ip link set fb name fa && ip link set fa up");
  ExpectFollows("fa renamed fz, fb renamed fa", routes);
  ASSERT_EQ(sink.routes().at(P("10.3.0.0/16")).paths, (std::vector<NextHop>{{A("198.51.100.1"), 0}}));

  // The port's interface is deleted and another one created under its name:
  // the routes through the old index punt.
  MustSh("ip link del fa && ip link add fa type veth peer name fc-peer && ip link set fa up");
  ExpectFollows("fa deleted and re-created", routes);
  ASSERT_EQ(sink.routes().at(P("10.3.0.0/16")).paths, std::vector<NextHop>{NextHop::ToHost()});
}

}  // namespace
}  // namespace fibnic
