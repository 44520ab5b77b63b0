#include "web/http/server.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <optional>
#include <type_traits>
#include <unordered_set>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "common/ip.h"
#include "common/log.h"
#include "web/http/admission.h"

namespace fibnic::web {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

Status ValidateWebConfig(const WebConfig& c) {
  boost::system::error_code ec;
  net::ip::make_address(c.listen_address, ec);
  if (ec) return InvalidArgument("web.listen: '" + c.listen_address + "' is not an IP address");
  if (c.tls_cert_file.empty() != c.tls_key_file.empty()) {
    return InvalidArgument("web.tls: set both tls_cert and tls_key, or neither");
  }
  if (c.header_limit < 1024 || c.header_limit > 1024 * 1024) {
    return InvalidArgument("web.header_limit: " + std::to_string(c.header_limit) + " outside 1024..1048576");
  }
  if (c.body_limit > 64 * 1024 * 1024) {
    return InvalidArgument("web.body_limit: " + std::to_string(c.body_limit) + " above 64 MiB");
  }
  if (c.max_connections == 0) return InvalidArgument("web.max_connections: must be at least 1");
  // Per-client caps above the global ones act as the global ones.
  if (c.max_connections_per_client == 0) return InvalidArgument("web.max_connections_per_client: must be at least 1");
  if (c.max_streams == 0) return InvalidArgument("web.max_streams: must be at least 1");
  if (c.max_streams_per_client == 0) return InvalidArgument("web.max_streams_per_client: must be at least 1");
  if (c.auth_failure_limit == 0) return InvalidArgument("web.auth_failure_limit: must be at least 1");
  if (c.auth_failure_window.count() <= 0) return InvalidArgument("web.auth_failure_window: must be positive");
  for (const auto& h : c.allowed_hosts) {
    if (!IsHostName(h)) return InvalidArgument("web.allowed_hosts: '" + h + "' is not a host name (letters, digits, '.', '-')");
  }
  if (c.read_timeout.count() <= 0 || c.idle_timeout.count() <= 0 || c.write_timeout.count() <= 0) {
    return InvalidArgument("web timeouts must be positive");
  }
  return OkStatus();
}

namespace {

class SessionBase {
 public:
  virtual ~SessionBase() = default;
  virtual void Close() = 0;
};

bool TokenMatches(std::string_view header, const std::string& token) {
  constexpr std::string_view kBearer = "Bearer ";
  if (token.empty() || header.size() != kBearer.size() + token.size()) return false;
  if (header.substr(0, kBearer.size()) != kBearer) return false;
  return CRYPTO_memcmp(header.data() + kBearer.size(), token.data(), token.size()) == 0;
}

}  // namespace

struct WebServer::Impl : std::enable_shared_from_this<WebServer::Impl> {
  Impl(net::io_context& io_, const WebConfig& c, const Router& r, Telemetry* t)
      : io(io_),
        cfg(c),
        router(r),
        telemetry(t),
        acceptor(io_),
        retry(io_),
        clients(AdmissionLimits{std::min(c.max_connections_per_client, c.max_connections),
                                std::min(c.max_streams, c.max_connections), c.max_streams_per_client,
                                c.auth_failure_limit, c.auth_failure_window}) {}

  void Accept();
  void OnAccept(boost::system::error_code ec, tcp::socket socket);
  void CountReply(int status, double seconds);
  void Reject(CounterMetric* counter, tcp::socket& socket);

  net::io_context& io;
  WebConfig cfg;
  const Router& router;
  Telemetry* telemetry;
  tcp::acceptor acceptor;
  net::steady_timer retry;
  std::optional<ssl::context> tls;
  std::unordered_set<SessionBase*> sessions;
  ClientTable clients;
  uint64_t next_request_id = 0;
  bool stopped = false;

  CounterMetric* requests[6] = {};  // by status class 1xx..5xx, [0] unused
  CounterMetric* rejected = nullptr;
  CounterMetric* rejected_per_client = nullptr;
  CounterMetric* streams_refused = nullptr;
  CounterMetric* auth_failures = nullptr;
  CounterMetric* hosts_refused = nullptr;
  GaugeMetric* streams = nullptr;
  HistogramMetric* latency = nullptr;
  GaugeMetric* connections = nullptr;
};

namespace {

template <bool kTls>
class Session : public SessionBase, public std::enable_shared_from_this<Session<kTls>> {
 public:
  using Stream = std::conditional_t<kTls, beast::ssl_stream<beast::tcp_stream>, beast::tcp_stream>;

  // The client's connection is already counted in srv->clients (OnAccept).
  Session(std::shared_ptr<WebServer::Impl> srv, tcp::socket socket, ClientKey client)
      : srv_(std::move(srv)), stream_(MakeStream(std::move(socket))), sse_timer_(srv_->io), client_(client) {
    srv_->sessions.insert(this);
    if (srv_->connections) srv_->connections->Set(static_cast<double>(srv_->sessions.size()));
  }
  ~Session() override {
    if (holds_stream_) {
      srv_->clients.EndStream(client_);
      if (srv_->streams) srv_->streams->Set(static_cast<double>(srv_->clients.streams()));
    }
    srv_->clients.Disconnect(client_);
    srv_->sessions.erase(this);
    if (srv_->connections) srv_->connections->Set(static_cast<double>(srv_->sessions.size()));
  }

  void Run() {
    if constexpr (kTls) {
      Lowest().expires_after(srv_->cfg.read_timeout);
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](boost::system::error_code ec) {
                                if (ec) return self->CloseNow();
                                self->DoRead();
                              });
    } else {
      DoRead();
    }
  }

  void Close() override {
    closed_ = true;
    sse_timer_.cancel();
    boost::system::error_code ec;
    Lowest().socket().close(ec);
  }

 private:
  Stream MakeStream(tcp::socket socket) {
    if constexpr (kTls) {
      return Stream(beast::tcp_stream(std::move(socket)), *srv_->tls);
    } else {
      return Stream(std::move(socket));
    }
  }
  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }

  void DoRead() {
    if (closed_) return;
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(srv_->cfg.header_limit));
    parser_->body_limit(srv_->cfg.body_limit);
    Lowest().expires_after(served_ == 0 ? srv_->cfg.read_timeout : srv_->cfg.idle_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

  void OnRead(beast::error_code ec) {
    if (closed_ || ec == net::error::operation_aborted) return;
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == net::error::eof ||
        ec == net::error::connection_reset) {
      return CloseNow();
    }
    if (ec) {
      // Transport trouble, or a message cut short: nobody left to answer.
      if (ec.category() != beast::http::make_error_code(http::error::bad_method).category() ||
          ec == http::error::partial_message) {
        return CloseNow();
      }
      // The request could not be parsed: say what was wrong, then close (the
      // byte stream can no longer be trusted to frame a next request).
      int status = 400;
      if (ec == http::error::header_limit) status = 431;
      if (ec == http::error::body_limit) status = 413;
      return Send(ErrorReply(status, "malformed HTTP request: " + ec.message()), 11, false);
    }
    start_ = std::chrono::steady_clock::now();
    ++served_;
    auto& req = parser_->get();
    HttpReply rep = Handle(req);
    // After an error the client gets a fresh start or nothing: a 4xx is the
    // usual first step of abuse (guessing, probing), and a kept connection
    // would let it go on holding its slot.
    const bool keep_alive = req.keep_alive() && rep.status < 400;
    Send(std::move(rep), req.version(), keep_alive);
  }

  HttpReply Handle(const http::request<http::string_body>& req) {
    HttpReply rep = Route(req);
    if (rep.status == 500) rep = HideInternalError(req, std::move(rep));
    return rep;
  }

  // What went wrong inside goes to the log, not to the client (it can name
  // files, addresses, library internals): the client gets a request id to
  // quote, the operator finds the message under it.
  HttpReply HideInternalError(const http::request<http::string_body>& req, HttpReply rep) {
    char id[17];
    std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(++srv_->next_request_id));
    // The JSON body escapes control characters, so the log line cannot be split.
    LogError("web: request " + std::string(id) + " " + std::string(req.method_string()) + " " +
             nlohmann::json(std::string(req.target())).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
             " failed: " + rep.body);
    HttpReply out = ErrorReply(500, std::string("internal error; the server log has the details under request id ") + id);
    out.headers.emplace_back("X-Request-Id", id);
    return out;
  }

  HttpReply Route(const http::request<http::string_body>& req) {
    std::string_view target(req.target().data(), req.target().size());
    if (target.empty() || target.front() != '/') {
      return ErrorReply(400, "request target must be an absolute path ('/...')");
    }
    if (auto host = req.find(http::field::host); host != req.end()) {
      std::string_view h(host->value().data(), host->value().size());
      if (!HostAllowed(h, srv_->cfg.allowed_hosts)) {
        if (srv_->hosts_refused) srv_->hosts_refused->Add();
        return ErrorReply(421, "Host '" + std::string(h.substr(0, 100)) +
                                   "' is not served here (an IP address, localhost or a name in web.allowed_hosts)");
      }
    }
    HttpRequest r;
    r.method = std::string(req.method_string());
    const size_t q = target.find('?');
    auto path = PercentDecode(target.substr(0, q), false);
    if (!path) return ErrorReply(400, "request path has a malformed percent-escape");
    r.path = std::move(*path);
    if (q != std::string_view::npos) {
      auto query = ParseQuery(target.substr(q + 1));
      if (!query.ok()) return ErrorReply(query.status());
      r.query = std::move(*query);
    }
    auto auth = req.find(http::field::authorization);
    if (auth != req.end()) {
      const auto now = ClientTable::Clock::now();
      if (auto wait = srv_->clients.AuthRetryAfter(client_, now); wait.count() > 0) {
        HttpReply rep = ErrorReply(429, "too many wrong tokens from this address; try again later");
        rep.headers.emplace_back("Retry-After", std::to_string((wait.count() + 999) / 1000));
        return rep;
      }
      std::string_view v(auth->value().data(), auth->value().size());
      if (!TokenMatches(v, srv_->cfg.token)) {
        srv_->clients.AuthFailed(client_, now);
        if (srv_->auth_failures) srv_->auth_failures->Add();
        return ErrorReply(401, "bearer token rejected");
      }
      r.authenticated = true;
    }
    auto ct = req.find(http::field::content_type);
    if (ct != req.end()) r.content_type = std::string(ct->value());
    boost::system::error_code ec;
    const auto remote = Lowest().socket().remote_endpoint(ec);
    if (!ec) r.remote_address = remote.address().to_string();
    for (const auto& f : req) {
      std::string name(f.name_string());
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      r.headers.emplace(std::move(name), std::string(f.value()));
    }
    r.body = req.body();
    const bool authenticated = r.authenticated;
    HttpReply rep;
    try {
      rep = srv_->router.Dispatch(std::move(r));
    } catch (const std::exception& e) {
      return ErrorReply(500, std::string("handler failed: ") + e.what());
    }
    if (rep.stream) return AdmitStream(std::move(rep), authenticated);
    return rep;
  }

  // An event stream holds its connection for as long as the client reads:
  // it needs the token when there is one, and fits the stream caps.
  HttpReply AdmitStream(HttpReply rep, bool authenticated) {
    if (!srv_->cfg.token.empty() && !authenticated) {
      HttpReply err = ErrorReply(401, "the event stream needs 'Authorization: Bearer <token>' on this server");
      err.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"fibnic\"");
      return err;
    }
    if (holds_stream_) return rep;
    if (!srv_->clients.TryStream(client_)) {
      if (srv_->streams_refused) srv_->streams_refused->Add();
      HttpReply err = ErrorReply(429, "too many event streams (web.max_streams " + std::to_string(srv_->cfg.max_streams) +
                                          ", per client " + std::to_string(srv_->cfg.max_streams_per_client) + ")");
      err.headers.emplace_back("Retry-After", "5");
      return err;
    }
    holds_stream_ = true;
    if (srv_->streams) srv_->streams->Set(static_cast<double>(srv_->clients.streams()));
    return rep;
  }

  void Send(HttpReply rep, unsigned version, bool keep_alive) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    srv_->CountReply(rep.status, served_ ? seconds : 0);
    if (rep.stream) return StartStream(std::move(rep), version);
    auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(rep.status), version);
    res->set(http::field::server, "fibnic");
    res->set(http::field::content_type, rep.content_type);
    res->set("X-Content-Type-Options", "nosniff");
    bool cache_set = false;
    for (auto& [k, v] : rep.headers) {
      res->set(k, v);
      cache_set |= beast::iequals(k, "Cache-Control");
    }
    if (!cache_set) res->set(http::field::cache_control, "no-store");
    if (rep.content_type.rfind("text/html", 0) == 0) {
      res->set("Content-Security-Policy",
               "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; "
               "frame-ancestors 'none'");
    }
    res->body() = std::move(rep.body);
    res->keep_alive(keep_alive && !srv_->stopped);
    res->prepare_payload();
    Lowest().expires_after(srv_->cfg.write_timeout);
    http::async_write(stream_, *res, [self = this->shared_from_this(), res](beast::error_code ec, size_t) {
      if (ec) return self->CloseNow();
      if (!res->keep_alive()) return self->Shutdown();
      self->DoRead();
    });
  }

  // Server-Sent Events: headers, then whatever the stream yields each interval,
  // until the client goes away or the server stops.
  void StartStream(HttpReply rep, unsigned version) {
    sse_ = std::move(rep.stream);
    auto res = std::make_shared<http::response<http::empty_body>>(http::status::ok, version);
    res->set(http::field::server, "fibnic");
    res->set(http::field::content_type, "text/event-stream");
    res->set(http::field::cache_control, "no-store");
    res->set("X-Content-Type-Options", "nosniff");
    res->keep_alive(false);
    auto sr = std::make_shared<http::response_serializer<http::empty_body>>(*res);
    Lowest().expires_after(srv_->cfg.write_timeout);
    http::async_write_header(stream_, *sr, [self = this->shared_from_this(), res, sr](beast::error_code ec, size_t) {
      if (ec) return self->CloseNow();
      self->StreamTick();
    });
  }

  void StreamTick() {
    if (closed_) return;
    std::string chunk;
    try {
      chunk = sse_->Poll();
    } catch (const std::exception&) {
      return CloseNow();
    }
    // A comment line keeps proxies and the client's connection-loss detection honest.
    if (chunk.empty()) chunk = ": keep-alive\n\n";
    auto data = std::make_shared<std::string>(std::move(chunk));
    Lowest().expires_after(srv_->cfg.write_timeout);
    net::async_write(stream_, net::buffer(*data), [self = this->shared_from_this(), data](beast::error_code ec, size_t) {
      if (ec) return self->CloseNow();
      self->sse_timer_.expires_after(self->sse_->interval());
      self->sse_timer_.async_wait([self](beast::error_code ec2) {
        if (ec2) return;
        self->StreamTick();
      });
    });
  }

  void Shutdown() {
    if constexpr (kTls) {
      Lowest().expires_after(srv_->cfg.write_timeout);
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) { self->CloseNow(); });
    } else {
      boost::system::error_code ec;
      Lowest().socket().shutdown(tcp::socket::shutdown_send, ec);
      CloseNow();
    }
  }

  void CloseNow() {
    if (closed_) return;
    Close();
  }

  std::shared_ptr<WebServer::Impl> srv_;
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<EventStream> sse_;
  net::steady_timer sse_timer_;
  std::chrono::steady_clock::time_point start_;
  uint64_t served_ = 0;
  ClientKey client_;
  bool holds_stream_ = false;
  bool closed_ = false;
};

}  // namespace

void WebServer::Impl::CountReply(int status, double seconds) {
  int cls = status / 100;
  if (cls >= 1 && cls <= 5 && requests[cls]) requests[cls]->Add();
  if (latency) latency->Observe(seconds);
}

void WebServer::Impl::Accept() {
  if (stopped) return;
  acceptor.async_accept(io, [self = shared_from_this()](boost::system::error_code ec, tcp::socket s) {
    self->OnAccept(ec, std::move(s));
  });
}

void WebServer::Impl::OnAccept(boost::system::error_code ec, tcp::socket socket) {
  if (stopped || ec == net::error::operation_aborted) return;
  if (ec) {
    // Out of descriptors or similar: back off instead of spinning.
    retry.expires_after(std::chrono::milliseconds(100));
    retry.async_wait([self = shared_from_this()](boost::system::error_code e) {
      if (!e) self->Accept();
    });
    return;
  }
  boost::system::error_code peer_ec;
  const auto peer = socket.remote_endpoint(peer_ec);
  const ClientKey client = ClientKeyOf(peer_ec ? std::string() : peer.address().to_string());
  if (sessions.size() >= cfg.max_connections) {
    Reject(rejected, socket);
  } else if (!clients.TryConnect(client)) {
    Reject(rejected_per_client, socket);
  } else {
    boost::system::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    if (tls) {
      std::make_shared<Session<true>>(shared_from_this(), std::move(socket), client)->Run();
    } else {
      std::make_shared<Session<false>>(shared_from_this(), std::move(socket), client)->Run();
    }
  }
  Accept();
}

void WebServer::Impl::Reject(CounterMetric* counter, tcp::socket& socket) {
  if (counter) counter->Add();
  boost::system::error_code ignored;
  socket.close(ignored);
}

StatusOr<std::unique_ptr<WebServer>> WebServer::Start(net::io_context& io, const WebConfig& config,
                                                      const Router& router, Telemetry* telemetry) {
  RETURN_IF_ERROR(ValidateWebConfig(config));
  auto impl = std::make_shared<Impl>(io, config, router, telemetry);
  if (!config.tls_cert_file.empty()) {
    impl->tls.emplace(ssl::context::tls_server);
    impl->tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                           ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
    boost::system::error_code ec;
    impl->tls->use_certificate_chain_file(config.tls_cert_file, ec);
    if (ec) return InvalidArgument("web.tls_cert: cannot load '" + config.tls_cert_file + "': " + ec.message());
    impl->tls->use_private_key_file(config.tls_key_file, ssl::context::pem, ec);
    if (ec) return InvalidArgument("web.tls_key: cannot load '" + config.tls_key_file + "': " + ec.message());
  }
  if (telemetry) {
    for (int c = 1; c <= 5; ++c) {
      impl->requests[c] = telemetry->Counter("fibnic_http_requests_total", "HTTP requests answered, by status class",
                                             {{"code", std::to_string(c) + "xx"}});
    }
    impl->rejected = telemetry->Counter("fibnic_http_connections_rejected_total",
                                        "Connections closed at accept because max_connections was reached");
    impl->rejected_per_client =
        telemetry->Counter("fibnic_http_connections_rejected_per_client_total",
                           "Connections closed at accept because their client held max_connections_per_client");
    impl->streams_refused = telemetry->Counter("fibnic_http_streams_refused_total",
                                               "Event streams refused (429) by max_streams or max_streams_per_client");
    impl->auth_failures = telemetry->Counter("fibnic_http_auth_failures_total", "Requests with a wrong bearer token");
    impl->hosts_refused = telemetry->Counter("fibnic_http_hosts_refused_total",
                                             "Requests refused (421) for a Host header not in the allowlist");
    impl->streams = telemetry->Gauge("fibnic_http_streams", "Open event streams");
    impl->latency = telemetry->Histogram("fibnic_http_request_duration_seconds", "Time to handle a request",
                                         {0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1});
    impl->connections = telemetry->Gauge("fibnic_http_connections", "Open HTTP connections");
  }
  boost::system::error_code ec;
  const tcp::endpoint ep(net::ip::make_address(config.listen_address), config.port);
  const std::string where = config.listen_address + ":" + std::to_string(config.port);
  impl->acceptor.open(ep.protocol(), ec);
  if (!ec) impl->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(ep, ec);
  if (!ec) impl->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return Unavailable("web.listen: cannot listen on " + where + ": " + ec.message());
  impl->Accept();
  return std::unique_ptr<WebServer>(new WebServer(std::move(impl)));
}

WebServer::WebServer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
WebServer::~WebServer() { Stop(); }

uint16_t WebServer::port() const {
  boost::system::error_code ec;
  auto ep = impl_->acceptor.local_endpoint(ec);
  return ec ? 0 : ep.port();
}

bool WebServer::tls() const { return impl_->tls.has_value(); }
size_t WebServer::open_connections() const { return impl_->sessions.size(); }

void WebServer::Stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  boost::system::error_code ec;
  impl_->acceptor.close(ec);
  impl_->retry.cancel();
  // Close() can drop the last reference of a session, which erases itself.
  std::vector<SessionBase*> open(impl_->sessions.begin(), impl_->sessions.end());
  for (SessionBase* s : open) s->Close();
}

}  // namespace fibnic::web
