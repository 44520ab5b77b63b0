#!/usr/bin/env bash
# Browser test against the real daemon: fibnicd with the file backend and the
# file route source (part of the shared Internet table), no kernel source, its
# web server on a free loopback port; then the same dashboard checks.
#   run_fibnicd.sh FIBNICD_BINARY SHARED_DIR OUT_DIR
set -euo pipefail
fibnicd=$1 shared=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/prelude.sh"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
rm -f "$out/bar0.img"
cat > "$out/fibnicd.yaml" <<YAML
device:
  backend: file
  path: $out/bar0.img
  create: true
  code_bits: 2
sources:
  kernel:
    enabled: false
  file:
    routes: $out/routes.txt
    neighbors: $out/neigh.txt
web:
  listen: 127.0.0.1:$port
YAML
"$fibnicd" --config "$out/fibnicd.yaml" > "$out/fibnicd.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 300); do
  curl -sf "http://127.0.0.1:$port/api/v1/status" >/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$out/fibnicd.log"; exit 1; }
  sleep 0.1
done
node "$here/dashboard_test.mjs" "http://127.0.0.1:$port" "$out/screenshots"
