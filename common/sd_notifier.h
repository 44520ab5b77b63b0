// The service manager protocol (sd_notify via libsystemd): READY=1 once the
// initial table is on the device, WATCHDOG=1 from the event loop, STATUS= with
// route counts, RELOADING=1/STOPPING=1 around reload and shutdown. Without
// NOTIFY_SOCKET (not under systemd) every call is a no-op. A call never
// waits: when the manager's socket is full the notification is dropped
// (dropped() counts them, the first is logged).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace fibnic {

class SdNotifier {
 public:
  void Ready(const std::string& status);
  void Status(const std::string& status);
  void Watchdog();
  void Reloading();
  void ReloadDone(const std::string& status);
  void Stopping(const std::string& status);
  // WatchdogSec= of the unit (WATCHDOG_USEC), if the watchdog is on for us.
  static std::optional<std::chrono::microseconds> WatchdogInterval();
  // Notifications dropped because the manager's socket was full.
  uint64_t dropped() const { return dropped_.load(); }

 private:
  void Send(const std::string& state);

  std::atomic<uint64_t> dropped_{0};
  std::atomic<bool> unusable_{false};
};

}  // namespace fibnic
