// How a route source reports what happens to it: through the daemon's log
// callback when it has one, else on stderr prefixed with the source's name.
// An error is also counted and kept as the source's last error, which the
// daemon's status and the REST API show.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

namespace fibnic {

using SourceLogFn = std::function<void(const std::string&)>;

inline void SourceLog(const SourceLogFn& log, const char* source, const std::string& msg) {
  if (log) {
    log(msg);
  } else {
    std::fprintf(stderr, "%s: %s\n", source, msg.c_str());
  }
}

// Stats is a source's stats struct (it has `errors` and `last_error`).
template <typename Stats>
void SourceError(const SourceLogFn& log, const char* source, Stats& stats, const std::string& msg) {
  ++stats.errors;
  stats.last_error = msg;
  SourceLog(log, source, msg);
}

}  // namespace fibnic
