#include "sources/kernel/kernel_source.h"
#include "sources/source_log.h"

#include <linux/neighbour.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <netlink/addr.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/route/neighbour.h>
#include <netlink/socket.h>
#include <sys/socket.h>

#include <boost/asio.hpp>
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>

#include "sources/kernel/kernel_route_notes.h"
#include "sources/kernel/kernel_table.h"

namespace fibnic {

namespace asio = boost::asio;

namespace {

using SockPtr = std::unique_ptr<nl_sock, decltype(&nl_socket_free)>;

StatusOr<SockPtr> OpenSocket(const char* what) {
  SockPtr s(nl_socket_alloc(), nl_socket_free);
  if (!s) return ResourceExhausted(std::string("netlink ") + what + " socket: out of memory");
  if (int err = nl_connect(s.get(), NETLINK_ROUTE); err < 0) {
    return Unavailable(std::string("netlink ") + what + " socket: " + nl_geterror(err));
  }
  return s;
}

// What the table feeds in neighbour-only mode: no route message is asked for
// (no route group, no route dump), so the table has no route to give.
class NeighborsOnly : public RibSink {
 public:
  explicit NeighborsOnly(NeighborSink& sink) : sink_(sink) {}
  void UpsertRoute(const Route&) override {}
  void DeleteRoute(const Prefix&, RouteSource) override {}
  void UpsertNeighbor(const Neighbor& n) override { sink_.UpsertNeighbor(n); }
  void DeleteNeighbor(const IpAddr& addr, PortId port) override { sink_.DeleteNeighbor(addr, port); }

 private:
  NeighborSink& sink_;
};

}  // namespace

struct KernelSource::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::io_context& io, RibSink& sink, KernelSourceConfig c) : Impl(io, sink, nullptr, std::move(c)) {}
  Impl(asio::io_context& io, NeighborSink& sink, KernelSourceConfig c)
      : Impl(io, std::make_unique<NeighborsOnly>(sink), std::move(c)) {}
  Impl(asio::io_context& io, std::unique_ptr<NeighborsOnly> only, KernelSourceConfig c)
      : Impl(io, *only, std::move(only), std::move(c)) {}
  // `only` by reference: *only is bound before it is moved from.
  Impl(asio::io_context& io, RibSink& sink, std::unique_ptr<NeighborsOnly>&& only, KernelSourceConfig c)
      : cfg(std::move(c)),
        neighbors_only(std::move(only)),
        table(sink, cfg.ports, Options(cfg),
              [this](const IpAddr& gw, uint32_t ifindex) { Resolve(gw, ifindex); }),
        ev_sock(nullptr, nl_socket_free),
        dump_sock(nullptr, nl_socket_free),
        req_sock(nullptr, nl_socket_free),
        ev_fd(io),
        dump_fd(io),
        retry_timer(io),
        buf(kEventBatch * kEventSlot / sizeof(uint32_t)),  // 1 MB: dumps read into all of it
        notes(table.route_store()) {}

  static KernelTableOptions Options(const KernelSourceConfig& c) {
    KernelTableOptions o;
    o.tables = c.tables;
    o.distance = c.distance;
    o.ignore_protocols = c.ignore_protocols;
    return o;
  }

  bool routes() const { return neighbors_only == nullptr; }

  void Log(const std::string& msg) { SourceLog(cfg.log, "kernel", msg); }
  void Error(const std::string& msg) { SourceError(cfg.log, "kernel", stats, msg); }

  Status Start() {
    RETURN_IF_ERROR(ValidatePortNames(cfg.ports));
    if (routes() && cfg.tables.empty()) return InvalidArgument("kernel source: no routing tables configured");
    ASSIGN_OR_RETURN(ev_sock, OpenSocket("event"));
    ASSIGN_OR_RETURN(dump_sock, OpenSocket("dump"));
    ASSIGN_OR_RETURN(req_sock, OpenSocket("request"));
    // IPv4 addresses: an interface losing its last one loses its IPv4 routes silently.
    int err = routes() ? nl_socket_add_memberships(ev_sock.get(), RTNLGRP_LINK, RTNLGRP_NEIGH, RTNLGRP_IPV4_ROUTE,
                                                   RTNLGRP_IPV6_ROUTE, RTNLGRP_IPV4_RULE, RTNLGRP_IPV6_RULE,
                                                   RTNLGRP_NEXTHOP, RTNLGRP_IPV4_IFADDR, 0)
                       : nl_socket_add_memberships(ev_sock.get(), RTNLGRP_LINK, RTNLGRP_NEIGH, 0);
    if (err < 0) {
      return Unavailable(std::string("netlink subscribe: ") + nl_geterror(err));
    }
    const int fd = nl_socket_get_fd(ev_sock.get());
    int size = cfg.rcvbuf_bytes;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) < 0) {
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    }
    nl_socket_set_nonblocking(ev_sock.get());
    nl_socket_set_nonblocking(dump_sock.get());
    ev_fd.assign(fd);
    dump_fd.assign(nl_socket_get_fd(dump_sock.get()));
    running = true;
    WaitEvents();
    StartDump();
    ArmRetry();
    return OkStatus();
  }

  void Stop() {
    if (!running) return;
    running = false;
    boost::system::error_code ec;
    retry_timer.cancel();
    ev_fd.cancel(ec);
    dump_fd.cancel(ec);
    // The descriptors belong to the libnl sockets, which close them.
    ev_fd.release();
    dump_fd.release();
  }

  // ---- events ---------------------------------------------------------------
  void WaitEvents() {
    ev_fd.async_wait(asio::posix::stream_descriptor::wait_read, [self = shared_from_this()](auto ec) {
      if (ec || !self->running) return;
      self->ReadEvents();
      self->WaitEvents();
    });
  }

  // At most kEventReadsPerTurn datagrams per call (an event datagram holds
  // one message): a burst queued while the loop was busy — a table's worth of
  // routes added or flushed at once — would otherwise hold the loop, and the
  // FPM source and status queries sharing it, until the socket is empty.
  // WaitEvents finds the rest readable at once.
  static constexpr int kEventReadsPerTurn = 256;
  // Datagrams a recvmmsg takes, each into a slot of its own in buf: a routing
  // daemon's burst (100k routes a second) is then read a batch per system
  // call, not a message per call. A datagram longer than a slot (no event
  // message is) would be cut: it counts as lost events (an overrun).
  static constexpr int kEventBatch = 32;
  static constexpr size_t kEventSlot = size_t{32} << 10;
  // Returns false once the socket is empty.
  bool ReadEvents(int max_reads = kEventReadsPerTurn) {
    const int fd = nl_socket_get_fd(ev_sock.get());
    auto* base = reinterpret_cast<uint8_t*>(buf.data());
    std::array<iovec, kEventBatch> iov;
    std::array<mmsghdr, kEventBatch> msgs;
    bool more = true;
    for (int reads = 0; reads < max_reads;) {
      const int want = std::min(kEventBatch, max_reads - reads);
      for (int i = 0; i < want; ++i) {
        iov[i] = {base + i * kEventSlot, kEventSlot};
        msgs[i] = {};
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
      }
      const int got = recvmmsg(fd, msgs.data(), static_cast<unsigned>(want), MSG_DONTWAIT, nullptr);
      if (got < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          more = false;
          break;
        }
        if (errno == ENOBUFS) {
          ++reads;
          OnOverrun();
          continue;
        }
        Error(std::string("netlink receive failed: ") + std::strerror(errno));
        return false;
      }
      reads += got;
      for (int i = 0; i < got; ++i) {
        if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
          OnOverrun();  // drops what is queued after it too: it is older than the re-dump
          break;
        }
        Status st = ForEachNetlinkMessage(base + i * kEventSlot, msgs[i].msg_len, [&](const nlmsghdr* h, size_t) {
          if (dumping) {
            const auto* b = reinterpret_cast<const uint8_t*>(h);
            held.emplace_back(b, b + h->nlmsg_len);
          } else {
            Apply(h);
          }
          return OkStatus();
        });
        if (!st.ok()) Error("netlink event: " + st.message());
      }
    }
    RedumpIfUnsure();
    return more;
  }

  void RedumpIfUnsure() {
    if (!unsure || dumping) return;
    unsure = false;
    ++stats.unsure_redumps;
    StartDump();
  }

  // Events were lost. What is still queued is older than the dump about to
  // be taken, and replaying it after the dump would bring back what the
  // lost events undid: drop it, and what was held, then dump.
  void OnOverrun() {
    ++stats.overruns;
    Log("netlink overrun (events lost): re-dumping and reconciling");
    const int fd = nl_socket_get_fd(ev_sock.get());
    for (int i = 0; i < 100000; ++i) {  // bounded: the kernel may keep adding
      const ssize_t n = recv(fd, buf.data(), buf.size() * sizeof(uint32_t), MSG_DONTWAIT);
      if (n < 0 && errno != EINTR && errno != ENOBUFS) break;
    }
    held.clear();
    route_stage_held = 0;  // what the running dump's route stage saw change is lost: torn
    lost_while_dumping = dumping;
    StartDump();  // when a dump is running: another one right after it
  }

  void Apply(const nlmsghdr* h) {
    Status st = table.Apply(h);
    if (!st.ok()) Error("netlink message type " + std::to_string(h->nlmsg_type) + ": " + st.message());
    // A replace the kernel did not say enough about: its routes again, once
    // this turn's events (or the held ones) are in, or after the running dump.
    if (table.RedumpWanted()) unsure = true;
    if (table.counts().refusing != refusing) {  // VRF: see KernelTableCounts::refusing
      refusing = table.counts().refusing;
      Log(refusing.empty() ? std::string("FIBNIC ports route with one table again: following it") : refusing);
    }
  }

  // ---- dumps ----------------------------------------------------------------
  static constexpr int kRouteStage = 5;  // the last: links, neighbours, addresses, rules, objects come first
  void StartDump() {
    if (dumping) {
      redump = true;
      return;
    }
    if (first_dump_done) ++stats.resyncs;
    dumping = true;
    interrupted = false;
    table.BeginResync();
    stage = 0;
    if (!SendDump()) return;
    WaitDump();
  }

  bool SendDump() {
    int err = 0;
    switch (stage) {
      case 0: {
        ifinfomsg ifi{};
        err = nl_send_simple(dump_sock.get(), RTM_GETLINK, NLM_F_DUMP, &ifi, sizeof ifi);
        break;
      }
      case 1: {
        ndmsg nd{};
        err = nl_send_simple(dump_sock.get(), RTM_GETNEIGH, NLM_F_DUMP, &nd, sizeof nd);
        break;
      }
      case 2: {  // IPv4 addresses: which interfaces have IPv4 enabled (kernel_table_addr.cc)
        ifaddrmsg ifa{};
        ifa.ifa_family = AF_INET;
        err = nl_send_simple(dump_sock.get(), RTM_GETADDR, NLM_F_DUMP, &ifa, sizeof ifa);
        break;
      }
      case 3: {  // policy rules (both families): they may take routes out of the followed tables
        rtmsg rt{};
        err = nl_send_simple(dump_sock.get(), RTM_GETRULE, NLM_F_DUMP, &rt, sizeof rt);
        break;
      }
      case 4: {  // next-hop objects, before the routes naming them
        nhmsg nh{};
        err = nl_send_simple(dump_sock.get(), RTM_GETNEXTHOP, NLM_F_DUMP, &nh, sizeof nh);
        break;
      }
      default: {  // kRouteStage
        route_stage_held = held.size();
        lost_while_dumping = false;
        rtmsg rt{};
        err = nl_send_simple(dump_sock.get(), RTM_GETROUTE, NLM_F_DUMP, &rt, sizeof rt);
      }
    }
    if (err < 0) {
      Error(std::string("netlink dump request failed: ") + nl_geterror(err));
      dumping = false;
      return false;
    }
    return true;
  }

  void WaitDump() {
    dump_fd.async_wait(asio::posix::stream_descriptor::wait_read, [self = shared_from_this()](auto ec) {
      if (ec || !self->running) return;
      if (self->ReadDump()) self->WaitDump();
    });
  }

  // Returns true while the dump needs more reading. At most kDumpReadsPerTurn
  // buffers per call: the kernel makes the next part of a dump as each one
  // is read, so the socket is rarely empty before the dump is over, and
  // reading to the end held the sources' loop (FPM, status queries) for a
  // whole table — tens of seconds for a million routes re-dumped under
  // zebra's churn (bench/frr). WaitDump finds the rest readable.
  static constexpr int kDumpReadsPerTurn = 8;
  bool ReadDump() {
    const int fd = nl_socket_get_fd(dump_sock.get());
    for (int reads = 0;; ++reads) {
      if (reads == kDumpReadsPerTurn) return true;
      const ssize_t n = recv(fd, buf.data(), buf.size() * sizeof(uint32_t), MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
        Error(std::string("netlink dump receive failed: ") + std::strerror(errno));
        dumping = false;
        return false;
      }
      bool done = false;
      bool failed = false;
      const auto* data = reinterpret_cast<const uint8_t*>(buf.data());
      Status st = ForEachNetlinkMessage(data, static_cast<size_t>(n), [&](const nlmsghdr* h, size_t) {
        if (done || failed) return OkStatus();
        if (h->nlmsg_flags & NLM_F_DUMP_INTR) {  // table changed under the dump
          redump = true;
          interrupted = true;
        }
        if (h->nlmsg_type == NLMSG_DONE) {
          done = true;
        } else if (h->nlmsg_type == NLMSG_ERROR) {
          int code = 0;
          if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(int))) std::memcpy(&code, NLMSG_DATA(h), sizeof code);
          Error("netlink dump (stage " + std::to_string(stage) + ") failed: " + std::strerror(-code));
          failed = true;
        } else {
          Apply(h);
        }
        return OkStatus();
      });
      if (!st.ok()) Error("netlink dump: " + st.message());
      if (failed) {
        dumping = false;
        redump = true;  // retried by the retry timer
        return false;
      }
      if (done) {
        if (++stage < (routes() ? kRouteStage + 1 : 2)) {  // links, neighbours[, addresses, rules, next-hop objects, routes]
          if (!SendDump()) return false;
          continue;
        }
        FinishDump();
        return false;
      }
    }
  }

  void FinishDump() {
    // A dump the kernel marked interrupted (NLM_F_DUMP_INTR: links,
    // addresses or next-hop objects changed under it) may have skipped some
    // it still holds — an address dump goes on by position, so deletions
    // before its cursor skip the addresses after it. Sweeping them would
    // take, until the re-dump, an interface's last IPv4 address (its routes
    // fall to their cover) or zebra's objects through a link (for good). So
    // nothing is swept: the re-dump that follows sweeps.
    if (interrupted) {
      DumpOver(0);
      return;
    }
    table.BeginSweep(Torn());
    SweepSome();
  }

  // Whether the routing tables changed while the route stage read them, so
  // that the kernel may have left routes out (KernelTable::BeginSweep): a
  // route, next-hop object or link event arrived meanwhile, or events were
  // lost. What the event socket holds by now is read (and held) first.
  static constexpr int kDrainReads = 4096;
  bool Torn() {
    const bool drained = !ReadEvents(kDrainReads);
    if (lost_while_dumping || !drained) return true;
    for (size_t i = route_stage_held; i < held.size(); ++i) {
      switch (reinterpret_cast<const nlmsghdr*>(held[i].data())->nlmsg_type) {
        case RTM_NEWROUTE:
        case RTM_DELROUTE:
        case RTM_NEWNEXTHOP:
        case RTM_DELNEXTHOP:
        case RTM_NEWLINK:
        case RTM_DELLINK:
          return true;
        default:
          break;
      }
    }
    return false;
  }

  // The sweep after a dump, kSweepStep routes a turn of the loop (status
  // queries and the FPM replies are served in between); events stay held
  // until it is over, as during the dump.
  static constexpr size_t kSweepStep = 16384;
  void SweepSome() {
    if (!table.SweepStep(kSweepStep)) {
      asio::post(ev_fd.get_executor(), [self = shared_from_this()] {
        if (self->running) self->SweepSome();
      });
      return;
    }
    DumpOver(table.EndSweep());
  }

  void DumpOver(size_t swept) {
    if (first_dump_done && swept != 0) Log("resync removed " + std::to_string(swept) + " stale routes/neighbours");
    first_dump_done = true;
    dumping = false;
    for (const auto& m : held) Apply(reinterpret_cast<const nlmsghdr*>(m.data()));
    held.clear();
    if (redump) {
      redump = false;
      unsure = false;  // this dump answers it too
      StartDump();
    }
    RedumpIfUnsure();
  }

  // ---- gateway resolution ----------------------------------------------------
  void Resolve(const IpAddr& gw, uint32_t ifindex) {
    if (!cfg.resolve_gateways || !req_sock) return;
    std::unique_ptr<rtnl_neigh, decltype(&rtnl_neigh_put)> n(rtnl_neigh_alloc(), rtnl_neigh_put);
    const auto bytes = gw.bytes();
    const int fam = gw.is_v4() ? AF_INET : AF_INET6;
    std::unique_ptr<nl_addr, decltype(&nl_addr_put)> dst(nl_addr_build(fam, bytes.data(), gw.is_v4() ? 4 : 16),
                                                           nl_addr_put);
    if (!n || !dst) return;
    rtnl_neigh_set_family(n.get(), fam);
    rtnl_neigh_set_ifindex(n.get(), static_cast<int>(ifindex));
    rtnl_neigh_set_dst(n.get(), dst.get());
    rtnl_neigh_set_state(n.get(), NUD_NONE);
    rtnl_neigh_set_flags(n.get(), NTF_USE);  // "use it": the kernel creates the entry and probes
    ++stats.resolve_requests;
    // NLM_F_EXCL: only ever create. NTF_USE on an existing entry turns a
    // PERMANENT one into INCOMPLETE without a notification (kernel 6.x), and
    // the entry may have become PERMANENT (`ip neigh replace`) after this
    // side last heard of it: the device would keep its MAC while the kernel
    // has none (found by tests/kdiff). An existing entry answers
    // EEXIST and stays as it is; a FAILED one is re-probed by the kernel when
    // the punted traffic wants it, or asked again once it is collected.
    const int err = rtnl_neigh_add(req_sock.get(), n.get(), NLM_F_CREATE | NLM_F_EXCL);
    if (err < 0 && err != -NLE_EXIST) {
      Error("asking the kernel to resolve " + gw.ToString() + " on ifindex " + std::to_string(ifindex) + ": " +
            nl_geterror(err));
    }
  }

  void ArmRetry() {
    retry_timer.expires_after(cfg.resolve_retry);
    retry_timer.async_wait([self = shared_from_this()](auto ec) {
      if (ec || !self->running) return;
      if (!self->dumping) {
        if (self->redump) {
          self->redump = false;
          self->StartDump();
        }
        self->table.ResolvePending();
      }
      self->ArmRetry();
    });
  }

  KernelSourceConfig cfg;
  std::unique_ptr<NeighborsOnly> neighbors_only;  // set: neighbour-only mode, the sink the table feeds
  KernelTable table;
  SockPtr ev_sock, dump_sock, req_sock;
  asio::posix::stream_descriptor ev_fd, dump_fd;
  asio::steady_timer retry_timer;
  std::vector<uint32_t> buf;  // 4-byte aligned receive buffer
  std::deque<std::vector<uint8_t>> held;  // events that arrived during a dump
  bool running = false, dumping = false, redump = false, first_dump_done = false;
  bool interrupted = false;         // some part of this dump had NLM_F_DUMP_INTR: it may have missed some
  bool unsure = false;              // the table asked for a re-dump (KernelTable::RedumpWanted)
  size_t route_stage_held = 0;      // held.size() when the route stage began (Torn)
  bool lost_while_dumping = false;  // an overrun during the route stage (Torn)
  int stage = 0;
  std::string refusing;
  KernelSourceStats stats;
  KernelRouteNotes notes;
};

KernelSource::KernelSource(asio::io_context& io, RibSink& sink, KernelSourceConfig config)
    : impl_(std::make_shared<Impl>(io, sink, std::move(config))) {}

KernelSource::KernelSource(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::unique_ptr<KernelSource> KernelSource::NeighboursOnly(asio::io_context& io, NeighborSink& sink,
                                                           KernelSourceConfig config) {
  return std::unique_ptr<KernelSource>(new KernelSource(std::make_shared<Impl>(io, sink, std::move(config))));
}

KernelSource::~KernelSource() { impl_->Stop(); }

Status KernelSource::Start() { return impl_->Start(); }
void KernelSource::Stop() { impl_->Stop(); }
void KernelSource::RequestResync() { impl_->StartDump(); }

RouteNotes* KernelSource::route_notes() { return impl_->neighbors_only ? nullptr : &impl_->notes; }

// The first dump is in, or it failed (the error is counted and a later dump
// reconciles): either way there is nothing more to wait for.
bool KernelSource::initial_sync_done() const {
  return impl_->first_dump_done || (impl_->running && !impl_->dumping);
}

nlohmann::json KernelSource::StatsJson() const {
  const KernelSourceStats s = stats();
  return {{"messages", s.messages},
          {"ignored", s.ignored},
          {"routes", s.routes},
          {"neighbors", s.neighbors},
          {"route_updates", s.route_updates},
          {"neighbor_updates", s.neighbor_updates},
          {"errors", s.errors},
          {"overruns", s.overruns},
          {"resyncs", s.resyncs},
          {"swept", s.swept},
          {"resolve_requests", s.resolve_requests},
          {"unsure_redumps", s.unsure_redumps},
          {"torn_dumps", s.torn_dumps},
          {"kept_unlisted", s.kept_unlisted},
          {"route_kinds", s.route_kinds},
          // The route store's bytes (kernel_routes.h), as the FPM source reports its own.
          {"memory_bytes", {{"routes", s.route_memory_bytes}}},
          {"dumping", s.dumping},
          // Why everything punts (FIBNIC ports split over VRFs, ...); null = following the table.
          {"refusing", s.refusing.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.refusing)},
          {"last_error", s.last_error}};
}

// Refusing first: everything punts whatever else holds.
std::string KernelSource::State() const {
  const KernelSourceStats s = stats();
  if (!s.refusing.empty()) return "refusing";
  return s.dumping ? "dumping" : "up";
}

KernelSourceStats KernelSource::stats() const {
  KernelSourceStats s = impl_->stats;
  const KernelTableCounts& c = impl_->table.counts();
  s.messages = c.messages;
  s.ignored = c.ignored;
  s.routes = impl_->table.routes();
  s.neighbors = impl_->table.neighbors();
  s.nexthop_objects = impl_->table.nexthop_objects();
  s.route_kinds = impl_->table.route_kinds();
  s.route_memory_bytes = impl_->table.route_memory();
  s.route_updates = c.route_updates;
  s.neighbor_updates = c.neighbor_updates;
  s.swept = c.swept;
  s.torn_dumps = c.torn_dumps;
  s.kept_unlisted = c.kept_unlisted;
  s.dumping = impl_->dumping;
  s.refusing = c.refusing;
  return s;
}

}  // namespace fibnic
