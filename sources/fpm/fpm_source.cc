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
#include "sources/fpm/fpm_offload.h"
#include "sources/fpm/fpm_route_frame.h"
#include "sources/source_log.h"

namespace fibnic {

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;

struct FpmSource::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::io_context& io, FpmSourceConfig c) : cfg(std::move(c)), acceptor(io), buf(64 * 1024) {
    if (cfg.offload && cfg.routes) {
      // Routes remembered for replies between two questions: 16,384 (more: a walk finds them).
      replies = std::make_shared<FpmReplies>(
          io, *cfg.routes, *cfg.offload,
          FpmReplyConfig{cfg.table, 4096, 16384, cfg.offload_buffer, cfg.offload_quiet, cfg.offload_walk_every,
                         [this](const std::string& m) { Log(m); }});
    }
  }

  void Log(const std::string& msg) { SourceLog(cfg.log, "fpm", msg); }
  void Error(const std::string& msg) { SourceError(cfg.log, "fpm", stats, msg); }

  Status Start() {
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
    if (replies) replies->Stop();
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
    Log("zebra connected from " + peer);
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
    if (!conn) return;
    if (replies) replies->Closed();
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
      Status st = self->reader.Feed(self->buf.data(), n, [&](const uint8_t* payload, size_t len, uint64_t) {
        return ForEachFpmRoute(payload, len, self->cfg.table, self->cfg.ignore_protocols, self->counts,
                               [&](const Prefix& p, uint8_t protocol) {
                                 if (self->replies) self->replies->Sent(p, protocol);
                               });
      });
      if (!st.ok()) {
        self->Error("from " + self->stats.peer + ": " + st.message() + "; dropping the connection (zebra reconnects)");
        self->CloseConnection();
        return;
      }
      if (self->replies) self->replies->FramesApplied();
      self->DoRead(id);
    });
  }

  FpmSourceConfig cfg;
  FpmRouteCounts counts;
  tcp::acceptor acceptor;
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

FpmSource::FpmSource(asio::io_context& io, FpmSourceConfig config)
    : impl_(std::make_shared<Impl>(io, std::move(config))) {}

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
  nlohmann::json j = {{"connected", s.connected},     {"peer", s.peer},
                      {"connections", s.connections}, {"frames", s.frames},
                      {"messages", s.messages},       {"ignored", s.ignored},
                      {"deleted", s.deleted},         {"errors", s.errors},
                      {"resyncs", s.resyncs},         {"refused", s.refused},
                      {"last_error", s.last_error}};
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
  const FpmRouteCounts& c = impl_->counts;
  s.frames = impl_->frames_before + impl_->reader.frames();
  s.messages = c.messages;
  s.ignored = c.ignored;
  s.deleted = c.deleted;
  if (impl_->replies) s.offload = impl_->replies->counts();
  return s;
}

}  // namespace fibnic
