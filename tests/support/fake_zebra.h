// zebra's side of an FPM connection, as a plain blocking socket: sends
// routes the way zebra does (one netlink message per frame) and reads the
// offload replies back, checking each is a frame zebra can take.
#pragma once

#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "sources/fpm/fpm_frame.h"
#include "sources/netlink/netlink_build.h"
#include "sources/netlink/netlink_route.h"
#include "tests/sources/fake_route_notes.h"
#include "tests/support/netlink_bytes.h"

namespace fibnic::testing {

// One offload reply as zebra reads it.
struct FpmReply {
  Prefix prefix;
  uint16_t nlmsg_flags = 0;
  uint8_t protocol = 0;
  uint32_t table = 0;
  uint32_t rtm_flags = 0;
};

class FakeZebra {
 public:
  // rcvbuf: SO_RCVBUF before connecting (0: the system's), so that a zebra
  // that does not read closes its window after that much.
  explicit FakeZebra(uint16_t port, int rcvbuf = 0) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    if (rcvbuf > 0) setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    timeval tv{0, 100000};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  // `kernel`: the kernel takes each route before zebra sends it (nullptr: it does not have it yet).
  FakeZebra(uint16_t port, FakeRouteNotes* kernel, int rcvbuf = 0) : FakeZebra(port, rcvbuf) { kernel_ = kernel; }
  ~FakeZebra() { close(fd_); }
  void Send(const NlRoute& r) {
    if (kernel_) kernel_->Add(r.prefix, r.protocol, r.table);
    const auto msg = BuildRouteMessage(r);
    const auto frame = EncodeFpmFrame(msg.data(), msg.size());
    // MSG_NOSIGNAL: a listener that refused the connection fails the test, not the process.
    ASSERT_EQ(send(fd_, frame.data(), frame.size(), MSG_NOSIGNAL), static_cast<ssize_t>(frame.size()));
  }
  // Whether the listener closes this connection (end of file or a reset)
  // within `limit`; what it sends meanwhile is kept for Read.
  bool ClosedWithin(std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      uint8_t buf[4096];
      const ssize_t got = read(fd_, buf, sizeof buf);
      if (got == 0 || (got < 0 && errno == ECONNRESET)) return true;
      if (got > 0) pending_.insert(pending_.end(), buf, buf + got);
    }
    return false;
  }
  // Replies read until `n` have come or `limit` passed.
  std::vector<FpmReply> Read(size_t n, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (replies_.size() < n && std::chrono::steady_clock::now() < end) {
      uint8_t buf[4096];
      const ssize_t got = read(fd_, buf, sizeof buf);
      if (got > 0) pending_.insert(pending_.end(), buf, buf + got);
      Parse();
    }
    std::vector<FpmReply> out;
    out.swap(replies_);
    return out;
  }

 private:
  void Parse() {
    while (pending_.size() >= kFpmHeaderLen) {
      const size_t len = size_t{pending_[2]} << 8 | pending_[3];
      ASSERT_EQ(pending_[0], kFpmVersion);
      ASSERT_EQ(pending_[1], kFpmTypeNetlink);
      if (len < kFpmHeaderLen + sizeof(nlmsghdr)) {
        ADD_FAILURE() << "reply frame of " << len << " bytes";
        pending_.clear();
        return;
      }
      if (pending_.size() < len) return;
      const auto aligned = Aligned(std::span(pending_).subspan(kFpmHeaderLen, len - kFpmHeaderLen));
      const nlmsghdr* h = Header(aligned);
      // zebra reads one netlink message per frame: it must fill the frame.
      EXPECT_EQ(h->nlmsg_len, len - kFpmHeaderLen);
      EXPECT_EQ(h->nlmsg_type, RTM_NEWROUTE);
      auto m = ParseNetlinkMessage(reinterpret_cast<const uint8_t*>(aligned.data()), h->nlmsg_len);
      EXPECT_TRUE(m.ok()) << m.status().ToString();
      if (m.ok()) replies_.push_back({m->route.prefix, h->nlmsg_flags, m->route.protocol, m->route.table, m->route.flags});
      pending_.erase(pending_.begin(), pending_.begin() + static_cast<ptrdiff_t>(len));
    }
  }
  int fd_ = -1;
  FakeRouteNotes* kernel_ = nullptr;
  std::vector<uint8_t> pending_;
  std::vector<FpmReply> replies_;
};

}  // namespace fibnic::testing
