#include "sources/kernel/kernel_route_notes.h"

namespace fibnic {

namespace {

// The protocol of the first route of `table` among a prefix's (one route
// per prefix and table is what zebra installs).
std::optional<uint8_t> ProtocolIn(const std::vector<const KernelRoutes::Kind*>& kinds, uint32_t table) {
  for (const KernelRoutes::Kind* k : kinds) {
    if (k->route.table == table) return k->route.protocol;
  }
  return std::nullopt;
}

}  // namespace

std::optional<RouteNotes::Held> KernelRouteNotes::Find(const Prefix& p, uint32_t table) const {
  const std::optional<uint8_t> protocol = ProtocolIn(routes_.KindsOf(p), table);
  if (!protocol) return std::nullopt;
  return Held{*protocol, routes_.note(p)};
}

size_t KernelRouteNotes::Walk(size_t cursor, size_t max, uint32_t table,
                              const std::function<void(const Prefix&, Held&)>& fn) {
  return routes_.WalkNotes(cursor, max,
                           [&](const Prefix& p, const std::vector<const KernelRoutes::Kind*>& kinds, uint8_t& note) {
                             const std::optional<uint8_t> protocol = ProtocolIn(kinds, table);
                             if (!protocol) return;
                             Held h{*protocol, note};
                             fn(p, h);
                             note = h.note;
                           });
}

}  // namespace fibnic
