# shellcheck shell=bash disable=SC2154  # root, build, bench, watch, log_pattern: set by the run.sh that sources this
# The phases of the control-plane benches on lab/lab.sh (bench/frr: zebra +
# bgpd over FPM; bench/bird: BIRD's kernel protocol, fibnicd on the kernel
# source alone), sourced by their run.sh, which set before sourcing:
#   root, build    the checkout and the build tree (its bin/ and tests/kdiff/kdiff_bar)
#   bench          the bench's name (frr, bird): its variables are FRR_BENCH_*, BIRD_BENCH_*
#   watch          route_watch.py options every phase gets (an array)
#   log_pattern    fibnicd log lines (grep -E) printed under each phase
# and then call bench_up, which reads the bench's variables (_ROUTES, _PHASES,
# _OUT, _API_BOUND, _CHECK_SAMPLE, _CHECK_SEED) and brings the lab up.
# The Python helpers are bench/frr's (route_watch.py, bar_check.py,
# fib_compare.py).
py_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../frr" && pwd)"
env_prefix=${bench^^}_BENCH
export FIBNIC_BIN="$build/bin"
# The lab is this run's alone (its name carries the pid): the EXIT trap's
# down can only ever take down what this run made, also when `up` is refused.
export LAB_NAME=${LAB_NAME:-bench-$bench-$$}
export LAB_DIR=${LAB_DIR:-/run/fibnic-$LAB_NAME}
lab="$root/lab/lab.sh"
bar_tool="$build/tests/kdiff/kdiff_bar" clock_tool="$build/bench/frr/route_clock"

bench_env() {  # NAME DEFAULT: $<PREFIX>_NAME or DEFAULT
  local v="${env_prefix}_$1"
  echo "${!v:-$2}"
}

bench_up() {  # DEFAULT_PHASES WEB_PORT [lab.sh up options]
  local default_phases=$1 web_port=$2 limit=() t
  shift 2
  # What outlives the lab (torn down at exit): each phase's JSON, stack dumps of a stall.
  out_dir=$(bench_env OUT "/tmp/fibnic-bench-$bench.$(date +%Y%m%d-%H%M%S)")
  mkdir -p "$out_dir"
  api_bound=$(bench_env API_BOUND 10)  # seconds: a slower status answer fails the bench
  check_sample=$(bench_env CHECK_SAMPLE 100000)  # prefixes decoded at each phase's end (0: every one)
  check_seed=$(bench_env CHECK_SEED "")
  phases=" $(bench_env PHASES "$default_phases") "
  for t in "$FIBNIC_BIN/fibnicd" "$bar_tool" "$clock_tool"; do
    [ -x "$t" ] || { echo "bench/$bench: $t not built (scripts/build.sh release)" >&2; exit 1; }
  done
  [ -n "$(bench_env ROUTES "")" ] && limit=(--routes "$(bench_env ROUTES "")")
  trap '"$lab" down >/dev/null 2>&1 || true' EXIT
  LAB_START_PEERS=0 "$lab" up --wire direct --web-port "$web_port" "${limit[@]}" "$@" >/dev/null
  echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start; results in $out_dir"
}

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
phase_header() {
  printf '%-26s %8s %8s %7s %6s %8s %7s %13s %12s %7s\n' phase kernel_s device_s dev/krn dev-ms events api_max misfwd_end mf_window swept
}

phase() {  # phase KEY NAME COMMAND [route_watch options]
  local key=$1 name=$2 cmd=$3 out check log_from
  shift 3
  [[ "$phases" == *" $key "* ]] || return 0
  log_from=$(($(wc -l <"$LAB_DIR/fibnicd.log") + 1))
  out=$(cd "$py_dir" && ip netns exec "$LAB_NAME-r" python3 route_watch.py --netns "$LAB_NAME-r" --run "$cmd" --bar-tool "$bar_tool" --clock-tool "$clock_tool" \
    --bar "$LAB_DIR/bar0.img" --pid-file "$LAB_DIR/fibnicd.pid" --stall-bound "$api_bound" \
    --stall-dump "$out_dir/stall-$key.txt" "${watch[@]}" "$@")
  check=$(cd "$py_dir" && BENCH_CHECK_SEED="$check_seed" python3 bar_check.py "$LAB_NAME-r" "$bar_tool" "$LAB_DIR/bar0.img" \
    "$LAB_DIR/table.txt" "$check_sample" h0=0 h1=1 h2=2)
  echo "$out" >"$out_dir/phase-$key.json"
  echo "$check" >"$out_dir/check-$key.json"
  python3 - "$name" "$out" "$check" "$api_bound" "$key" "$env_prefix" <<'PY' || failures+=("$name")
import json, sys
name, r, c, bound, key, env = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3]), float(sys.argv[4]), sys.argv[5], sys.argv[6]
k = r["kernel_s"]
d = r["device_s"] if key != "fibnicd" else max(x for x in (r["device_s"], r["settled_s"], 0) if x is not None)
# Three decimals and the lag itself: the device ends a few ms after the kernel
# (FPM follows zebra's kernel install; the kernel source reads the kernel's
# events), which two decimals would show as 1.00.
ratio = f"{d / k:.3f}" if k and d else "-"
behind = f"{(d - k) * 1000:+.0f}" if k is not None and d is not None else "-"
mf = f"{r['mf_destinations']}/{r['mf_max_age_s']}s" if r["mf_checked"] else "-"
print(f"{name:<26} {k if k is not None else '-':>8} {d if d is not None else '-':>8} {ratio:>7} {behind:>6} {r['kernel_events']:>8} "
      f"{r['api_worst_s']:>7} {str(c['misforwarded']) + '/' + str(c['checked']):>13} {mf:>12} {str(r['swept_routes']) + '+' + str(r['swept_groups']):>7}")
notes = []
if r["timed_out"]: notes.append("timed out")
safe = r.get("device_safe_s")
if k is not None and d is not None and d - k > 0.01 and "device_safe_s" in r:
    if safe is not None and safe >= d:
        notes.append("the device's last write made it right for the kernel's last change (not the IPv6 entry choice's)")
    else:
        notes.append("the device was right for all of it " + (f"{(safe - k) * 1000:+.0f} ms after the kernel's last change"
                     if safe is not None else "before the kernel's last change (nothing to punt)") +
                     "; the later writes were the IPv6 entry choice's (best after)")
if r["overruns"]: notes.append(f"{r['overruns']} netlink overruns: kernel time is a lower bound")
if r.get("stamp_lag_max_s", 0) > 0.01:
    notes.append(f"the watch's clock found events waiting for up to {r['stamp_lag_max_s']} s on end (a burst; "
                 f"{r['stamp_lag_last_s']} s for the last change): a kernel stamp read then may be late by up to as much")
if r.get("mf_unplaced"):
    notes.append(f"{r['mf_unplaced']} misforwarded looks not timed (the kernel changed the route twice since the read)")
if r["api_timeouts"]: notes.append(f"{r['api_timeouts']} status requests unanswered")
if r["api_loop_late"]:
    notes.append(f"{r['api_loop_late']} status answers without the sources (fibnicd's main loop busy > 2 s), "
                 f"at most {r['loop_worst_s']} s in a row")
if r["stall_dump"]: notes.append(f"status API stalled: stack dump in {r['stall_dump']}")
if r["mf_examples"]: notes.append(f"seen misforwarded while the phase ran: {'; '.join(r['mf_examples'])}")
if r.get("mf_worst") and r["mf_worst"] not in r["mf_examples"]: notes.append(f"the longest: {r['mf_worst']}")
if c["misforwarded"]: notes.append(f"misforwarded at the end: {c['examples']} ({env}_CHECK_SEED={c['seed']})")
for n in notes: print(f"    {n}")
stalled = r["api_worst_s"] > bound or r["api_timeouts"] or r["loop_worst_s"] > bound
sys.exit(1 if r["timed_out"] or stalled or c["misforwarded"] else 0)
PY
  tail -n +"$log_from" "$LAB_DIR/fibnicd.log" >"$out_dir/fibnicd-$key.log"
  grep -E "$log_pattern" "$out_dir/fibnicd-$key.log" | sed 's/^/    fibnicd: /' | tail -n 4 || true
  # Which phase raised fibnicd's peak (its restart phase runs a new process).
  if [ "$key" != fibnicd ] && [ -n "${fibnicd_pid:-}" ] && [ -e "/proc/$fibnicd_pid" ]; then
    echo "    fibnicd memory: $(mb "$fibnicd_pid" VmRSS) MB resident, $(mb "$fibnicd_pid" VmHWM) MB peak so far;" \
      "update queue deepest so far: $(status_json | python3 -c 'import json,sys; print(json.load(sys.stdin)["sources"]["pipeline"]["queue_depth_max"])' 2>/dev/null || echo '?')"
  fi
}

# The first three phases: initial load, peer loss, peer return; fibnicd's CPU
# time and route updates over them (cpu0/cpu1, upd0/upd1), and full: the
# routes the kernel holds with every peer up.
peer_phases() {
  local peer1
  fibnicd_pid=$(cat "$LAB_DIR/fibnicd.pid")
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
}

# The fibnicd restart phase, and what the new process wrote to the BAR.
# end_mem: fibnicd's memory once more at the end of its life (the routing
# daemon's restarts behind it), before the restart starts a new one.
fibnicd_restart_phase() {
  local gen0
  end_mem=$(fibnicd_mem "$fibnicd_pid")
  gen0=$(ip netns exec "$LAB_NAME-r" "$bar_tool" "$LAB_DIR/bar0.img" <<<gen)
  cp "$LAB_DIR/bar0.img" "$LAB_DIR/bar0.before"
  phase fibnicd "fibnicd restart" "'$lab' restart fibnicd" --no-kernel --quiet 5
  if [[ "$phases" == *" fibnicd "* ]]; then
    echo "    fibnicd restart: GENERATION $gen0 -> $(ip netns exec "$LAB_NAME-r" "$bar_tool" "$LAB_DIR/bar0.img" <<<gen);" \
      "the new fibnicd wrote $(bar_written) bytes to the BAR; $(cmp -l "$LAB_DIR/bar0.before" "$LAB_DIR/bar0.img" | wc -l) bytes differ"
  fi
}

# What the columns mean, under the table. WHAT_ROUTES: what the kernel counts;
# then the lines saying what swept counts.
legend() {  # WHAT_ROUTES SWEPT_LINE [LINE...]
  echo "dev/krn = device time / kernel time; dev-ms = how many ms the device's last write came after the kernel's last change"
  echo "kernel: $full $1 with all peers up; misfwd_end = misforwarded/checked (first addresses of announced"
  echo "prefixes: every one, or a random sample of ${env_prefix}_CHECK_SAMPLE=$check_sample); mf_window = sampled destinations seen misforwarded after the kernel changed them / the longest"
  echo "after the change; swept = $2"
  shift 2
  [ $# -eq 0 ] || printf '%s\n' "$@"
}

# Memory after peer return: fibnicd's and the routing daemon's (mem[]).
take_memory() {  # PEER_PID
  local fmem
  read -r -a fmem <<<"$(fibnicd_mem "$fibnicd_pid")"
  mem=("${fmem[0]}" "${fmem[1]}" "$(mb "$1" VmRSS)" "$(mb "$1" VmHWM)" "${fmem[2]}" "${fmem[3]}" "${fmem[4]}")
}

# The memory and CPU lines. fibnicd_pid, mem (take_memory), end_mem
# (fibnicd_mem at the end of its first life), cpu0/cpu1 and upd0/upd1 (initial
# load to peer return) set by the caller.
summary() {  # PEER_NAME END_KEY END_PHASE RATIO_GOAL [A LINE MORE]
  local peer=$1 end_key=$2 end_phase=$3 goal=$4 more=${5:-} emem
  echo
  echo "memory (MB, after peer return)  resident    peak"
  printf '%-30s%10s %7s\n' fibnicd "${mem[0]}" "${mem[1]}"
  printf '%-30s%10s %7s\n' "$peer" "${mem[2]}" "${mem[3]}"
  echo "fibnicd resident: ${mem[4]} MB anonymous, ${mem[5]} MB file-backed, of which ${mem[6]} MB the file backend's BAR mapping (a card's BAR adds none)"
  read -r -a emem <<<"$end_mem"
  [ -n "$end_mem" ] && [[ "$phases" == *" $end_key "* ]] &&
    echo "fibnicd after $end_phase: ${emem[0]} MB resident, ${emem[1]} MB peak over its whole run, ${emem[2]} MB anonymous, ${emem[4]} MB BAR mapping"
  python3 - "${mem[0]}" "${mem[2]}" "$cpu0" "$cpu1" "$upd0" "$upd1" "$peer" "$goal" <<'PY'
import sys
f, z, c0, c1, u0, u1 = map(float, sys.argv[1:7])
print(f"fibnicd / {sys.argv[7]} resident: {f / z:.2f} ({sys.argv[8]})")
n = max(u1 - u0, 1)
print(f"fibnicd CPU (initial load to peer return): {c1 - c0:.2f} s for {int(n)} route updates = {(c1 - c0) / n * 1e5:.2f} s per 100k")
PY
  [ -z "$more" ] || echo "$more"
  echo "machine: load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
  if [ ${#failures[@]} -gt 0 ]; then
    printf "bench/$bench: FAILED in: %s\n" "${failures[@]}" >&2
    exit 1
  fi
}
