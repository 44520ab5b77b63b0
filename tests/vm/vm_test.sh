#!/usr/bin/env bash
# The guest runner (tests/vm/run.sh) itself: the guest runs Debian's kernel
# (the version scripts/setup/guest-kernel.sh unpacked, not the host's), loads
# the modules asked for, sees the host's files read-only, passes the named
# environment and returns the command's own exit status.
#   vm_test.sh DIR   (a folder outside /tmp, which the guest has of its own)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kdir=${FIBNIC_GUEST_KERNEL:-/var/cache/fibnic/guest-kernel}
read -r _ want <"$kdir/ready" || { echo "FAIL: no guest kernel in $kdir"; exit 1; }
probe=$(mktemp "${1:?usage: vm_test.sh DIR}/vm-test.XXXXXX")
trap 'rm -f "$probe"' EXIT
echo "host file" >"$probe"
status=0
out=$(VM_MODULES="vrf" VM_PASS='VM_TEST_.*' VM_TEST_WORD=tulip VM_TIMEOUT=120 "$here/run.sh" bash -c '
  echo "kernel=$(uname -r)"
  ip link add t0 type vrf table 7 && echo "vrf=yes"
  echo "word=$VM_TEST_WORD other=${HOME_OF_HOST:-unset}"
  echo "read=$(cat "$1")"
  echo guest >>"$1" 2>/dev/null && echo "wrote=yes" || echo "wrote=no"
  exit 7' vm "$probe") || status=$?
echo "$out"
fail() { echo "FAIL: $*"; exit 1; }
[ "$status" = 7 ] || fail "the guest's command exited 7, run.sh returned $status"
grep -qx "kernel=$want" <<<"$out" || fail "the guest did not run kernel $want"
[ "$want" != "$(uname -r)" ] || fail "the guest kernel is the host's ($want): nothing tells them apart"
grep -qx "vrf=yes" <<<"$out" || fail "vrf.ko did not load in the guest"
grep -qx "word=tulip other=unset" <<<"$out" || fail "the environment was not passed as VM_PASS names it"
grep -qx "read=host file" <<<"$out" || fail "the guest does not see the host's files"
grep -qx "wrote=no" <<<"$out" || fail "the guest could write the host's root"
[ "$(cat "$probe")" = "host file" ] || fail "the host's file changed"
echo "vm test: passed"
