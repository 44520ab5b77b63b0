#!/usr/bin/env bash
# The test command: installs what is needed, builds, and runs every test —
# first the normal build, then again under AddressSanitizer + UBSan.
# Integration tests that need root, namespaces, FRR or Chromium run in the
# normal build (label "integration"), and so do the exhaustive whole-table
# sweeps (label "sweep": every /24 of the 900k-route table, far too slow under
# ASan); the sanitizer pass runs everything else.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
took() { echo "test.sh: $1 took $(((SECONDS - $2) / 60)) min $(((SECONDS - $2) % 60)) s"; }
"$root/scripts/install-deps.sh" --tests
for s in "$root"/scripts/setup/*.sh; do [ -e "$s" ] && "$s"; done
# Debian roots for tests: a fresh Debian 12 for the package test, FRR from
# Debian 13 and testing for the offload-reply test. debootstrap is
# network-bound, so they are made beside the compile (each test waits for its
# root under a lock, or retries it and says why it failed).
log=${TMPDIR:-/tmp}/fibnic-roots.log
"$root/scripts/debian-root.sh" bookworm >"$log.bookworm" 2>&1 &
"$root/scripts/frr-root.sh" trixie >"$log.trixie" 2>&1 &
"$root/scripts/frr-root.sh" forky >"$log.forky" 2>&1 &

took "the installs" 0
t0=$SECONDS
"$root/scripts/build.sh" release
took "the release build" "$t0"

# The sanitizer build compiles while the release tests run, at the lowest
# CPU priority: many of those tests wait on daemons, peers and timers, and
# the build takes the cores they leave idle without slowing them (the CI
# budget: a cold 2-core machine).
t1=$SECONDS
asan_log=${TMPDIR:-/tmp}/fibnic-asan-build.log
# Its own session (setsid), so a failed release pass stops the whole build,
# cmake and ninja's compilers with it, by that group.
setsid nice -n 19 "$root/scripts/build.sh" asan >"$asan_log" 2>&1 &
asan_build=$!
if ! (cd "$root/build" && ctest --output-on-failure -j 2); then
  kill -- "-$asan_build" 2>/dev/null || true
  exit 1
fi
took "the release tests" "$t1"
if ! wait "$asan_build"; then
  echo "test.sh: the ASan build failed; its log ends:"
  tail -n 60 "$asan_log"
  exit 1
fi
took "the ASan build (beside the release tests)" "$t1"

t2=$SECONDS
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd "$root/build-asan" && ctest --output-on-failure -j 2 -LE 'integration|sweep')
took "the ASan tests" "$t2"
took "the whole test command" 0
