// The operator dashboard: static pages compiled into the binary, served by the
// same Router as the API. It finds what the server offers from
// /api/v1/openapi.json, so a service that mounts only its own routes (ipnumad)
// shows only its own pages.
#pragma once

#include "web/http/router.h"

namespace fibnic::web {

// Serves "/" and "/ui/*" (HTML, JS, CSS, the charting library).
void AddDashboard(Router& router);

}  // namespace fibnic::web
