#!/usr/bin/env python3
"""bench/ipnuma's measurements (run.sh starts it): two hosts in network
namespaces joined by one veth, each with ipnumad and ipnuma-emu
(tests/ipnuma/ipnuma_hosts.py, the namespace test's set-up); each exports a
region to the other and maps 64 pages onto the other's. Then, in the same run
and namespaces, through IP-NUMA and through sockets between the same two
addresses' hosts: the 4-byte ping-pong and the write rate at 64 B and 4 KiB.

  bench.py BUILD_DIR   (root)
"""
import json
import os
import signal
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "ipnuma"))
from ipnuma_hosts import MGMT_IP, NIC_IP, POOL_BASE, RETRANSMITS, TwoHosts, counter  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
BENCH = os.path.join(BUILD, "bench", "ipnuma", "ipnuma_bench")
N = int(os.environ.get("IPNUMA_BENCH_N", "1000000"))
WRITES = int(os.environ.get("IPNUMA_BENCH_WRITES", "100000"))
WAIT = os.environ.get("IPNUMA_BENCH_WAIT", "spin")
EMU_ARGS = os.environ.get("IPNUMA_BENCH_EMU_ARGS", "").split()
PAGES = 64
EXPORT_OFF, EXPORT_LEN = 0x10000, PAGES * 4096  # each host's receive buffer inside its pool
SOCK_PORT = 5201


def sigterm(*_):
    raise KeyboardInterrupt


def pair(hosts, server, client):
    """Runs server in B (it says "ready" first), then client in A; returns
    the client's JSON line."""
    srv = subprocess.Popen(["ip", "netns", "exec", hosts.ns["b"], BENCH, *server], stdout=subprocess.PIPE, text=True)
    hosts.track("bench-" + server[0], srv)
    line = srv.stdout.readline().strip()
    if line != "ready":
        raise RuntimeError(f"{' '.join(server)}: said {line!r}, not ready")
    cli = subprocess.run(["ip", "netns", "exec", hosts.ns["a"], BENCH, *client], capture_output=True, text=True)
    if cli.returncode != 0:
        raise RuntimeError(f"{' '.join(client)}: exit {cli.returncode}: {cli.stderr.strip()}")
    if srv.wait(60) != 0:
        raise RuntimeError(f"{' '.join(server)}: exit {srv.returncode}")
    return json.loads(cli.stdout)


def setup(hosts):
    hosts.setup_network()
    hosts.prepare_files()
    for h in ("a", "b"):
        peer = "b" if h == "a" else "a"
        # 1 KiB packets (a 1500-byte MTU's largest): a 4 KiB write is 4 packets, not 64.
        hosts.write_config(h, f"  - {{name: rx, base: {POOL_BASE[h] + EXPORT_OFF:#x}, length: {EXPORT_LEN:#x}, "
                              f"allow: {NIC_IP[peer]}/32}}\n", local_extra=", max_payload: 1024")
        hosts.start_ipnumad(h)
    hosts.start_emus(*EMU_ARGS)
    for h in ("a", "b"):
        hosts.wait_api(h)
    for h in ("a", "b"):
        hosts.map(h, "to-peer", "rx", 0, PAGES)


def main():
    if os.geteuid() != 0:
        print("bench/ipnuma: needs root (network namespaces, AF_PACKET)", file=sys.stderr)
        return 1
    signal.signal(signal.SIGTERM, sigterm)
    hosts = TwoHosts(os.path.join(BUILD, "bin"), "ipb", wire="veth", pages=PAGES)
    try:
        setup(hosts)
        return measure(hosts)
    except Exception as e:  # noqa: BLE001 - the bench's verdict, with the logs
        print(f"bench/ipnuma: FAIL: {e}", flush=True)
        hosts.dump_logs()
        return 1
    finally:
        hosts.close()


def measure(hosts):
    a_pages, b_pages = hosts.path("a.pages"), hosts.path("b.pages")
    a_pool, b_pool = hosts.path("a.pool"), hosts.path("b.pool")
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print(f"bench/ipnuma: {os.cpu_count()} cores, load {load}; namespaces {hosts.ns['a']} {hosts.ns['b']} on one veth; "
          f"N = {N} round trips, {WRITES} writes per rate; IP-NUMA 1 KiB packets, ping-pong wait: {WAIT}", flush=True)
    retx0 = counter(hosts.bar("a"), RETRANSMITS) + counter(hosts.bar("b"), RETRANSMITS)
    rtt = {}
    rtt["IP-NUMA (ipnuma-emu)"] = pair(hosts, ["ipnuma-pong", b_pages, "0", b_pool, str(EXPORT_OFF), str(N), WAIT],
                                       ["ipnuma-ping", a_pages, "0", a_pool, str(EXPORT_OFF), str(N), WAIT])
    rtt["UDP sockets"] = pair(hosts, ["udp-pong", str(SOCK_PORT), str(N)], ["udp-ping", MGMT_IP["b"], str(SOCK_PORT), str(N)])
    rtt["TCP sockets (NODELAY)"] = pair(hosts, ["tcp-pong", str(SOCK_PORT), str(N)],
                                        ["tcp-ping", MGMT_IP["b"], str(SOCK_PORT), str(N)])
    udp = rtt["UDP sockets"]["median_us"]
    print("\n4-byte ping-pong round trip (µs)")
    print(f"  {'path':<24} {'median':>9} {'mean':>9} {'p99':>9} {'min':>8} {'median/UDP':>11}")
    for name, r in rtt.items():
        print(f"  {name:<24} {r['median_us']:>9.2f} {r['mean_us']:>9.2f} {r['p99_us']:>9.2f} {r['min_us']:>8.2f} "
              f"{r['median_us'] / udp:>11.2f}")
    ratio = rtt["IP-NUMA (ipnuma-emu)"]["median_us"] / udp
    print(f"  goal: IP-NUMA ≤ 0.5 × UDP sockets (the thesis's FPGA: 0.1×): {ratio:.2f}× — "
          f"{'met' if ratio <= 0.5 else 'missed'}")

    print("\nwrite rate, one writer, each write in the peer's memory when the rate ends")
    print(f"  {'size':>6} {'path':<24} {'MB/s':>9} {'writes/s':>10} {'/TCP':>6}")
    for size in (64, 4096):
        tcp = pair(hosts, ["tcp-sink", str(SOCK_PORT)], ["tcp-stream", MGMT_IP["b"], str(SOCK_PORT), str(size),
                                                         str(size * WRITES)])
        ip = run_in_a(hosts, ["ipnuma-stream", a_pages, "0", str(EXPORT_LEN), str(size), str(size * WRITES)])
        for name, r in (("IP-NUMA (ipnuma-emu)", ip), ("TCP stream", tcp)):
            print(f"  {size:>6} {name:<24} {r['mb_per_s']:>9.1f} {r['writes_per_s']:>10.0f} "
                  f"{r['mb_per_s'] / tcp['mb_per_s']:>6.2f}")
    retx = counter(hosts.bar("a"), RETRANSMITS) + counter(hosts.bar("b"), RETRANSMITS) - retx0
    print(f"\nIP-NUMA retransmissions during the run: {retx}")
    return 0


def run_in_a(hosts, args):
    r = subprocess.run(["ip", "netns", "exec", hosts.ns["a"], BENCH, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
