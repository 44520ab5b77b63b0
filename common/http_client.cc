#include "common/http_client.h"

#include <algorithm>
#include <cctype>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace fibnic {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

StatusOr<HttpResult> HttpCall(const HttpRequestSpec& spec) {
  std::string where = spec.server.ToString();
  try {
    net::io_context io;
    beast::tcp_stream stream(io);
    auto addr = net::ip::make_address(spec.server.host.ToString());
    stream.expires_after(spec.timeout);
    beast::error_code ec;
    if (!spec.bind_address.empty()) {
      const auto local = net::ip::make_address(spec.bind_address, ec);
      if (!ec) stream.socket().open(local.is_v4() ? net::ip::tcp::v4() : net::ip::tcp::v6(), ec);
      if (!ec) stream.socket().bind(net::ip::tcp::endpoint(local, 0), ec);
      if (ec) return Unavailable("cannot send from " + spec.bind_address + " to " + where + ": " + ec.message());
    }
    stream.connect(net::ip::tcp::endpoint(addr, spec.server.port), ec);
    if (ec) return Unavailable("cannot connect to " + where + ": " + ec.message());
    http::request<http::string_body> req;
    req.method(http::string_to_verb(spec.method));
    req.target(spec.target);
    req.version(11);
    req.set(http::field::host, where);
    req.set(http::field::user_agent, "fibnicctl");
    req.set(http::field::accept, "application/json");
    if (!spec.token.empty()) req.set(http::field::authorization, "Bearer " + spec.token);
    for (const auto& [name, value] : spec.headers) req.set(name, value);
    if (!spec.body.empty()) {
      req.set(http::field::content_type, "application/json");
      req.body() = spec.body;
    }
    req.prepare_payload();
    stream.expires_after(spec.timeout);
    http::write(stream, req, ec);
    if (ec) return IoError("sending to " + where + ": " + ec.message());
    beast::flat_buffer buf;
    http::response_parser<http::string_body> parser;
    parser.body_limit(spec.body_limit);
    const auto too_large = [&] {
      return IoError("the answer of " + where + spec.target + " is larger than " + std::to_string(spec.body_limit) +
                     " bytes: not read");
    };
    // Boost 1.74's parser lets a declared Content-Length past the limit
    // through (only chunked and read-to-close bodies are counted): check it
    // between header and body.
    http::read_header(stream, buf, parser, ec);
    if (!ec && parser.content_length() && *parser.content_length() > spec.body_limit) return too_large();
    if (!ec) http::read(stream, buf, parser, ec);
    if (ec == http::error::body_limit) return too_large();
    if (ec) return IoError("reading the answer of " + where + spec.target + ": " + ec.message());
    stream.socket().shutdown(net::ip::tcp::socket::shutdown_both, ec);
    const auto& res = parser.get();
    HttpResult out;
    out.status = static_cast<int>(res.result_int());
    out.content_type = std::string(res[http::field::content_type]);
    out.body = res.body();
    return out;
  } catch (const std::exception& e) {
    return IoError("HTTP request to " + where + spec.target + ": " + e.what());
  }
}

StatusOr<Endpoint> ParseServer(std::string_view text, uint16_t default_port) {
  const std::string given(text);
  std::string_view rest = text;
  if (rest.substr(0, 8) == "https://") return InvalidArgument("'" + given + "': https is not served (use http://)");
  if (rest.substr(0, 7) == "http://") {
    rest.remove_prefix(7);
    const size_t slash = rest.find('/');
    if (slash != std::string_view::npos) {
      if (rest.substr(slash) != "/") return InvalidArgument("'" + given + "': a server is HOST[:PORT], without a path");
      rest = rest.substr(0, slash);
    }
  } else if (rest.find("://") != std::string_view::npos) {
    return InvalidArgument("'" + given + "': only http:// is served");
  }
  std::string_view host = rest, port;
  if (!rest.empty() && rest.front() == '[') {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos) return InvalidArgument("'" + given + "': no ']' after the IPv6 address");
    host = rest.substr(1, close - 1);
    const std::string_view after = rest.substr(close + 1);
    if (!after.empty() && after.front() != ':') return InvalidArgument("'" + given + "': is not [IPV6]:PORT");
    if (!after.empty()) port = after.substr(1);
  } else if (const size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    if (rest.find(':') != colon) return InvalidArgument("'" + given + "': an IPv6 address needs brackets: [IPV6]:PORT");
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  if (host.empty()) return InvalidArgument("'" + given + "': no host");
  Endpoint ep;
  ep.port = default_port;
  if (!port.empty() || rest.back() == ':') {
    unsigned long v = 0;
    const std::string p(port);
    if (p.empty() || p.size() > 5 || !std::all_of(p.begin(), p.end(), [](unsigned char c) { return std::isdigit(c); }) ||
        (v = std::stoul(p)) > 65535) {
      return InvalidArgument("'" + given + "': bad port '" + p + "' (0..65535)");
    }
    ep.port = static_cast<uint16_t>(v);
  }
  if (auto addr = IpAddr::Parse(host); addr.ok()) {
    ep.host = *addr;
    return ep;
  }
  boost::system::error_code ec;
  net::io_context io;
  net::ip::tcp::resolver resolver(io);
  const auto found = resolver.resolve(std::string(host), "", ec);
  if (ec || found.empty()) {
    // Not malformed: the name server does not know the name (or cannot be reached).
    return Unavailable("'" + given + "': cannot resolve host '" + std::string(host) + "'" +
                           (ec ? ": " + ec.message() : std::string()));
  }
  auto addr = IpAddr::Parse(found.begin()->endpoint().address().to_string());
  if (!addr.ok()) return InvalidArgument("'" + given + "': host '" + std::string(host) + "' resolved to an unusable address");
  ep.host = *addr;
  return ep;
}

std::string UrlEncode(const std::string& s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace fibnic
