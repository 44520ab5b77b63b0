#!/usr/bin/env bash
# Runs fpm_offload_frr_test with FRR 10.3 (Debian 13) and a newer FRR
# (Debian testing) from the roots scripts/frr-root.sh builds once (2-3
# minutes each, both at once) and caches.
#   fpm_offload_frr_test.sh TEST_BINARY [gtest args]
set -euo pipefail
setup=$(cd "$(dirname "$0")/../../scripts" && pwd)/frr-root.sh
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$setup" trixie >"$out/trixie" &
trixie=$!
"$setup" forky >"$out/forky" &
forky=$!
wait "$trixie" && wait "$forky"
FIBNIC_FRR103_ROOT=$(cat "$out/trixie")
FIBNIC_FRR_NEW_ROOT=$(cat "$out/forky")
export FIBNIC_FRR103_ROOT FIBNIC_FRR_NEW_ROOT
"$@"
