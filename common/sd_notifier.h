// The service manager protocol (sd_notify via libsystemd): READY=1 once the
// initial table is on the device, WATCHDOG=1 from the event loop, STATUS= with
// route counts, RELOADING=1/STOPPING=1 around reload and shutdown. Without
// NOTIFY_SOCKET (not under systemd) every call is a no-op.
#pragma once

#include <chrono>
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

 private:
  void Send(const std::string& state);
};

}  // namespace fibnic
