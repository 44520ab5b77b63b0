#!/usr/bin/env bash
# A Debian root holding that release's own `frr` package, for the tests that
# need an FRR newer than Debian 12's 8.4 (FPM offload replies, read by FRR
# 8.5 and later): trixie (Debian 13) has 10.3, forky (testing) 10.4 or later.
# The daemons run from it with chroot, inside the test's network namespaces;
# nothing of it is installed on the host.
#   frr-root.sh SUITE [DIR]   prints DIR once it holds a complete root
# DIR: /var/cache/fibnic/frr-SUITE. Built once (debootstrap, 2-3 minutes) and
# reused; delete DIR to rebuild. The mirror is the host's own Debian mirror
# (/etc/apt/sources.list*).
set -euo pipefail
suite=${1:?usage: frr-root.sh trixie|forky [DIR]}
dir=${2:-/var/cache/fibnic/frr-$suite}
stamp="$dir/.fibnic-frr-root"
if [ -f "$stamp" ]; then
  echo "$dir"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "frr-root: building $dir needs root" >&2
  exit 1
fi
command -v debootstrap >/dev/null || {
  echo "frr-root: debootstrap is missing (scripts/install-deps.sh installs it)" >&2
  exit 1
}
# The first plain Debian archive the host uses (deb822 `URIs:` or one-line `deb URL suite`).
mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
  sed -nE 's/^URIs:[[:space:]]*([^[:space:]]+).*/\1/p; s/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+).*/\2/p' |
  grep -v -- '-security' | head -n1 || true)
mirror=${mirror:-http://deb.debian.org/debian}
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9  # another test may be building it right now
if [ ! -f "$stamp" ]; then
  tmp="$dir.partial"
  rm -rf "$tmp"
  echo "frr-root: debootstrap $suite from $mirror into $dir (once)" >&2
  fail() {
    echo "frr-root: $1 failed; the last lines of $dir.log:" >&2
    tail -n 20 "$dir.log" >&2
    exit 1
  }
  # An older debootstrap may not know the newest suite: they all build like sid.
  script=/usr/share/debootstrap/scripts/$suite
  [ -e "$script" ] || script=/usr/share/debootstrap/scripts/sid
  debootstrap --variant=minbase "$suite" "$tmp" "$mirror" "$script" >"$dir.log" 2>&1 || fail debootstrap
  # apt, not debootstrap --include, resolves frr's dependencies (systemd's
  # pre-dependencies defeat debootstrap's own installer); no service starts.
  printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
  chmod +x "$tmp/usr/sbin/policy-rc.d"
  DEBIAN_FRONTEND=noninteractive chroot "$tmp" apt-get install -y -q --no-install-recommends \
    frr iproute2 systemd-standalone-sysusers >>"$dir.log" 2>&1 || fail "apt-get install frr"
  chroot "$tmp" apt-get clean
  chroot "$tmp" /usr/lib/frr/zebra --version | head -n1 >"$tmp/.fibnic-frr-version"
  rm -rf "$dir"
  mv "$tmp" "$dir"
  touch "$stamp"
fi
echo "$dir"
