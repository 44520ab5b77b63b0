#!/usr/bin/env bash
# A fresh minimal Debian root for tests that need one (installing the packages
# as on a new machine; a newer FRR than the host's), made once by debootstrap
# and kept as a tarball; each caller unpacks its own copy.
#   scripts/debian-root.sh SUITE            make the tarball if absent, print its path
#   scripts/debian-root.sh SUITE DIR        ... and unpack a fresh root into DIR
# SUITE: bookworm (Debian 12) | trixie (Debian 13). Concurrent callers wait for
# the one building (flock), so scripts/test.sh starts it in the background
# while it compiles and the tests pick the result up.
set -euo pipefail
suite=${1:?usage: debian-root.sh SUITE [DIR]}
case "$suite" in bookworm|trixie) ;; *) echo "debian-root: unknown suite '$suite' (bookworm|trixie)" >&2; exit 2 ;; esac
cache=${FIBNIC_ROOT_CACHE:-/var/cache/fibnic}
mirror=${FIBNIC_DEBIAN_MIRROR:-http://deb.debian.org/debian}
tarball="$cache/$suite-minbase.tar"
mkdir -p "$cache"
exec 9>"$tarball.lock"
flock 9
if [ ! -s "$tarball" ]; then
  command -v debootstrap >/dev/null || { echo "debian-root: debootstrap missing (scripts/install-deps.sh)" >&2; exit 1; }
  work=$(mktemp -d "$cache/$suite.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  echo "debian-root: debootstrap $suite from $mirror (a few minutes, once)" >&2
  if ! debootstrap --variant=minbase "$suite" "$work/root" "$mirror" >"$work/log" 2>&1; then
    tail -20 "$work/log" >&2
    echo "debian-root: debootstrap $suite failed (log above)" >&2
    exit 1
  fi
  rm -rf "$work/root/var/cache/apt/archives/"*.deb
  tar -C "$work/root" -cf "$tarball.tmp" .
  mv "$tarball.tmp" "$tarball"
fi
flock -u 9
if [ -n "${2:-}" ]; then
  mkdir -p "$2"
  tar -C "$2" -xf "$tarball"
fi
echo "$tarball"
