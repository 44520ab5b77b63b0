#!/usr/bin/env bash
# fibnic-emu's forwarding rate next to the Linux kernel's, same run, same
# sender and receiver namespaces: a blaster (emu_frame_blast, one core,
# AF_PACKET sendmmsg) offers UDP/IPv4 frames of 64 and 1500 bytes to either
#   emu-b-kern: a namespace whose kernel forwards (ip_forward, one route), or
#   emu-b-card: fibnic-emu with a BAR compiled from the same route,
# and the rate is what arrives on the receiver's interface (its rx_packets).
# Then BGP convergence in packets on the lab (bench/emu/convergence.py): from
# a peer's announcement (withdrawal) to the first (last) probe the card
# forwards, next to the router's kernel having (dropping) the route.
#   bench/emu/run.sh [BUILD_DIR]      (root; EMU_BENCH_SECONDS=3 per run;
#                                      EMU_CONV_TRIALS=5, EMU_CONV_ROUTES=100)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
secs=${EMU_BENCH_SECONDS:-3}
blast="$build/bench/emu/emu_frame_blast"
for t in "$build/bin/fibnic-emu" "$build/bin/fibnic-compile" "$blast"; do
  [ -x "$t" ] || { echo "bench/emu: $t not built (scripts/build.sh release)" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "bench/emu: needs root (network namespaces)" >&2; exit 1; }
dir=$(mktemp -d /tmp/emu-bench.XXXXXX)
emu_pid=
del_ns() { for n in src dst kern card host; do ip netns del emu-b-$n 2>/dev/null || true; done; }
cleanup() {
  if [ -n "$emu_pid" ]; then kill "$emu_pid" 2>/dev/null || true; wait "$emu_pid" 2>/dev/null || true; fi
  del_ns
  rm -rf "$dir"
}
trap cleanup EXIT
del_ns
ns() { local n=$1; shift; ip netns exec "emu-b-$n" "$@"; }
link() {  # link NS_A IF_A MAC_A NS_B IF_B MAC_B
  ip link add "$2" netns "emu-b-$1" address "$3" type veth peer name "$5" netns "emu-b-$4" address "$6"
  ns "$1" ip link set "$2" up
  ns "$4" ip link set "$5" up
}
for n in src dst kern card host; do ip netns add emu-b-$n; ns $n ip link set lo up; done
for n in src dst card host; do ns $n sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1; done

# The kernel's path: sk -> ki [kernel forwards] ko -> dk
link src sk 02:00:00:00:a0:00 kern ki 02:00:00:00:b0:00
link kern ko 02:00:00:00:b0:01 dst dk 02:00:00:00:d0:01
ns kern sysctl -qw net.ipv4.ip_forward=1
ns kern ip addr add 10.1.0.1/24 dev ki
ns kern ip addr add 10.2.0.1/24 dev ko
ns kern ip route add 198.51.100.0/24 via 10.2.0.2
ns kern ip neigh add 10.2.0.2 lladdr 02:00:00:00:d0:01 dev ko nud permanent

# The card's path: sc -> w0 [fibnic-emu] w1 -> dc; its host side e<k> -> x<k>
link src sc 02:00:00:00:a0:01 card w0 02:00:00:00:c1:00
link card w1 02:00:00:00:c1:01 dst dc 02:00:00:00:d0:02
for k in 0 1; do link card e$k 02:00:00:00:e0:0$k host x$k 02:00:00:00:f0:0$k; done
echo "198.51.100.0/24 10.2.0.2 1" >"$dir/routes.txt"
echo "10.2.0.2 02:00:00:00:d0:02 1" >"$dir/neighbors.txt"
"$build/bin/fibnic-compile" --routes "$dir/routes.txt" --neighbors "$dir/neighbors.txt" --out "$dir/bar0.img" >/dev/null
# PORT_MAC[0..1]: the MACs the card's ports own (what fibnicd writes from the host's interfaces).
python3 - "$dir/bar0.img" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    for p in range(2):
        f.seek(0x40 + 8 * p)
        f.write(bytes([2, 0, 0, 0, 0xc0, p]))
PY
# Not through ns(): a function run in the background is a subshell, and
# killing $! would leave the emulator running.
ip netns exec emu-b-card "$build/bin/fibnic-emu" --bar "$dir/bar0.img" --port 0=w0 --host 0=e0 --port 1=w1 --host 1=e1 >"$dir/emu.log" 2>&1 &
emu_pid=$!
for _ in $(seq 50); do grep -q forwarding "$dir/emu.log" && break; sleep 0.1; done
grep -q forwarding "$dir/emu.log" || { cat "$dir/emu.log"; exit 1; }

rx() { ns dst cat "/sys/class/net/$1/statistics/rx_packets"; }
measure() {  # measure SRC_IF DST_MAC DST_IF BYTES → "offered_pps forwarded_pps"
  local before after sent
  before=$(rx "$3")
  sent=$(ns src "$blast" "$1" "$2" 02:00:00:00:a0:0f 198.51.100.7 "$4" "$secs")
  sleep 0.2
  after=$(rx "$3")
  echo "$((sent / secs)) $(((after - before) / secs))"
}
echo "bench/emu: UDP/IPv4 from one blaster core, ${secs}s per run; pps arriving behind the forwarder"
printf "  %-6s %-22s %12s %12s\n" bytes path offered_pps forwarded_pps
for bytes in 64 1500; do
  read -r ko kf < <(measure sk 02:00:00:00:b0:00 dk "$bytes")
  read -r eo ef < <(measure sc 02:00:00:00:c0:00 dc "$bytes")
  printf "  %-6s %-22s %12s %12s\n" "$bytes" "kernel (ip_forward)" "$ko" "$kf" "$bytes" "fibnic-emu" "$eo" "$ef"
  awk -v e="$ef" -v k="$kf" -v b="$bytes" 'BEGIN { printf "  %-6s fibnic-emu / kernel = %.2f\n", b, k ? e / k : 0 }'
done

# The convergence figure needs the lab's namespaces; the rate's are gone first.
cleanup
trap - EXIT
echo
python3 "$root/bench/emu/convergence.py" run --build "$build" \
  --trials "${EMU_CONV_TRIALS:-5}" --routes "${EMU_CONV_ROUTES:-100}"
