// ipnumad's HTTP surfaces, mounted on the shared web layer's Router:
//  - the operator REST API under /api/v1/ipnuma/ (GET collections the shared
//    dashboard shows; POST/DELETE need the API bearer token), and
//  - the peer API under /peer/v1/ that other ipnumad call (bearer = this
//    node's peer secret; the body names the caller's NIC address).
// Errors are {"error":{"status":..,"code":"NOT_FOUND","message":".."}}.
#pragma once

#include "ipnuma/service.h"
#include "web/http/router.h"

namespace fibnic::ipnuma {

Status AddOperatorRoutes(web::Router& router, IpnumaService& svc);
Status AddPeerRoutes(web::Router& router, IpnumaService& svc);

}  // namespace fibnic::ipnuma
