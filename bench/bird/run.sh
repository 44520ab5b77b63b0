#!/usr/bin/env bash
# bench/frr's table and phases with BIRD 2 as the router's routing daemon:
# BIRD in the router namespace with BGP sessions to three bird2 peers
# announcing the real table (data/) split between them, both families; its
# kernel protocols write the best routes into the router's main table (proto
# bird), and fibnicd follows them on the kernel source alone (no FRR, no FPM;
# lab/lab.sh --router bird --wire direct: no card, the control plane only).
# Phases: initial load, peer loss, peer return, bird restart (SIGTERM: BIRD
# removes its routes from the kernel as it stops, the new one installs them
# again), fibnicd restart. For each, in the same run (bench/frr's
# route_watch.py --proto bird --source kernel): when the kernel had its last
# change of BIRD's routes and when the device had its last batch written,
# from the event that starts the phase; the worst answer time of fibnicd's
# REST status, polled throughout; the misforward window (destinations the
# kernel just changed, sampled while the phase runs); at its end, every
# announced prefix's first address decoded from the BAR against the kernel
# (bar_check.py); what the kernel source swept. Then fibnicd's memory next to
# BIRD's and its CPU time per 100k route updates.
# Exits 1, saying why, when a phase misforwards or the API stalls.
#   bench/bird/run.sh [BUILD_DIR]       (root; BIRD_BENCH_ROUTES=N: the first N IPv4 prefixes + N/5 IPv6)
#   BIRD_BENCH_PHASES="..."             a subset of: initial loss return bird fibnicd (in that order)
#   BIRD_BENCH_OUT, _API_BOUND, _CHECK_SAMPLE, _CHECK_SEED: as bench/frr's FRR_BENCH_*
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
bench=bird watch=(--proto bird --source kernel) log_pattern="overrun|resync removed|refus"
# shellcheck source-path=SCRIPTDIR source=../common/phases.sh
. "$root/bench/common/phases.sh"
bench_up "initial loss return bird fibnicd" 18481 --router bird
phase_header
bird_pid=$(cat "$LAB_DIR/bird.pid")
peer_phases
take_memory "$bird_pid"
bird_own=$(ip netns exec "$LAB_NAME-r" birdc -s "$LAB_DIR/bird.ctl" show memory 2>/dev/null | awk '$1 == "Total:" { print $2, $3 }' || true)
phase bird "bird restart" "'$lab' restart bird" --min-kernel-routes "$full" --quiet 5
fibnicd_restart_phase
legend "BIRD routes (proto bird)" "routes + neighbours the kernel source removed at its re-dumps (after a netlink overrun)" \
  "in the phase, + 0 (no next-hop groups: BIRD installs routes with inline next-hops)"

[ -z "$bird_own" ] || bird_own="bird's own count after peer return (birdc show memory, Total): $bird_own"
summary bird bird "the bird restart phase" "fibnicd goal <= 100 MB" "$bird_own"
