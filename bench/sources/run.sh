#!/usr/bin/env bash
# Ingest rate of the kernel source (kernel events, kernel dump)
# against the kernel's own install time of the same routes (ip -batch).
#   bench/sources/run.sh [BUILD_DIR]     (default build/; needs root)
# SOURCES_BENCH_LIMIT=N limits the table to its first N prefixes.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
limit=()
[ -n "${SOURCES_BENCH_LIMIT:-}" ] && limit=(--limit "$SOURCES_BENCH_LIMIT")
python3 "$root/tools/make-routes" "$root/data/full-table-2024-03.prefixes.gz" --gateways 3 --family all \
  --out "$work/routes.txt" --neigh "$work/neigh.txt" "${limit[@]}" 2>/dev/null
exec "$build/bench/sources/sources_bench" "$work/routes.txt"
