#!/usr/bin/env bash
# fibnic-emu's refusals: each bad argument or BAR file gives a non-zero exit
# and a message naming what is wrong, before any interface is touched.
#   cli_test.sh FIBNIC_EMU WORK_DIR
set -euo pipefail
emu=$1 work=$2
mkdir -p "$work"
prog=$emu
. "$(dirname "$0")/../support/expect_refusal.sh"
expect 2 "--bar FILE is required" --port 0=w0 --host 0=e0
expect 2 "give at least one --port" --bar "$work/none"
expect 2 "port 1 has no --host 1" --bar "$work/none" --port 1=w1
expect 2 "--host 2 names no --port 2" --bar "$work/none" --port 0=w0 --host 0=e0 --host 2=e2
expect 2 "expected PORT=INTERFACE" --bar "$work/none" --port w0 --host 0=e0
expect 2 "given twice for port 0" --bar "$work/none" --port 0=a --port 0=b --host 0=e0
expect 2 "unknown argument '--speed'" --speed 10
expect 2 "missing value after --bar" --bar
expect 1 "cannot open BAR file $work/none" --bar "$work/none" --port 0=w0 --host 0=e0
truncate -s 16M "$work/zero.img"  # long enough for the CSR/table area, all zero
expect 1 "BAR file $work/zero.img: not a FIBNIC" --bar "$work/zero.img" --port 0=w0 --host 0=e0
printf 'FIBN\x00\x00\x01\x00' >"$work/short.img"
expect 1 "shorter than the CSR/table area" --bar "$work/short.img" --port 0=w0 --host 0=e0
# ID, VERSION and the 2-bit model's CAPS (whose BAR is 20971520 bytes), in a
# file of the given size.
header() {  # header FILE SIZE [VERSION]
  python3 - "$@" <<'PY'
import struct, sys
version = int(sys.argv[3], 0) if len(sys.argv) > 3 else 0x00010000
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IIIII", 0x4E424946, version, 22 | 2 << 8 | 4 << 16, 4 | 32 << 16, 256))
    f.truncate(int(sys.argv[2]))
PY
}
header "$work/small.img" $((16 * 1024 * 1024 + 4096))
expect 1 "CAPS say 20971520" --bar "$work/small.img" --port 0=w0 --host 0=e0
header "$work/long.img" $((20971520 + 4096))
expect 1 "expected 20971520" --bar "$work/long.img" --port 0=w0 --host 0=e0
header "$work/minor.img" 20971520 0x00010001
expect 1 "VERSION minor 1, this emulator implements minor 0" --bar "$work/minor.img" --port 0=w0 --host 0=e0
# XDP mode reads the live BAR from a BPF map: a BAR file is refused, named.
header "$work/ok.img" 20971520
expect 1 "--xdp needs the BAR in a BPF map, which its XDP program reads live: $work/ok.img is a regular file" \
  --xdp --bar "$work/ok.img" --port 0=w0 --host 0=e0
expect 1 "--xdp needs the BAR in a BPF map" --xdp-native --bar "$work/ok.img" --port 0=w0 --host 0=e0
[ "$fails" -eq 0 ] && echo "fibnic-emu refuses every bad argument and BAR file with a reason"
exit "$fails"
