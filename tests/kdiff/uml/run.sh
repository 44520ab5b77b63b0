#!/usr/bin/env bash
# Runs the kernel differential harness (tests/kdiff/kdiff.py) inside
# user-mode Linux: Debian 12's `user-mode-linux`, a 6.1 kernel run as an
# ordinary process, whose modules include vrf.ko — the VRF events this
# machine's kernel and CI's cannot run (docs/oracle.md, "VRF, in user-mode
# Linux"). The guest's root is the host's (hostfs); guest.sh is its init.
#   tests/kdiff/uml/run.sh FIBNICD KDIFF_BAR [PARENT_DIR]
# Exits with kdiff's status (1: a divergence), 124 when KDIFF_UML_TIMEOUT
# (seconds, default 600) ran out (UML is killed: linux.uml makes itself a
# process group, its processes are killed by that group's id), 2 when UML is
# missing.
# Writes only in a fresh directory under PARENT_DIR (default $TMPDIR or
# /tmp), removed at the end. KDIFF_* and FIBSYNC_SEED go to kdiff.py;
# KDIFF_UML_MEM (default 1G) is the guest's memory.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 2 ] || { echo "usage: $0 FIBNICD KDIFF_BAR [PARENT_DIR]" >&2; exit 2; }
uml=$(command -v linux.uml) || { echo "run.sh: linux.uml missing (apt-get install user-mode-linux)" >&2; exit 2; }
fibnicd=$(realpath "$1")
bar=$(realpath "$2")
work=$(mktemp -d "$(realpath "${3:-${TMPDIR:-/tmp}}")/kdiff-uml.XXXXXX")
case $work in *[[:space:]]*) echo "run.sh: $work: the kernel command line takes no spaces" >&2; exit 2 ;; esac
umlpid= tailpid=
stop_uml() {
  kill -KILL -- "-$umlpid" 2>/dev/null || true  # its group (helpers and the guest's processes)
  kill -KILL "$umlpid" 2>/dev/null || true      # in case it had not made the group yet
  wait "$umlpid" 2>/dev/null || true
}
cleanup() {
  [ -z "$umlpid" ] || stop_uml
  [ -z "$tailpid" ] || kill "$tailpid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# What the guest runs: the harness, its binaries and settings.
{
  printf 'kdiff=%q fibnicd=%q bar=%q\n' "$here/../kdiff.py" "$fibnicd" "$bar"
  for v in $(compgen -e | grep -E '^(KDIFF_|FIBSYNC_SEED$)' || true); do printf 'export %s=%q\n' "$v" "${!v}"; done
} > "$work/env"
: > "$work/out"

# TMPDIR: UML's memory file (unlinked at once), on /dev/shm when it has room
# for it (a file on disk is written back), else in the work directory. The
# console (kernel messages) goes to a file; kdiff's output is streamed from
# $work/out. uml_dir: UML's pid file and mconsole socket (by default in
# ~/.uml/, where a killed UML leaves them).
mem=${KDIFF_UML_MEM:-1G}
memdir=$work
if [ "$(df --output=avail -B1M /dev/shm 2>/dev/null | tail -n 1)" -gt "$(($(numfmt --from=iec "$mem") / 1048576 + 512))" ] 2>/dev/null; then
  memdir=/dev/shm
fi
TMPDIR=$memdir "$uml" mem="$mem" \
  uml_dir="$work" umid=kdiff rootfstype=hostfs rootflags=/ rw init="$here/guest.sh" kdiff_uml_work="$work" \
  con=null ssl=null con0=null,fd:1 loglevel=4 > "$work/console" 2>&1 < /dev/null &
umlpid=$!
tail -n +1 -f --pid="$umlpid" "$work/out" &
tailpid=$!
deadline=$((SECONDS + ${KDIFF_UML_TIMEOUT:-600}))
while kill -0 "$umlpid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do
  sleep 1
done
status=0
if kill -0 "$umlpid" 2>/dev/null; then
  status=124
  stop_uml
else
  wait "$umlpid" || status=$?
fi
umlpid=
wait "$tailpid" || true
tailpid=
if [ "$status" != 124 ] && [ -s "$work/rc" ]; then
  exit "$(cat "$work/rc")"
fi
echo "run.sh: UML ended without kdiff's status (linux.uml status $status$([ "$status" = 124 ] && echo ": KDIFF_UML_TIMEOUT ran out")); its console ends:"
tail -n 20 "$work/console"
exit $((status == 124 ? 124 : 1))
