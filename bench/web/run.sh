#!/usr/bin/env bash
# Web API under load (wrk) while routes churn: p50/p99 latency of the REST API
# on the daemon's single io thread, with churn against the same server idle
# (the peer measured in this run), plus the churn the server kept up with.
#   bench/web/run.sh [BUILD_DIR]     (builds nothing; needs BUILD_DIR/tests/web/fibnic-web-demo)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
demo="$build/tests/web/fibnic-web-demo"
duration=${WEB_BENCH_SECONDS:-10}
churn=${WEB_BENCH_CHURN:-5000}
[ -x "$demo" ] || { echo "bench/web: $demo not built" >&2; exit 1; }
command -v wrk >/dev/null || { echo "bench/web: wrk is not installed (scripts/deps/test/bench.txt)" >&2; exit 1; }
work=$(mktemp -d)
pid=
cleanup() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; fi; rm -rf "$work"; }
trap cleanup EXIT

python3 "$root/tools/make-routes" "$root/data/full-table-2024-03.prefixes.gz" --gateways 3 \
  --out "$work/routes.txt" --neigh "$work/neigh.txt" 2>/dev/null

start() {  # churn routes/s
  rm -f "$work/port"
  "$demo" --routes "$work/routes.txt" --neighbors "$work/neigh.txt" --port 0 --port-file "$work/port" \
    --churn "$1" > "$work/demo.log" 2>&1 &
  pid=$!
  for _ in $(seq 600); do [ -s "$work/port" ] && break; sleep 0.1; done
  [ -s "$work/port" ] || { cat "$work/demo.log"; exit 1; }
  port=$(cat "$work/port")
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; }

# wrk prints "Latency Distribution" lines "50%  1.23ms" ... ; normalise to ms.
pct() {  # file percentile
  awk -v p="$2%" '$1 == p { v = $2; if (v ~ /us$/) { sub(/us$/, "", v); v /= 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v) } else if (v ~ /s$/) { sub(/s$/, "", v); v *= 1000 } printf "%.3f", v }' "$1"
}
rps() { awk '/^Requests\/sec/ { printf "%.0f", $2 }' "$1"; }

cat > "$work/lookup.lua" <<'LUA'
-- random IPv4 destinations: each request a different lookup
math.randomseed(7)
request = function()
  local a = string.format("%d.%d.%d.%d", math.random(1, 223), math.random(0, 255), math.random(0, 255), math.random(1, 254))
  return wrk.format("GET", "/api/v1/lookup/" .. a)
end
LUA

declare -A result
run() {  # label target [script]
  local out="$work/$1.txt"
  if [ -n "${3:-}" ]; then
    wrk -t2 -c32 -d"${duration}s" --latency -s "$3" "http://127.0.0.1:$port" > "$out"
  else
    wrk -t2 -c32 -d"${duration}s" --latency "http://127.0.0.1:$port$2" > "$out"
  fi
  result[$1]="$(pct "$out" 50) $(pct "$out" 99) $(rps "$out")"
}

echo "bench/web: full table ($(wc -l < "$work/routes.txt") routes), wrk -t2 -c32 ${duration}s per run, churn ${churn} routes/s"
start 0
run idle_status /api/v1/status
run idle_lookup "" "$work/lookup.lua"
run idle_routes "/api/v1/routes?limit=100"
stop
start "$churn"
c0=$(curl -s "http://127.0.0.1:$port/metrics" | awk '/^fibnic_route_updates_total /{print $2}')
t0=$(date +%s.%N)
run churn_status /api/v1/status
run churn_lookup "" "$work/lookup.lua"
run churn_routes "/api/v1/routes?limit=100"
c1=$(curl -s "http://127.0.0.1:$port/metrics" | awk '/^fibnic_route_updates_total /{print $2}')
t1=$(date +%s.%N)
stop

printf "\n%-28s %10s %10s %10s   %s\n" "endpoint" "p50 ms" "p99 ms" "req/s" "p99 churn/idle"
for e in status lookup routes; do
  read -r ip50 ip99 irps <<< "${result[idle_$e]}"
  read -r cp50 cp99 crps <<< "${result[churn_$e]}"
  printf "%-28s %10s %10s %10s\n" "$e (idle)" "$ip50" "$ip99" "$irps"
  printf "%-28s %10s %10s %10s   %sx\n" "$e (churn)" "$cp50" "$cp99" "$crps" "$(awk -v a="$cp99" -v b="$ip99" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
done
awk -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" -v want="$churn" \
  'BEGIN { printf "\nchurn applied during the load: %.0f routes/s (asked %s)\n", (c1 - c0) / (t1 - t0), want }'
