#!/usr/bin/env bash
# fibnicd end to end on the shared real table (file backend): full-table
# convergence vs the offline compiler, warm restart, single-update latency.
#   bench/daemon/run.sh [BUILD_DIR]     (builds nothing)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
shared="${FIBNIC_SHARED_DIR:-$root/../shared}"
if [ ! -x "$build/bench/daemon/daemon_bench" ]; then
  echo "bench/daemon: skipped — fibnicd is not built in $build (it needs the fibsync core's Fib)"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$shared/tools/make-routes" "$shared/data/full-table-2024-03.prefixes.gz" \
  --gateways 3 --out "$work/routes.txt" --neigh "$work/neigh.txt" >/dev/null
"$build/bench/daemon/daemon_bench" --fibnicd "$build/daemon/fibnicd" \
  --compile "$build/daemon/fibnic-compile" --routes "$work/routes.txt" --neigh "$work/neigh.txt" \
  --dir "$work" --updates "${UPDATES:-200}"
