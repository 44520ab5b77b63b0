#!/usr/bin/env bash
# Configures and builds one build tree.
#   scripts/build.sh [release|lab|asan|deb]   (default release → build/, everything;
#   lab → build/ too, the programs alone: what scripts/run.sh needs, with no
#   test or bench package installed; asan → build-asan/; deb → build-deb/: for
#   /usr, no tests or benches, for scripts/package.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kind=${1:-release}
jobs=${JOBS:-$(nproc)}
# Debug information is line tables only (-g1): backtraces, gdb's and the
# sanitizers' reports keep their file:line, and a cold build of the Boost.Beast
# and GoogleTest sources takes about a third less time than with full -g.
# The cmake cache keeps these; a tree configured before gets them too.
release_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
               "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
case "$kind" in
  # Each kind names every part it builds: the cmake cache would otherwise keep
  # what the other kind of build/ last set.
  release) dir="$root/build"; flags=("${release_flags[@]}" -DFIBNIC_TESTS=ON -DFIBNIC_BENCH=ON -DFIBNIC_FPGA=ON
                                      -DFIBNIC_INTEGRATION_TESTS=ON) ;;
  lab) dir="$root/build"; flags=("${release_flags[@]}" -DFIBNIC_TESTS=OFF -DFIBNIC_BENCH=OFF -DFIBNIC_FPGA=OFF) ;;
  asan) dir="$root/build-asan"; flags=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1
                                       -DFIBNIC_SANITIZE=ON -DFIBNIC_BENCH=OFF -DFIBNIC_FPGA=OFF -DFIBNIC_INTEGRATION_TESTS=OFF) ;;
  # Same compile flags as release (so ccache hits); only the links differ.
  deb) dir="${FIBNIC_DEB_DIR:-$root/build-deb}"
       flags=("${release_flags[@]}" -DCMAKE_INSTALL_PREFIX=/usr -DFIBNIC_TESTS=OFF -DFIBNIC_BENCH=OFF
              -DFIBNIC_FPGA=OFF "-DCMAKE_EXE_LINKER_FLAGS=-Wl,-z,relro -Wl,-z,now") ;;
  *) echo "build.sh: unknown kind '$kind' (release|lab|asan|deb)" >&2; exit 2 ;;
esac
# ccache, where installed, makes rebuilds of several checkouts cheap.
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$root")}
  # -g would otherwise key every object on its build directory: another
  # checkout (a CI clone, a worktree) would miss the cache.
  export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
  flags+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$root" -B "$dir" -G Ninja -DFIBNIC_WERROR=ON "${flags[@]}" >/dev/null
cmake --build "$dir" -j "$jobs"
