#!/usr/bin/env bash
# fibnic-emu's refusals: each bad argument or BAR file gives a non-zero exit
# and a message naming what is wrong, before any interface is touched.
#   cli_test.sh FIBNIC_EMU WORK_DIR
set -euo pipefail
emu=$1 work=$2
mkdir -p "$work"
fails=0
expect() {  # expect EXIT_CODE TEXT ARGS...: the exit code and a message containing TEXT
  local want=$1 text=$2 rc=0 out
  shift 2
  out=$("$emu" "$@" 2>&1) || rc=$?
  if [ "$rc" != "$want" ] || ! grep -qF -- "$text" <<<"$out"; then
    echo "FAIL: fibnic-emu $* -> exit $rc, '$out' (want exit $want and '$text')"
    fails=$((fails + 1))
  fi
}
expect 2 "--bar FILE is required" --port 0=w0 --host 0=e0
expect 2 "give at least one --port" --bar "$work/none"
expect 2 "port 1 has no --host 1" --bar "$work/none" --port 1=w1
expect 2 "--host 2 names no --port 2" --bar "$work/none" --port 0=w0 --host 0=e0 --host 2=e2
expect 2 "expected PORT=INTERFACE" --bar "$work/none" --port w0 --host 0=e0
expect 2 "given twice for port 0" --bar "$work/none" --port 0=a --port 0=b --host 0=e0
expect 2 "unknown argument '--speed'" --speed 10
expect 2 "missing value after --bar" --bar
expect 1 "cannot open BAR file $work/none" --bar "$work/none" --port 0=w0 --host 0=e0
head -c 100 /dev/zero >"$work/zero.img"
expect 1 "not a FIBNIC" --bar "$work/zero.img" --port 0=w0 --host 0=e0
printf 'FIBN\x00\x00\x01\x00' >"$work/short.img"
expect 1 "too short to hold the CSR block" --bar "$work/short.img" --port 0=w0 --host 0=e0
# ID, VERSION and the 2-bit model's CAPS, but 4 KiB instead of the whole BAR.
python3 - "$work/small.img" <<'PY'
import struct, sys
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IIIII", 0x4E424946, 0x00010000, 22 | 2 << 8 | 4 << 16, 4 | 32 << 16, 256) + bytes(4096 - 20))
PY
expect 1 "expected 20971520" --bar "$work/small.img" --port 0=w0 --host 0=e0
[ "$fails" -eq 0 ] && echo "fibnic-emu refuses every bad argument and BAR file with a reason"
exit "$fails"
