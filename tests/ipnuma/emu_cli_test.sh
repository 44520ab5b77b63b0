#!/usr/bin/env bash
# ipnuma-emu's refusals: each bad argument or file gives a non-zero exit and
# a message naming what is wrong, before any interface is touched.
#   emu_cli_test.sh IPNUMA_EMU WORK_DIR
set -euo pipefail
emu=$1 work=$2
rm -rf "$work"
mkdir -p "$work"
prog=$emu
. "$(dirname "$0")/../support/expect_refusal.sh"
# A BAR0 file: ID, VERSION and CAPS of a 64-page NIC with 16 PC IDs and 8
# regions, in a file of the given size.
bar() {  # bar FILE SIZE [VERSION]
  python3 - "$@" <<'PY'
import struct, sys
version = int(sys.argv[3], 0) if len(sys.argv) > 3 else 0x00010000
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IIII", 0x554E5049, version, 64, 16 | 8 << 16))
    f.truncate(int(sys.argv[2]))
PY
}
size=$((0x100000 + 8 * 64))
bar "$work/ok.bar" $size
truncate -s 1M "$work/pool"
files=(--pages "$work/pages" --pool "$work/pool" --pool-base 0x200000000 --interface ipe-none0)
expect 2 "--bar BAR0_FILE is required" "${files[@]}"
expect 2 "--pages BAR2_FILE is required" --bar "$work/ok.bar" --pool x --pool-base 0 --interface lo
expect 2 "--pool POOL_FILE and --pool-base ADDR are required" --bar b --pages p --pool x --interface lo
expect 2 "--interface IFACE is required" --bar b --pages p --pool x --pool-base 0
expect 2 "--pool-base 'x12' is not a number" --pool-base x12
expect 2 "--time-scale must be 1..1000000" --bar b --pages p --pool x --pool-base 0 --interface lo --time-scale 0
expect 2 "unknown argument '--speed'" --speed 10
expect 2 "missing value after --bar" --bar
expect 1 "cannot open $work/none" --bar "$work/none" "${files[@]}"
truncate -s $size "$work/zero.bar"
expect 1 "not an IP-NUMA NIC (ID)" --bar "$work/zero.bar" "${files[@]}"
bar "$work/short.bar" $((size - 8))
expect 1 "CAPS say $size" --bar "$work/short.bar" "${files[@]}"
bar "$work/major.bar" $size 0x00020000
expect 1 "this emulator implements major 1" --bar "$work/major.bar" "${files[@]}"
expect 1 "not 64-byte aligned" --bar "$work/ok.bar" --pages "$work/pages" --pool "$work/pool" --pool-base 0x20 \
  --interface ipe-none0
expect 1 "no network interface 'ipe-none0'" --bar "$work/ok.bar" "${files[@]}"
# The page region was created with CAPS0 pages, sparse; a wrong size is refused.
[ "$(stat -c %s "$work/pages")" = $((64 * 4096)) ] || { echo "FAIL: page region not created at 256 KiB"; fails=$((fails + 1)); }
truncate -s 4096 "$work/pages"
expect 1 "CAPS0 says 262144" --bar "$work/ok.bar" "${files[@]}"
[ "$fails" -eq 0 ] && echo "ipnuma-emu refuses every bad argument and file with a reason"
exit "$fails"
