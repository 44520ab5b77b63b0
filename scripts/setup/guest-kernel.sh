#!/usr/bin/env bash
# Unpacks Debian 12's kernel package (linux-image-amd64's current 6.1) into a
# cache folder for the tests that boot it as a KVM guest (tests/vm/run.sh):
# the kernel harness's VRF run needs vrf.ko, which a host kernel may lack.
# The package is only unpacked, never installed: the host's /boot and
# /lib/modules stay as they are.
#   scripts/setup/guest-kernel.sh        → prints nothing, exit 0 when ready
# FIBNIC_GUEST_KERNEL (default /var/cache/fibnic/guest-kernel) is the folder;
# it ends up holding boot/vmlinuz-* and lib/modules/*/ with modules.dep.
set -euo pipefail
dir=${FIBNIC_GUEST_KERNEL:-/var/cache/fibnic/guest-kernel}
[ -f "$dir/ready" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "setup/guest-kernel: $dir is missing and fetching Debian's kernel needs root" >&2
  exit 1
fi
# The versioned package linux-image-amd64 depends on (linux-image-6.1.0-N-amd64).
pkg() { apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'; }
name=$(pkg)
if [ -z "$name" ]; then
  apt-get update -qq
  name=$(pkg)
fi
[ -n "$name" ] || { echo "setup/guest-kernel: apt knows no linux-image-amd64 (is Debian's main archive in sources.list?)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# apt's sandbox user must be able to write where the package lands.
chmod 755 "$tmp"
# An old package list may name a version the archive no longer has.
if ! (cd "$tmp" && apt-get download -qq "$name" 2>/dev/null); then
  apt-get update -qq
  name=$(pkg)
  (cd "$tmp" && apt-get download -qq "$name")
fi
rm -rf "$dir.new"
mkdir -p "$dir.new"
dpkg-deb -x "$tmp"/"$name"_*.deb "$dir.new"
version=$(basename "$(ls -d "$dir.new"/lib/modules/*/)")
depmod -b "$dir.new" "$version"
ls "$dir.new/boot/vmlinuz-$version" >/dev/null
echo "$name $version" >"$dir.new/ready"
rm -rf "$dir"
mv "$dir.new" "$dir"
