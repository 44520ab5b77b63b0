// Runs a check as uid/gid 65534 (nobody) in a forked child and hands back
// the text it produced: what a service user, not root, would be told.
// Needs root to change user (CI runs as root): without it the check fails
// and says so rather than skipping.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>

namespace fibnic::testing {

// The child's text, or "child failed: ..." if it could not run the check.
inline std::string AsNobody(const std::function<std::string()>& check) {
  if (::geteuid() != 0) return "child failed: needs root to become uid 65534";
  int fds[2];
  if (::pipe(fds) != 0) return "child failed: pipe";
  const pid_t child = ::fork();
  if (child < 0) return "child failed: fork";
  if (child == 0) {
    ::close(fds[0]);
    if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0) ::_exit(2);
    const std::string msg = check();
    if (::write(fds[1], msg.data(), msg.size()) < 0) ::_exit(3);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string msg;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) msg.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  if (::waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return "child failed: status " + std::to_string(status);
  }
  return msg;
}

}  // namespace fibnic::testing
