#!/usr/bin/env bash
# The main job: installs what is needed, builds, and runs the lab on the
# embedded default (file-backed FIBNIC, no hardware; FRR and BGP peers in
# network namespaces) until Ctrl-C.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" lab
exec "$root/scripts/main-job.sh" "$@"
