#!/usr/bin/env bash
# systemd-analyze verify on the shipped unit files. The units name the
# installed binary (/usr/sbin/fibnicd); verify checks that ExecStart
# exists, so the test points a copy at the freshly built binary.
#   systemd_units_test.sh FIBNICD_BINARY CONFIGS_DIR
set -euo pipefail
bin=$1
configs=$2
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

# The unit's own ExecStartPre: the shipped config must pass --check-config.
echo "== fibnicd --check-config on configs/fibnicd.yaml"
"$bin" --check-config --config "$configs/fibnicd.yaml"
echo "systemd units OK"
