#!/usr/bin/env bash
# IP-NUMA through ipnuma-emu next to sockets, same run, same two namespaces
# (bench.py): the thesis's 4-byte ping-pong round trip against UDP and TCP
# sockets, and the write rate at 64 B and 4 KiB against a TCP stream.
#   bench/ipnuma/run.sh [BUILD_DIR]   (root; builds nothing)
# Environment: IPNUMA_BENCH_N round trips (default 1000000),
#   IPNUMA_BENCH_WRITES writes per rate (100000),
#   IPNUMA_BENCH_ROUNDS rounds of every row (default 1; each row shows the
#   round with the median result: a blocking socket's round trip swings
#   between runs on a small virtual machine),
#   IPNUMA_BENCH_ROWS only these rows, names as printed separated by ';'
#   (a set-up's write rates come with its ping-pong row),
#   IPNUMA_BENCH_EMU_ARGS more arguments for the busy-polling emulators,
#   IPNUMA_BENCH_RDMA=1: also an RDMA WRITE ping-pong (perftest's
#   ib_write_lat) between two soft-RoCE devices in tests/vm's qemu guest
#   (IPNUMA_BENCH_RDMA_N round trips, 10000). Not on this host: its kernel
#   (6.18, Firecracker build) has CONFIG_INFINIBAND off, so neither rdma_rxe
#   nor siw exists; Debian 12's 6.1 kernel in the guest has rdma_rxe. The
#   guest runs under TCG (software CPU emulation), so its absolute times are
#   not comparable with the host's rows; its table gives the ratio to a UDP
#   ping-pong between the same two addresses in the same guest instead.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
for t in "$build/bin/ipnumad" "$build/bin/ipnumactl" "$build/bin/ipnuma-emu" "$build/bench/ipnuma/ipnuma_bench"; do
  [ -x "$t" ] || { echo "bench/ipnuma: $t not built (scripts/build.sh release)" >&2; exit 1; }
done
if [ "${IPNUMA_BENCH_RDMA:-0}" = 1 ]; then
  command -v ib_write_lat >/dev/null || { echo "bench/ipnuma: IPNUMA_BENCH_RDMA=1 needs perftest (scripts/install-deps.sh)" >&2; exit 1; }
fi
[ "$(id -u)" -eq 0 ] || { echo "bench/ipnuma: needs root (network namespaces, AF_PACKET)" >&2; exit 1; }
exec python3 "$root/bench/ipnuma/bench.py" "$build"
