// Leveled logging to stderr. Under systemd (stderr connected to the journal,
// JOURNAL_STREAM set) each line carries a syslog priority prefix ("<3>") so
// journalctl shows and filters levels; on a terminal lines are time-stamped.
// Thread-safe; the level can be changed at run time (SIGHUP reload).
#pragma once

#include <cstdint>
#include <string>

namespace fibnic {

enum class LogLevel : uint8_t { kError, kWarn, kInfo, kDebug };
const char* LogLevelName(LogLevel l);

void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
bool LogEnabled(LogLevel level);
void Log(LogLevel level, const std::string& message);

inline void LogError(const std::string& m) { Log(LogLevel::kError, m); }
inline void LogWarn(const std::string& m) { Log(LogLevel::kWarn, m); }
inline void LogInfo(const std::string& m) { Log(LogLevel::kInfo, m); }
inline void LogDebug(const std::string& m) {
  if (LogEnabled(LogLevel::kDebug)) Log(LogLevel::kDebug, m);
}

}  // namespace fibnic
