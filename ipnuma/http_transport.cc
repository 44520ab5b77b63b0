#include "ipnuma/http_transport.h"

#include "common/http_client.h"

namespace fibnic::ipnuma {

std::string EscapePeerText(std::string_view text, size_t max) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (out.size() >= max) {
      out += "...(" + std::to_string(text.size()) + " bytes)";
      break;
    }
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

StatusOr<nlohmann::json> HttpPeerTransport::Post(const PeerSpec& peer, const std::string& path,
                                                 const nlohmann::json& body) {
  const std::string what = "peer '" + peer.name + "' (" + peer.api + ")";
  HttpRequestSpec req;
  ASSIGN_OR_RETURN(req.server, Endpoint::Parse(peer.api));
  req.method = "POST";
  req.target = path;
  req.body = body.dump();
  req.headers = SignPeerRequest(peer.secret, req.method, path, req.body, self_ip_, peer.ip, clock_());
  req.bind_address = source_;
  req.body_limit = kPeerAnswerLimit;
  req.timeout = timeout_;
  // What goes wrong at the peer or on the way is the peer's state, not this
  // daemon's fault: Unavailable, whose reason reaches the operator (an
  // internal error shows only a request id).
  auto ans = HttpCall(req);
  if (!ans.ok()) return Unavailable(what + ": " + ans.status().message());
  nlohmann::json j = nlohmann::json::parse(ans->body, nullptr, /*allow_exceptions=*/false);
  if (ans->status == 200) {
    if (j.is_discarded() || !j.is_object()) {
      return Unavailable(what + ": answer is not a JSON object: '" + EscapePeerText(ans->body) + "'");
    }
    return j;
  }
  if (j.is_discarded()) {
    return Unavailable(what + ": HTTP " + std::to_string(ans->status) + " '" + EscapePeerText(ans->body) + "'");
  }
  if (ans->status == 401) {
    return Unauthenticated(what + " rejected our signature (HTTP 401): " +
                           EscapePeerText(StatusFromErrorJson(j, "").message()));
  }
  const Status st = StatusFromErrorJson(j, what);
  const bool peers_fault = st.code() == StatusCode::kInternal || st.code() == StatusCode::kIoError;
  return Status(peers_fault ? StatusCode::kUnavailable : st.code(), EscapePeerText(st.message(), 512));
}

}  // namespace fibnic::ipnuma
