// The fibnicd REST API (/api/v1/..., /metrics): status, routes, lookup,
// next-hops, neighbours, TCAM, SRAM, events, rates and the live SSE stream,
// mounted on a Router. Documented route by route in web/api/openapi.json; the
// full list is in docs/web.md.
#pragma once

#include <memory>

#include <boost/asio/io_context.hpp>

#include "common/status.h"
#include "web/api/context.h"
#include "web/http/router.h"

namespace fibnic::web {

class FibApi {
 public:
  // io runs the once-a-second rate sampler (the same thread as the handlers).
  FibApi(boost::asio::io_context& io, WebContext ctx);
  ~FibApi();
  FibApi(const FibApi&) = delete;
  FibApi& operator=(const FibApi&) = delete;

  // Mounts every route and merges web/api/openapi.json's document parts. Fails if
  // the context has no Fib, or if a route and the document disagree.
  Status Register(Router& router);

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace fibnic::web
