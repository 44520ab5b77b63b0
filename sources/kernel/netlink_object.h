// libnl's object parsers for one rtnetlink message (neighbours, links), shared
// by the kernel table's files.
#pragma once

#include <netlink/msg.h>
#include <netlink/object.h>

#include <memory>
#include <string>
#include <utility>

#include "common/status.h"

namespace fibnic {

// libnl parses neighbour and link messages into objects; this hands the
// object of one message to fn.
template <typename Fn>
Status ParseObject(const nlmsghdr* msg, const char* what, Fn&& fn) {
  std::unique_ptr<nl_msg, decltype(&nlmsg_free)> m(nlmsg_convert(const_cast<nlmsghdr*>(msg)), nlmsg_free);
  if (!m) return ResourceExhausted(std::string("cannot copy ") + what + " message");
  nlmsg_set_proto(m.get(), NETLINK_ROUTE);  // selects libnl-route's parsers
  bool seen = false;
  auto cb = [](nl_object* obj, void* arg) {
    auto* ctx = static_cast<std::pair<Fn*, bool*>*>(arg);
    *ctx->second = true;
    (*ctx->first)(obj);
  };
  std::pair<Fn*, bool*> ctx{&fn, &seen};
  const int err = nl_msg_parse(m.get(), cb, &ctx);
  if (err < 0 || !seen) {
    return InvalidArgument(std::string("malformed ") + what + " message (" + std::to_string(msg->nlmsg_len) +
                           " bytes): " + (err < 0 ? nl_geterror(err) : "no object"));
  }
  return OkStatus();
}


}  // namespace fibnic
