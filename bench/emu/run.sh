#!/usr/bin/env bash
# fibnic-emu's forwarding rate next to the Linux kernel's, same run, same
# sender and receiver namespaces: a traffic source on one core offers
# UDP/IPv4 frames of 64 and 1500 bytes to either
#   emu-b-kern: a namespace whose kernel forwards (ip_forward, one route), or
#   emu-b-card: fibnic-emu with a BAR compiled from the same route, in its
#               user-space mode (BAR file), then in XDP mode, skb and native
#               (the same image in a BAR map pinned in a bpffs mounted for
#               the run),
# and the rate is what arrives on the receiver's interface (its rx_packets).
# Two sources, the same frame from each, to both paths in every round:
#   packet: emu_frame_blast, AF_PACKET sendmmsg: each frame enters the first
#           veth as a socket buffer with little headroom, so XDP on the far
#           end copies it first (generic XDP for headroom, native XDP on a
#           veth into a page of its own);
#   xdp:    emu_xdp_frame_gen, the kernel's XDP traffic generator
#           (BPF_PROG_RUN, live frames): each frame enters the first veth as
#           an xdp_frame in a page-pool page with full XDP headroom, as a
#           NIC's driver hands frames on, and reaches the far end's NAPI with
#           no socket buffer. The far end must have NAPI: the kernel's
#           receiving veth gets GRO on (EMU_BENCH_KERNEL_NAPI=gro, what a
#           NIC's driver has on by default; xdp-pass attaches
#           emu/xdp/xdp_pass.bpf.c instead), the card's wire GRO on in
#           user-space and skb mode, its own program in native mode.
# Both sources run the whole path on the sending core (the veth's backlog or
# NAPI runs in the sender's softirq), so a rate is one core's.
# Behind the card, native mode's redirect into a veth needs NAPI at the
# receiver too: there it runs the XDP_PASS program (GRO would turn NAPI on
# too, at a higher cost per frame); otherwise receivers are plain veths.
# Then BGP convergence in packets on the lab (bench/emu/convergence.py): from
# a peer's announcement (withdrawal) to the first (last) probe the card
# forwards, next to the router's kernel having (dropping) the route.
#   bench/emu/run.sh [BUILD_DIR]      (root; EMU_BENCH_SECONDS=3 per run;
#                                      EMU_CONV_TRIALS=5, EMU_CONV_ROUTES=100;
#                                      EMU_BENCH_NS=emu-b: the namespaces' prefix;
#                                      EMU_BENCH_PARTS="rate convergence";
#                                      EMU_BENCH_SIZES="64 1500";
#                                      EMU_BENCH_SOURCES="packet xdp";
#                                      EMU_BENCH_KERNEL_NAPI=gro|xdp-pass;
#                                      EMU_BENCH_MODES="user xdp xdp-native";
#                                      EMU_BENCH_ROUNDS=1)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
secs=${EMU_BENCH_SECONDS:-3}
blast="$build/bench/emu/emu_frame_blast"
gen="$build/bench/emu/emu_xdp_frame_gen"
sources=${EMU_BENCH_SOURCES:-packet xdp}
kernel_napi=${EMU_BENCH_KERNEL_NAPI:-gro}
case $kernel_napi in gro|xdp-pass) ;; *) echo "bench/emu: EMU_BENCH_KERNEL_NAPI is gro or xdp-pass" >&2; exit 2 ;; esac
for s in $sources; do
  case $s in packet|xdp) ;; *) echo "bench/emu: EMU_BENCH_SOURCES holds packet and/or xdp, not '$s'" >&2; exit 2 ;; esac
done
# Loads the compiled image into the BAR map the way fibnicd writes (the XDP test's loader).
bar_tool="$build/tests/emu/emu_xdp_bar_tool"
pfx=${EMU_BENCH_NS:-emu-b}
parts=${EMU_BENCH_PARTS:-rate convergence}
for t in "$build/bin/fibnic-emu" "$build/bin/fibnic-compile" "$blast" "$gen" "$bar_tool" "$build/emu/xdp/xdp_pass.bpf.o"; do
  [ -e "$t" ] || { echo "bench/emu: $t not built (scripts/build.sh release)" >&2; exit 1; }
done
command -v ethtool >/dev/null || { echo "bench/emu: needs ethtool (GRO on the receiving veths)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "bench/emu: needs root (network namespaces)" >&2; exit 1; }
dir=$(mktemp -d /tmp/emu-bench.XXXXXX)
emu_pid=
bpffs=
del_ns() { for n in src dst kern card host; do ip netns del "$pfx-$n" 2>/dev/null || true; done; }
stop_emu() {
  if [ -n "$emu_pid" ]; then kill "$emu_pid" 2>/dev/null || true; wait "$emu_pid" 2>/dev/null || true; fi
  emu_pid=
}
cleanup() {
  stop_emu
  del_ns
  if [ -n "$bpffs" ]; then umount "$bpffs" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
del_ns
ns() { local n=$1; shift; ip netns exec "$pfx-$n" "$@"; }
link() {  # link NS_A IF_A MAC_A NS_B IF_B MAC_B
  ip link add "$2" netns "$pfx-$1" address "$3" type veth peer name "$5" netns "$pfx-$4" address "$6"
  ns "$1" ip link set "$2" up
  ns "$4" ip link set "$5" up
}
for n in src dst kern card host; do ip netns add "$pfx-$n"; ns $n ip link set lo up; done
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
bpffs="$dir/bpffs"
mkdir -p "$bpffs"
mount -t bpf bpf "$bpffs" || { echo "bench/emu: cannot mount a bpffs for the XDP mode's BAR map" >&2; exit 1; }
"$bar_tool" load "$dir/bar0.img" "$bpffs/bar0"
# What a source needs at the receiving end of its first veth (see the header):
# the kernel's ki and, outside native mode, the card's w0 (native mode's
# emulator turns GRO off there and its program gives the NAPI).
gro() { ns "$1" ethtool -K "$2" gro "$3" >/dev/null; }
kernel_for() {  # kernel_for packet|xdp
  ns kern ip link set dev ki xdpdrv off
  gro kern ki off
  if [ "$1" = xdp ]; then
    case $kernel_napi in
      gro) gro kern ki on ;;
      xdp-pass) ns kern ip link set dev ki xdpdrv obj "$build/emu/xdp/xdp_pass.bpf.o" sec xdp ;;
    esac
  fi
}
start_emu() {  # start_emu packet|xdp user|xdp|xdp-native
  local src=$1; shift
  local args=(--bar "$dir/bar0.img")
  ns dst ip link set dev dc xdpdrv off
  if [ "$src" = xdp ] && [ "$1" != xdp-native ]; then gro card w0 on; else gro card w0 off; fi
  case $1 in
    xdp) args=(--xdp --bar "$bpffs/bar0") ;;
    xdp-native) args=(--xdp-native --bar "$bpffs/bar0")
                ns dst ip link set dev dc xdpdrv obj "$build/emu/xdp/xdp_pass.bpf.o" sec xdp ;;
  esac
  # The log is removed first: the background child truncates it only when it
  # runs, and until then the wait below would read the last emulator's.
  rm -f "$dir/emu.log"
  # Not through ns(): a function run in the background is a subshell, and
  # killing $! would leave the emulator running.
  ip netns exec "$pfx-card" "$build/bin/fibnic-emu" "${args[@]}" --port 0=w0 --host 0=e0 --port 1=w1 --host 1=e1 \
    >"$dir/emu.log" 2>&1 &
  emu_pid=$!
  # A loaded machine can take seconds to set up the rings.
  for _ in $(seq 200); do grep -qs forwarding "$dir/emu.log" && break; sleep 0.1; done
  grep -qs forwarding "$dir/emu.log" || { echo "bench/emu: fibnic-emu ($1) did not start within 20 s:" >&2; cat "$dir/emu.log" >&2; exit 1; }
  sleep 0.2
}

rx() { ns dst cat "/sys/class/net/$1/statistics/rx_packets"; }
measure() {  # measure packet|xdp SRC_IF DST_MAC DST_IF BYTES → "offered_pps forwarded_pps"
  local before after sent tool=$blast
  [ "$1" = xdp ] && tool=$gen
  before=$(rx "$4")
  sent=$(ns src "$tool" "$2" "$3" 02:00:00:00:a0:0f 198.51.100.7 "$5" "$secs")
  sleep 0.2
  after=$(rx "$4")
  echo "$((sent / secs)) $(((after - before) / secs))"
}
# Each round measures, per source, the kernel and then each mode, one after
# the other, so a load that comes and goes from other jobs touches every
# path; with several rounds the summary gives each path's median and the
# ratio of the medians, per source.
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
ratio() { awk -v e="$1" -v k="$2" 'BEGIN { printf "%.2f", k ? e / k : 0 }'; }
if [[ " $parts " == *" rate "* ]]; then
rounds=${EMU_BENCH_ROUNDS:-1}
modes=${EMU_BENCH_MODES:-user xdp xdp-native}
sizes=${EMU_BENCH_SIZES:-64 1500}
echo "bench/emu: UDP/IPv4 from one source core (sources: $sources; kernel NAPI for xdp: $kernel_napi), ${secs}s per run, $rounds round(s); pps arriving behind the forwarder; load $(cut -d' ' -f1-3 /proc/loadavg)"
row() { printf "  %-6s %-5s %-6s %-24s %12s %12s %8s\n" "$@"; }
row bytes round source path offered_pps forwarded_pps /kernel
for bytes in $sizes; do
  for r in $(seq "$rounds"); do
    for src in $sources; do
      kernel_for "$src"
      read -r ko kf < <(measure "$src" sk 02:00:00:00:b0:00 dk "$bytes")
      echo "$kf" >>"$dir/$src.kernel.$bytes"
      row "$bytes" "$r" "$src" "kernel (ip_forward)" "$ko" "$kf" 1.00
      for mode in $modes; do
        start_emu "$src" "$mode"
        read -r eo ef < <(measure "$src" sc 02:00:00:00:c0:00 dc "$bytes")
        stop_emu
        echo "$ef" >>"$dir/$src.$mode.$bytes"
        row "$bytes" "$r" "$src" "fibnic-emu ($mode)" "$eo" "$ef" "$(ratio "$ef" "$kf")"
      done
    done
  done
done
if [ "$rounds" -gt 1 ]; then
  echo "  medians over $rounds rounds (load now $(cut -d' ' -f1-3 /proc/loadavg)):"
  for bytes in $sizes; do
    for src in $sources; do
      k=$(median <"$dir/$src.kernel.$bytes")
      row "$bytes" med "$src" "kernel (ip_forward)" "" "$k" 1.00
      for mode in $modes; do
        m=$(median <"$dir/$src.$mode.$bytes")
        row "$bytes" med "$src" "fibnic-emu ($mode)" "" "$m" "$(ratio "$m" "$k")"
      done
    done
  done
fi
fi

# The convergence figure needs the lab's namespaces; the rate's are gone first.
cleanup
trap - EXIT
[[ " $parts " == *" convergence "* ]] || exit 0
echo
python3 "$root/bench/emu/convergence.py" run --build "$build" \
  --trials "${EMU_CONV_TRIALS:-5}" --routes "${EMU_CONV_ROUTES:-100}"
