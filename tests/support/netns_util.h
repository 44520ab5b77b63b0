// Helpers for the integration tests: run commands, start and reap daemons,
// and give the test process its own network namespace (so nothing touches
// the host's network and parallel tests do not collide).
#pragma once

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace fibnic::testing {

// Runs `sh -c cmd`; returns its stdout; *rc gets the exit status.
inline std::string Sh(const std::string& cmd, int* rc = nullptr) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int st = pclose(p);
  if (rc) *rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

// Runs cmd and fails the test if it does not exit 0.
inline void MustSh(const std::string& cmd) {
  int rc = 0;
  const std::string out = Sh(cmd + " 2>&1", &rc);
  ASSERT_EQ(rc, 0) << cmd << "\n" << out;
}

// Moves the calling thread (and everything it starts later) into a fresh
// network namespace with loopback up.
inline void EnterNewNetns() {
  ASSERT_EQ(unshare(CLONE_NEWNET), 0) << "unshare(CLONE_NEWNET) needs root";
  MustSh("ip link set lo up");
}

// Polls cond every 100 ms for at most `limit`.
inline bool WaitFor(const std::function<bool()>& cond, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return cond();
}

// Daemons started by a test; all are killed (and reaped) on destruction,
// even when the test fails half-way.
class Processes {
 public:
  ~Processes() {
    for (pid_t p : pids_) Kill(p);
  }
  // Starts argv[0] with its output appended to `log`.
  pid_t Start(const std::vector<std::string>& argv, const std::string& log) {
    const pid_t pid = fork();
    if (pid == 0) {
      FILE* f = std::fopen(log.c_str(), "a");
      if (f) {
        dup2(fileno(f), 1);
        dup2(fileno(f), 2);
      }
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    pids_.push_back(pid);
    return pid;
  }
  // SIGTERM, then SIGKILL after 5 s; reaps.
  void Kill(pid_t pid, int sig = SIGTERM) {
    if (pid <= 0) return;
    kill(pid, sig);
    for (int i = 0; i < 50; ++i) {
      if (waitpid(pid, nullptr, WNOHANG) == pid) return Forget(pid);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    Forget(pid);
  }
  bool Alive(pid_t pid) {
    if (waitpid(pid, nullptr, WNOHANG) == 0) return true;
    Forget(pid);
    return false;
  }

 private:
  void Forget(pid_t pid) { std::erase(pids_, pid); }
  std::vector<pid_t> pids_;
};

}  // namespace fibnic::testing
