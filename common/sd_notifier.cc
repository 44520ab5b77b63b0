#include "common/sd_notifier.h"

#include <systemd/sd-daemon.h>

#include <cstdint>
#include <cstring>

#include "common/log.h"

namespace fibnic {

void SdNotifier::Send(const std::string& state) {
  int r = sd_notify(0, state.c_str());
  if (r < 0) LogWarn("sd_notify failed: " + std::string(strerror(-r)));
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
