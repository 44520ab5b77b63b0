// ipnumad's HTTP surfaces, mounted on the shared web layer's Router:
//  - the operator REST API under /api/v1/ipnuma/ (GET collections the shared
//    dashboard shows; POST/DELETE need the API bearer token), and
//  - the peer API under /peer/v1/ that other ipnumad call, each request
//    signed with the secret this node shares with the caller (peer_auth.h):
//    the caller is who the signature says, never what the body claims.
// Errors are {"error":{"status":..,"code":"NOT_FOUND","message":".."}}.
#pragma once

#include "ipnuma/peer_auth.h"
#include "ipnuma/service.h"
#include "web/http/router.h"

namespace fibnic::ipnuma {

Status AddOperatorRoutes(web::Router& router, IpnumaService& svc);
Status AddPeerRoutes(web::Router& router, IpnumaService& svc, PeerAuthenticator& auth);

}  // namespace fibnic::ipnuma
