#!/usr/bin/env bash
# Browser test against the real daemon: fibnicd with the file backend and the
# file route source (part of the shared Internet table), no kernel source, its
# web server on a free loopback port; then the same dashboard checks.
#   run_fibnicd.sh FIBNICD_BINARY SHARED_DIR OUT_DIR
set -euo pipefail
fibnicd=$1 shared=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/prelude.sh"
port=$(free_port)
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
start_daemon "$out/fibnicd.log" "http://127.0.0.1:$port/api/v1/status" "$fibnicd" --config "$out/fibnicd.yaml"
node "$here/dashboard_test.mjs" "http://127.0.0.1:$port" "$out/screenshots"
