// fibnicd as systemd sees it: this test is the NOTIFY_SOCKET. It checks
// READY → WATCHDOG → STATUS in that order, SIGHUP with a good config (applied)
// and a bad one (rejected, old config kept, daemon alive), and that SIGTERM
// stops cleanly without touching the BAR file. No root needed: the kernel
// source is off and the BAR is a file in the test's temp dir.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>

#include "tests/fibnicd/daemon_harness.h"

namespace fibnic {
namespace {

using namespace std::chrono_literals;
using testing::Child;
using testing::NotifySocket;

std::string Config(const std::string& dir, const std::string& level) {
  return "device:\n"
         "  backend: file\n"
         "  path: " + dir + "/bar0.img\n"
         "sources:\n"
         "  kernel: {enabled: false}\n"
         "web:\n"
         "  listen: 127.0.0.1:0\n"
         "logging:\n"
         "  level: " + level + "\n";
}

size_t IndexOf(const std::vector<std::string>& log, const std::string& needle, size_t from = 0) {
  for (size_t i = from; i < log.size(); ++i) {
    if (log[i].find(needle) != std::string::npos) return i;
  }
  return SIZE_MAX;
}

size_t FirstDifference(const std::vector<char>& a, const std::vector<char>& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}

TEST(FibnicdService, NotifyOrderReloadAndCleanStop) {
  std::string dir = ::testing::TempDir() + "/fibnicd_service";
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  std::string cfg = dir + "/fibnicd.yaml";
  testing::WriteFile(cfg, Config(dir, "debug"));
  NotifySocket notify(dir + "/notify");
  ASSERT_TRUE(notify.ok());

  Child daemon({FIBNICD_BIN, "--config", cfg},
               {"NOTIFY_SOCKET=" + notify.path(), "WATCHDOG_USEC=200000"});
  std::vector<std::string> log;
  ASSERT_TRUE(notify.WaitFor("READY=1", 20s, &log)) << "no READY=1";
  // READY carries the route counts.
  EXPECT_NE(log.back().find("STATUS=ready: v4 0 routes"), std::string::npos) << log.back();
  size_t ready = log.size() - 1;
  // Then the watchdog (every WATCHDOG_USEC/2) and a STATUS, in that order.
  ASSERT_TRUE(notify.WaitFor("WATCHDOG=1", 2s, &log));
  size_t watchdog = log.size() - 1;
  ASSERT_TRUE(notify.WaitFor("STATUS=", 2s, &log));
  size_t status = log.size() - 1;
  EXPECT_LT(ready, watchdog);
  EXPECT_LT(watchdog, status);
  EXPECT_EQ(IndexOf(log, "WATCHDOG=1"), watchdog) << "watchdog before READY";

  // SIGHUP with a good config: RELOADING=1, then READY=1 with the outcome.
  testing::WriteFile(cfg, Config(dir, "info"));
  size_t before = log.size();
  daemon.Signal(SIGHUP);
  ASSERT_TRUE(notify.WaitFor("RELOADING=1", 5s, &log));
  ASSERT_TRUE(notify.WaitFor("READY=1", 5s, &log));
  EXPECT_NE(log.back().find("STATUS=reloaded"), std::string::npos) << log.back();
  EXPECT_GT(log.size(), before);

  // SIGHUP with a bad config: rejected, the daemon keeps running.
  testing::WriteFile(cfg, Config(dir, "info") + "bogus_section: 1\n");
  daemon.Signal(SIGHUP);
  ASSERT_TRUE(notify.WaitFor("reload rejected", 5s, &log));
  ASSERT_TRUE(notify.WaitFor("WATCHDOG=1", 2s, &log)) << "daemon stopped feeding the watchdog";
  EXPECT_TRUE(daemon.Alive());

  // SIGTERM: STOPPING=1, exit 0, BAR bytes unchanged.
  std::vector<char> bar_before = testing::ReadFile(dir + "/bar0.img");
  ASSERT_GT(bar_before.size(), 16u * 1024 * 1024);
  // The queue holds net.unix.max_dgram_qlen (10) datagrams: empty it before
  // SIGTERM so STOPPING=1 is never the one dropped.
  notify.Drain(std::chrono::milliseconds(0));
  daemon.Signal(SIGTERM);
  ASSERT_TRUE(notify.WaitFor("STOPPING=1", 5s, &log));
  // Keep reading the notify socket while the daemon stops, as systemd does
  // (UnreadNotifySocketNeverStallsIt: what the daemon does when it is not).
  EXPECT_EQ(daemon.Wait(10s, [&] { notify.Drain(std::chrono::milliseconds(0)); }), 0);
  std::vector<char> bar_after = testing::ReadFile(dir + "/bar0.img");
  EXPECT_TRUE(bar_after == bar_before) << "SIGTERM changed the BAR file, first at byte " << FirstDifference(bar_before, bar_after);
}

// A manager that stops reading its notify socket (stuck, or a test): the
// datagram queue fills (net.unix.max_dgram_qlen). fibnicd's notifications
// then are dropped, never waited for — libsystemd's blocking send stalled
// its loop, so it no longer reloaded or stopped on SIGTERM (the FRR restart
// test under ASan). Here the test fills the queue itself after READY=1 and
// never reads again: fibnicd still reloads on SIGHUP and stops on SIGTERM.
TEST(FibnicdService, UnreadNotifySocketNeverStallsIt) {
  std::string dir = ::testing::TempDir() + "/fibnicd_unread_notify";
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  std::string cfg = dir + "/fibnicd.yaml";
  testing::WriteFile(cfg, Config(dir, "info"));
  NotifySocket notify(dir + "/notify");
  ASSERT_TRUE(notify.ok());
  Child daemon({"/bin/sh", "-c", std::string("exec ") + FIBNICD_BIN + " --config " + cfg + " 2>" + dir + "/log"},
               {"NOTIFY_SOCKET=" + notify.path(), "WATCHDOG_USEC=20000"});
  std::vector<std::string> log;
  ASSERT_TRUE(notify.WaitFor("READY=1", 20s, &log)) << "no READY=1";
  // Fill the queue: send to it until it refuses (EAGAIN).
  const int filler = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un to{};
  to.sun_family = AF_UNIX;
  std::strncpy(to.sun_path, notify.path().c_str(), sizeof to.sun_path - 1);
  int queued = 0;
  while (sendto(filler, "X", 1, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&to), sizeof to) == 1) ++queued;
  const int full = errno;
  close(filler);
  ASSERT_EQ(full, EAGAIN) << strerror(full) << " after " << queued;
  auto text = [&] {
    auto v = testing::ReadFile(dir + "/log");
    return std::string(v.begin(), v.end());
  };
  daemon.Signal(SIGHUP);  // RELOADING=1, READY=1: dropped
  daemon.Signal(SIGTERM);  // STOPPING=1: dropped
  EXPECT_EQ(daemon.Wait(10s), 0) << "fibnicd did not stop while its notify socket was full\n" << text();
  EXPECT_NE(text().find("notifications are dropped"), std::string::npos) << text();
}

TEST(FibnicdService, BadConfigRefusedAtStart) {
  std::string dir = ::testing::TempDir() + "/fibnicd_badcfg";
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  std::string cfg = dir + "/fibnicd.yaml";
  testing::WriteFile(cfg, "device:\n  backend: pcie\n");
  Child check({FIBNICD_BIN, "--check-config", "--config", cfg}, {});
  EXPECT_EQ(check.Wait(10s), 1);
  Child run({FIBNICD_BIN, "--config", cfg}, {});
  EXPECT_EQ(run.Wait(10s), 1);
  testing::WriteFile(cfg, Config(dir, "info"));
  Child good({FIBNICD_BIN, "--check-config", "--config", cfg}, {});
  EXPECT_EQ(good.Wait(10s), 0);
}

}  // namespace
}  // namespace fibnic
