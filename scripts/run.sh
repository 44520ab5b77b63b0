#!/usr/bin/env bash
# The main job: installs what is needed, builds, and runs it on the embedded
# default (file-backed FIBNIC, no hardware, no FRR).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" release
exec "$root/scripts/main-job.sh" "$@"
