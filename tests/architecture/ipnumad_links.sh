#!/usr/bin/env bash
# ipnumad takes peer MACs from the kernel source in neighbour-only mode and
# must link no route compiler: neither the fib nor the rib library is on its
# link line (build.ninja; scripts/build.sh uses Ninja), and no Fib, RIB or
# next-hop table symbol is in the binary.
#   ipnumad_links.sh BUILD_DIR IPNUMAD
set -euo pipefail
build=$1
bin=$2
line=$(grep -E "^build [^:]*/ipnumad: " "$build/build.ninja" || true)
[ -n "$line" ] || { echo "no link statement for ipnumad in $build/build.ninja"; exit 1; }
grep -q 'libfibnic_sources\.a' <<<"$line" || { echo "ipnumad does not link the sources: wrong statement?"; exit 1; }
if libs=$(grep -oE '[^ ]*libfibnic_(fib|rib)\.a' <<<"$line" | sort -u) && [ -n "$libs" ]; then
  echo "ipnumad links compiler libraries: $libs"
  exit 1
fi
syms=$(nm -C --defined-only "$bin")
grep -q 'fibnic::KernelSource::NeighboursOnly' <<<"$syms" || { echo "$bin: no neighbour-only kernel source"; exit 1; }
if hits=$(grep -E 'fibnic::(Fib|Rib|NexthopTable)(::|\b)' <<<"$syms" | head -5) && [ -n "$hits" ]; then
  echo "ipnumad has compiler code:"
  echo "$hits"
  exit 1
fi
echo "ipnumad: kernel neighbours only; no Fib, RIB or next-hop table linked"
