#!/usr/bin/env bash
# Runs fpm_offload_frr_test with FRR 10.3 from the Debian 13 root that
# scripts/setup/frr-trixie.sh builds once (a few minutes) and caches.
#   fpm_offload_frr_test.sh TEST_BINARY [gtest args]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$("$here/../../scripts/setup/frr-trixie.sh")
export FIBNIC_TRIXIE_ROOT=$root
exec "$@"
