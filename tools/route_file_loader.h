// Loads a route file and a neighbour file into a Fib as static routes; the
// Fib has no static routes yet (as in fibnic-compile). The route file is read
// whole by sources/file's one reader (ReadStaticTable: lines repeating a
// prefix anywhere in the file are ECMP paths; an exact repeat or a bad line is
// an error naming file:line) before anything reaches the Fib.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "fib/fib.h"

namespace fibnic {

struct RouteFileStats {
  uint64_t lines[2] = {};  // route lines read per family (v4, v6)
  uint64_t ecmp_lines = 0; // lines that added a path to an earlier prefix
  uint64_t neighbors = 0;
};

Status LoadRouteFileInto(Fib& fib, const std::string& path, RouteFileStats* stats);
Status LoadNeighborFileInto(Fib& fib, const std::string& path, RouteFileStats* stats);

}  // namespace fibnic
