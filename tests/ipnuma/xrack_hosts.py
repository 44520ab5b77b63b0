"""Two IP-NUMA hosts in two racks joined by a router whose forwarding is done
by fibnic-emu: the thesis's picture of IP-NUMA and FIBNIC together.

  rack A (ns a)                    card (ns c)                     rack B (ns b)
  ipnumad, ipnuma-emu              fibnic-emu                      ipnumad, ipnuma-emu
  NIC 10.232.0.1  ia ──────── w0 ─┤ port 0    port 1 ├─ w1 ──────── ib  NIC 10.232.2.1
  host 10.232.1.11/23              e0           e1                      host 10.232.3.11/23
                                    │            │
                     router (ns r): h0 10.232.1.254/23, h1 10.232.3.254/23 (PORT_MAC 0/1),
                     fibnicd following the router's kernel routes (kernel source)
  management (ns m): a bridge; mgmta 10.231.0.1 (A), mgmtb 10.231.0.2 (B): the peer API

Each NIC knows only its own /23 and its gateway (the router's port), so its
PC ID entry for the peer in the other rack carries the gateway's MAC with
the peer's IP (VIA_GATEWAY); ipnumad learns that MAC from the host kernel's
neighbour table (the host pings its gateway once). The router's kernel holds
the two connected /23s and a permanent neighbour for each NIC (ipnuma-emu
answers no ARP); fibnicd compiles them into the card's BAR (NEIGH CAM), and
fibnic-emu forwards the NICs' frames port to port without the router's
kernel. The management network is a separate segment, so everything the card
forwards is IP-NUMA.

Also a lab of its own: `python3 tests/ipnuma/xrack_hosts.py BIN_DIR` (root)
brings it up with B exporting 256 KiB that A maps, prints how to use it and
tears it down on Ctrl-C (or SIGTERM).

Every namespace and work folder is named after this process's pid and a
prefix, recorded when made and removed by that record only; processes are
stopped by the handle that started them.
"""
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ipnuma_hosts import POOL_BASE, TwoHosts, in_ns, sh, stop, u64, wait_for  # noqa: E402

# A rack is a /23: the NICs in its lower /24, the router's port and the
# hosts' kernels in the upper. The card punts a whole /24 that holds a longer
# prefix with another verdict, and the router's own address is a /32 to the
# host: sharing its /24, the NICs' frames would all be punted.
NIC_IP = {"a": "10.232.0.1", "b": "10.232.2.1"}
HOST_IP = {"a": "10.232.1.11", "b": "10.232.3.11"}
GATEWAY = {"a": "10.232.1.254", "b": "10.232.3.254"}
MGMT_IP = {"a": "10.231.0.1", "b": "10.231.0.2"}
MAC = {"a": "02:00:5e:10:01:01", "b": "02:00:5e:10:02:01"}
PORT_OF = {"a": 0, "b": 1}
ROUTER_MAC = {0: "02:fb:00:00:00:00", 1: "02:fb:00:00:00:01"}

# FIBNIC BAR0 (device/fibnic_regs.h; docs/contract/FIBNIC.md): PORT_COUNTERS[p].
OFF_PORT_COUNTERS = 0x100
RX, FORWARDED, PUNTED = 0, 1, 2
TX = 5


def card_counter(bar, port, k):
    return u64(bar, OFF_PORT_COUNTERS + 64 * port + 8 * k)


def forw_datagrams(ns):
    """The router kernel's IP ForwDatagrams (/proc/net/snmp in its namespace)."""
    lines = [l.split() for l in in_ns(ns, "cat", "/proc/net/snmp").stdout.splitlines() if l.startswith("Ip:")]
    return int(lines[1][lines[0].index("ForwDatagrams")])


class XrackHosts(TwoHosts):
    def __init__(self, bin_dir, prefix, pages=64, pool_bytes=1 << 20):
        super().__init__(bin_dir, prefix, wire="veth", pages=pages, pool_bytes=pool_bytes)
        pid = os.getpid()
        self.ns_router, self.ns_card, self.ns_mgmt = f"{prefix}{pid}r", f"{prefix}{pid}c", f"{prefix}{pid}m"
        self.mgmt_if = {"a": "mgmta", "b": "mgmtb"}
        self.fib_bar = self.path("fibnic.bar")

    def missing_tools(self):
        """What this set-up cannot run without, named (never a silent skip)."""
        missing = [t for t in ("ip", "ping", "sysctl") if shutil.which(t) is None]
        for b in ("ipnumad", "ipnuma-emu", "ipnumactl", "fibnicd", "fibnic-emu"):
            if not os.access(os.path.join(self.bin, b), os.X_OK):
                missing.append(os.path.join(self.bin, b))
        return missing

    def add_ns(self, ns):
        sh("ip", "netns", "add", ns)
        self.created_ns.append(ns)
        in_ns(ns, "ip", "link", "set", "lo", "up")
        # No IPv6: its router and neighbour solicitations would cross the card too.
        in_ns(ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")

    def setup_network(self):
        for ns in (self.ns["a"], self.ns["b"], self.ns_router, self.ns_card, self.ns_mgmt):
            self.add_ns(ns)
        r, c, m = self.ns_router, self.ns_card, self.ns_mgmt
        in_ns(m, "ip", "link", "add", "name", "mgmt", "type", "bridge")
        in_ns(m, "ip", "link", "set", "mgmt", "up")
        for h in ("a", "b"):
            k, ns = PORT_OF[h], self.ns[h]
            # The rack's wire: the host's interface to the card's port k.
            sh("ip", "link", "add", "name", self.iface[h], "netns", ns, "type", "veth", "peer", "name", f"w{k}", "netns", c)
            # The card's host side of port k: e<k> to the router's h<k>.
            sh("ip", "link", "add", "name", f"h{k}", "netns", r, "address", ROUTER_MAC[k], "type", "veth", "peer", "name",
               f"e{k}", "netns", c)
            for link in (f"w{k}", f"e{k}"):
                in_ns(c, "ip", "link", "set", link, "up")
            in_ns(r, "ip", "addr", "add", GATEWAY[h] + "/23", "dev", f"h{k}")
            in_ns(r, "ip", "link", "set", f"h{k}", "up")
            # ipnuma-emu answers no ARP: the router knows each NIC's MAC.
            in_ns(r, "ip", "neigh", "replace", NIC_IP[h], "lladdr", MAC[h], "dev", f"h{k}", "nud", "permanent")
            in_ns(ns, "ip", "addr", "add", HOST_IP[h] + "/23", "dev", self.iface[h])
            in_ns(ns, "ip", "link", "set", self.iface[h], "up")
            # The management network, a segment of its own.
            sh("ip", "link", "add", "name", self.mgmt_if[h], "netns", ns, "type", "veth", "peer", "name", f"sw{h}", "netns", m)
            in_ns(m, "ip", "link", "set", f"sw{h}", "master", "mgmt", "up")
            in_ns(ns, "ip", "addr", "add", MGMT_IP[h] + "/24", "dev", self.mgmt_if[h])
            in_ns(ns, "ip", "link", "set", self.mgmt_if[h], "up")
        in_ns(r, "sysctl", "-qw", "net.ipv4.ip_forward=1")

    def start_router(self):
        """fibnicd on the router's kernel routes, then fibnic-emu on the card's
        ports once fibnicd has written the BAR."""
        with open(self.path("fibnicd.yaml"), "w") as f:
            f.write(f"""device: {{backend: file, path: {self.fib_bar}, code_bits: 2}}
ports:
  - {{interface: h0, port: 0}}
  - {{interface: h1, port: 1}}
sources:
  kernel: {{enabled: true, tables: [255, 254]}}
  fpm: {{enabled: false}}
web: {{listen: 127.0.0.1:8080}}
""")
        self.start("fibnicd", self.ns_router, os.path.join(self.bin, "fibnicd"), "--config", self.path("fibnicd.yaml"))
        log = self.path("fibnicd.log")
        wait_for("fibnicd ready", lambda: "ready:" in open(log).read(), timeout=60)
        self.start("fibnic-emu", self.ns_card, os.path.join(self.bin, "fibnic-emu"), "--bar", self.fib_bar,
                   "--port", "0=w0", "--host", "0=e0", "--port", "1=w1", "--host", "1=e1")
        wait_for("fibnic-emu forwarding", lambda: "forwarding" in open(self.path("fibnic-emu.log")).read())

    def resolve_gateways(self):
        """Each host talks to its gateway once, so its kernel's neighbour table
        (which ipnumad follows) holds the gateway's MAC. The ARP and the ping
        are punted by the card to the router's kernel, which answers."""
        for h in ("a", "b"):
            wait_for(f"{h} reaching its gateway",
                     lambda h=h: in_ns(self.ns[h], "ping", "-c", "1", "-W", "1", GATEWAY[h], check=False).returncode
                     == 0)

    nic_ip, mac, mgmt_ip = NIC_IP, MAC, MGMT_IP

    def local_net(self, h):
        return f"netmask: 255.255.254.0, gateway: {GATEWAY[h]}"

    def neighbours_yaml(self, h):
        return f"{{source: kernel, interface: {self.iface[h]}}}"


EXPORT_OFF, EXPORT_LEN = 0x10000, 0x40000


def bring_up(hosts, pages):
    """The whole set-up: network, router, both hosts with B exporting
    EXPORT_LEN bytes at EXPORT_OFF of its pool to A, A's pages mapped to it."""
    hosts.setup_network()
    hosts.start_router()
    hosts.resolve_gateways()
    hosts.prepare_files()
    hosts.write_config("a")
    hosts.write_config("b", f"  - {{name: rx, base: {POOL_BASE['b'] + EXPORT_OFF:#x}, length: {EXPORT_LEN:#x}, "
                            f"allow: {NIC_IP['a']}/32}}\n")
    hosts.start_ipnumad("a")
    hosts.start_ipnumad("b")
    hosts.start_emus()
    hosts.wait_api("a")
    hosts.wait_api("b")
    return hosts.map("a", "to-b", "rx", 0, pages)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: xrack_hosts.py BIN_DIR   (root; Ctrl-C tears it down)", file=sys.stderr)
        sys.exit(2)
    hosts = XrackHosts(os.path.abspath(sys.argv[1]), "ipx")
    # Started in the background (SIGINT ignored) it stops on SIGTERM, cleanly.
    def interrupt(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    if os.geteuid() != 0 or hosts.missing_tools():
        print(f"xrack: needs root and {hosts.missing_tools() or 'nothing else'}", file=sys.stderr)
        sys.exit(1)
    try:
        pcid = bring_up(hosts, 64)
        writer = os.path.join(os.path.dirname(hosts.bin), "tests", "ipnuma", "ipnuma_emu_writer")
        print(f"""xrack: up (work folder {hosts.work}). A's BAR2 pages 0-63 are B's export 'rx' (PC ID {pcid}, via the gateway).
  write : ip netns exec {hosts.ns['a']} {writer} {hosts.path('a.pages')}   then lines 'w 0 cafe'
  B sees: od -Ax -tx1 -j {EXPORT_OFF:#x} -N 16 {hosts.path('b.pool')}
  A's NIC: {' '.join(hosts.ctl('a'))} counters | decode {hosts.bar('a')}
  card  : ip netns exec {hosts.ns_router} curl -s 127.0.0.1:8080/metrics | grep port_counter   (fibnicd's view of {hosts.fib_bar})
  namespaces: {' '.join(hosts.created_ns)}""", flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    except Exception as e:  # noqa: BLE001 - say why, with the logs
        print(f"xrack: {e}", flush=True)
        hosts.dump_logs()
    finally:
        hosts.close()
