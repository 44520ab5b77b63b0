#!/usr/bin/env bash
# Runs the hwif push bench (builds nothing).
#   bench/hwif/run.sh [BUILD_DIR]   (default build/)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
exe="$build/bench/hwif/hwif_bench"
[ -x "$exe" ] || { echo "hwif bench: $exe not built (cmake --build $build --target hwif_bench)" >&2; exit 1; }
"$exe"
