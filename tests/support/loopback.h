// Loopback ports for servers a test starts: bound by the kernel's choice
// (port 0), so parallel tests and leftover daemons never collide.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>

namespace fibnic::testing {

// A TCP socket bound to host (an IPv4 address) on a port the kernel picked,
// stored in *port; not yet listening.
inline int BoundTcpSocket(const char* host, uint16_t* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  EXPECT_EQ(::inet_pton(AF_INET, host, &a.sin_addr), 1) << host;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << host;
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  *port = ntohs(a.sin_port);
  return fd;
}

// A port free on host at the time of the call, for a daemon's configuration.
inline uint16_t FreePort(const char* host = "127.0.0.1") {
  uint16_t port = 0;
  ::close(BoundTcpSocket(host, &port));
  return port;
}

}  // namespace fibnic::testing
