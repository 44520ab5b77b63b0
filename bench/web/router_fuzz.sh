#!/usr/bin/env bash
# The REST router's seeded mutation fuzz (tests/web/router_fuzz_test.cc) for
# longer than CI affords; use the ASan build to catch memory errors.
#   bench/web/router_fuzz.sh [BUILD_DIR=build-asan] [SECONDS=600] [SEED]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-asan}
export FIBNIC_ROUTER_FUZZ_SECONDS=${2:-600}
[ -z "${3:-}" ] || export FIBNIC_ROUTER_FUZZ_SEED=$3
exec "$build/tests/web/web_router_fuzz_test"
