// SdNotifier never waits for the service manager: with a NOTIFY_SOCKET that
// nobody reads, the datagram queue fills and further notifications are
// dropped and counted, not sent by a call that sleeps until the manager
// reads (libsystemd's sd_notify did: it stalled fibnicd in the FRR restart
// test under ASan). What was queued arrives in order, and once the
// manager reads again notifications arrive again.
#include "common/sd_notifier.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <future>
#include <optional>
#include <string>
#include <thread>

namespace fibnic {
namespace {

using namespace std::chrono_literals;

// The manager's end: a datagram socket at `where` ('@': abstract).
class Manager {
 public:
  explicit Manager(const std::string& where) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, where.data(), where.size());
    if (where[0] == '@') a.sun_path[0] = '\0';
    if (where[0] == '/') unlink(where.c_str());
    const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + where.size());
    bound_ = bind(fd_, reinterpret_cast<sockaddr*>(&a), len) == 0;
    setenv("NOTIFY_SOCKET", where.c_str(), 1);
  }
  ~Manager() {
    Close();
    unsetenv("NOTIFY_SOCKET");
  }
  bool ok() const { return fd_ >= 0 && bound_; }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  std::optional<std::string> Receive(std::chrono::milliseconds timeout) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return std::nullopt;
    char buf[512];
    const ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n < 0) return std::nullopt;
    return std::string(buf, static_cast<size_t>(n));
  }

 private:
  int fd_ = -1;
  bool bound_ = false;
};

void FullSocketDropsAndRecovers(const std::string& where) {
  Manager manager(where);
  ASSERT_TRUE(manager.ok()) << where;
  SdNotifier notifier;
  constexpr int kSent = 2000;  // far beyond a datagram queue (max_dgram_qlen) or a receive buffer
  std::promise<void> sent;
  std::thread sender([&] {
    for (int i = 0; i < kSent; ++i) notifier.Status(std::to_string(i));
    sent.set_value();
  });
  const bool returned = sent.get_future().wait_for(20s) == std::future_status::ready;
  if (!returned) manager.Close();  // a blocked send fails once its peer is gone: the thread can be joined
  sender.join();
  ASSERT_TRUE(returned) << "a notification waited for the manager to read";
  int received = 0;
  while (auto m = manager.Receive(0ms)) {
    EXPECT_EQ(*m, "STATUS=" + std::to_string(received)) << "queued notifications arrive in order";
    ++received;
  }
  EXPECT_GT(received, 0);
  EXPECT_GT(notifier.dropped(), 0u);
  EXPECT_EQ(static_cast<uint64_t>(received) + notifier.dropped(), static_cast<uint64_t>(kSent));
  // The manager reads again: the next notification arrives.
  notifier.Watchdog();
  EXPECT_EQ(manager.Receive(5s), "WATCHDOG=1");
}

TEST(SdNotifier, FullSocketDropsInsteadOfWaiting) {
  FullSocketDropsAndRecovers(::testing::TempDir() + "/sd_notifier_test." + std::to_string(getpid()));
}

TEST(SdNotifier, AbstractSocketAddress) {
  FullSocketDropsAndRecovers("@fibnic-sd-notifier-test-" + std::to_string(getpid()));
}

TEST(SdNotifier, WithoutNotifySocketNothingIsSent) {
  unsetenv("NOTIFY_SOCKET");
  SdNotifier notifier;
  notifier.Ready("x");
  EXPECT_EQ(notifier.dropped(), 0u);
}

}  // namespace
}  // namespace fibnic
