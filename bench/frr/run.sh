#!/usr/bin/env bash
# The production path at Internet scale: real zebra (-M dplane_fpm_nl) and
# bgpd in a router namespace, three bird2 BGP peers announcing the real table
# (data/) split between them, both families, and fibnicd on the FPM + kernel
# sources (lab/lab.sh --wire direct: no card, the control plane only).
# Phases: initial load, peer loss, peer return, bgpd restart, zebra crash
# (SIGKILL; bgpd restarts with it, as under watchfrr), fibnicd restart. For each, in the same run
# (route_watch.py): when the kernel had its last change of zebra's routes and
# when the device had its last batch written, from the event that starts the
# phase; the worst answer time of fibnicd's REST status, polled throughout;
# the misforward window (destinations the kernel just changed, sampled while
# the phase runs); at its end, every announced prefix's first address
# decoded from the BAR against the kernel (bar_check.py); routes swept. Then
# fibnicd's memory next to zebra's and its CPU time per 100k route updates.
# Exits 1, saying why, when a phase misforwards or the API stalls.
#   bench/frr/run.sh [BUILD_DIR]        (root; FRR_BENCH_ROUTES=N: the first N IPv4 prefixes + N/5 IPv6)
#   FRR_BENCH_PHASES="..."              a subset of: initial loss return bgpd zebra fibnicd (in that order)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/bench/frr"
build=$(cd "${1:-$root/build}" && pwd)
export FIBNIC_BIN="$build/bin"
# The lab is this run's alone (its name carries the pid): the EXIT trap's
# down can only ever take down what this run made, also when `up` is refused.
export LAB_NAME=${LAB_NAME:-bench-frr-$$}
export LAB_DIR=${LAB_DIR:-/run/fibnic-$LAB_NAME}
# What outlives the lab (torn down at exit): each phase's JSON, stack dumps of a stall.
out_dir=${FRR_BENCH_OUT:-/tmp/fibnic-bench-frr.$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out_dir"
lab="$root/lab/lab.sh"
bar_tool="$build/tests/kdiff/kdiff_bar"
api_bound=${FRR_BENCH_API_BOUND:-10}  # seconds: a slower status answer fails the bench
check_sample=${FRR_BENCH_CHECK_SAMPLE:-100000}  # prefixes decoded at each phase's end (0: every one)
phases=" ${FRR_BENCH_PHASES:-initial loss return bgpd zebra fibnicd} "
for t in "$FIBNIC_BIN/fibnicd" "$bar_tool"; do
  [ -x "$t" ] || { echo "bench/frr: $t not built (scripts/build.sh release)" >&2; exit 1; }
done
limit=()
[ -n "${FRR_BENCH_ROUTES:-}" ] && limit=(--routes "$FRR_BENCH_ROUTES")
trap '"$lab" down >/dev/null 2>&1 || true' EXIT
LAB_START_PEERS=0 "$lab" up --wire direct --web-port 18480 "${limit[@]}" >/dev/null
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start; results in $out_dir"

mb() { awk -v k="$2:" '$1 == k { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
# Resident MB of one file's mapping (the BAR file), from smaps.
mapped_mb() { awk -v f="$2" 'NF >= 6 && $2 ~ /^[r-][w-][x-][ps]$/ { on = ($6 == f) } on && $1 == "Rss:" { s += $2 } END { printf "%.1f", s / 1024 }' "/proc/$1/smaps"; }
fibnicd_mem() {  # resident peak anonymous file-backed BAR-mapping, MB
  echo "$(mb "$1" VmRSS) $(mb "$1" VmHWM) $(mb "$1" RssAnon) $(mb "$1" RssFile) $(mapped_mb "$1" "$LAB_DIR/bar0.img")"
}
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"; }
status_json() { ip netns exec "$LAB_NAME-r" "$FIBNIC_BIN/fibnicctl" --json status; }
updates() { status_json | python3 -c 'import json,sys; print(json.load(sys.stdin)["sources"]["pipeline"]["updates_received"])'; }
bar_written() {
  ip netns exec "$LAB_NAME-r" curl -s --max-time 30 http://127.0.0.1:8080/metrics |
    awk '$1 == "fibnic_bar_bytes_written_total" { printf "%d", $2 }'
}

failures=()
printf '%-26s %8s %8s %7s %6s %8s %7s %13s %12s %7s\n' phase kernel_s device_s dev/krn dev-ms events api_max misfwd_end mf_window swept
phase() {  # phase KEY NAME COMMAND [route_watch options]
  local key=$1 name=$2 cmd=$3 out check log_from
  shift 3
  [[ "$phases" == *" $key "* ]] || return 0
  log_from=$(($(wc -l <"$LAB_DIR/fibnicd.log") + 1))
  out=$(cd "$here" && ip netns exec "$LAB_NAME-r" python3 route_watch.py --netns "$LAB_NAME-r" --run "$cmd" --bar-tool "$bar_tool" \
    --bar "$LAB_DIR/bar0.img" --pid-file "$LAB_DIR/fibnicd.pid" --stall-bound "$api_bound" \
    --stall-dump "$out_dir/stall-$key.txt" "$@")
  check=$(cd "$here" && python3 bar_check.py "$LAB_NAME-r" "$bar_tool" "$LAB_DIR/bar0.img" "$LAB_DIR/table.txt" "$check_sample" h0=0 h1=1 h2=2)
  echo "$out" >"$out_dir/phase-$key.json"
  echo "$check" >"$out_dir/check-$key.json"
  python3 - "$name" "$out" "$check" "$api_bound" "$key" <<'PY' || failures+=("$name")
import json, sys
name, r, c, bound, key = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
k = r["kernel_s"]
d = r["device_s"] if key != "fibnicd" else max(x for x in (r["device_s"], r["settled_s"], 0) if x is not None)
# Three decimals and the lag itself: the FPM stream follows zebra's kernel install, so
# the device ends a few ms after the kernel, which two decimals would show as 1.00.
ratio = f"{d / k:.3f}" if k and d else "-"
behind = f"{(d - k) * 1000:+.0f}" if k is not None and d is not None else "-"
mf = f"{r['mf_destinations']}/{r['mf_max_age_s']}s" if r["mf_checked"] else "-"
print(f"{name:<26} {k if k is not None else '-':>8} {d if d is not None else '-':>8} {ratio:>7} {behind:>6} {r['kernel_events']:>8} "
      f"{r['api_worst_s']:>7} {str(c['misforwarded']) + '/' + str(c['checked']):>13} {mf:>12} {str(r['swept_routes']) + '+' + str(r['swept_groups']):>7}")
notes = []
if r["timed_out"]: notes.append("timed out")
if r["overruns"]: notes.append(f"{r['overruns']} netlink overruns: kernel time is a lower bound")
if r["api_timeouts"]: notes.append(f"{r['api_timeouts']} status requests unanswered")
if r["api_loop_late"]:
    notes.append(f"{r['api_loop_late']} status answers without the sources (fibnicd's main loop busy > 2 s), "
                 f"at most {r['loop_worst_s']} s in a row")
if r["stall_dump"]: notes.append(f"status API stalled: stack dump in {r['stall_dump']}")
if r["mf_examples"]: notes.append(f"seen misforwarded while the phase ran: {'; '.join(r['mf_examples'])}")
if c["misforwarded"]: notes.append(f"misforwarded at the end: {c['examples']} (FRR_BENCH_CHECK_SEED={c['seed']})")
for n in notes: print(f"    {n}")
stalled = r["api_worst_s"] > bound or r["api_timeouts"] or r["loop_worst_s"] > bound
sys.exit(1 if r["timed_out"] or stalled or c["misforwarded"] else 0)
PY
  tail -n +"$log_from" "$LAB_DIR/fibnicd.log" >"$out_dir/fibnicd-$key.log"
  grep -E "replay over|resync removed|overrun" "$out_dir/fibnicd-$key.log" | sed 's/^/    fibnicd: /' | tail -n 4 || true
}

fibnicd_pid=$(cat "$LAB_DIR/fibnicd.pid")
zebra_pid=$(cat "$LAB_DIR/zebra.pid")
cpu0=$(cpu_s "$fibnicd_pid")
upd0=$(updates)
# Every announced prefix and each peer's LAN, both families.
full=$(($(wc -l <"$LAB_DIR/table.txt") + 6))
phase initial "initial load (3 peers)" "for k in 0 1 2; do '$lab' peer start \$k; done" --min-kernel-routes "$full"
# Each prefix has one peer: peer 1's routes (and its LANs) are withdrawn, then back.
peer1=$(($(cat "$LAB_DIR/p1-v4.conf" "$LAB_DIR/p1-v6.conf" | wc -l) + 2))
phase loss "peer loss (peer 1 stops)" "'$lab' peer stop 1" --max-kernel-routes $((full - peer1))
phase return "peer return (peer 1)" "'$lab' peer start 1" --min-kernel-routes "$full"
cpu1=$(cpu_s "$fibnicd_pid")
upd1=$(updates)
read -r -a fmem <<<"$(fibnicd_mem "$fibnicd_pid")"
mem=("${fmem[0]}" "${fmem[1]}" "$(mb "$zebra_pid" VmRSS)" "$(mb "$zebra_pid" VmHWM)" "${fmem[2]}" "${fmem[3]}" "${fmem[4]}")
phase bgpd "bgpd restart" "'$lab' restart bgpd" --min-kernel-routes "$full" --quiet 5
phase zebra "zebra crash + restart" "'$lab' restart zebra --kill" --min-kernel-routes "$full" --quiet 5
# fibnicd's memory once more at the end of its life (bgpd and zebra restarts
# behind it), before the restart phase starts a new one.
end_mem=$(fibnicd_mem "$fibnicd_pid")
gen0=$(ip netns exec "$LAB_NAME-r" "$bar_tool" "$LAB_DIR/bar0.img" <<<gen)
cp "$LAB_DIR/bar0.img" "$LAB_DIR/bar0.before"
phase fibnicd "fibnicd restart" "'$lab' restart fibnicd" --no-kernel --quiet 5
if [[ "$phases" == *" fibnicd "* ]]; then
  echo "    fibnicd restart: GENERATION $gen0 -> $(ip netns exec "$LAB_NAME-r" "$bar_tool" "$LAB_DIR/bar0.img" <<<gen);" \
    "the new fibnicd wrote $(bar_written) bytes to the BAR; $(cmp -l "$LAB_DIR/bar0.before" "$LAB_DIR/bar0.img" | wc -l) bytes differ"
fi
echo "dev/krn = device time / kernel time; dev-ms = how many ms the device's last write came after the kernel's last change"
echo "kernel: $full BGP routes with all peers up; misfwd_end = misforwarded/checked (first addresses of announced"
echo "prefixes: every one, or a random sample of FRR_BENCH_CHECK_SAMPLE=$check_sample); mf_window = sampled destinations seen misforwarded after the kernel changed them / the longest"
echo "after the change; swept = routes the kernel source's re-dumps removed in the phase (+0: next-hop objects go"
echo "with their events); a swept route is one whose deletion event was lost (an overrun)"

echo
echo "memory (MB, after peer return)  resident    peak"
printf 'fibnicd                       %10s %7s\n' "${mem[0]}" "${mem[1]}"
printf 'zebra                         %10s %7s\n' "${mem[2]}" "${mem[3]}"
echo "fibnicd resident: ${mem[4]} MB anonymous, ${mem[5]} MB file-backed, of which ${mem[6]} MB the file backend's BAR mapping (a card's BAR adds none)"
read -r -a emem <<<"$end_mem"
[ -n "$end_mem" ] && [[ "$phases" == *" zebra "* ]] &&
  echo "fibnicd after the zebra crash phase: ${emem[0]} MB resident, ${emem[1]} MB peak over its whole run, ${emem[2]} MB anonymous, ${emem[4]} MB BAR mapping"
python3 - "${mem[0]}" "${mem[2]}" "$cpu0" "$cpu1" "$upd0" "$upd1" <<'PY'
import sys
f, z, c0, c1, u0, u1 = map(float, sys.argv[1:])
print(f"fibnicd / zebra resident: {f / z:.2f} (goal <= 0.20; fibnicd goal <= 100 MB)")
n = max(u1 - u0, 1)
print(f"fibnicd CPU (initial load to peer return): {c1 - c0:.2f} s for {int(n)} route updates = {(c1 - c0) / n * 1e5:.2f} s per 100k")
PY
echo "machine: load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
if [ ${#failures[@]} -gt 0 ]; then
  printf 'bench/frr: FAILED in: %s\n' "${failures[@]}" >&2
  exit 1
fi
