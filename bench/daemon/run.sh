#!/usr/bin/env bash
# fibnicd end to end on the real table (data/) (file backend): full-table
# convergence vs the offline compiler, warm restart, single-update latency
# (idle, and while wrk hammers /api/v1/status and /api/v1/sram).
#   bench/daemon/run.sh [BUILD_DIR]     (builds nothing)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
[ -x "$build/bench/daemon/daemon_bench" ] || { echo "bench/daemon: $build/bench/daemon/daemon_bench not built (scripts/build.sh release)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$root/tools/make-routes" "$root/data/full-table-2024-03.prefixes.gz" \
  --gateways 3 --out "$work/routes.txt" --neigh "$work/neigh.txt" >/dev/null
"$build/bench/daemon/daemon_bench" --fibnicd "$build/bin/fibnicd" \
  --compile "$build/bin/fibnic-compile" --routes "$work/routes.txt" --neigh "$work/neigh.txt" \
  --dir "$work" --updates "${UPDATES:-200}" --wrk "$(command -v wrk || echo none)"
