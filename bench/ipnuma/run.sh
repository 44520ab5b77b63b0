#!/usr/bin/env bash
# IP-NUMA through ipnuma-emu next to sockets, same run, same two namespaces
# (bench.py): the thesis's 4-byte ping-pong round trip against UDP and TCP
# sockets, and the write rate at 64 B and 4 KiB against a TCP stream.
#   bench/ipnuma/run.sh [BUILD_DIR]   (root; builds nothing)
# Environment: IPNUMA_BENCH_N round trips (default 1000000),
#   IPNUMA_BENCH_WRITES writes per rate (100000),
#   IPNUMA_BENCH_WAIT spin|yield: how a ping-pong end polls its memory,
#   IPNUMA_BENCH_EMU_ARGS more ipnuma-emu arguments.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
for t in "$build/bin/ipnumad" "$build/bin/ipnumactl" "$build/bin/ipnuma-emu" "$build/bench/ipnuma/ipnuma_bench"; do
  [ -x "$t" ] || { echo "bench/ipnuma: $t not built (scripts/build.sh release)" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "bench/ipnuma: needs root (network namespaces, AF_PACKET)" >&2; exit 1; }
exec python3 "$root/bench/ipnuma/bench.py" "$build"
