#include "ipnuma/http_transport.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "daemon/config_yaml.h"

namespace fibnic::ipnuma {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

StatusOr<HttpAnswer> HttpCall(const std::string& endpoint, const std::string& method, const std::string& target,
                              const std::string& body, const std::string& bearer, std::chrono::milliseconds timeout) {
  ASSIGN_OR_RETURN(Endpoint ep, Endpoint::Parse(endpoint));
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  http::response<http::string_body> res;
  beast::error_code ec;
  const tcp::endpoint to(boost::asio::ip::make_address(ep.host.ToString()), ep.port);
  stream.expires_after(timeout);
  stream.async_connect(to, [&](beast::error_code e) {
    if (e) {
      ec = e;
      return;
    }
    auto req = std::make_shared<http::request<http::string_body>>(http::string_to_verb(method), target, 11);
    req->set(http::field::host, endpoint);
    req->set(http::field::user_agent, "ipnumad");
    if (!bearer.empty()) req->set(http::field::authorization, "Bearer " + bearer);
    if (!body.empty() || method != "GET") {
      req->set(http::field::content_type, "application/json");
      req->body() = body;
    }
    req->prepare_payload();
    http::async_write(stream, *req, [&, req](beast::error_code e2, size_t) {
      if (e2) {
        ec = e2;
        return;
      }
      auto buf = std::make_shared<beast::flat_buffer>();
      http::async_read(stream, *buf, res, [&, buf](beast::error_code e3, size_t) { ec = e3; });
    });
  });
  io.run();
  if (ec) {
    if (ec == beast::error::timeout) {
      return Unavailable(endpoint + ": no answer within " + std::to_string(timeout.count()) + " ms");
    }
    return Unavailable(endpoint + ": " + ec.message());
  }
  stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  return HttpAnswer{static_cast<int>(res.result_int()), res.body()};
}

StatusOr<nlohmann::json> HttpPeerTransport::Post(const PeerSpec& peer, const std::string& path,
                                                 const nlohmann::json& body) {
  nlohmann::json sent = body;
  sent["from"] = ipnuma_regs::Ipv4String(self_ip_);
  const std::string what = "peer '" + peer.name + "' (" + peer.api + ")";
  auto ans = HttpCall(peer.api, "POST", path, sent.dump(), peer.secret, timeout_);
  if (!ans.ok()) return ans.status().WithContext(what);
  nlohmann::json j = nlohmann::json::parse(ans->body, nullptr, /*allow_exceptions=*/false);
  if (ans->status == 200) {
    if (j.is_discarded() || !j.is_object()) return Internal(what + ": answer is not a JSON object");
    return j;
  }
  if (ans->status == 401) return Unauthenticated(what + " rejected our secret (HTTP 401)");
  if (j.is_discarded()) return Internal(what + ": HTTP " + std::to_string(ans->status) + " " + ans->body);
  return StatusFromErrorJson(j, what);
}

}  // namespace fibnic::ipnuma
