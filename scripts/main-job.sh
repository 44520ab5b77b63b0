#!/usr/bin/env bash
# What scripts/run.sh runs once built: the lab (lab/lab.sh) — a router with
# real FRR and fibnicd on a file-backed FIBNIC that the software card
# (fibnic-emu) forwards with, three BGP peers announcing the
# real Internet table, probes crossing the router — until Ctrl-C, which tears
# it down. Extra arguments go to the lab (e.g. --routes 100000 for a lighter
# table). fibnicd alone on this host's routes: scripts/fibnicd-alone.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exec "$root/lab/lab.sh" run "$@"
