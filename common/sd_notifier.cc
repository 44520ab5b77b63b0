#include "common/sd_notifier.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "common/log.h"

namespace fibnic {

// libsystemd's sd_notify() sends with a blocking sendmsg: when the service
// manager does not read its socket (stuck, or a test that stopped reading),
// the datagram queue fills (net.unix.max_dgram_qlen, 10 by default) and the
// daemon's thread sleeps in the send — the event loop or the pipeline with
// it. So the datagram is sent here, as the protocol describes it (one
// datagram to the AF_UNIX address in NOTIFY_SOCKET, '@' for an abstract
// one), without waiting: a full queue drops this notification, counted and
// logged once. A dropped WATCHDOG=1 or STATUS= is replaced by the next one.
void SdNotifier::Send(const std::string& state) {
  const char* where = std::getenv("NOTIFY_SOCKET");
  if (where == nullptr || where[0] == '\0') return;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const size_t len = std::strlen(where);
  if ((where[0] != '/' && where[0] != '@') || len < 2 || len >= sizeof addr.sun_path) {
    if (!unusable_.exchange(true)) LogWarn("sd_notify: NOTIFY_SOCKET '" + std::string(where) + "' is not a unix socket address; not notifying");
    return;
  }
  std::memcpy(addr.sun_path, where, len);
  if (where[0] == '@') addr.sun_path[0] = '\0';
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    LogWarn("sd_notify failed: socket: " + std::string(strerror(errno)));
    return;
  }
  const auto addr_len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len);
  const ssize_t sent = sendto(fd, state.data(), state.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                              reinterpret_cast<const sockaddr*>(&addr), addr_len);
  const int err = errno;
  close(fd);
  if (sent >= 0) return;
  if (err == EAGAIN || err == EWOULDBLOCK) {
    if (dropped_.fetch_add(1) == 0) {
      LogWarn("sd_notify: the service manager's socket is full; notifications are dropped while it is (first: " +
              state.substr(0, state.find('\n')) + ")");
    }
    return;
  }
  LogWarn("sd_notify failed: " + std::string(strerror(err)));
}

void SdNotifier::Ready(const std::string& status) { Send("READY=1\nSTATUS=" + status); }
void SdNotifier::Status(const std::string& status) { Send("STATUS=" + status); }
void SdNotifier::Watchdog() { Send("WATCHDOG=1"); }
void SdNotifier::Reloading() { Send("RELOADING=1"); }
void SdNotifier::ReloadDone(const std::string& status) { Send("READY=1\nSTATUS=" + status); }
void SdNotifier::Stopping(const std::string& status) { Send("STOPPING=1\nSTATUS=" + status); }

std::optional<std::chrono::microseconds> SdNotifier::WatchdogInterval() {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return std::nullopt;
  return std::chrono::microseconds(usec);
}

}  // namespace fibnic
