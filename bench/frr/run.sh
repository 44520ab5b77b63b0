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
build=$(cd "${1:-$root/build}" && pwd)
bench=frr watch=() log_pattern="resync removed|overrun"
# shellcheck source-path=SCRIPTDIR source=../common/phases.sh
. "$root/bench/common/phases.sh"
bench_up "initial loss return bgpd zebra fibnicd" 18480
phase_header
zebra_pid=$(cat "$LAB_DIR/zebra.pid")
peer_phases
take_memory "$zebra_pid"
phase bgpd "bgpd restart" "'$lab' restart bgpd" --min-kernel-routes "$full" --quiet 5
phase zebra "zebra crash + restart" "'$lab' restart zebra --kill" --min-kernel-routes "$full" --quiet 5
fibnicd_restart_phase
legend "BGP routes" "routes the kernel source's re-dumps removed in the phase (+0: next-hop objects go" \
  "with their events); a swept route is one whose deletion event was lost (an overrun)"

summary zebra zebra "the zebra crash phase" "goal <= 0.20; fibnicd goal <= 100 MB"
