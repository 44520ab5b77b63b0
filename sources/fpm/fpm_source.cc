#include "sources/fpm/fpm_source.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <boost/asio.hpp>
#include <cstdio>
#include <vector>

#include "sources/fpm/fpm_frame.h"
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
        table(sink, [this](uint32_t ifindex) { return ports.Port(ifindex); }, FpmTableOptions{cfg.table, cfg.distance, cfg.ignore_protocols}),
        acceptor(io),
        sweep_timer(io),
        buf(64 * 1024) {
    ports.UseSystemNames(cfg.port_name_max_age);
  }

  void Log(const std::string& msg) { SourceLog(cfg.log, "fpm", msg); }
  void Error(const std::string& msg) { SourceError(cfg.log, "fpm", stats, msg); }

  Status Start() {
    RETURN_IF_ERROR(ValidatePortNames(cfg.ports));
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
    return OkStatus();
  }

  void Stop() {
    stopped = true;
    boost::system::error_code ec;
    acceptor.close(ec);
    CloseConnection();
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
      Log("refused a connection from " + peer + ": zebra's connection from " + stats.peer +
            " is live (one FPM feed at a time)");
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
    connected_at = last_frame = Clock::now();
    Log("zebra connected from " + peer + "; " + std::to_string(table.stale_count()) +
        " routes/groups stale until replayed");
    ArmSweep(cfg.stale_hold);
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
      self->last_frame = Clock::now();
      Status st = self->reader.Feed(self->buf.data(), n, [&](const uint8_t* payload, size_t len, uint64_t) {
        return self->table.ApplyFrame(payload, len);
      });
      if (!st.ok()) {
        self->Error("from " + self->stats.peer + ": " + st.message() + "; dropping the connection (zebra reconnects)");
        self->CloseConnection();
        return;
      }
      self->DoRead(id);
    });
  }

  void ArmSweep(Clock::duration delay) {
    sweep_timer.expires_after(delay);
    sweep_timer.async_wait([self = shared_from_this(), id = conn_id](boost::system::error_code ec) {
      if (ec || id != self->conn_id) return;
      const auto now = Clock::now();
      if (now - self->last_frame < self->cfg.replay_quiet && now - self->connected_at < 4 * self->cfg.stale_hold) {
        self->ArmSweep(self->cfg.replay_quiet);  // replay still streaming
        return;
      }
      const size_t n = self->table.SweepStale();
      if (n != 0) self->Log("swept " + std::to_string(n) + " routes/groups zebra did not replay");
    });
  }

  FpmSourceConfig cfg;
  InterfacePorts ports;
  FpmTable table;
  tcp::acceptor acceptor;
  asio::steady_timer sweep_timer;
  std::vector<uint8_t> buf;
  std::shared_ptr<tcp::socket> conn;
  uint64_t conn_id = 0;
  FpmFrameReader reader;
  uint64_t frames_before = 0;  // frames of earlier connections
  Clock::time_point connected_at, last_frame;
  bool stopped = true;
  FpmSourceStats stats;
};

FpmSource::FpmSource(asio::io_context& io, RouteSink& sink, FpmSourceConfig config)
    : impl_(std::make_shared<Impl>(io, sink, std::move(config))) {}

FpmSource::~FpmSource() { impl_->Stop(); }

Status FpmSource::Start() { return impl_->Start(); }
void FpmSource::Stop() { impl_->Stop(); }

uint16_t FpmSource::port() const {
  boost::system::error_code ec;
  const auto ep = impl_->acceptor.local_endpoint(ec);
  return ec ? 0 : ep.port();
}

nlohmann::json FpmSource::StatsJson() const {
  const FpmSourceStats s = stats();
  return {{"connected", s.connected},     {"peer", s.peer},
          {"connections", s.connections}, {"frames", s.frames},
          {"messages", s.messages},       {"ignored", s.ignored},
          {"routes", s.routes},           {"nexthop_groups", s.nexthop_groups},
          {"route_updates", s.route_updates}, {"errors", s.errors},
          {"resyncs", s.resyncs},         {"refused", s.refused},
          {"stale_swept", s.stale_swept},
          {"stale_pending", s.stale_pending}, {"last_error", s.last_error}};
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
  return s;
}

}  // namespace fibnic
