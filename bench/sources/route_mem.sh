#!/usr/bin/env bash
# fibnicd's memory at full-table scale, without a routing daemon: the real
# fibnicd (file backend, the kernel source) in its own namespace, the real
# table (data/, both families, three gateways = three BGP peers) installed
# by `ip -batch` into its namespace's kernel, as zebra or BIRD would; then a
# peer loss and its return. After each phase, once the device has every route: fibnicd's
# resident and peak memory (anonymous and file-mapped apart, and of the
# file-mapped the BAR file's own mapping: the rest is the program and its
# libraries), and per route; the kernel source's route store, per route. The peer: the kernel's own memory for the same
# routes (ip -batch into a second namespace; Slab growth in /proc/meminfo).
#   bench/sources/route_mem.sh [BUILD_DIR]   (root; MEM_ROUTES=N: the first N
#   prefixes; MEM_NS: namespace prefix, default routemem; MEM_HEAPTRACK=FILE:
#   run fibnicd under heaptrack, profile to FILE)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
ns=${MEM_NS:-routemem}-r
kns=${MEM_NS:-routemem}-k
work=$(mktemp -d)
pid=""
dpid=""
cleanup() {
  if [ -n "$dpid" ]; then kill "$dpid" 2>/dev/null || true; fi
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  ip netns del "$ns" 2>/dev/null || true
  if [ -n "$kns" ]; then ip netns del "$kns" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
limit=()
[ -n "${MEM_ROUTES:-}" ] && limit=(--limit "$MEM_ROUTES")
python3 "$root/tools/make-routes" "$root/data/full-table-2024-03.prefixes.gz" --gateways 3 --ports 3 --family all \
  --out "$work/routes.txt" --neigh "$work/neigh.txt" "${limit[@]}" >/dev/null 2>&1
n=$(grep -c . "$work/routes.txt")

ip netns add "$ns"
ip netns exec "$ns" ip link set lo up
for k in 0 1 2; do
  ip -n "$ns" link add h$k type veth peer name x$k
  ip -n "$ns" link set h$k up
  ip -n "$ns" link set x$k up
  ip -n "$ns" addr add 10.$k.0.2/16 dev h$k
  ip -n "$ns" -6 addr add fd00:$k::2/32 dev h$k nodad
done
# The gateways answer (permanent neighbours): routes are offloaded, not punted.
while read -r addr mac port; do
  ip -n "$ns" neigh replace "$addr" lladdr "$mac" dev h"$port" nud permanent
done <"$work/neigh.txt"
cat >"$work/fibnicd.yaml" <<YAML
device: {backend: file, path: $work/bar0.img, code_bits: 2}
ports:
  - {interface: h0, port: 0}
  - {interface: h1, port: 1}
  - {interface: h2, port: 2}
sources:
  kernel: {enabled: true, tables: [255, 254]}
web: {listen: 127.0.0.1:18490}
YAML
wrap=()
[ -n "${MEM_HEAPTRACK:-}" ] && wrap=(heaptrack -o "$MEM_HEAPTRACK")
ip netns exec "$ns" "${wrap[@]}" "$build/bin/fibnicd" --config "$work/fibnicd.yaml" >"$work/fibnicd.log" 2>&1 &
pid=$!
ctl() { ip netns exec "$ns" "$build/bin/fibnicctl" --server 127.0.0.1:18490 "$@"; }
for _ in $(seq 100); do ctl status >/dev/null 2>&1 && break; sleep 0.2; done
# The daemon's own process (under heaptrack, a child of its script).
dpid=$(pgrep -f "bin/fibnicd --config $work/fibnicd.yaml" | tail -n 1)

# Waits until the device holds `want` best routes (beyond the kernel's own) and the commit count has
# stood still for a second; prints the seconds it took.
settle() {
  local want=$1 t0 last="" c
  t0=$(date +%s.%N)
  while :; do
    c=$(ctl --json status 2>/dev/null | python3 -c '
import json, sys
s = json.load(sys.stdin)
r = s["routes"]
print(r["ipv4"]["total"] + r["ipv6"]["total"], s["commits"])' || echo "0 0")
    if [ "${c%% *}" = $((want + base)) ] && [ "$c" = "$last" ]; then break; fi
    last=$c
    sleep 1
  done
  awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.1f", a - b - 1 }'
  # At rest: the daemon's idle trim (2 s after the last batch) has run.
  sleep 3
}
kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
# Resident KB of the mappings of one file (the BAR file: what a card's BAR,
# device memory, would not add); the rest of RssFile is the program and its
# libraries.
mapped_kb() { awk -v f="$2" 'NF >= 6 && $2 ~ /^[r-][w-][x-][ps]$/ { on = ($6 == f) } on && $1 == "Rss:" { s += $2 } END { print s + 0 }' "/proc/$1/smaps"; }
# MEM_MALLOC=1: glibc's malloc_stats() of the daemon after each phase
# (through gdb; its lines go to the daemon's log, summed here): the bytes
# malloc holds from the system against those in use.
malloc_line() {
  [ -n "${MEM_MALLOC:-}" ] || return 0
  local before
  before=$(wc -l <"$work/fibnicd.log")
  gdb -p "$dpid" -batch -ex 'call (void) malloc_stats()' >/dev/null 2>&1 || true
  tail -n +$((before + 1)) "$work/fibnicd.log" | awk '
    /^Arena/ { arenas++ }
    /^Total \(incl. mmap\):/ { total = 1 }
    total && /system bytes/ { sys = $NF } total && /in use bytes/ { use = $NF }
    END { printf "  malloc: %d arenas, %.1f MB from the system, %.1f MB in use\n", arenas, sys / 1048576, use / 1048576 }'
  # What a malloc_trim(0) now would hand back: free heap still resident.
  local r0
  r0=$(kb "$dpid" VmRSS)
  gdb -p "$dpid" -batch -ex 'call (int) malloc_trim(0)' >/dev/null 2>&1 || true
  echo "  malloc_trim(0) now: resident $((r0 / 1024)) -> $(($(kb "$dpid" VmRSS) / 1024)) MB"
}
report() {  # report PHASE ROUTES SECONDS
  python3 - "$1" "$2" "$3" "$(kb "$dpid" VmRSS)" "$(kb "$dpid" RssAnon)" "$(kb "$dpid" RssFile)" "$(kb "$dpid" VmHWM)" "${kernel_kb:-0}" "$(mapped_kb "$dpid" "$work/bar0.img")" <<'PY'
import sys
name, routes, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
rss, anon, filemap, hwm, kern, bar = (int(x) for x in sys.argv[4:])
per = f"{rss * 1024 / routes:6.0f}" if routes else "     -"
ratio = f"x{rss / kern:.2f}" if kern else "-"
print(f"{name:<22} {routes:>9} {secs:7.1f} {rss / 1024:8.1f} {anon / 1024:7.1f} {filemap / 1024:7.1f} {bar / 1024:7.1f} {hwm / 1024:7.1f} {per:>7} {ratio:>9}")
PY
  # The source's own structures (its stats' memory_bytes), per route.
  ctl --json status 2>/dev/null | python3 -c '
import json, sys
f = json.load(sys.stdin).get("sources", {}).get(sys.argv[1], {})
m, n = f.get("memory_bytes", {}), f.get("routes", 0)
if m:
    per = lambda b: f"{b / n:.2f} B/route" if n else "-"
    print(f"  {sys.argv[1]} source: " + ", ".join(f"{k} {v / 1024:.0f} KB ({per(v)})" for k, v in m.items()))' kernel || true
  malloc_line
}

# The peer: the kernel's memory for the same routes (slab growth while
# `ip -batch` installs them in a namespace of its own), measured first so the
# ratio can be printed with each phase.
ip netns add "$kns"
ip -n "$kns" link set lo up
for k in 0 1 2; do
  ip -n "$kns" link add h$k type veth peer name x$k
  ip -n "$kns" link set x$k up
  ip -n "$kns" link set h$k up
  ip -n "$kns" addr add 10.$k.0.2/16 dev h$k
  ip -n "$kns" -6 addr add fd00:$k::2/32 dev h$k nodad
done
awk '{ print "route add " $1 " via " $2 " dev h" $3 }' "$work/routes.txt" >"$work/batch"
slab() { awk '$1 == "Slab:" { print $2 }' /proc/meminfo; }
s0=$(slab)
ip -n "$kns" -batch "$work/batch"
s1=$(slab)
kernel_kb=$((s1 - s0))
ip netns del "$kns"
kns=""

# rss_MB = anon + file; file = bar (the BAR file's mapping) + the program's own files.
printf '%-22s %9s %7s %8s %7s %7s %7s %7s %7s %9s\n' phase routes secs rss_MB anon file bar peak B/route "vs kernel"
base=0
sleep 2
base=$(ctl --json status | python3 -c 'import json, sys; r = json.load(sys.stdin)["routes"]; print(r["ipv4"]["total"] + r["ipv6"]["total"])')
report "started" 0 0
lost=$(awk '$2 == "10.1.0.1" || $2 == "fd00:1::1"' "$work/routes.txt" | wc -l)
awk '$2 == "10.1.0.1" || $2 == "fd00:1::1" { print "route del " $1 " via " $2 " dev h" $3 }' "$work/routes.txt" >"$work/lose"
awk '$2 == "10.1.0.1" || $2 == "fd00:1::1" { print "route add " $1 " via " $2 " dev h" $3 }' "$work/routes.txt" >"$work/regain"
play() { ip -n "$ns" -batch "$work/$1"; }
play batch
t=$(settle "$n")
report "initial load" "$n" "$t"
play lose
t=$(settle $((n - lost)))
report "peer loss" $((n - lost)) "$t"
play regain
t=$(settle "$n")
report "peer return" "$n" "$t"
echo "kernel (ip -batch): $((kernel_kb / 1024)) MB of slab for the same $n routes"
