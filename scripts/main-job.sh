#!/usr/bin/env bash
# What scripts/run.sh runs once built: compile the shared real Internet table
# into a FIBNIC BAR image and print the report.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shared="${FIBNIC_SHARED_DIR:-$root/../shared}"
out="${FIBNIC_OUT:-$root/build/main-job}"
mkdir -p "$out"
python3 "$shared/tools/make-routes" "$shared/data/full-table-2024-03.prefixes.gz" \
  --gateways 3 --out "$out/routes.txt" --neigh "$out/neigh.txt"
exec "$root/build/fibsync/fibnic-compile" --routes "$out/routes.txt" --neighbors "$out/neigh.txt" \
  --out "$out/bar0.img" --report "$out/report.json" "$@"
