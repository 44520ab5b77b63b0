#!/usr/bin/env bash
# systemd-analyze verify on the shipped unit files, and each unit's
# `systemd-analyze security` exposure score (printed for CI's log and
# docs/security.md; above MAX_EXPOSURE fails). The units name the installed
# binaries; verify checks that ExecStart exists, so the test points a copy at
# the freshly built ones.
#   systemd_units_test.sh FIBNICD_BINARY CONFIGS_DIR [IPNUMAD_BINARY]
set -euo pipefail
bin=$1
configs=$2
ipnumad=${3:-}
MAX_EXPOSURE=2.5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# verify exits 0 on unknown keys and other warnings: any output is a failure.
verify() {
  local out
  out=$(systemd-analyze verify --man=no "$1" 2>&1) || { echo "$out"; exit 1; }
  if [ -n "$out" ]; then echo "$out"; echo "systemd-analyze verify warned about $1"; exit 1; fi
}

sed "s|/usr/sbin/fibnicd|$bin|g" "$configs/fibnicd.service" >"$tmp/fibnicd.service"
echo "== systemd-analyze verify fibnicd.service"
verify "$tmp/fibnicd.service"

mkdir -p "$tmp/with-dropin/fibnicd.service.d"
cp "$tmp/fibnicd.service" "$tmp/with-dropin/"
cp "$configs/fibnicd.service.d/"*.conf "$tmp/with-dropin/fibnicd.service.d/"
echo "== systemd-analyze verify fibnicd.service + file-backend.conf drop-in"
verify "$tmp/with-dropin/fibnicd.service"

if [ -n "$ipnumad" ]; then
  sed "s|/usr/sbin/ipnumad|$ipnumad|g" "$configs/ipnumad.service" >"$tmp/ipnumad.service"
  echo "== systemd-analyze verify ipnumad.service"
  verify "$tmp/ipnumad.service"
fi

# The exposure score of each unit (0 = locked down, 10 = unprotected).
score() {
  local out level
  out=$(systemd-analyze security --offline=yes --no-pager "$1" 2>&1) || { echo "$out"; exit 1; }
  level=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' <<<"$out")
  [ -n "$level" ] || { echo "$out"; echo "no exposure level for $1"; exit 1; }
  echo "exposure $2: $level (max $MAX_EXPOSURE)"
  if awk -v l="$level" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(l > m) }'; then
    echo "$out" | grep '✗'
    echo "$2 is more exposed than $MAX_EXPOSURE"
    exit 1
  fi
}
echo "== systemd-analyze security"
score "$tmp/fibnicd.service" "fibnicd.service"
score "$tmp/with-dropin/fibnicd.service" "fibnicd.service + file-backend.conf"
[ -z "$ipnumad" ] || score "$tmp/ipnumad.service" "ipnumad.service"

# The unit's own ExecStartPre: the shipped config must pass --check-config.
echo "== fibnicd --check-config on configs/fibnicd.yaml"
"$bin" --check-config --config "$configs/fibnicd.yaml"
echo "systemd units OK"
