// Test helpers that run the real fibnicd binary: a child process with its own
// environment, and a NOTIFY_SOCKET the test listens on (as systemd would).
#pragma once

#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fibnic::testing {

// A unix datagram socket bound at path: what sd_notify() sends to.
class NotifySocket {
 public:
  explicit NotifySocket(std::string path) : path_(std::move(path)) {
    unlink(path_.c_str());
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path_.c_str(), sizeof a.sun_path - 1);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~NotifySocket() {
    if (fd_ >= 0) close(fd_);
    unlink(path_.c_str());
  }
  bool ok() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }

  // Next datagram within timeout.
  std::optional<std::string> Receive(std::chrono::milliseconds timeout) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return std::nullopt;
    char buf[4096];
    ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n < 0) return std::nullopt;
    return std::string(buf, static_cast<size_t>(n));
  }

  // Reads (and drops) whatever is queued, waiting at most timeout for the first.
  void Drain(std::chrono::milliseconds timeout) {
    while (Receive(timeout)) timeout = std::chrono::milliseconds(0);
  }

  // Receives until a datagram contains needle; every datagram seen is appended to log.
  bool WaitFor(const std::string& needle, std::chrono::milliseconds timeout, std::vector<std::string>* log) {
    auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
      auto m = Receive(left);
      if (!m) return false;
      log->push_back(*m);
      if (m->find(needle) != std::string::npos) return true;
    }
    return false;
  }

 private:
  std::string path_;
  int fd_ = -1;
};

// A child process: argv[0] is the program; env entries are added to ours.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    pid_ = fork();
    if (pid_ == 0) {
      for (const auto& e : env) putenv(const_cast<char*>(strdup(e.c_str())));
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
  }
  ~Child() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  void Signal(int sig) { kill(pid_, sig); }
  bool Alive() {
    if (exited_) return false;
    int st = 0;
    if (waitpid(pid_, &st, WNOHANG) == pid_) {
      exited_ = true;
      status_ = st;
      return false;
    }
    return true;
  }
  // Exit status, or -1 if it did not exit within timeout (or died by a signal).
  // While waiting, between_polls runs every 10 ms (e.g. to drain a notify socket).
  int Wait(std::chrono::milliseconds timeout, const std::function<void()>& between_polls = {}) {
    auto end = std::chrono::steady_clock::now() + timeout;
    while (Alive()) {
      if (std::chrono::steady_clock::now() > end) return -1;
      if (between_polls) between_polls();
      usleep(10000);
    }
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
  }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  int status_ = 0;
};

// A daemon started as `binary --config config` with its stderr in log and
// env added to its environment (e.g. NOTIFY_SOCKET); killed when dropped.
inline std::unique_ptr<Child> StartDaemon(const std::string& binary, const std::string& config, const std::string& log,
                                          const std::vector<std::string>& env = {}) {
  return std::make_unique<Child>(
      std::vector<std::string>{"/bin/sh", "-c", "exec " + binary + " --config " + config + " 2>" + log}, env);
}

inline std::vector<char> ReadFile(const std::string& path) {
  // One bulk read: a char-by-char copy of a 20 MB BAR image takes seconds
  // under ASan on a loaded machine, long enough to fill a notify queue.
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  std::vector<char> bytes(in ? static_cast<size_t>(in.tellg()) : 0);
  in.seekg(0);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<size_t>(in.gcount()));
  return bytes;
}

inline void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace fibnic::testing
