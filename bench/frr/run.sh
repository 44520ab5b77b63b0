#!/usr/bin/env bash
# The production path at Internet scale: real zebra (-M dplane_fpm_nl) and
# bgpd in a router namespace, three bird2 BGP peers announcing the real table
# (data/) split between them, both families, and fibnicd on the FPM + kernel
# sources (lab/lab.sh --wire direct: no card, the control plane only). For
# each phase, in the same run: when the kernel had its last route change
# (zebra's install) and when the device had its last batch written, from
# the event that starts the phase; then fibnicd's memory next to zebra's and
# its CPU time per 100k route updates.
#   bench/frr/run.sh [BUILD_DIR]        (root; FRR_BENCH_ROUTES=N: the first N IPv4 prefixes + N/5 IPv6)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/bench/frr"
build=$(cd "${1:-$root/build}" && pwd)
export FIBNIC_BIN="$build/bin"
export LAB_DIR=${LAB_DIR:-/run/fibnic-bench-frr}
lab="$root/lab/lab.sh"
[ -x "$FIBNIC_BIN/fibnicd" ] || { echo "bench/frr: $FIBNIC_BIN/fibnicd not built (scripts/build.sh release)" >&2; exit 1; }
limit=()
[ -n "${FRR_BENCH_ROUTES:-}" ] && limit=(--routes "$FRR_BENCH_ROUTES")
trap '"$lab" down >/dev/null 2>&1 || true' EXIT
LAB_START_PEERS=0 "$lab" up --wire direct --web-port 18480 "${limit[@]}" >/dev/null

pid_of() { pgrep -f "$1" | head -n 1; }
fibnicd_pid=$(pid_of "fibnicd --config $LAB_DIR/fibnicd.yaml")
zebra_pid=$(pid_of "zebra -f $LAB_DIR/frr/frr.conf")
mb() { awk -v k="$2:" '$1 == k { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"; }
updates() {
  ip netns exec lab-r "$FIBNIC_BIN/fibnicctl" --json status |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["sources"]["pipeline"]["updates_received"])'
}

printf '%-28s %10s %10s %14s %10s\n' phase kernel_s device_s device/kernel events
phase() {  # phase NAME COMMAND
  local out
  out=$(ip netns exec lab-r python3 "$here/route_watch.py" --run "$2")
  python3 - "$1" "$out" <<'PY'
import json, sys
name, r = sys.argv[1], json.loads(sys.argv[2])
k, d = r["kernel_s"], r["device_s"]
ratio = f"{d / k:.2f}" if k and d else "-"
note = " (timed out)" if r["timed_out"] else ""
note += f" ({r['overruns']} netlink overruns: kernel time is a lower bound)" if r["overruns"] else ""
print(f"{name:<28} {k if k is not None else '-':>10} {d if d is not None else '-':>10} {ratio:>14} {r['kernel_events']:>10}{note}")
PY
}
cpu0=$(cpu_s "$fibnicd_pid")
upd0=$(updates)
phase "initial load (3 peers)" "for k in 0 1 2; do '$lab' peer start \$k; done"
phase "peer loss (peer 1 stops)" "'$lab' peer stop 1"
phase "peer return (peer 1)" "'$lab' peer start 1"
cpu1=$(cpu_s "$fibnicd_pid")
upd1=$(updates)

echo
echo "memory (MB)          resident    peak"
printf 'fibnicd            %10s %7s\n' "$(mb "$fibnicd_pid" VmRSS)" "$(mb "$fibnicd_pid" VmHWM)"
printf 'zebra              %10s %7s\n' "$(mb "$zebra_pid" VmRSS)" "$(mb "$zebra_pid" VmHWM)"
python3 - "$(mb "$fibnicd_pid" VmRSS)" "$(mb "$zebra_pid" VmRSS)" "$cpu0" "$cpu1" "$upd0" "$upd1" <<'PY'
import sys
f, z, c0, c1, u0, u1 = map(float, sys.argv[1:])
print(f"fibnicd / zebra resident: {f / z:.2f} (goal <= 0.20; fibnicd goal <= 100 MB)")
n = max(u1 - u0, 1)
print(f"fibnicd CPU: {c1 - c0:.2f} s for {int(n)} route updates = {(c1 - c0) / n * 1e5:.2f} s per 100k")
PY
ip netns exec lab-r "$FIBNIC_BIN/fibnicctl" status | head -n 20
