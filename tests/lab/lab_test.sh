#!/usr/bin/env bash
# The lab end to end (root; ctest label "integration"): real zebra + bgpd and
# fibnicd on FPM + kernel sources, three bird2 peers announcing part of the
# real table. The oracle is the router's own kernel: for sampled prefixes of
# every peer, the decoded BAR (fibnicctl lookup --bar) must punt or send to
# the port and MAC of the peer the kernel routes through (`ip route get` +
# its neighbour table). Then a peer goes away: once the kernel has dropped
# its routes, the device must not send them to that peer any more.
#   lab_test.sh BIN_DIR SOURCE_DIR
set -euo pipefail
bin=$1
src=$2
export FIBNIC_BIN=$bin LAB_NAME=labt-$$ LAB_DIR=/run/fibnic-labt-$$
lab="$src/lab/lab.sh"
ctl="$bin/fibnicctl"
fail() { echo "FAIL: $*"; tail -n 20 "$LAB_DIR"/fibnicd.log 2>/dev/null || true; exit 1; }
trap '"$lab" down >/dev/null 2>&1 || true' EXIT

"$lab" up --routes 3000 --web-port 18481 --wire direct >/dev/null
r() { ip netns exec "$LAB_NAME-r" "$@"; }

# Converged: the kernel has every peer's prefixes and fibnicd has pushed them.
want=$(awk '$2 ~ /^10\./' "$LAB_DIR/table.txt" | wc -l)
for _ in $(seq 120); do
  have=$(r ip -4 route show proto bgp | wc -l)
  [ "$have" -ge "$want" ] && break
  sleep 0.5
done
[ "$have" -ge "$want" ] || fail "the kernel has $have of $want BGP routes after 60 s"
# zebra's routes reach fibnicd through the kernel source (FPM only hears back).
queue() { r "$ctl" --json status | python3 -c 'import json,sys; s=json.load(sys.stdin)["sources"]; print(s["pipeline"]["queue_depth"], s["kernel"]["routes"])'; }
for _ in $(seq 100); do
  read -r depth kernel_routes < <(queue)
  [ "$depth" = 0 ] && [ "$kernel_routes" -ge "$want" ] && break
  sleep 0.2
done
echo "converged: kernel $have BGP routes, fibnicd's kernel source $kernel_routes routes"

# Device vs the kernel, for the first address of 30 prefixes of each peer.
check() {  # check ADDRESS → "ok" or a reason
  local a=$1 route dev via mac hw
  route=$(r ip route get "$a" 2>/dev/null | head -n 1)
  dev=$(sed -n 's/.* dev \([^ ]*\).*/\1/p' <<<"$route")
  via=$(sed -n 's/.* via \([^ ]*\).*/\1/p' <<<"$route")
  hw=$("$ctl" lookup "$a" --bar "$LAB_DIR/bar0.img" --json)
  if [ "$(jq -r .hardware.forward <<<"$hw")" != true ]; then echo ok; return; fi  # punting is always safe
  case "$dev" in h[0-9]) ;; *) echo "device forwards $a, the kernel sends it to '$dev'"; return ;; esac
  mac=$(r ip neigh show "${via:-$a}" dev "$dev" | awk '{print $3}')
  [ "$(jq -r .hardware.port <<<"$hw")" = "${dev#h}" ] || { echo "$a: device port $(jq -r .hardware.port <<<"$hw"), kernel dev $dev"; return; }
  [ "$(jq -r .hardware.dst_mac <<<"$hw")" = "$mac" ] || { echo "$a: device MAC $(jq -r .hardware.dst_mac <<<"$hw"), kernel $mac"; return; }
  echo ok
}
forwarded=0
for k in 0 1 2; do
  while read -r prefix _; do
    a=${prefix%/*}
    res=$(check "$a")
    [ "$res" = ok ] || fail "$res"
    [ "$("$ctl" lookup "$a" --bar "$LAB_DIR/bar0.img" --json | jq -r .hardware.forward)" = true ] && forwarded=$((forwarded + 1))
  done < <(awk -v gw="10.$k.0.1" '$2 == gw' "$LAB_DIR/table.txt" | head -n 30)
done
echo "90 sampled prefixes agree with the kernel; $forwarded forwarded by the device"
[ "$forwarded" -ge 60 ] || fail "only $forwarded of 90 sampled prefixes offloaded"
ip netns exec "$LAB_NAME-h0" ping -c 2 -W 2 198.18.1.2 >/dev/null || fail "no ping from host 0 to host 1 across the router"

# Peer 1 goes away: once the kernel no longer routes its prefixes to it, the
# device must not either.
mapfile -t gone < <(awk '$2 == "10.1.0.1" {print $1}' "$LAB_DIR/table.txt" | head -n 30)
"$lab" peer stop 1
for _ in $(seq 100); do
  [ -z "$(r ip route show "${gone[0]}" proto bgp)" ] && break
  sleep 0.1
done
[ -z "$(r ip route show "${gone[0]}" proto bgp)" ] || fail "the kernel kept ${gone[0]} after its peer left"
for _ in $(seq 50); do
  read -r depth _ < <(queue)
  [ "$depth" = 0 ] && break
  sleep 0.1
done
sleep 0.5  # one batch delay and push after the queue drained
for p in "${gone[@]}"; do
  res=$(check "${p%/*}")
  [ "$res" = ok ] || fail "after peer 1 left: $res"
  port=$("$ctl" lookup "${p%/*}" --bar "$LAB_DIR/bar0.img" --json | jq -r '.hardware | select(.forward) | .port')
  [ "$port" != 1 ] || fail "after peer 1 left the device still sends ${p%/*} to port 1"
done
echo "peer 1 withdrawn: its 30 sampled prefixes no longer go to port 1 (kernel and device agree)"
echo "lab test: passed"
