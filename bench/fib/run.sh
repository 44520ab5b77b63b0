#!/usr/bin/env bash
# fib bench: Fib vs DPDK rte_fib on the real table (data/) (same run), then
# route listing pages and Counts() against the pre-seek way.
#   bench/fib/run.sh [BUILD_DIR]    (default build/; builds nothing)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
bin="$build/bench/fib/fib_bench"
[ -x "$bin" ] || { echo "fib bench: $bin not built (scripts/build.sh release)" >&2; exit 1; }
[ -f "$root/data/full-table-2024-03.prefixes.gz" ] || { echo "fib bench: data/full-table-2024-03.prefixes.gz is missing in $root" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$root/tools/make-routes" "$root/data/full-table-2024-03.prefixes.gz" \
  --gateways 3 --out "$tmp/routes.txt" --neigh "$tmp/neigh.txt"
for bits in 2 4; do
  "$bin" "$tmp/routes.txt" "$tmp/neigh.txt" "$bits"
  echo
done
# Route pages and Counts() against the per-route way (same run).
"$build/bench/fib/listing_bench" "$tmp/routes.txt" "$tmp/neigh.txt"
