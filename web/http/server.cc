#include "web/http/server.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <cctype>
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
      : io(io_), cfg(c), router(r), telemetry(t), acceptor(io_), retry(io_) {}

  void Accept();
  void OnAccept(boost::system::error_code ec, tcp::socket socket);
  void CountReply(int status, double seconds);

  net::io_context& io;
  WebConfig cfg;
  const Router& router;
  Telemetry* telemetry;
  tcp::acceptor acceptor;
  net::steady_timer retry;
  std::optional<ssl::context> tls;
  std::unordered_set<SessionBase*> sessions;
  bool stopped = false;

  CounterMetric* requests[6] = {};  // by status class 1xx..5xx, [0] unused
  CounterMetric* rejected = nullptr;
  HistogramMetric* latency = nullptr;
  GaugeMetric* connections = nullptr;
};

namespace {

template <bool kTls>
class Session : public SessionBase, public std::enable_shared_from_this<Session<kTls>> {
 public:
  using Stream = std::conditional_t<kTls, beast::ssl_stream<beast::tcp_stream>, beast::tcp_stream>;

  Session(std::shared_ptr<WebServer::Impl> srv, tcp::socket socket)
      : srv_(std::move(srv)), stream_(MakeStream(std::move(socket))), sse_timer_(srv_->io) {
    srv_->sessions.insert(this);
    if (srv_->connections) srv_->connections->Set(static_cast<double>(srv_->sessions.size()));
  }
  ~Session() override {
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
    const bool keep_alive = req.keep_alive();
    Send(Handle(req), req.version(), keep_alive);
  }

  HttpReply Handle(const http::request<http::string_body>& req) {
    std::string_view target(req.target().data(), req.target().size());
    if (target.empty() || target.front() != '/') {
      return ErrorReply(400, "request target must be an absolute path ('/...')");
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
      std::string_view v(auth->value().data(), auth->value().size());
      if (!TokenMatches(v, srv_->cfg.token)) return ErrorReply(401, "bearer token rejected");
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
    try {
      return srv_->router.Dispatch(std::move(r));
    } catch (const std::exception& e) {
      return ErrorReply(500, std::string("handler failed: ") + e.what());
    }
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
  if (sessions.size() >= cfg.max_connections) {
    if (rejected) rejected->Add();
    boost::system::error_code ignored;
    socket.close(ignored);
  } else {
    boost::system::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    if (tls) {
      std::make_shared<Session<true>>(shared_from_this(), std::move(socket))->Run();
    } else {
      std::make_shared<Session<false>>(shared_from_this(), std::move(socket))->Run();
    }
  }
  Accept();
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
