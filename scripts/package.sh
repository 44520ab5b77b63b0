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
flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr
       -DFIBNIC_TESTS=OFF -DFIBNIC_BENCH=OFF -DFIBNIC_FPGA=OFF
       "-DCMAKE_EXE_LINKER_FLAGS=-Wl,-z,relro -Wl,-z,now")
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$root")}
  export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
  flags+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$root" -B "$dir" -G Ninja -DFIBNIC_WERROR=ON "${flags[@]}" >/dev/null
cmake --build "$dir" -j "${JOBS:-$(nproc)}"
rm -f "$dir"/*.deb
(cd "$dir" && cpack -G DEB >/dev/null)
debs=("$dir"/*.deb)
printf '%s\n' "${debs[@]}"
if [ "${1:-}" = --lintian ]; then
  # Warnings fail too; nothing is overridden.
  lintian --fail-on error,warning --tag-display-limit 0 "${debs[@]}"
fi
