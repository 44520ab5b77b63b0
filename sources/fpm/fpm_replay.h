// When is zebra's replay over? zebra replays its whole table on every
// connect, with no end marker and at an uneven pace (at a full table it
// stalls for seconds between bursts). The replay is taken as over once no
// route or group was replayed — brought new, or re-sent while stale — for
// `hold`; updates of routes already replayed do not hold it open, so BGP
// churn after the replay does not either. `ceiling` after the connect it is
// over whatever still arrives. Time is passed in: the tests drive it with a
// fake clock.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

namespace fibnic {

class FpmReplayWatch {
 public:
  using Clock = std::chrono::steady_clock;

  FpmReplayWatch(Clock::duration hold, Clock::duration ceiling) : hold_(hold), ceiling_(ceiling) {}

  void Connected(Clock::time_point now) {
    connected_ = true;
    connected_at_ = last_replayed_ = now;
  }
  void Disconnected() { connected_ = false; }
  // A frame replayed something (FpmZebraCounts::replayed went up).
  void Replayed(Clock::time_point now) { last_replayed_ = now; }

  // When the replay will be over if nothing more is replayed; nullopt while
  // zebra is not connected.
  std::optional<Clock::time_point> DueAt() const {
    if (!connected_) return std::nullopt;
    return std::min(last_replayed_ + hold_, connected_at_ + ceiling_);
  }
  bool Over(Clock::time_point now) const {
    const auto due = DueAt();
    return due && now >= *due;
  }
  // Why it is over, for the log.
  std::string Why(Clock::time_point now) const {
    const auto secs = [](Clock::duration d) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.1f s", std::chrono::duration<double>(d).count());
      return std::string(buf);
    };
    if (now >= last_replayed_ + hold_) return "nothing replayed for " + secs(now - last_replayed_);
    return "stale_hold_max (" + secs(ceiling_) + ") reached with zebra still replaying, last " +
           secs(now - last_replayed_) + " ago";
  }

 private:
  Clock::duration hold_, ceiling_;
  bool connected_ = false;
  Clock::time_point connected_at_, last_replayed_;
};

}  // namespace fibnic
