#!/usr/bin/env bash
# Runs fpm_offload_frr_test with FRR 10.3 (Debian 13) and a newer FRR
# (Debian testing) from the roots scripts/setup/frr-root.sh builds once (2-3
# minutes each) and caches.
#   fpm_offload_frr_test.sh TEST_BINARY [gtest args]
set -euo pipefail
setup=$(cd "$(dirname "$0")/../../scripts/setup" && pwd)/frr-root.sh
FIBNIC_FRR103_ROOT=$("$setup" trixie)
FIBNIC_FRR_NEW_ROOT=$("$setup" forky)
export FIBNIC_FRR103_ROOT FIBNIC_FRR_NEW_ROOT
exec "$@"
