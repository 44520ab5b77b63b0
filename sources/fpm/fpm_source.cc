#include "sources/fpm/fpm_source.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <boost/asio.hpp>
#include <chrono>
#include <cstdio>
#include <optional>
#include <vector>

#include "sources/fpm/fpm_frame.h"
#include "sources/fpm/fpm_kernel_check.h"
#include "sources/fpm/fpm_offload.h"
#include "sources/fpm/fpm_replay.h"
#include "sources/source_log.h"
#include "sources/fpm/fpm_table.h"

namespace fibnic {

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;

struct FpmSource::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::io_context& io, RouteSink& sink, FpmSourceConfig c)
      : cfg(std::move(c)),
        ports(cfg.ports),
        table(sink, [this](uint32_t ifindex) { return ports.Port(ifindex); },
              TableOptions(cfg)),
        acceptor(io),
        sweep_timer(io),
        ports_timer(io),
        initial_timer(io),
        watch(cfg.stale_hold, cfg.stale_hold_max),
        buf(64 * 1024) {
    ports.UseSystemNames(cfg.port_name_max_age);
    if (cfg.offload) {
      replies = std::make_shared<FpmReplies>(
          io, table, *cfg.offload,
          FpmReplyConfig{cfg.table, 4096, cfg.offload_buffer, cfg.offload_quiet, cfg.offload_walk_every,
                         [this](const std::string& m) { Log(m); }});
    }
  }
  // Routes remembered for replies between two questions (more: a walk finds them).
  static constexpr size_t kSentMax = 16384;
  static FpmTableOptions TableOptions(const FpmSourceConfig& c) {
    FpmTableOptions o;
    o.table = c.table;
    o.distance = c.distance;
    o.ignore_protocols = c.ignore_protocols;
    o.sent_max = c.offload ? kSentMax : 0;
    o.kernel_holds_object = c.kernel_holds_object;
    o.kernel_object = c.kernel_object;
    return o;
  }

  void Log(const std::string& msg) { SourceLog(cfg.log, "fpm", msg); }
  void Error(const std::string& msg) { SourceError(cfg.log, "fpm", stats, msg); }

  Status Start() {
    RETURN_IF_ERROR(ValidatePortNames(cfg.ports));
    if (cfg.stale_hold_max < cfg.stale_hold)
      return InvalidArgument("fpm: stale_hold_max (" + std::to_string(cfg.stale_hold_max.count()) +
                             " ms) is shorter than stale_hold (" + std::to_string(cfg.stale_hold.count()) + " ms)");
    boost::system::error_code ec;
    const auto addr = asio::ip::make_address(cfg.address, ec);
    if (ec) return InvalidArgument("fpm: bad listen address '" + cfg.address + "'");
    const tcp::endpoint ep(addr, cfg.port);
    acceptor.open(ep.protocol(), ec);
    if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor.bind(ep, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      acceptor.close();
      return Unavailable("fpm: cannot listen on " + cfg.address + ":" + std::to_string(cfg.port) + ": " + ec.message());
    }
    stopped = false;
    Log("listening on " + cfg.address + ":" + std::to_string(acceptor.local_endpoint().port()));
    DoAccept();
    ArmPortsCheck();
    if (cfg.initial_wait.count() > 0) {
      initial_timer.expires_after(cfg.initial_wait);
      initial_timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
        if (ec || self->initial_over) return;
        self->initial_over = true;
        if (self->kernel_has_zebra_routes) {
          self->Log("start-up: " + std::string(self->stats.connected ? "zebra's replay is not over" : "zebra has not connected") +
                    " after initial_wait (" + std::to_string(self->cfg.initial_wait.count()) +
                    " ms); the device is written without the rest of zebra's routes");
        }
      });
    }
    return OkStatus();
  }

  // zebra says nothing when an interface is renamed (or its index comes to
  // name another one): its routes keep their ifindex. So the FIBNIC port of
  // every next-hop set is looked up again once the names have aged, and the
  // routes of sets whose answer moved go to the RIB (issue #14, 6(d)).
  void ArmPortsCheck() {
    ports_timer.expires_after(cfg.port_name_max_age);
    ports_timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec || self->stopped) return;
      const uint64_t before = self->table.counts().route_updates;
      self->table.ReevaluateAll();
      if (const uint64_t n = self->table.counts().route_updates - before; n != 0) {
        self->Log("interfaces renamed or replaced: " + std::to_string(n) + " routes follow the port map");
      }
      self->ArmPortsCheck();
    });
  }

  void Stop() {
    stopped = true;
    ports_timer.cancel();
    if (replies) replies->Stop();
    boost::system::error_code ec;
    acceptor.close(ec);
    initial_timer.cancel();
    CloseConnection();
  }

  bool InitialStateIn() const {
    return cfg.initial_wait.count() == 0 || !kernel_has_zebra_routes || initial_over;
  }

  void KernelRoute(const KernelRouteView& k) {
    if (k.table != cfg.table) return;
    if (!k.deleted) kernel_has_zebra_routes = true;
    const uint64_t overflows = table.counts().flux_overflows;
    table.KernelRoute(k);
    // Once per time the map fills up (again only after it emptied).
    if (table.counts().flux_overflows != overflows && !flux_full_logged) {
      flux_full_logged = true;
      Log("the kernel and FPM disagree on more than " + std::to_string(table.in_flux()) +
          " prefixes: the others punt by placeholder until zebra's word on them (flux_overflows)");
    } else if (flux_full_logged && table.in_flux() == 0) {
      flux_full_logged = false;
    }
  }

  void KernelDumpEnds(bool complete) {
    const uint64_t gone = table.counts().kernel_dump_gone;
    table.KernelDumpEnds(complete);
    if (const uint64_t n = table.counts().kernel_dump_gone - gone; n != 0) {
      Log("the kernel's dump does not show " + std::to_string(n) + " of zebra's routes held here" +
          (replay_dump ? " (replayed, not in the kernel)" : " (their deletions were lost)") +
          ": taken as not in the kernel");
    }
    if (!replay_dump) return;
    if (!complete) {  // interrupted: it concluded nothing, ask again
      cfg.request_kernel_dump();
      return;
    }
    replay_dump = false;
    if (!initial_over) {
      initial_over = true;
      initial_timer.cancel();
    }
  }

  void KernelNexthopAdded(uint32_t id) {
    objects_gone.erase(id);  // the id made again before its deletion was applied
    table.KernelObjectAdded(id);
  }

  void KernelNexthopDeleted(uint32_t id) {
    const bool first = nexthops_deleted.empty() && objects_gone.empty();
    objects_gone.insert(id);
    if (!stats.connected || stats.replaying) nexthops_deleted.insert(id);  // else nothing is stale
    if (!first) return;
    // After the rest of this burst (zebra deletes many at once).
    asio::post(acceptor.get_executor(), [self = shared_from_this()] {
      std::set<uint32_t> gone;
      gone.swap(self->objects_gone);
      self->table.KernelObjectsGone(gone);
      std::set<uint32_t> ids;
      ids.swap(self->nexthops_deleted);
      if (ids.empty()) return;
      const size_t n = self->table.DropStaleUsing(ids);
      if (n != 0) {
        self->Log("the kernel deleted " + std::to_string(ids.size()) + " of zebra's next-hop objects: dropped " +
                  std::to_string(n) + " stale routes using them");
      }
    });
  }

  // Asks the kernel about each stale route at the sweep (one netlink round
  // trip each), up to kKernelChecks: beyond that, as when zebra is not on
  // this host, what zebra did not replay is swept.
  static constexpr size_t kKernelChecks = 65536;
  FpmTable::KernelHolds KernelHolds() {
    return [table = cfg.table, left = kKernelChecks](const Prefix& p, uint8_t protocol) mutable {
      if (left == 0) return false;
      --left;
      return KernelHoldsRoute(p, table, protocol);
    };
  }

  void DoAccept() {
    acceptor.async_accept([self = shared_from_this()](boost::system::error_code ec, tcp::socket s) {
      if (self->stopped) return;
      if (ec) {
        if (ec == asio::error::operation_aborted) return;
        self->Error("accept failed: " + ec.message());
      } else {
        self->OnConnection(std::move(s));
      }
      self->DoAccept();
    });
  }

  void OnConnection(tcp::socket s) {
    boost::system::error_code ec;
    const auto remote = s.remote_endpoint(ec);
    const std::string peer = ec ? "?" : remote.address().to_string() + ":" + std::to_string(remote.port());
    if (conn) {
      ++stats.refused;
      // A local user can open thousands of connections a second: one line per
      // kRefusedLogInterval (with the count of those not logged), never one
      // each, so the refusals cannot flood the journal. stats.refused counts all.
      const auto now = Clock::now();
      if (refused_logged_at && now - *refused_logged_at < kRefusedLogInterval) {
        ++refused_unlogged;
      } else {
        Log("refused a connection from " + peer + ": zebra's connection from " + stats.peer +
            " is live (one FPM feed at a time)" +
            (refused_unlogged ? "; " + std::to_string(refused_unlogged) + " more refused since the last such line"
                              : ""));
        refused_logged_at = now;
        refused_unlogged = 0;
      }
      s.close(ec);
      return;
    }
    EnableKeepalive(s);
    conn = std::make_shared<tcp::socket>(std::move(s));
    ++conn_id;
    frames_before += reader.frames();
    reader = FpmFrameReader();
    stats.connected = true;
    stats.peer = peer;
    if (++stats.connections > 1) ++stats.resyncs;
    table.MarkAllStale();
    watch.Connected(Clock::now());
    stats.replaying = true;
    Log("zebra connected from " + peer + "; " + std::to_string(table.stale_count()) +
        " routes/groups stale until replayed");
    ArmSweep();
    if (replies) replies->Connected(conn);
    DoRead(conn_id);
  }

  // zebra sends nothing while its table is quiet: TCP keepalive (probes after
  // 10 s idle, every 5 s, 4 unanswered = dead) is what notices a peer gone
  // without a FIN, so that the one-connection rule cannot lock zebra out.
  static void EnableKeepalive(tcp::socket& s) {
    boost::system::error_code ec;
    s.set_option(asio::socket_base::keep_alive(true), ec);
    const int fd = s.native_handle();
    const int idle = 10, interval = 5, count = 4;
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
  }

  void CloseConnection() {
    sweep_timer.cancel();
    if (!conn) return;
    if (replies) replies->Closed();
    // zebra is away: what it told us is stale until it replays it, and the
    // kernel's deletions meanwhile take it away (KernelRoute).
    watch.Disconnected();
    stats.replaying = false;
    table.MarkAllStale();
    boost::system::error_code ec;
    conn->shutdown(tcp::socket::shutdown_both, ec);
    conn->close(ec);
    conn.reset();
    ++conn_id;
    stats.connected = false;
  }

  void DoRead(uint64_t id) {
    conn->async_read_some(asio::buffer(buf), [self = shared_from_this(), id, c = conn](boost::system::error_code ec,
                                                                                      size_t n) {
      if (id != self->conn_id) return;  // an old connection's last read
      if (ec) {
        if (ec == asio::error::eof) {
          self->Log("zebra " + self->stats.peer + " closed the connection");
        } else if (ec != asio::error::operation_aborted) {
          self->Error("read from " + self->stats.peer + " failed: " + ec.message());
        }
        self->CloseConnection();
        return;
      }
      const uint64_t replayed = self->table.counts().replayed;
      Status st = self->reader.Feed(self->buf.data(), n, [&](const uint8_t* payload, size_t len, uint64_t) {
        return self->table.ApplyFrame(payload, len);
      });
      if (!st.ok()) {
        self->Error("from " + self->stats.peer + ": " + st.message() + "; dropping the connection (zebra reconnects)");
        self->CloseConnection();
        return;
      }
      if (self->replies) self->replies->FramesApplied();
      if (self->table.counts().replayed != replayed) self->watch.Replayed(Clock::now());
      self->DoRead(id);
    });
  }

  // Wakes when the replay would be over; the replay may have moved the
  // moment on meanwhile (FpmReplayWatch::Replayed), then it sleeps again.
  void ArmSweep() {
    const auto due = watch.DueAt();
    if (!due) return;
    sweep_timer.expires_at(*due);
    sweep_timer.async_wait([self = shared_from_this(), id = conn_id](boost::system::error_code ec) {
      if (ec || id != self->conn_id) return;
      const auto now = Clock::now();
      if (!self->watch.Over(now)) {
        self->ArmSweep();
        return;
      }
      self->stats.replaying = false;
      if (const size_t n = self->table.CheckKernelObjects(); n != 0) {
        self->Log(std::to_string(n) + " of zebra's next-hop objects are not in the kernel as zebra holds them "
                  "(installs it failed, or a group lost members with a link): their routes follow the kernel");
      }
      const uint64_t kept_before = self->table.counts().kernel_kept;
      const size_t n = self->table.SweepStale(self->KernelHolds());
      const uint64_t kept = self->table.counts().kernel_kept - kept_before;
      self->Log("replay over (" + self->watch.Why(now) + "); swept " + std::to_string(n) +
                " routes/groups zebra did not replay" +
                (kept ? "; punted " + std::to_string(kept) + " the kernel still has" : ""));
      // zebra replays what it selected, also routes the kernel refused or
      // does not hold yet: one dump of the kernel's routes says which
      // replayed routes are not in the kernel (decided at its end, not at
      // arrival — fibnicd may read zebra's frame before the kernel's message).
      if (self->cfg.request_kernel_dump) {
        self->replay_dump = true;
        self->cfg.request_kernel_dump();
        return;  // start-up's initial state is in at the dump's end
      }
      if (!self->initial_over) {
        self->initial_over = true;
        self->initial_timer.cancel();
      }
    });
  }

  FpmSourceConfig cfg;
  InterfacePorts ports;
  FpmTable table;
  tcp::acceptor acceptor;
  asio::steady_timer sweep_timer;
  asio::steady_timer ports_timer;
  asio::steady_timer initial_timer;  // initial_wait
  FpmReplayWatch watch;
  bool initial_over = false;            // start-up: a replay was over, or initial_wait passed
  bool kernel_has_zebra_routes = false;  // the kernel said so (KernelRoute)
  bool flux_full_logged = false;         // the flux map overflowed and it was logged
  std::set<uint32_t> nexthops_deleted;   // KernelNexthopDeleted for stale routes, not yet applied
  std::set<uint32_t> objects_gone;       // KernelNexthopDeleted for flux, not yet applied
  bool replay_dump = false;              // a replay ended: the kernel dump it asked for is not over
  std::vector<uint8_t> buf;
  std::shared_ptr<tcp::socket> conn;
  uint64_t conn_id = 0;
  FpmFrameReader reader;
  uint64_t frames_before = 0;  // frames of earlier connections
  bool stopped = true;
  FpmSourceStats stats;
  static constexpr auto kRefusedLogInterval = std::chrono::seconds(10);
  std::optional<Clock::time_point> refused_logged_at;  // the last "refused a connection" line
  uint64_t refused_unlogged = 0;                       // refusals since, not logged
  std::shared_ptr<FpmReplies> replies;  // offload replies, when cfg.offload
};

FpmSource::FpmSource(asio::io_context& io, RouteSink& sink, FpmSourceConfig config)
    : impl_(std::make_shared<Impl>(io, sink, std::move(config))) {}

FpmSource::~FpmSource() { impl_->Stop(); }

Status FpmSource::Start() { return impl_->Start(); }
void FpmSource::Stop() { impl_->Stop(); }
bool FpmSource::initial_sync_done() const { return impl_->InitialStateIn(); }
void FpmSource::KernelRoute(const KernelRouteView& k) { impl_->KernelRoute(k); }
void FpmSource::KernelNexthopDeleted(uint32_t id) { impl_->KernelNexthopDeleted(id); }
void FpmSource::KernelDumpBegins() { impl_->table.KernelDumpBegins(); }
void FpmSource::KernelDumpEnds(bool complete) { impl_->KernelDumpEnds(complete); }
void FpmSource::KernelNexthopAdded(uint32_t id) { impl_->KernelNexthopAdded(id); }
void FpmSource::KernelLink(uint32_t ifindex, bool carrier) { impl_->table.LinkState(ifindex, carrier); }

uint16_t FpmSource::port() const {
  boost::system::error_code ec;
  const auto ep = impl_->acceptor.local_endpoint(ec);
  return ec ? 0 : ep.port();
}

nlohmann::json FpmSource::StatsJson() const {
  const FpmSourceStats s = stats();
  nlohmann::json j = {{"connected", s.connected},     {"peer", s.peer},
          {"connections", s.connections}, {"frames", s.frames},
          {"messages", s.messages},       {"ignored", s.ignored},
          {"routes", s.routes},           {"nexthop_groups", s.nexthop_groups},
          {"route_updates", s.route_updates}, {"errors", s.errors},
          {"resyncs", s.resyncs},         {"refused", s.refused},
          {"stale_swept", s.stale_swept},
          {"stale_pending", s.stale_pending}, {"last_error", s.last_error},
          // Where the kernel and FPM disagree (fpm_flux.h): those prefixes punt.
          {"in_flux", s.in_flux}, {"flux_entered", s.flux_entered},
          {"flux_overflows", s.flux_overflows}, {"kernel_dump_gone", s.kernel_dump_gone}};
  // Bytes held per structure (FpmTable::Memory; bench/sources/fpm_mem.sh
  // prints them per route).
  const FpmTable::Memory m = impl_->table.memory();
  j["memory_bytes"] = {{"routes", m.routes}, {"groups", m.groups}, {"inline_sets", m.inline_sets}, {"flux", m.flux}};
  if (impl_->replies) {  // only when replying (cfg.offload)
    j.update({{"offload_replies", s.offload.replies},     {"offload_offloaded", s.offload.offloaded},
              {"offload_trapped", s.offload.trapped},     {"offload_failed", s.offload.failed},
              {"offload_questions", s.offload.questions}, {"offload_walks", s.offload.walks},
              {"offload_overruns", s.offload.overruns}});
  }
  return j;
}

FpmSourceStats FpmSource::stats() const {
  FpmSourceStats s = impl_->stats;
  const FpmTableCounts& c = impl_->table.counts();
  s.frames = impl_->frames_before + impl_->reader.frames();
  s.messages = c.messages;
  s.ignored = c.ignored;
  s.routes = impl_->table.routes();
  s.nexthop_groups = impl_->table.nexthop_groups();
  s.route_updates = c.route_updates;
  s.stale_swept = c.stale_swept;
  s.stale_pending = impl_->table.stale_count();
  if (impl_->replies) s.offload = impl_->replies->counts();
  s.kernel_dropped = c.kernel_dropped;
  s.kernel_kept = c.kernel_kept;
  s.in_flux = impl_->table.in_flux();
  s.flux_entered = c.flux_entered;
  s.flux_overflows = c.flux_overflows;
  s.kernel_dump_gone = c.kernel_dump_gone;
  return s;
}

}  // namespace fibnic
