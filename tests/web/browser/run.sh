#!/usr/bin/env bash
# Browser test: serves routes from the shared Internet table (with route churn)
# through fibnic-web-demo, then drives the dashboard in headless Chromium.
#   run.sh DEMO_BINARY SHARED_DIR OUT_DIR
set -euo pipefail
demo=$1 shared=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/prelude.sh"
rm -f "$out/port"
"$demo" --routes "$out/routes.txt" --neighbors "$out/neigh.txt" --port 0 --port-file "$out/port" --churn 300 \
  > "$out/demo.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$out/port" ] && break; kill -0 "$pid" || { cat "$out/demo.log"; exit 1; }; sleep 0.1; done
port=$(cat "$out/port")
DEMO_PID=$pid node "$here/dashboard_test.mjs" "http://127.0.0.1:$port" "$out/screenshots"
