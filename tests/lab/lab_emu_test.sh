#!/usr/bin/env bash
# The lab with the software FIBNIC on its wires (root; ctest label
# "integration"): real zebra + bgpd, fibnicd on FPM + kernel sources, three
# bird2 peers, fibnic-emu between the peers and the router. Oracles from
# outside the card: the router kernel's own forwarding counter
# (/proc/net/snmp Ip ForwDatagrams) and an nftables counter for a blackholed
# prefix, frames captured on the peers' side of the
# wires (tests/lab/frames.py, AF_PACKET), ping's answers, the router's kernel
# routes and FRR's BGP state.
#   lab_emu_test.sh BIN_DIR SOURCE_DIR
set -euo pipefail
bin=$1
src=$2
export FIBNIC_BIN=$bin LAB_NAME=labe-$$ LAB_DIR=/run/fibnic-labe-$$ LAB_START_PEERS=0
lab="$src/lab/lab.sh"
ctl="$bin/fibnicctl"
frames="$src/tests/lab/frames.py"
bar="$LAB_DIR/bar0.img"
bg=()
cleanup() {
  for p in "${bg[@]}"; do kill "$p" 2>/dev/null || true; done
  "$lab" down >/dev/null 2>&1 || true
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  tail -n 5 "$LAB_DIR"/emu.log "$LAB_DIR"/fibnicd.log 2>/dev/null || true
  exit 1
}
r() { ip netns exec "$LAB_NAME-r" "$@"; }
add() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a + b }'; }
hw() { "$ctl" lookup "$1" --bar "$bar" --json | jq -r "$2"; }  # hw ADDRESS JQ-FILTER
counter() {  # counter PORT NAME: the emulator's PORT_COUNTERS (drop_route: DROP_COUNTERS) as the BAR holds them
  python3 - "$bar" "$1" "$2" <<'PY'
import struct, sys
names = ["rx", "forwarded", "punted", "drop_ttl", "drop_fifo", "tx", "rx_bytes", "tx_bytes"]
port, name = int(sys.argv[2]), sys.argv[3]
with open(sys.argv[1], "rb") as f:
    f.seek(0x800 + 8 * port if name == "drop_route" else 0x100 + 64 * port + 8 * names.index(name))
    print(struct.unpack("<Q", f.read(8))[0])
PY
}
kernel_forwarded() {  # IPv4 datagrams the router's kernel forwarded
  r awk '/^Ip:/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "ForwDatagrams") c = i; h = 1 } else print $c }' /proc/net/snmp
}
capture() {  # capture NS IFACE FILE: frames IFACE receives, in the background
  ip netns exec "$1" python3 "$frames" capture "$2" "$3" &
  bg+=($!)
  for _ in $(seq 50); do grep -q ready "$3" 2>/dev/null && return; sleep 0.1; done
  fail "capture on $1/$2 did not start"
}
stop_captures() {
  for p in "${bg[@]}"; do kill "$p" 2>/dev/null || true; done
  wait "${bg[@]}" 2>/dev/null || true
  bg=()
}

"$lab" up --routes 1000 --web-port 18482 --wire card >/dev/null
grep -q forwarding "$LAB_DIR/emu.log" || fail "fibnic-emu did not start"
# Peer 2 also announces 198.18.0.0/16 and drops what it gets for host 1's
# LAN: when peer 1 withdraws 198.18.1.0/24, the probe's traffic moves there.
echo "route 198.18.0.0/16 unreachable;" >>"$LAB_DIR/p2-v4.conf"
ip netns exec "$LAB_NAME-p2" ip route add blackhole 198.18.1.0/24
for k in 0 1 2; do "$lab" peer start $k; done

want=$(($(awk '$2 ~ /^10\./' "$LAB_DIR/table.txt" | wc -l) + 4))  # + the three LANs + the /16
# Established BGP sessions (both families of the three peers: 6 when all are up).
established() {
  vtysh --vty_socket "$LAB_DIR/frr" -c 'show bgp summary json' 2>/dev/null | python3 -c '
import json, sys
s = json.load(sys.stdin)
print(sum(p.get("state") == "Established" for f in ("ipv4Unicast", "ipv6Unicast") for p in s.get(f, {}).get("peers", {}).values()))' 2>/dev/null || echo 0
}
for _ in $(seq 240); do
  have=$(r ip -4 route show proto bgp | wc -l)
  [ "$have" -ge "$want" ] && [ "$(hw 198.18.1.2 '.hardware.port // empty')" = 1 ] && [ "$(established)" = 6 ] && break
  sleep 0.25
done
[ "$have" -ge "$want" ] || fail "the kernel has $have of $want BGP routes after 60 s"
[ "$(established)" = 6 ] || fail "only $(established) of 6 BGP sessions established after 60 s"
[ "$(hw 198.18.1.2 .hardware.forward)" = true ] || fail "the device does not forward 198.18.1.2 to port 1"
# Each session's connection counters now: a session that stays up changes
# neither (an uptime compared with the test's own clock is off by up to 2 s).
sessions() {
  vtysh --vty_socket "$LAB_DIR/frr" -c 'show bgp neighbors json' | python3 -c '
import json, sys
for a, p in sorted(json.load(sys.stdin).items()):
    print(a, p.get("bgpState"), p.get("connectionsEstablished"), p.get("connectionsDropped"))'
}
sessions_at_converge=$(sessions)
! grep -qvE " Established [0-9]+ [0-9]+$" <<<"$sessions_at_converge" || fail "no connection counters in show bgp neighbors json: $sessions_at_converge"
echo "converged: kernel $have BGP routes; the device forwards 198.18.1.2 to port 1"

# 1. Host 0 -> host 1 crosses the card, not the router's kernel; on peer 1's
# side of the wire every frame has TTL 64 - 2 (peer 0, the card), a valid
# header checksum and the router's port-1 MAC as source.
n=300
capture "$LAB_NAME-p1" rt "$LAB_DIR/cap-fwd.txt"
fwd0=$(counter 0 forwarded); tx1=$(counter 1 tx); kf0=$(kernel_forwarded)
ip netns exec "$LAB_NAME-h0" python3 "$frames" udp 198.18.1.2 40001 $n 64 0.002
sleep 0.5
stop_captures
fwd=$(($(counter 0 forwarded) - fwd0)); tx=$(($(counter 1 tx) - tx1)); kf=$(($(kernel_forwarded) - kf0))
seen=$(python3 "$frames" ttl "$LAB_DIR/cap-fwd.txt" 40001 62 02:fb:00:00:00:01) || fail "bad frames on peer 1's wire"
echo "$n datagrams: card forwarded $fwd on port 0 (tx $tx on port 1), router kernel forwarded $kf; peer 1 got $seen, TTL 62, checksums valid"
[ "$fwd" -ge "$n" ] || fail "the card's port 0 forwarded only $fwd of $n datagrams"
[ "$tx" -ge "$n" ] || fail "the card's port 1 transmitted only $tx of $n"
[ "$kf" -lt $((n / 10)) ] || fail "the router's kernel forwarded $kf datagrams meanwhile: the flow did not stay in the card"
[ "$seen" -ge $((n * 95 / 100)) ] || fail "peer 1 received only $seen of $n datagrams"

# 2. What the card punts reaches the router's kernel, which answers or forwards.
ttl0=$(counter 0 drop_ttl)
out=$(ip netns exec "$LAB_NAME-h0" ping -c 2 -t 2 -W 2 198.18.1.2 2>&1 || true)
grep -q "From 10.0.0.2.*Time to live exceeded" <<<"$out" || fail "TTL 1 at the card: no time exceeded from the router: $out"
[ $(($(counter 0 drop_ttl) - ttl0)) -ge 2 ] || fail "drop_ttl on port 0 did not count the TTL-1 frames"
echo "TTL 1: punted (drop_ttl counted), the router's kernel answers time exceeded"
ip netns exec "$LAB_NAME-h0" ping -c 2 -W 2 10.1.0.2 >/dev/null || fail "no answer from the router's own address 10.1.0.2"
ip netns exec "$LAB_NAME-h0" ping -6 -c 2 -W 2 fd00:1::2 >/dev/null || fail "no answer from the router's own address fd00:1::2"
echo "to the host: the router answers 10.1.0.2 and fd00:1::2 through the card's punt path"
# A /25 to another next-hop inside peer 2's 198.18.2.0/24: the device cannot
# hold it, so the whole /24 punts and the kernel forwards host 2's half.
[ "$(hw 198.18.2.2 .hardware.forward)" = true ] || fail "the device does not forward 198.18.2.2 before the /25"
r ip route add 198.18.2.128/25 via 10.0.0.1
for _ in $(seq 40); do [ "$(hw 198.18.2.2 .hardware.forward)" = false ] && break; sleep 0.25; done
[ "$(hw 198.18.2.2 .hardware.forward)" = false ] || fail "the device still forwards 198.18.2.0/24 around a kernel /25"
punt0=$(counter 0 punted); kf0=$(kernel_forwarded)
ip netns exec "$LAB_NAME-h0" ping -c 5 -i 0.2 -W 2 198.18.2.2 >/dev/null || fail "no ping to 198.18.2.2 through the router's kernel"
kf=$(($(kernel_forwarded) - kf0)); punted=$(($(counter 0 punted) - punt0))
[ "$kf" -ge 5 ] && [ "$punted" -ge 5 ] || fail "/25: card punted $punted, kernel forwarded $kf (want >= 5 each)"
r ip route del 198.18.2.128/25 via 10.0.0.1
echo "longer than /24: with a /25 inside it the device punts 198.18.2.0/24, the kernel forwards it ($kf datagrams)"

# 2b. A blackhole is dropped in the card: probes to it are counted in port 0's
# DROP_COUNTERS, and the router's kernel sees none of them (an nftables
# counter on its prerouting hook, in a table of this test's own).
r ip route add blackhole 198.51.100.0/24
for _ in $(seq 40); do [ "$(hw 198.51.100.9 .hardware.drop)" = true ] && break; sleep 0.25; done
[ "$(hw 198.51.100.9 .hardware.drop)" = true ] || fail "the device does not drop 198.51.100.0/24 after the kernel's blackhole"
r nft -f - <<'NFT'
table ip fibnic_lab_blackhole {
  chain pre { type filter hook prerouting priority -300; ip daddr 198.51.100.0/24 counter; }
}
NFT
drop0=$(counter 0 drop_route); punt0=$(counter 0 punted); fwd0=$(counter 0 forwarded)
ip netns exec "$LAB_NAME-h0" python3 "$frames" udp 198.51.100.9 40002 200 64 0.002
sleep 0.5
dropped=$(($(counter 0 drop_route) - drop0)); punted=$(($(counter 0 punted) - punt0)); fwd=$(($(counter 0 forwarded) - fwd0))
seen_by_kernel=$(r nft -j list table ip fibnic_lab_blackhole | python3 -c '
import json, sys
print(sum(e["counter"]["packets"] for x in json.load(sys.stdin)["nftables"] if "rule" in x
          for e in x["rule"]["expr"] if "counter" in e))')
r nft delete table ip fibnic_lab_blackhole
r ip route del blackhole 198.51.100.0/24
echo "blackhole: 200 datagrams to 198.51.100.9, card dropped $dropped on port 0 (forwarded $fwd, punted $punted meanwhile), the router's kernel saw $seen_by_kernel"
[ "$dropped" -ge 200 ] || fail "the card's DROP_COUNTERS on port 0 counted only $dropped of 200 datagrams to the blackhole"
[ "$seen_by_kernel" = 0 ] || fail "the router's kernel received $seen_by_kernel datagrams for the blackholed prefix"

# 3. Peer 1 withdraws 198.18.1.0/24 under a 100 pps probe. Every frame to
# that prefix leaving the card must go where the router's routes send it at
# that moment: peer 1 until the kernel switches (plus the device's batch
# delay and push), peer 2 from the withdrawal on, peer 0 never.
for k in 0 1 2; do capture "$LAB_NAME-p$k" rt "$LAB_DIR/cap-move$k.txt"; done
ip netns exec "$LAB_NAME-h0" ping -i 0.01 -W 1 198.18.1.2 >/dev/null 2>&1 &
ping_pid=$!
sleep 1.5
t_withdraw=$(date +%s.%N)
ip netns exec "$LAB_NAME-p1" birdc -s "$LAB_DIR/p1-bird.ctl" disable lan4 >/dev/null
t_kernel=
for _ in $(seq 500); do
  if r ip route get 198.18.1.2 | grep -q "via 10.2.0.1"; then t_kernel=$(date +%s.%N); break; fi
  sleep 0.01
done
[ -n "$t_kernel" ] || fail "the router's kernel did not move 198.18.1.2 to peer 2 within 5 s"
sleep 2.5
kill "$ping_pid" 2>/dev/null || true
stop_captures
grace=1.0  # fibnicd's batch delay and its push, after the kernel has the route
wrong0=$(python3 "$frames" to "$LAB_DIR/cap-move0.txt" 198.18.1.0/24)
late1=$(python3 "$frames" to "$LAB_DIR/cap-move1.txt" 198.18.1.0/24 0 "$(add "$t_kernel" "$grace")")
early2=$(python3 "$frames" to "$LAB_DIR/cap-move2.txt" 198.18.1.0/24 "$t_withdraw" 1e12)
moved=$(python3 "$frames" to "$LAB_DIR/cap-move2.txt" 198.18.1.0/24 0 "$(add "$t_kernel" "$grace")" | wc -l)
in_time=$(python3 "$frames" to "$LAB_DIR/cap-move2.txt" 198.18.1.0/24 "$(add "$t_kernel" "$grace")" 1e12 | wc -l)
before=$(python3 "$frames" to "$LAB_DIR/cap-move1.txt" 198.18.1.0/24 "$t_withdraw" 1e12 | wc -l)
[ -z "$wrong0" ] || fail "frames for 198.18.1.0/24 delivered to peer 0: $(head -n 3 <<<"$wrong0")"
[ -z "$late1" ] || fail "frames for 198.18.1.0/24 reached peer 1 more than ${grace}s after the kernel moved it: $(head -n 3 <<<"$late1")"
[ -z "$early2" ] || fail "frames for 198.18.1.0/24 reached peer 2 before peer 1 withdrew it: $(head -n 3 <<<"$early2")"
[ "$before" -ge 20 ] || fail "only $before probe frames reached peer 1 before the withdrawal"
[ "$in_time" -ge 1 ] || fail "no probe frame reached peer 2 within ${grace}s of the kernel's move"
[ "$moved" -ge 20 ] || fail "only $moved probe frames reached peer 2 after the move"
[ "$(hw 198.18.1.2 .hardware.port)" = 2 ] || fail "the device does not send 198.18.1.2 to port 2 after the move"
echo "withdrawal: $before probe frames at peer 1 before, $moved at peer 2 after ($in_time of them within ${grace}s of the kernel's move); none misdelivered (kernel moved it $(add "$t_kernel" "-$t_withdraw") s after the withdrawal)"

# 4. BGP stayed up the whole time: its packets are punted both ways.
sessions_now=$(sessions)
[ "$(wc -l <<<"$sessions_now")" = 6 ] && ! grep -qv ' Established ' <<<"$sessions_now" \
  && [ "$sessions_now" = "$sessions_at_converge" ] \
  || fail "BGP sessions did not stay up (neighbor, state, connections established, dropped):
at convergence:
$sessions_at_converge
now:
$sessions_now"
echo "BGP: 6 sessions established at convergence, none dropped or re-established since"
for k in 0 1 2; do
  [ "$(counter $k punted)" -gt 0 ] || fail "the card punted nothing on port $k (BGP, ARP/ND go there)"
done
echo "lab emulator test: passed"
