#include "common/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>

namespace fibnic {
namespace {

std::atomic<LogLevel> g_level{LogLevel::kInfo};
std::mutex g_mu;

// systemd sets JOURNAL_STREAM=<dev>:<inode> of the stream it connected to
// stderr; only when it still matches is stderr the journal.
bool StderrIsJournal() {
  const char* js = std::getenv("JOURNAL_STREAM");
  if (!js) return false;
  unsigned long long dev = 0, ino = 0;
  if (std::sscanf(js, "%llu:%llu", &dev, &ino) != 2) return false;
  struct stat st;
  if (fstat(STDERR_FILENO, &st) != 0) return false;
  return st.st_dev == dev && st.st_ino == ino;
}

const char* Priority(LogLevel l) {
  switch (l) {
    case LogLevel::kError: return "<3>";
    case LogLevel::kWarn: return "<4>";
    case LogLevel::kInfo: return "<6>";
    case LogLevel::kDebug: return "<7>";
  }
  return "<6>";
}

}  // namespace

const char* LogLevelName(LogLevel l) {
  switch (l) {
    case LogLevel::kError: return "error";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kInfo: return "info";
    case LogLevel::kDebug: return "debug";
  }
  return "?";
}

void SetLogLevel(LogLevel level) { g_level.store(level); }
LogLevel GetLogLevel() { return g_level.load(); }
bool LogEnabled(LogLevel level) { return level <= g_level.load(); }

void Log(LogLevel level, const std::string& message) {
  if (!LogEnabled(level)) return;
  static const bool journal = StderrIsJournal();
  std::lock_guard<std::mutex> lock(g_mu);
  if (journal) {
    // One record per line: continuation lines keep the priority.
    size_t start = 0;
    while (start <= message.size()) {
      size_t nl = message.find('\n', start);
      std::string line = message.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
      std::fprintf(stderr, "%s%s\n", Priority(level), line.c_str());
      if (nl == std::string::npos) break;
      start = nl + 1;
    }
  } else {
    auto now = std::chrono::system_clock::now();
    std::time_t t = std::chrono::system_clock::to_time_t(now);
    int ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
    struct tm tm;
    localtime_r(&t, &tm);
    char ts[32];
    std::strftime(ts, sizeof ts, "%H:%M:%S", &tm);
    std::fprintf(stderr, "%s.%03d %-5s %s\n", ts, ms, LogLevelName(level), message.c_str());
  }
  std::fflush(stderr);
}

}  // namespace fibnic
