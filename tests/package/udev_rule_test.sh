#!/usr/bin/env bash
# The packages' udev rules (packaging/udev/60-fibnic.rules, 60-ipnumad.rules)
# and their helper (pci-bar-access), without a FIBNIC or IP-NUMA card:
#   1. `udevadm test` on this machine's real PCI functions, in a private mount
#      namespace whose /etc/udev/rules.d holds the two rules and a local rule
#      marking one function FIBNIC_DEVICE (by address) and another
#      IPNUMA_DEVICE (by vendor:device): each marked function queues the
#      helper with its group and sysfs path on add and change; without the
#      local rule, and on remove, nothing is queued;
#   2. the helper on sysfs itself: kernfs keeps an attribute's owner and mode
#      the way it keeps resource0's (this VM's functions have no resourceN
#      files), so on a veth's attribute in a namespace of our own: before it
#      a non-root member of the group cannot open the file read-write, after
#      it (root:GROUP 0660) it can, and a file that appears late (a
#      hot-plugged function's resource0) is waited for; a missing one fails.
# What needs the card: mmap of a real resource0 by the service user (the
# kernel's pci_mmap_resource checks lockdown, not a capability).
# Root (mount and network namespaces); label integration.
#   udev_rule_test.sh SOURCE_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
ns=su-udev-$$
tmp=$(mktemp -d /tmp/su-udev.XXXXXX)
made_run_udev=
cleanup() {
  ip netns del "$ns" 2>/dev/null || true
  [ -z "$made_run_udev" ] || rmdir /run/udev 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v udevadm >/dev/null || fail "udevadm missing (scripts/deps: udev)"

echo "== udevadm test with the packaged rules"
# Two functions whose vendor:device differ (one marked by address, the other
# by ID); the same functions without the local rule are the unmarked case.
fib= ipn=
for d in /sys/bus/pci/devices/*; do
  if [ -z "$fib" ]; then fib=${d##*/}; continue; fi
  if [ "$(cat "$d/vendor"):$(cat "$d/device")" != "$(cat "/sys/bus/pci/devices/$fib/vendor"):$(cat "/sys/bus/pci/devices/$fib/device")" ]; then
    ipn=${d##*/}; break
  fi
done
[ -n "$ipn" ] || fail "need two PCI functions with different IDs on this machine (found: $(ls /sys/bus/pci/devices | tr '\n' ' '))"
ipn_vendor=$(cat "/sys/bus/pci/devices/$ipn/vendor") ipn_device=$(cat "/sys/bus/pci/devices/$ipn/device")
mkdir "$tmp/rules" "$tmp/unmarked"
cp "$src/packaging/udev/60-fibnic.rules" "$src/packaging/udev/60-ipnumad.rules" "$tmp/rules/"
cp "$tmp/rules/"* "$tmp/unmarked/"
cat >"$tmp/rules/59-local.rules" <<EOF
SUBSYSTEM=="pci", KERNEL=="$fib", ENV{FIBNIC_DEVICE}="1"
SUBSYSTEM=="pci", ATTR{vendor}=="$ipn_vendor", ATTR{device}=="$ipn_device", ENV{IPNUMA_DEVICE}="1"
EOF
# udevadm test writes the device's database under /run/udev: a tmpfs of our
# own over it (the directory is made, and removed after, where udev is absent).
if [ ! -d /run/udev ]; then mkdir /run/udev; made_run_udev=1; fi
# utest RULES_DIR ACTION FUNCTION
utest() {
  unshare -m --propagation private sh -c 'mount --bind "$0" /etc/udev/rules.d &&
    mount -t tmpfs tmpfs /run/udev && exec udevadm test --action="$1" "/sys/bus/pci/devices/$2"' "$1" "$2" "$3" 2>&1
}
# runs ACTION FUNCTION [RULES_DIR]: the helpers udev would run.
runs() { utest "${3:-$tmp/rules}" "$1" "$2" | sed -n "s/^run: '\\(.*\\)'\$/\\1/p" | grep -- '-pci-bar-access' || true; }
fib_path=$(readlink -f "/sys/bus/pci/devices/$fib") ipn_path=$(readlink -f "/sys/bus/pci/devices/$ipn")
for action in add change; do
  got=$(runs "$action" "$fib"); echo "$action $fib (marked FIBNIC by address): $got"
  [ "$got" = "/lib/udev/fibnic-pci-bar-access fibnic $fib_path resource0" ] || fail "$fib: rule did not queue the fibnic helper"
  got=$(runs "$action" "$ipn"); echo "$action $ipn (marked IP-NUMA by $ipn_vendor:$ipn_device): $got"
  [ "$got" = "/lib/udev/ipnuma-pci-bar-access ipnuma $ipn_path resource0" ] || fail "$ipn: rule did not queue the ipnuma helper"
done
for f in "$fib" "$ipn"; do
  got=$(runs add "$f" "$tmp/unmarked"); echo "add $f (not marked): '${got}'"
  [ -z "$got" ] || fail "an unmarked function gets a BAR handed over"
done
got=$(runs remove "$fib"); echo "remove $fib: '${got}'"
[ -z "$got" ] || fail "a removed function runs the helper"
[ -z "${made_run_udev:-}" ] || { rmdir /run/udev; made_run_udev=; }

echo "== the helper on sysfs attributes (a veth in $ns)"
helper=$src/packaging/udev/pci-bar-access
ip netns add "$ns"
ip -n "$ns" link add su-a type veth peer name su-b
gid=$(getent group daemon | cut -d: -f3)
[ -n "$gid" ] || fail "no group 'daemon' on this machine"
ip netns exec "$ns" bash -euo pipefail -c '
  helper=$1 gid=$2 dev=/sys/class/net/su-a
  as_member() { setpriv --reuid=64000 --regid="$gid" --clear-groups sh -c "exec 3<>$dev/tx_queue_len" 2>/dev/null; }
  stat -c "before: %U:%G %a %n" "$dev/tx_queue_len"
  if as_member; then echo "FAIL: a group member opens a root 0644 attribute read-write"; exit 1; fi
  "$helper" daemon "$dev" tx_queue_len
  stat -c "after:  %U:%G %a %n" "$dev/tx_queue_len"
  [ "$(stat -c %G:%a "$dev/tx_queue_len")" = daemon:660 ] || { echo "FAIL: not root:daemon 0660"; exit 1; }
  as_member || { echo "FAIL: a member of the group cannot open it read-write"; exit 1; }
  echo "a member of the group opens it read-write; others still cannot:"
  if setpriv --reuid=64000 --regid=64000 --clear-groups sh -c "exec 3<>$dev/tx_queue_len" 2>/dev/null; then
    echo "FAIL: a non-member opens it"; exit 1
  fi
  echo "  refused"
' _ "$helper" "$gid" || fail "the helper on a sysfs attribute"

# A file that appears after the add event (hot plug) is waited for; a BAR
# that never appears fails, naming it.
mkdir "$tmp/fn"
# The file appears whole, mode and all (made aside, then renamed): made in
# place, the helper could hand it over between its creation and the chmod,
# which then took it back (seen under load).
(sleep 0.5; : >"$tmp/fn/.resource0"; chmod 0600 "$tmp/fn/.resource0"; mv "$tmp/fn/.resource0" "$tmp/fn/resource0") &
"$helper" daemon "$tmp/fn" resource0
wait
[ "$(stat -c %G:%a "$tmp/fn/resource0")" = daemon:660 ] || fail "a late resource0 was not handed over"
echo "a resource0 appearing 0.5 s after the event: handed over"
if "$helper" daemon "$tmp/fn" resource2 2>"$tmp/err"; then fail "a missing BAR file succeeded"; fi
grep -q "resource2 does not exist" "$tmp/err" || { cat "$tmp/err"; fail "the missing BAR's error does not name it"; }
echo "missing resource2: $(cat "$tmp/err")"
echo "udev rules OK"
