#!/usr/bin/env bash
# OSPF-driven offload at scale: tests/ospf's router (real zebra, ospfd and
# ospf6d; fibnicd on the kernel source, file backend) and five neighbours
# with their own ospfd/ospf6d, each originating OSPF_BENCH_V4 IPv4 /24s and
# OSPF_BENCH_V6 IPv6 /64s as external routes (and half as many shared by the
# equal-cost pair and by the LAN pair). The same scenarios as the ospfdiff
# test, one phase each: convergence, cost change and back, the LAN's DR
# lost and back, the router's ospfd/ospf6d restart, carrier loss and return,
# admin down and up of the unnumbered link. Per phase: kernel convergence
# (its last OSPF route change), device convergence (fibnicd's last batch),
# their ratio, reads outside the kernel's paths, the misforward window (the
# device still sending where the kernel no longer does, sampled throughout)
# and, once converged, misforwards among every originated prefix's first
# address. Exits 1, saying why, when a phase misforwards or does not converge.
#   bench/ospf/run.sh [BUILD_DIR]      (root, FRR)
#   OSPF_BENCH_V4 (default 800), OSPF_BENCH_V6 (200), OSPF_BENCH_WATCH (destinations
#   read per round, default 600), FIBNIC_SEED (replays the sampling)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
for t in "$build/bin/fibnicd" "$build/tests/kdiff/kdiff_bar"; do
  [ -x "$t" ] || { echo "bench/ospf: $t not built (scripts/build.sh release)" >&2; exit 1; }
done
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
# A phase at this scale may take a minute (OSPF's LSA exchange after a restart).
status=0
OSPF_V4=${OSPF_BENCH_V4:-800} OSPF_V6=${OSPF_BENCH_V6:-200} OSPF_WATCH=${OSPF_BENCH_WATCH:-600} \
  OSPF_PHASE_SECONDS=${OSPF_BENCH_PHASE_SECONDS:-150} OSPF_NS_PREFIX=${OSPF_NS_PREFIX:-ob} \
  python3 "$root/tests/ospf/ospfdiff.py" "$build/bin/fibnicd" "$build/tests/kdiff/kdiff_bar" || status=$?
echo "machine: load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
exit $status
