#!/usr/bin/env bash
# Long soak of the FRR differential harness (tests/frrdiff, docs/oracle.md):
# zebra/bgpd/staticd and three bird2 peers drive random announcements,
# withdrawals, peer loss, statics, zebra and fibnicd restarts; the decoded BAR
# must punt or agree with the kernel at every settled point, and a fibnicd
# restart with the host unchanged must not write the device. By default it
# runs until FRR has made 100,000 kernel route changes, in chunks of up to 40
# events with block announcements/withdrawals (96 prefixes each) six times
# as likely as in CI (FRRDIFF_CHURN=6: more route changes per settle and
# check, the checks themselves unchanged). Prints progress every minute, then
# events/s, route changes and the divergence count; exits 1 on a divergence
# (after the shortest event prefix that shows it). Root, FRR and bird2.
#   nice -n 10 bench/frrdiff/soak.sh [BUILD_DIR]
# Env: FRRDIFF_NHG (1: next-hop groups, 0: inline), FRRDIFF_ROUTE_CHANGES
# (100000), FRRDIFF_EVENTS / FRRDIFF_SECONDS (no limit), FRRDIFF_CHUNK (40),
# FRRDIFF_CHURN (6),
# FIBNIC_SEED (replay: the start line prints every setting a seed needs).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
for t in "$build/bin/fibnicd" "$build/bin/fibnicctl" "$build/tests/kdiff/kdiff_bar"; do
  [ -x "$t" ] || { echo "soak.sh: $t missing (build first: scripts/build.sh release)" >&2; exit 2; }
done
export FRRDIFF_ROUTE_CHANGES=${FRRDIFF_ROUTE_CHANGES:-100000}
export FRRDIFF_EVENTS=${FRRDIFF_EVENTS:-100000000}
export FRRDIFF_SECONDS=${FRRDIFF_SECONDS:-1000000000}
export FRRDIFF_CHUNK=${FRRDIFF_CHUNK:-40}
export FRRDIFF_CHURN=${FRRDIFF_CHURN:-6}
exec python3 "$root/tests/frrdiff/frrdiff.py" "$build/bin/fibnicd" "$build/tests/kdiff/kdiff_bar"
