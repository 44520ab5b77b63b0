#!/usr/bin/env bash
# Runs every benchmark (bench/<area>/run.sh) against the release build and
# prints each one's ratios against the peer it measures in the same run.
#   scripts/bench.sh [AREA...]    (default: all areas)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh" --tests
"$root/scripts/build.sh" release
areas=("$@")
if [ ${#areas[@]} -eq 0 ]; then
  for d in "$root"/bench/*/; do [ -x "$d/run.sh" ] && areas+=("$(basename "$d")"); done
fi
for a in "${areas[@]}"; do
  echo "=== bench/$a"
  "$root/bench/$a/run.sh" "$root/build"
done
