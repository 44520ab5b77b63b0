#include "tools/route_file_loader.h"

#include "sources/file/route_file.h"
#include "sources/file/static_table.h"

namespace fibnic {

Status LoadRouteFileInto(Fib& fib, const std::string& path, RouteFileStats* stats) {
  ASSIGN_OR_RETURN(StaticTable table, ReadStaticTable(path, fib.config().caps.ports));
  // In prefix order, as one queued batch for the Fib.
  table.ForEachRoute(RouteSource::kStatic, 1, [&](const Route& r) { fib.UpsertRoute(r); });
  stats->lines[0] += table.lines[0];
  stats->lines[1] += table.lines[1];
  stats->ecmp_lines += table.ecmp_lines();
  return OkStatus();
}

Status LoadNeighborFileInto(Fib& fib, const std::string& path, RouteFileStats* stats) {
  ASSIGN_OR_RETURN(auto neighbors, ReadNeighborFile(path, fib.config().caps.ports));
  for (const auto& n : neighbors) fib.UpsertNeighbor(n);
  stats->neighbors += neighbors.size();
  return OkStatus();
}

}  // namespace fibnic
