#!/usr/bin/env bash
# Long soak of the kernel differential harness (tests/kdiff, docs/oracle.md):
# by default 1,000,000 random `ip` events, a quiescent check every 10 chunks
# (each chunk 1-40 events; 1 % of chunks run as window checks), no time limit. Prints
# events/s and the divergence count; exits 1 on a divergence (after printing
# the shortest event prefix that shows it). Root.
#   bench/kdiff/soak.sh [BUILD_DIR]
# Env: KDIFF_EVENTS (1000000), KDIFF_CHECK_EVERY (10), KDIFF_WINDOW (0.01),
# KDIFF_PROGRESS (a progress line every 50000 events), FIBNIC_SEED (replay).
# KDIFF_VM=1: inside a virtual machine (tests/vm/run.sh; Debian 12's 6.1
# kernel, with VRF events, which this kernel may lack), ~13 events/s emulated:
# bound it with KDIFF_SECONDS; KDIFF_PROGRESS defaults to 1000 there.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
for t in "$build/bin/fibnicd" "$build/tests/kdiff/kdiff_bar"; do
  [ -x "$t" ] || { echo "soak.sh: $t missing (build first: scripts/build.sh release)" >&2; exit 2; }
done
export KDIFF_EVENTS=${KDIFF_EVENTS:-1000000}
export KDIFF_CHECK_EVERY=${KDIFF_CHECK_EVERY:-10}
export KDIFF_WINDOW=${KDIFF_WINDOW:-0.01}
export KDIFF_SECONDS=${KDIFF_SECONDS:-1000000000}
if [ "${KDIFF_VM:-0}" = 1 ]; then
  export KDIFF_PROGRESS=${KDIFF_PROGRESS:-1000} KDIFF_REQUIRE_VRF=${KDIFF_REQUIRE_VRF:-1}
  # The guest's kdiff stops after KDIFF_SECONDS; the bound on the guest
  # leaves it time to shrink a divergence.
  export VM_TIMEOUT=${VM_TIMEOUT:-$((KDIFF_SECONDS + 3600))} VM_MODULES="veth vrf xfrm_user" VM_PASS='KDIFF_.*|FIBNIC_SEED'
  exec "$root/tests/vm/run.sh" python3 "$root/tests/kdiff/kdiff.py" "$build/bin/fibnicd" "$build/tests/kdiff/kdiff_bar"
fi
export KDIFF_PROGRESS=${KDIFF_PROGRESS:-50000}
exec python3 "$root/tests/kdiff/kdiff.py" "$build/bin/fibnicd" "$build/tests/kdiff/kdiff_bar"
