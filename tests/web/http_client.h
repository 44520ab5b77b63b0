// A small blocking HTTP/1.1 client for the web tests (Boost.Beast over TCP,
// optionally TLS): a real client talking to a real listening server.
#pragma once

#include <map>
#include <string>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace fibnic::web::testing {

struct Response {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;
  std::string error;  // transport failure, empty on success
};

inline Response Request(uint16_t port, const std::string& method, const std::string& target,
                        const std::map<std::string, std::string>& headers = {}, const std::string& body = "",
                        boost::asio::ssl::context* tls = nullptr) {
  namespace beast = boost::beast;
  namespace http = beast::http;
  namespace net = boost::asio;
  Response out;
  try {
    net::io_context io;
    net::ip::tcp::endpoint ep(net::ip::make_address("127.0.0.1"), port);
    http::request<http::string_body> req{http::string_to_verb(method), target, 11};
    req.set(http::field::host, "127.0.0.1");
    for (const auto& [k, v] : headers) req.set(k, v);
    req.body() = body;
    req.prepare_payload();
    beast::flat_buffer buf;
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 * 1024 * 1024);
    if (tls) {
      beast::ssl_stream<beast::tcp_stream> s(io, *tls);
      beast::get_lowest_layer(s).connect(ep);
      s.handshake(net::ssl::stream_base::client);
      http::write(s, req);
      http::read(s, buf, parser);
    } else {
      beast::tcp_stream s(io);
      s.connect(ep);
      http::write(s, req);
      http::read(s, buf, parser);
    }
    auto& res = parser.get();
    out.status = res.result_int();
    out.body = res.body();
    for (const auto& f : res) out.headers[std::string(f.name_string())] = std::string(f.value());
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

inline Response Get(uint16_t port, const std::string& target, const std::map<std::string, std::string>& headers = {}) {
  return Request(port, "GET", target, headers);
}

}  // namespace fibnic::web::testing
