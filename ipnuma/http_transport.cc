#include "ipnuma/http_transport.h"

#include "common/http_client.h"

namespace fibnic::ipnuma {

StatusOr<nlohmann::json> HttpPeerTransport::Post(const PeerSpec& peer, const std::string& path,
                                                 const nlohmann::json& body) {
  const std::string what = "peer '" + peer.name + "' (" + peer.api + ")";
  HttpRequestSpec req;
  ASSIGN_OR_RETURN(req.server, Endpoint::Parse(peer.api));
  nlohmann::json sent = body;
  sent["from"] = ipnuma_regs::Ipv4String(self_ip_);
  req.method = "POST";
  req.target = path;
  req.token = peer.secret;
  req.body = sent.dump();
  req.timeout = timeout_;
  auto ans = HttpCall(req);
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
