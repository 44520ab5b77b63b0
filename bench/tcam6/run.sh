#!/usr/bin/env bash
# Runs the IPv6 TCAM compiler bench (builds nothing).
#   bench/tcam6/run.sh [BUILD_DIR]   (default build/)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
exe="$build/bench/tcam6/tcam6_bench"
[ -x "$exe" ] || { echo "tcam6 bench: $exe not built (cmake --build $build --target tcam6_bench)" >&2; exit 1; }
"$exe"
