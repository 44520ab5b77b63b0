#!/usr/bin/env bash
# fibnicd alone on this host's own routes: the embedded default — the
# file-backed FIBNIC (no hardware), the kernel's routing table, no FRR — in
# the foreground until Ctrl-C. Extra arguments go to fibnicd (e.g. --config
# FILE). Builds nothing (scripts/build.sh release first).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
state="${FIBNIC_STATE_DIR:-$root/build/fibnicd-alone}"
mkdir -p "$state"
cat <<MSG
fibnicd on the embedded default (configs/fibnicd.yaml): file backend, kernel routes.
  BAR image : $state/bar0.img
  dashboard : http://127.0.0.1:8080/
  status    : $root/build/bin/fibnicctl status
  a lookup  : $root/build/bin/fibnicctl lookup 8.8.8.8        (RIB next to the decoded BAR)
  offline   : $root/build/bin/fibnicctl lookup 8.8.8.8 --bar $state/bar0.img
Routes through interfaces that are not FIBNIC ports punt to the host; map ports
with a config (see docs/daemon.md). Ctrl-C stops; the BAR keeps its tables.
MSG
STATE_DIRECTORY="$state" exec "$root/build/bin/fibnicd" "$@"
