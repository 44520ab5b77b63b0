#!/usr/bin/env bash
# The FIBNIC lab: a router whose four wire ports belong to a software FIBNIC
# (fibnic-emu), with real FRR (zebra -M dplane_fpm_nl + bgpd) — or BIRD 2
# (--router bird) — and fibnicd on its host side, three BGP peers (bird2)
# announcing the real Internet table
# split between them (IPv4 and IPv6), and a host behind each peer whose probe
# traffic crosses the router — in the "hardware" when the FIBNIC holds the
# route, through the host kernel when it punts. Everything lives in network
# namespaces named after the instance (LAB_NAME, default "lab": lab-r,
# lab-emu, lab-p0, lab-h0, ...); nothing touches the host's own network.
# Each instance owns only what it made: the namespaces it created and the
# processes it started, recorded in its LAB_DIR (default /run/fibnic-LAB_NAME),
# and `down` removes those alone — so two labs with different names (a test
# beside a bench, or beside your own) run side by side.
#
#   lab/lab.sh [run] [--routes N] [--code-bits 2|4] [--web-port P] [--router frr|bird]
#        up, wait for Ctrl-C, print counters every few seconds, tear down
#   lab/lab.sh up [...]      build it and return (state in $LAB_DIR)
#   lab/lab.sh down          tear it down
#   lab/lab.sh status        counters and convergence, once
#   lab/lab.sh peer start|stop K   start or stop BGP peer K (bird2)
#   lab/lab.sh restart fibnicd|zebra|bgpd|bird [--kill]
#                            stop a daemon (SIGTERM, or SIGKILL: a crash) and
#                            start it again as up did, its log appended (zebra:
#                            bgpd restarts with it, as under watchfrr; bird:
#                            the router's BIRD, with --router bird)
#   --router frr|bird        the router's routing daemon. frr (the default):
#                            zebra -M dplane_fpm_nl + bgpd, fibnicd on FPM and
#                            the kernel. bird: BIRD 2 with the same BGP
#                            sessions (both families), its kernel protocol
#                            writing the routes into the router's main table
#                            (proto bird), fibnicd on the kernel alone (FPM
#                            off; bench/bird)
#   LAB_NAME=NAME            the instance (letters, digits, '-'; default lab,
#                            or the last part of LAB_DIR without "fibnic-")
#   --wire card|direct       card (the default once build/bin/fibnic-emu exists):
#                            the wires cross the software FIBNIC; direct: the
#                            peers' links end on the router's interfaces
#                            (control-plane benches, bench/frr)
#
# Topology (k = 0, 1, 2):
#   lab-h<k> (198.18.k.2, fd10:k::2)
#     └ lab-p<k> bird2 AS 6510k, 10.k.0.1 / fd00:k::1 ── wire w<k> ─┐
#                                                              lab-emu: fibnic-emu
#                                      host-facing e<k> ─── h<k> lab-r: kernel, FRR (or BIRD), fibnicd
# Port k of the FIBNIC is the wire w<k>; its host side is h<k> in lab-r
# (10.k.0.2, fd00:k::2), whose MAC is the port's MAC.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${FIBNIC_BIN:-$root/build/bin}
if [ -z "${LAB_NAME:-}" ]; then
  LAB_NAME=lab
  [ -n "${LAB_DIR:-}" ] && LAB_NAME=$(basename "$LAB_DIR") && LAB_NAME=${LAB_NAME#fibnic-}
fi
[[ "$LAB_NAME" =~ ^[a-zA-Z0-9][a-zA-Z0-9-]{0,23}$ ]] || {
  echo "lab.sh: LAB_NAME '$LAB_NAME': letters, digits and '-', at most 24" >&2; exit 2; }
LAB_DIR=${LAB_DIR:-/run/fibnic-$LAB_NAME}
peers=3
routes=0
# 4-bit codes (15 next-hops): each peer is a dual-stack router whose IPv4 and
# IPv6 gateways are separate next-hops; with 2-bit codes the three IPv4
# gateways would take every code.
code_bits=4
web_port=8080
# With fibnic-emu built, the wire ports belong to the software FIBNIC; until
# then the peers' links end on the router's own interfaces and the host
# kernel forwards the packets (the device's tables are compiled and shown
# all the same).
wire=direct
[ -x "$bin/fibnic-emu" ] && wire=card
router=frr

cmd=run
case "${1:-}" in run | up | down | status | peer | restart) cmd=$1; shift ;; esac
if [ "$cmd" = peer ]; then
  peer_action=${1:-}; peer_k=${2:-}
  shift 2 || true
fi
restart_signal=TERM
if [ "$cmd" = restart ]; then
  restart_what=${1:-}
  shift || true
  [ "${1:-}" = --kill ] && restart_signal=KILL && shift
fi
while [ $# -gt 0 ]; do
  case "$1" in
    --routes) routes=$2; shift 2 ;;
    --code-bits) code_bits=$2; shift 2 ;;
    --web-port) web_port=$2; shift 2 ;;
    --wire) wire=$2; shift 2 ;;
    --router) router=$2; shift 2 ;;
    *) echo "lab.sh: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
case "$code_bits" in 2 | 4) ;; *) echo "lab.sh: --code-bits must be 2 or 4" >&2; exit 2 ;; esac
case "$wire" in card | direct) ;; *) echo "lab.sh: --wire must be card or direct" >&2; exit 2 ;; esac
case "$router" in frr | bird) ;; *) echo "lab.sh: --router must be frr or bird" >&2; exit 2 ;; esac
[[ "$routes" =~ ^[0-9]+$ ]] || { echo "lab.sh: --routes must be a number (0 = the whole table)" >&2; exit 2; }

say() { echo "lab: $*"; }
ns() { local n=$1; shift; ip netns exec "$n" "$@"; }
vtysh_r() { vtysh --vty_socket "$LAB_DIR/frr" "$@"; }

# What this instance made, recorded as it made it: $LAB_DIR/netns (one
# namespace a line) and $LAB_DIR/procs ("NAME PID START": START is the
# process's start time, so a pid the system gave to someone else since is
# never killed).
start_time() { awk '{print $22}' "/proc/$1/stat" 2>/dev/null; }
ours() {  # ours PID START: still the process this lab started
  [ -n "$2" ] && [ "$(start_time "$1")" = "$2" ]
}
add_ns() {
  if ip netns list | awk '{print $1}' | grep -qxF "$1"; then
    echo "lab: a namespace '$1' exists and is not this lab's (another lab named '$LAB_NAME'? set LAB_NAME)" >&2
    exit 1
  fi
  echo "$1" >>"$LAB_DIR/netns"
  ip netns add "$1"
}

# Whether the lab recorded in $LAB_DIR still runs: a process it started, or
# a namespace it made.
live() {
  local name pid start n
  if [ -f "$LAB_DIR/procs" ]; then
    while read -r name pid start; do ours "$pid" "$start" && return 0; done <"$LAB_DIR/procs"
  fi
  if [ -f "$LAB_DIR/netns" ]; then
    while read -r n; do ip netns list | awk '{print $1}' | grep -qxF "$n" && return 0; done <"$LAB_DIR/netns"
  fi
  return 1
}

down() {
  [ -d "$LAB_DIR" ] || return 0
  local name pid start alive=() n
  if [ -f "$LAB_DIR/procs" ]; then
    while read -r name pid start; do
      ours "$pid" "$start" && alive+=("$pid")
    done <"$LAB_DIR/procs"
  fi
  [ ${#alive[@]} -gt 0 ] && kill "${alive[@]}" 2>/dev/null || true
  # zebra removing a full table from the kernel takes a while: wait, then force.
  for _ in $(seq 100); do
    [ ${#alive[@]} -gt 0 ] && kill -0 "${alive[@]}" 2>/dev/null || break
    sleep 0.1
  done
  [ ${#alive[@]} -gt 0 ] && kill -KILL "${alive[@]}" 2>/dev/null || true
  if [ -f "$LAB_DIR/netns" ]; then
    while read -r n; do
      # Whatever still runs inside this lab's namespaces is this lab's
      # (children of the daemons it started, a relay's connections).
      local inside
      inside=$(ip netns pids "$n" 2>/dev/null || true)
      [ -n "$inside" ] && kill -KILL $inside 2>/dev/null || true
    done <"$LAB_DIR/netns"
    sleep 0.3
    while read -r n; do ip netns del "$n" 2>/dev/null || true; done <"$LAB_DIR/netns"
  fi
  rm -rf "$LAB_DIR"
}

# Starts a command in the background, its pid in $LAB_DIR/NAME.pid, output
# appended to NAME.log (a restarted daemon's log follows its first life's).
spawn() {
  local name=$1; shift
  "$@" >>"$LAB_DIR/$name.log" 2>&1 &
  echo $! >"$LAB_DIR/$name.pid"
  echo "$name $! $(start_time $!)" >>"$LAB_DIR/procs"
}

wait_for() {  # wait_for SECONDS WHAT COMMAND...
  local limit=$1 what=$2; shift 2
  for _ in $(seq $((limit * 10))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "lab: $what did not come up within ${limit}s; logs in $LAB_DIR" >&2
  return 1
}

no_offload() {  # no_offload NAMESPACE INTERFACE: checksums and segments in software
  ns "$1" ethtool -K "$2" tx off tso off gso off >/dev/null
}

check_tools() {
  local missing=()
  for t in "$bin/fibnicd" "$bin/fibnicctl"; do [ -x "$t" ] || missing+=("$t"); done
  [ "$wire" = card ] && { [ -x "$bin/fibnic-emu" ] || missing+=("$bin/fibnic-emu"); command -v ethtool >/dev/null || missing+=(ethtool); }
  local daemons=(/usr/lib/frr/zebra /usr/lib/frr/bgpd)
  [ "$router" = bird ] && daemons=()
  for t in "${daemons[@]}" bird birdc socat; do command -v "$t" >/dev/null || missing+=("$t"); done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "lab: missing ${missing[*]} (run scripts/run.sh, which installs and builds everything)" >&2
    exit 1
  fi
}

# The real table split between the peers the way make-routes assigns gateways:
# gateway k is peer k.
split_table() {
  local v4=() v6=()
  # --routes N: the first N IPv4 prefixes and N/5 IPv6 ones (the real table's mix).
  [ "$routes" -gt 0 ] && v4=(--limit "$routes") && v6=(--limit $((routes / 5 + 1)))
  for f in 4 6; do
    local lim=("${v4[@]}")
    [ $f = 6 ] && lim=("${v6[@]}")
    python3 "$root/tools/make-routes" "$root/data/full-table-2024-03.prefixes.gz" --gateways $peers \
      --family $f "${lim[@]}" --out "$LAB_DIR/table$f.txt" 2>/dev/null
  done
  cat "$LAB_DIR/table4.txt" "$LAB_DIR/table6.txt" >"$LAB_DIR/table.txt"
  for k in $(seq 0 $((peers - 1))); do
    local gw6="fd00:$k::1"
    [ "$k" = 0 ] && gw6="fd00::1"  # as make-routes spells it
    awk -v gw4="10.$k.0.1" -v gw6="$gw6" \
      '$2 == gw4 { print "route " $1 " unreachable;" > "'"$LAB_DIR"'/p'"$k"'-v4.conf" }
       $2 == gw6 { print "route " $1 " unreachable;" > "'"$LAB_DIR"'/p'"$k"'-v6.conf" }' "$LAB_DIR/table.txt"
    touch "$LAB_DIR/p$k-v4.conf" "$LAB_DIR/p$k-v6.conf"
  done
}

peer_conf() {  # peer_conf k
  local k=$1
  cat <<BIRD
router id 10.$k.0.1;
log "$LAB_DIR/p$k-bird.log" { warning, error };
protocol device {}
# The host's LAN on its own (birdc disable lan4 withdraws just that prefix).
protocol static lan4 {
  ipv4;
  route 198.18.$k.0/24 unreachable;
}
protocol static lan6 {
  ipv6;
  route fd10:$k::/64 unreachable;
}
protocol static s4 {
  ipv4;
  include "$LAB_DIR/p$k-v4.conf";
}
protocol static s6 {
  ipv6;
  include "$LAB_DIR/p$k-v6.conf";
}
protocol bgp router4 {
  local 10.$k.0.1 as $((65100 + k));
  neighbor 10.$k.0.2 as 65000;
  connect retry time 1;
  ipv4 { import none; export all; };
}
protocol bgp router6 {
  local fd00:$k::1 as $((65100 + k));
  neighbor fd00:$k::2 as 65000;
  connect retry time 1;
  ipv6 { import none; export all; };
}
BIRD
}

router_conf() {
  echo "hostname lab-router"
  echo "fpm address 127.0.0.1 port 2620"
  echo "router bgp 65000"
  echo " bgp router-id 10.255.0.1"
  echo " no bgp ebgp-requires-policy"
  echo " no bgp default ipv4-unicast"
  for k in $(seq 0 $((peers - 1))); do
    echo " neighbor 10.$k.0.1 remote-as $((65100 + k))"
    echo " neighbor fd00:$k::1 remote-as $((65100 + k))"
    echo " neighbor 10.$k.0.1 timers connect 1"
    echo " neighbor fd00:$k::1 timers connect 1"
  done
  echo " address-family ipv4 unicast"
  for k in $(seq 0 $((peers - 1))); do echo "  neighbor 10.$k.0.1 activate"; done
  echo " exit-address-family"
  echo " address-family ipv6 unicast"
  for k in $(seq 0 $((peers - 1))); do echo "  neighbor fd00:$k::1 activate"; done
  echo " exit-address-family"
}

# --router bird: BIRD 2 on the router, the same sessions as router_conf's
# (AS 65000, router id 10.255.0.1; one session a family a peer, each
# carrying its own family). The kernel protocols export every best route
# into the main table (proto bird, which fibnicd's kernel source reads like
# any other); `merge paths` installs equal routes from several peers as one
# multipath route, as zebra does (the split table gives each prefix one peer).
router_bird_conf() {
  cat <<BIRD
router id 10.255.0.1;
log stderr { info, remote, warning, error, auth, fatal, bug };
protocol device {}
protocol kernel kernel4 {
  ipv4 { import none; export all; };
  merge paths yes;
}
protocol kernel kernel6 {
  ipv6 { import none; export all; };
  merge paths yes;
}
BIRD
  for k in $(seq 0 $((peers - 1))); do
    cat <<BIRD
protocol bgp peer${k}v4 {
  local 10.$k.0.2 as 65000;
  neighbor 10.$k.0.1 as $((65100 + k));
  connect retry time 1;
  ipv4 { import all; export none; };
}
protocol bgp peer${k}v6 {
  local fd00:$k::2 as 65000;
  neighbor fd00:$k::1 as $((65100 + k));
  connect retry time 1;
  ipv6 { import all; export none; };
}
BIRD
  done
}

fibnicd_conf() {
  if [ "$router" = bird ]; then
    echo "# The lab's fibnicd: the emulated FIBNIC's BAR file, the kernel alone (BIRD's kernel protocol writes the BGP routes; no FPM)."
  else
    echo "# The lab's fibnicd: the emulated FIBNIC's BAR file, FRR over FPM plus the kernel."
  fi
  cat <<YAML
device: {backend: file, path: $LAB_DIR/bar0.img, code_bits: $code_bits}
ports:
YAML
  for k in $(seq 0 $((peers - 1))); do echo "  - {interface: h$k, port: $k}"; done
  echo "sources:"
  echo "  kernel: {enabled: true, tables: [255, 254]}"
  if [ "$router" = bird ]; then
    echo "  fpm: {enabled: false}"
  else
    echo "  fpm: {enabled: true, listen: 127.0.0.1:2620}"
  fi
  echo "web: {listen: 127.0.0.1:8080}"
}

start_fibnicd() {
  local lines=0
  [ -f "$LAB_DIR/fibnicd.log" ] && lines=$(wc -l <"$LAB_DIR/fibnicd.log")
  spawn fibnicd ip netns exec $LAB_NAME-r "$bin/fibnicd" --config "$LAB_DIR/fibnicd.yaml"
  wait_for 180 "fibnicd" sh -c "tail -n +$((lines + 1)) '$LAB_DIR/fibnicd.log' | grep -q 'ready:'"
}

start_zebra() {
  rm -f "$LAB_DIR/frr/zebra.vty"
  spawn zebra ip netns exec $LAB_NAME-r /usr/lib/frr/zebra -f "$LAB_DIR/frr/frr.conf" -i "$LAB_DIR/frr/zebra.pid" \
    -z "$LAB_DIR/frr/zserv.api" --vty_socket "$LAB_DIR/frr" -u frr -g frr -M dplane_fpm_nl
  wait_for 15 "zebra" test -S "$LAB_DIR/frr/zebra.vty"
}

start_bgpd() {
  rm -f "$LAB_DIR/frr/bgpd.vty"
  spawn bgpd ip netns exec $LAB_NAME-r /usr/lib/frr/bgpd -f "$LAB_DIR/frr/frr.conf" -i "$LAB_DIR/frr/bgpd.pid" \
    -z "$LAB_DIR/frr/zserv.api" --vty_socket "$LAB_DIR/frr" -u frr -g frr -P 0
  wait_for 15 "bgpd" test -S "$LAB_DIR/frr/bgpd.vty"
}

# The router's BIRD (--router bird): in the foreground, its log (stderr) in bird.log.
start_bird() {
  rm -f "$LAB_DIR/bird.ctl"
  spawn bird ip netns exec $LAB_NAME-r bird -f -c "$LAB_DIR/bird.conf" -s "$LAB_DIR/bird.ctl"
  wait_for 15 "bird" test -S "$LAB_DIR/bird.ctl"
}

stop_daemon() {  # stop_daemon NAME SIGNAL: and wait for it to be gone
  local pid
  pid=$(cat "$LAB_DIR/$1.pid")
  kill -s "$2" "$pid"
  # bgpd leaving a full table behind takes over 30 s on a loaded machine.
  for _ in $(seq 3000); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && { echo "lab: $1 ($pid) did not stop within 300 s" >&2; exit 1; }
  return 0
}

# restart fibnicd|zebra|bgpd|bird. zebra: as watchfrr does when zebra fails, every
# FRR daemon restarts (bgpd on its own does not give a new zebra back all of
# its routes): zebra stops (restart_signal), then bgpd, zebra starts, then bgpd.
# bird: the router's BIRD (--router bird); SIGTERM removes its routes from the
# kernel as it stops, SIGKILL leaves them for the new BIRD's first scan.
restart() {
  case "$1" in fibnicd | zebra | bgpd | bird) ;; *) echo "lab.sh: restart fibnicd|zebra|bgpd|bird [--kill]" >&2; exit 2 ;; esac
  [ -f "$LAB_DIR/$1.pid" ] || { echo "lab.sh: this lab runs no $1 (zebra and bgpd: --router frr; bird: --router bird)" >&2; exit 2; }
  stop_daemon "$1" "$restart_signal"
  [ "$1" = zebra ] && stop_daemon bgpd TERM
  "start_$1"
  [ "$1" = zebra ] && start_bgpd
  return 0
}

up() {
  check_tools
  [ "$(id -u)" -eq 0 ] || { echo "lab: needs root (network namespaces)" >&2; exit 1; }
  # A lab already running under this name is left alone (`up` never takes
  # down a lab it did not make); what a dead one left behind is cleared.
  if live; then
    echo "lab: '$LAB_NAME' is up ($LAB_DIR): take it down first (lab/lab.sh down) or set another LAB_NAME" >&2
    exit 1
  fi
  down
  if [ "$router" = frr ]; then
    mkdir -p "$LAB_DIR/frr"
    chown frr:frr "$LAB_DIR/frr"
  else
    mkdir -p "$LAB_DIR"
  fi
  : >"$LAB_DIR/netns"
  : >"$LAB_DIR/procs"
  say "splitting the real table between $peers peers${routes:+ (limit $routes)}"
  split_table

  add_ns $LAB_NAME-r
  ns $LAB_NAME-r ip link set lo up
  if [ "$wire" = card ]; then
    add_ns $LAB_NAME-emu
    ns $LAB_NAME-emu ip link set lo up
    # The card's namespace forwards nothing itself: no addresses, no IPv6.
    ns $LAB_NAME-emu sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  fi
  ns $LAB_NAME-r sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
  for k in $(seq 0 $((peers - 1))); do
    add_ns $LAB_NAME-p$k
    add_ns $LAB_NAME-h$k
    for n in $LAB_NAME-p$k $LAB_NAME-h$k; do ns $n ip link set lo up; done
    if [ "$wire" = card ]; then
      # host side of port k: h<k> (router) <-> e<k> (card); wire k: w<k> (card) <-> rt (peer k)
      ip link add h$k netns $LAB_NAME-r type veth peer name e$k netns $LAB_NAME-emu
      ns $LAB_NAME-emu ip link set e$k up
      ip link add w$k netns $LAB_NAME-emu type veth peer name rt netns $LAB_NAME-p$k
      ns $LAB_NAME-emu ip link set w$k up
      # A veth hands its peer frames whose TCP/UDP checksum is left to
      # "hardware" (CHECKSUM_PARTIAL) and TCP segments up to 64 KiB (TSO); the
      # card copies bytes through packet sockets, so every sender computes its
      # checksums and segments itself, like in front of a real wire.
      no_offload $LAB_NAME-r h$k
      no_offload $LAB_NAME-p$k rt
    else
      ip link add h$k netns $LAB_NAME-r type veth peer name rt netns $LAB_NAME-p$k
    fi
    ns $LAB_NAME-r ip link set h$k address 02:fb:00:00:00:0$k up
    ns $LAB_NAME-r ip addr add 10.$k.0.2/24 dev h$k
    ns $LAB_NAME-r ip addr add fd00:$k::2/64 dev h$k nodad
    ns $LAB_NAME-p$k ip link set rt address 02:be:00:00:00:0$k up
    ns $LAB_NAME-p$k ip addr add 10.$k.0.1/24 dev rt
    ns $LAB_NAME-p$k ip addr add fd00:$k::1/64 dev rt nodad
    # peer k <-> its host
    ip link add lan netns $LAB_NAME-p$k type veth peer name eth0 netns $LAB_NAME-h$k
    ns $LAB_NAME-p$k ip link set lan up
    ns $LAB_NAME-p$k ip addr add 198.18.$k.1/24 dev lan
    ns $LAB_NAME-p$k ip addr add fd10:$k::1/64 dev lan nodad
    ns $LAB_NAME-p$k sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
    ns $LAB_NAME-p$k ip route add default via 10.$k.0.2
    ns $LAB_NAME-p$k ip -6 route add default via fd00:$k::2
    ns $LAB_NAME-h$k ip link set eth0 up
    if [ "$wire" = card ]; then no_offload $LAB_NAME-h$k eth0; no_offload $LAB_NAME-p$k lan; fi
    ns $LAB_NAME-h$k ip addr add 198.18.$k.2/24 dev eth0
    ns $LAB_NAME-h$k ip addr add fd10:$k::2/64 dev eth0 nodad
    ns $LAB_NAME-h$k ip route add default via 198.18.$k.1
    ns $LAB_NAME-h$k ip -6 route add default via fd10:$k::1
  done

  say "starting fibnicd (file-backed FIBNIC at $LAB_DIR/bar0.img)"
  fibnicd_conf >"$LAB_DIR/fibnicd.yaml"
  start_fibnicd

  if [ "$wire" = card ]; then
    say "starting fibnic-emu on the wire ports"
    local ports=()
    for k in $(seq 0 $((peers - 1))); do ports+=(--port "$k=w$k" --host "$k=e$k"); done
    spawn emu ip netns exec $LAB_NAME-emu "$bin/fibnic-emu" --bar "$LAB_DIR/bar0.img" "${ports[@]}"
    wait_for 10 "fibnic-emu" grep -q "forwarding" "$LAB_DIR/emu.log"
  fi

  if [ "$router" = frr ]; then
    say "starting FRR (zebra -M dplane_fpm_nl, bgpd) on the router"
    router_conf >"$LAB_DIR/frr/frr.conf"
    chown frr:frr "$LAB_DIR/frr/frr.conf"
    start_zebra
    start_bgpd
  else
    say "starting BIRD on the router (BGP to the peers, kernel protocols into the main table)"
    router_bird_conf >"$LAB_DIR/bird.conf"
    start_bird
  fi

  for k in $(seq 0 $((peers - 1))); do peer_conf $k >"$LAB_DIR/p$k-bird.conf"; done
  if [ "${LAB_START_PEERS:-1}" = 1 ]; then
    say "starting the BGP peers (bird2)"
    for k in $(seq 0 $((peers - 1))); do peer start $k; done
  fi

  say "probes: $LAB_NAME-h0 pings $LAB_NAME-h1 and $LAB_NAME-h2 (IPv4 and IPv6)"
  spawn probe4 ip netns exec $LAB_NAME-h0 ping -i 0.2 -W 1 198.18.1.2
  spawn probe6 ip netns exec $LAB_NAME-h0 ping -6 -i 0.2 -W 1 fd10:2::2

  # The dashboard, reachable from this host: a loopback relay into lab-r.
  spawn web socat TCP-LISTEN:"$web_port",bind=127.0.0.1,reuseaddr,fork \
    EXEC:"ip netns exec $LAB_NAME-r socat STDIO TCP\:127.0.0.1\:8080"
  local how="packets cross the software FIBNIC (fibnic-emu)"
  [ "$wire" = direct ] && how="no card (fibnic-emu not built): the router's kernel forwards, the BAR shows what the FIBNIC would hold"
  local from="FRR (BGP from 3 peers) and the kernel" bgp="vtysh --vty_socket $LAB_DIR/frr -c 'show bgp summary'"
  [ "$router" = bird ] && from="the kernel, where BIRD's kernel protocol installs BGP from 3 peers" &&
    bgp="birdc -s $LAB_DIR/bird.ctl show protocols"
  cat <<MSG
lab: up. The FIBNIC's routes come from $from; $how.
  dashboard : http://127.0.0.1:$web_port/
  status    : $bin/fibnicctl --server 127.0.0.1:$web_port status
  a lookup  : $bin/fibnicctl --server 127.0.0.1:$web_port lookup 198.18.1.2
  BGP       : $bgp
  counters  : $([ "$LAB_NAME" = lab ] || echo "LAB_NAME=$LAB_NAME ")$0 status      (state and logs in $LAB_DIR)
  namespaces: $LAB_NAME-r (router), $LAB_NAME-p0..2 (peers), $LAB_NAME-h0..2 (hosts)$([ "$wire" = card ] && echo ", $LAB_NAME-emu (card)")
MSG
}

peer() {  # peer start|stop K
  case "$1" in
    start) spawn p$2-bird ip netns exec $LAB_NAME-p$2 bird -f -c "$LAB_DIR/p$2-bird.conf" -s "$LAB_DIR/p$2-bird.ctl" ;;
    stop) [ -f "$LAB_DIR/p$2-bird.pid" ] && kill "$(cat "$LAB_DIR/p$2-bird.pid")" && rm -f "$LAB_DIR/p$2-bird.pid" ;;
    *) echo "lab.sh: peer start|stop K" >&2; exit 2 ;;
  esac
}

status() {
  local s m
  s=$(ns $LAB_NAME-r "$bin/fibnicctl" --json status 2>/dev/null || true)
  m=$(ns $LAB_NAME-r curl -s --max-time 5 http://127.0.0.1:8080/metrics 2>/dev/null || true)
  python3 - "$s" "$m" <<'PY'
import json, re, sys
try:
    s = json.loads(sys.argv[1])
except ValueError:
    print("lab: fibnicd does not answer yet"); sys.exit(0)
for fam in ("ipv4", "ipv6"):
    r = s.get("routes", {}).get(fam, {})
    print(f"  {fam}: {r.get('total', 0)} routes, {r.get('offloaded', 0)} offloaded, "
          f"{r.get('partial', 0)} partial, {r.get('punted', 0)} punted")
ports = {}
for port, name, value in re.findall(
        r'fibnic_device_port_counter_total\{port="(\d+)",counter="(\w+)"\} (\S+)', sys.argv[2]):
    ports.setdefault(int(port), {})[name] = int(float(value))
for p, c in sorted(ports.items()):
    print(f"  port {p}: rx {c.get('rx', 0)} forwarded {c.get('forwarded', 0)} punted {c.get('punted', 0)} "
          f"drop_ttl {c.get('drop_ttl', 0)} drop_route {c.get('drop_route', 0)}")
PY
  for p in probe4 probe6; do
    [ -f "$LAB_DIR/$p.log" ] && echo "  $p: $(tail -n 1 "$LAB_DIR/$p.log")"
  done
  return 0
}

case "$cmd" in
  up) up ;;
  down) down ;;
  status) status ;;
  peer) peer "$peer_action" "$peer_k" ;;
  restart) restart "$restart_what" ;;
  run)
    up
    trap 'echo; say "tearing down"; down; exit 0' INT TERM
    while sleep 5; do status; done
    ;;
esac
