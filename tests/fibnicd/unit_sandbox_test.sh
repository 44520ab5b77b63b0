#!/usr/bin/env bash
# Runs fibnicd (file backend, kernel source) confined like configs/fibnicd.service:
# systemd-nspawn with the unit's system-call deny list (~@privileged @resources),
# no new privileges, as the unit's user (fibnic: uid 64000 in a passwd of the
# sandbox's own, not the host's) with only the unit's capabilities as ambient
# ones (AmbientCapabilities=) — then with none — in a
# network namespace where a route's gateway is behind a FIBNIC port. Shows by
# running what the unit grants and why (/proc/PID/status: Uid, CapEff):
#   with CAP_NET_ADMIN alone: the API answers, the image is written, and the
#     gateway's neighbour probe reaches the kernel (an entry appears);
#   with no capability: it still serves and writes, but the probe is refused
#     (no neighbour entry) — CAP_NET_ADMIN is what the kernel source needs;
#     it also gets its event socket the 128 MiB receive buffer (SO_RCVBUFFORCE,
#     ss shows rb268435456) that a full table's burst of events needs; without
#     it the buffer is net.core.rmem_max's.
# Needs root and systemd-nspawn (systemd-container); label integration.
#   unit_sandbox_test.sh BIN_DIR   (fibnicd and fibnicctl)
set -euo pipefail
bin=$1
ns=wh-sbx-$$
tmp=$(mktemp -d /tmp/wh-sbx.XXXXXX)
# The service's user, in the sandbox's passwd; it owns the image's directory.
uid=64000
printf 'root:x:0:0::/root:/bin/sh\nfibnic:x:%s:%s::/:/usr/sbin/nologin\n' $uid $uid >"$tmp/passwd"
printf 'root:x:0:\nfibnic:x:%s:\n' $uid >"$tmp/group"
chown "$uid:$uid" "$tmp"
cleanup() { ip netns del "$ns" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
command -v systemd-nspawn >/dev/null || { echo "systemd-nspawn missing (scripts/deps/test/daemon.txt: systemd-container)"; exit 1; }

ip netns add "$ns"
ip -n "$ns" link set lo up
ip -n "$ns" link add wh-a type veth peer name wh-b
ip -n "$ns" link set wh-a up
ip -n "$ns" link set wh-b up
ip -n "$ns" addr add 10.99.0.1/24 dev wh-a
ip -n "$ns" route add 198.51.100.0/24 via 10.99.0.2 dev wh-a

cat >"$tmp/fibnicd.yaml" <<EOF
device:
  backend: file
  path: $tmp/bar0.img
ports:
  - interface: wh-a
    port: 0
    mac: 02:00:00:00:00:01
sources:
  kernel:
    enabled: true
web:
  listen: 127.0.0.1:8080
EOF

# Every capability but the ones given, for --drop-capability (nspawn's own
# default set lacks CAP_NET_ADMIN: the given ones are also added).
all_caps=$(capsh --decode=0x1ffffffffff | sed 's/.*=//' | tr 'a-z' 'A-Z' | tr ',' '\n')
drop_all_but() {
  local keep=" $* " out=()
  for c in $all_caps; do [[ $keep == *" $c "* ]] || out+=("$c"); done
  local IFS=,
  echo "${out[*]}"
}

# run NAME CAPEFF CAPS...: fibnicd in the sandbox as fibnic with CAPS ambient
# until the API answers (10 s), then SIGTERM; its effective set
# (/proc/PID/status) must be CAPEFF.
run() {
  local name=$1 capeff=$2
  shift 2
  rm -f "$tmp/bar0.img"
  ip -n "$ns" neigh flush dev wh-a
  systemd-nspawn --register=no --keep-unit -q -D / --volatile=yes \
    --network-namespace-path="/run/netns/$ns" --bind-ro="$bin" --bind="$tmp" \
    --bind-ro="$tmp/passwd:/etc/passwd" --bind-ro="$tmp/group:/etc/group" --user=fibnic \
    --no-new-privileges=yes --drop-capability="$(drop_all_but "$@")" ${1:+--capability="$*" --ambient-capability="$*"} \
    --system-call-filter='~@privileged @resources' \
    /bin/sh -c "grep CapEff /proc/self/status
      $bin/fibnicd --config $tmp/fibnicd.yaml >$tmp/$name.log 2>&1 &
      pid=\$!
      for i in \$(seq 100); do $bin/fibnicctl status >$tmp/$name.status 2>&1 && break; sleep 0.1; done
      grep -E '^(Uid|CapEff):' /proc/\$pid/status
      echo netlink-rcvbufs: \$(ss -f netlink -a -m | grep -o 'rb[0-9]*')
      sleep 1
      kill -TERM \$pid; wait \$pid; echo exit=\$?" >"$tmp/$name.out" 2>&1 || true
  echo "--- $name: $(tr '\n' ' ' <"$tmp/$name.out")"
  grep -q '^routes' "$tmp/$name.status" || grep -q 'generation' "$tmp/$name.status" ||
    { cat "$tmp/$name.status" "$tmp/$name.log"; echo "FAIL $name: the API did not answer"; exit 1; }
  grep -q 'exit=0' "$tmp/$name.out" || { cat "$tmp/$name.log"; echo "FAIL $name: fibnicd did not exit 0 on SIGTERM"; exit 1; }
  [ -s "$tmp/bar0.img" ] || { echo "FAIL $name: no BAR image written"; exit 1; }
  # nspawn's terminal ends lines with CR LF.
  tr -d '\r' <"$tmp/$name.out" >"$tmp/$name.proc"
  grep -qP "^Uid:\t$uid\t$uid\t$uid\t$uid$" "$tmp/$name.proc" || { echo "FAIL $name: fibnicd did not run as uid $uid"; exit 1; }
  grep -qP "^CapEff:\t$capeff$" "$tmp/$name.proc" || { echo "FAIL $name: fibnicd's effective capabilities are not $capeff"; exit 1; }
}

# CAP_NET_ADMIN is bit 12.
run unit 0000000000001000 CAP_NET_ADMIN
neigh=$(ip -n "$ns" neigh show 10.99.0.2 dev wh-a)
echo "neighbour entry with CAP_NET_ADMIN: '${neigh}'"
[ -n "$neigh" ] || { cat "$tmp/unit.log"; echo "FAIL: the gateway was not probed with CAP_NET_ADMIN"; exit 1; }

# 128 MiB asked for, the kernel doubles it.
grep -q 'netlink-rcvbufs:.* rb268435456' "$tmp/unit.proc" || { echo "FAIL: the event socket has no 128 MiB buffer with CAP_NET_ADMIN"; exit 1; }

run nocaps 0000000000000000
if [ "$(cat /proc/sys/net/core/rmem_max)" -lt $((128 << 20)) ] && grep -q 'netlink-rcvbufs:.* rb268435456' "$tmp/nocaps.proc"; then
  echo "FAIL: a 128 MiB event buffer without CAP_NET_ADMIN (rmem_max is smaller): it is not what grants it"; exit 1
fi
neigh=$(ip -n "$ns" neigh show 10.99.0.2 dev wh-a)
echo "neighbour entry without capabilities: '${neigh}'"
[ -z "$neigh" ] || { echo "FAIL: probed without CAP_NET_ADMIN — the unit grants more than it needs"; exit 1; }
echo "fibnicd runs confined as its unit; CAP_NET_ADMIN is needed (neighbour probes, the event buffer) and sufficient"
