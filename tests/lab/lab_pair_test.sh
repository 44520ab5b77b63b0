#!/usr/bin/env bash
# Two labs side by side (root; ctest label "integration"): each lab owns only
# the namespaces and processes it made. Lab A and lab B come up together; a
# third asking for A's name (with its own folder, or A's) is refused and
# harms nothing; a bystander
# namespace named like a lab's and a process whose command line reads like
# A's card (what a pattern kill would hit) stay untouched; taking A down
# leaves B's namespaces, daemons and BGP sessions as they were.
#   lab_pair_test.sh BIN_DIR SOURCE_DIR
set -euo pipefail
bin=$1
src=$2
lab="$src/lab/lab.sh"
export FIBNIC_BIN=$bin LAB_START_PEERS=1
a=pairA-$$ b=pairB-$$ by=lab-by-$$
dir_a=/run/fibnic-$a dir_b=/run/fibnic-$b
bait= by_pid=
cleanup() {
  LAB_NAME=$a "$lab" down >/dev/null 2>&1 || true
  LAB_NAME=$b "$lab" down >/dev/null 2>&1 || true
  [ -z "$bait" ] || kill "$bait" 2>/dev/null || true
  [ -z "$by_pid" ] || kill "$by_pid" 2>/dev/null || true
  ip netns del "$by" 2>/dev/null || true
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
ns_exists() { ip netns list | awk '{print $1}' | grep -qxF "$1"; }
sessions_up() {  # sessions_up NAME: BGP sessions Established on NAME's router
  vtysh --vty_socket "/run/fibnic-$1/frr" -c 'show bgp summary json' 2>/dev/null | python3 -c '
import json, sys
s = json.load(sys.stdin)
print(sum(p.get("state") == "Established" for af in s.values() if isinstance(af, dict)
          for p in af.get("peers", {}).values()))' 2>/dev/null || echo 0
}
wait_sessions() {  # the three IPv4 ones (bird's IPv6 sessions may wait out an error backoff first)
  for _ in $(seq 300); do [ "$(sessions_up "$1")" -ge 3 ] && return 0; sleep 0.2; done
  fail "lab $1: $(sessions_up "$1") BGP sessions up after 60 s"
}

# The bystanders: someone's own namespace named lab-*, with a process in it,
# and a process whose command line reads like lab A's card (what a kill by
# name pattern would hit).
ip netns add "$by"
ip netns exec "$by" sleep 600 >/dev/null 2>&1 &
by_pid=$!
(exec -a "fibnic-emu --bar $dir_a/bar0.img" sleep 600) >/dev/null 2>&1 &
bait=$!

LAB_NAME=$a "$lab" up --routes 200 --web-port 18484 --wire direct >/dev/null
LAB_NAME=$b "$lab" up --routes 200 --web-port 18485 --wire direct >/dev/null
wait_sessions "$a"
wait_sessions "$b"
echo "labs $a and $b up side by side, their BGP sessions established"

# A third lab with A's name is refused: its namespaces are not its own.
again=0
LAB_NAME=$a LAB_DIR=/run/fibnic-$a-again "$lab" up --routes 10 --web-port 18486 --wire direct >/tmp/lab-pair-$$.out 2>&1 ||
  again=$?
# Its folder (it recorded no namespace: the first was refused) goes either way.
LAB_NAME=$a LAB_DIR=/run/fibnic-$a-again "$lab" down >/dev/null 2>&1 || true
[ ! -e "/run/fibnic-$a-again" ] || fail "the refused lab's down left its folder"
[ "$again" != 0 ] || fail "a second lab named $a came up beside the first"
grep -q "not this lab's" /tmp/lab-pair-$$.out || fail "the refusal does not say why: $(tail -n 2 /tmp/lab-pair-$$.out)"
rm -f /tmp/lab-pair-$$.out
ns_exists "$a-r" || fail "the refused lab deleted $a-r"
[ "$(sessions_up "$a")" -ge 3 ] || fail "the refused lab broke lab $a's BGP sessions"
# `up` again with A's name and folder (a second run of the same command) is
# refused too, before it touches anything: `up` once began by taking down
# whatever lab the folder recorded, so a bench run beside another tore the
# other's lab down.
again=0
LAB_NAME=$a LAB_DIR=/run/fibnic-$a "$lab" up --routes 10 --web-port 18486 --wire direct >/tmp/lab-pair-$$.out 2>&1 ||
  again=$?
[ "$again" != 0 ] || fail "up over the running lab $a did not refuse"
grep -q "is up" /tmp/lab-pair-$$.out || fail "the refusal does not say why: $(tail -n 2 /tmp/lab-pair-$$.out)"
rm -f /tmp/lab-pair-$$.out
ns_exists "$a-r" || fail "up over the running lab $a deleted $a-r"
[ "$(sessions_up "$a")" -ge 3 ] || fail "up over the running lab $a broke its BGP sessions"

start_time() { awk '{print $22}' "/proc/$1/stat" 2>/dev/null; }
alive_b() {  # lab B's recorded processes that are still the ones it started
  while read -r name pid start; do
    [ "$(start_time "$pid")" = "$start" ] && echo "$name $pid"
  done <"$dir_b/procs"
}
before=$(alive_b)
sessions_b=$(sessions_up "$b")
[ "$(wc -l <<<"$before")" -ge 8 ] || fail "lab $b runs only: $before"
LAB_NAME=$a "$lab" down
for n in r p0 p1 p2 h0 h1 h2; do
  ! ns_exists "$a-$n" || fail "lab $a's namespace $a-$n outlived its down"
  ns_exists "$b-$n" || fail "taking lab $a down deleted lab $b's namespace $b-$n"
done
[ ! -e "$dir_a" ] || fail "lab $a's folder $dir_a outlived its down"
[ "$(alive_b)" = "$before" ] || fail "taking lab $a down ended lab $b's processes: $(diff <(echo "$before") <(alive_b) | grep '^<')"
sleep 1
[ "$(sessions_up "$b")" -ge "$sessions_b" ] || fail "taking lab $a down broke lab $b's BGP sessions ($sessions_b before, $(sessions_up "$b") after)"
ns_exists "$by" && kill -0 "$by_pid" 2>/dev/null || fail "taking lab $a down touched the bystander namespace $by"
kill -0 "$bait" 2>/dev/null || fail "taking lab $a down killed a process by its command line"
echo "lab $a down: its 7 namespaces gone; lab $b's namespaces, daemons and sessions, $by and the look-alike untouched"

LAB_NAME=$b "$lab" down
for n in r p0 h0; do ! ns_exists "$b-$n" || fail "lab $b's namespace $b-$n outlived its down"; done
ns_exists "$by" || fail "taking lab $b down deleted $by"
echo "lab pair test: passed"
