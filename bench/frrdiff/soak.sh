#!/usr/bin/env bash
# Long soak of the FRR differential harness (tests/frrdiff, docs/oracle.md):
# zebra/bgpd/staticd and three bird2 peers drive random announcements,
# withdrawals, peer loss, statics, zebra and fibnicd restarts; the decoded BAR
# must punt or agree with the kernel at every settled point. By default
# 100,000 events (several route changes each) in chunks of up to 40 events, no
# time limit. Prints events/s, FRR-driven kernel route changes and the
# divergence count; exits 1 on a divergence (after the shortest event prefix
# that shows it). Root, FRR and bird2.
#   bench/frrdiff/soak.sh [BUILD_DIR]
# Env: FRRDIFF_NHG (1: next-hop groups, 0: inline), FRRDIFF_EVENTS (100000),
# FRRDIFF_SECONDS (no limit), FRRDIFF_CHUNK (40), FRRDIFF_STALE_HOLD (1s; unset
# it for fibnicd's default), FIBSYNC_SEED (replay).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
for t in "$build/bin/fibnicd" "$build/tests/kdiff/kdiff_bar"; do
  [ -x "$t" ] || { echo "soak.sh: $t missing (build first: scripts/build.sh release)" >&2; exit 2; }
done
export FRRDIFF_EVENTS=${FRRDIFF_EVENTS:-100000}
export FRRDIFF_SECONDS=${FRRDIFF_SECONDS:-1000000000}
export FRRDIFF_CHUNK=${FRRDIFF_CHUNK:-40}
export FRRDIFF_STALE_HOLD=${FRRDIFF_STALE_HOLD-1s}
exec python3 "$root/tests/frrdiff/frrdiff.py" "$build/bin/fibnicd" "$build/tests/kdiff/kdiff_bar"
