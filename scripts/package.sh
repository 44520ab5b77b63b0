#!/usr/bin/env bash
# Builds the Debian packages fibnic_<v>_amd64.deb and ipnumad_<v>_amd64.deb
# (packaging/CMakeLists.txt) into build-deb/, from a build tree configured for
# /usr without tests or benches. With ccache and a release build done, the
# compile is all cache hits (same flags); only the links run.
#   scripts/package.sh            build the packages, print their paths
#   scripts/package.sh --lintian  also run lintian on them (fails on warnings)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${FIBNIC_DEB_DIR:-$root/build-deb}
"$root/scripts/build.sh" deb
rm -f "$dir"/*.deb
(cd "$dir" && cpack -G DEB >/dev/null)
debs=("$dir"/*.deb)
printf '%s\n' "${debs[@]}"
if [ "${1:-}" = --lintian ]; then
  # Warnings fail too; nothing is overridden.
  lintian --fail-on error,warning --tag-display-limit 0 "${debs[@]}"
fi
