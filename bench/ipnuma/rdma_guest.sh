#!/bin/bash
# The RDMA WRITE peer of bench/ipnuma, run inside tests/vm's guest (Debian
# 12's 6.1 kernel, which has rdma_rxe; this host's kernel is built without
# InfiniBand): two soft-RoCE devices on the two ends of one veth, perftest's
# ib_write_lat (4 bytes) between them, and ipnuma_bench's UDP ping-pong
# between the same two addresses for the ratio measured in the same guest.
#   rdma_guest.sh BUILD_DIR N    (started by bench.py through tests/vm/run.sh)
# rxe in 6.1 routes and receives in the initial namespace only, so both ends
# live there; policy routing sends a local process's packets for the other
# end's address out of the veth instead of through lo, so every packet
# crosses the veth and arrives on the rxe device's own interface.
set -euo pipefail
bench=$1/bench/ipnuma/ipnuma_bench n=$2
ip link add ra type veth peer name rb
ip addr add 10.77.0.1/24 dev ra
ip addr add 10.77.0.2/24 dev rb
for i in all ra rb; do sysctl -qw "net.ipv4.conf.$i.accept_local=1" "net.ipv4.conf.$i.rp_filter=0"; done
ip link set ra up
ip link set rb up
ip route add 10.77.0.1 dev rb table 100
ip route add 10.77.0.2 dev ra table 101
ip rule add pref 10 iif lo to 10.77.0.1 lookup 100
ip rule add pref 11 iif lo to 10.77.0.2 lookup 101
ip rule add pref 100 lookup local
ip rule del pref 0
rdma link add rxa type rxe netdev ra
rdma link add rxb type rxe netdev rb
before=$(cat /sys/class/net/ra/statistics/rx_packets)
ib_write_lat -d rxa -s 4 -n "$n" -F >/tmp/rdma-server.log 2>&1 &
sleep 2
# perftest prints half the round trip; the line of 4-byte results:
# bytes iterations t_min t_max t_typical t_avg t_stdev p99 p99.9 (µs)
ib_write_lat -d rxb -s 4 -n "$n" -F 10.77.0.1 | awk '$1 == 4 && NF >= 9 { print "RESULT rdma", $3, $5, $6, $8 }'
wait
echo "RESULT rdma_packets_on_veth $(($(cat /sys/class/net/ra/statistics/rx_packets) - before))"
"$bench" udp-pong 5201 "$n" >/dev/null &
sleep 1
echo "RESULT udp $("$bench" udp-ping 10.77.0.1 5201 "$n")"
wait
