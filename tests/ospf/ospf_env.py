"""The OSPF router and its neighbours, for tests/ospf/ospfdiff.py and
bench/ospf (docs/oracle.md "The OSPF oracle").

A router namespace `<prefix>-<pid>-m` runs zebra (-M dplane_fpm_nl), ospfd,
ospf6d and fibnicd (file backend, kernel source for tables 255 and 254, FPM
for offload replies); its k0..k3 are FIBNIC ports 0..3. Five neighbours, each
a namespace with its own zebra, ospfd and ospf6d, originate their prefixes
as external routes (kernel blackholes, `redistribute kernel`):

  k0  n0  numbered point-to-point, 10.0.0.1/24 - 10.0.0.2
  k1  n1  numbered point-to-point, 10.1.0.1/24 - 10.1.0.2
  k2  n2, n3  a broadcast LAN (a bridge in `…-lan`), 10.2.0.0/24: n2
          priority 200, n3 100, the router 1: n2 is elected DR, n3 BDR;
          without n2, n3 is DR and the router BDR (with priority 0 the
          router's FRR 8.4 ospf6d computed no route via the LAN after n2
          left)
  k3  n4  unnumbered point-to-point: the router's k3 borrows lo's
          10.255.0.1/32, n4's its lo's 10.255.1.5/32, so the router's
          routes go via 10.255.1.5 dev k3 onlink

OSPFv3 runs on every link: its next hops are the neighbours' link-local
addresses. n0 and n1 both originate the "ecmp" prefixes, n2 and n3 the "lan"
ones (equal cost: the kernel holds both paths). Hello 1 s, dead 3 s, SPF
throttle 0/50/500 ms, so a test's phases take seconds.
"""
import ipaddress
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "frrdiff"))
sys.path.insert(0, os.path.join(HERE, "..", "kdiff"))
import kdiff  # noqa: E402
from frrdiff import FrrEnv  # noqa: E402
from kernel_oracle import KernelOracle  # noqa: E402

sh = kdiff.sh
ROUTER_ID = "10.255.0.1"
# name, the router's interface, the neighbour's address on it (IPv4), priority on the LAN
NEIGHBOURS = [("n0", "k0", "10.0.0.2", None), ("n1", "k1", "10.1.0.2", None),
              ("n2", "k2", "10.2.0.2", 200), ("n3", "k2", "10.2.0.3", 100),
              ("n4", "k3", "10.255.1.5", None)]
ROUTER_ADDR = {"k0": "10.0.0.1/24", "k1": "10.1.0.1/24", "k2": "10.2.0.1/24", "k3": ROUTER_ID + "/32"}
# Who originates the shared prefixes (equal cost from both).
SHARED = {"ecmp": ("n0", "n1"), "lan": ("n2", "n3")}
TIMERS = ["ip ospf hello-interval 1", "ip ospf dead-interval 3", "ipv6 ospf6 hello-interval 1",
          "ipv6 ospf6 dead-interval 3", "ip ospf area 0", "ipv6 ospf6 area 0"]


def prefixes(owner, v4, v6):
    """The prefixes `owner` (a neighbour's index, or a SHARED key) originates:
    v4 IPv4 /24s in 100.64.0.0/10 and v6 IPv6 /64s, plus for a neighbour one
    IPv4 /26 and one IPv6 /96 (longer than the device holds: their /24, /64
    must punt) and an IPv6 /48 covering its /64s."""
    block = {"ecmp": 14, "lan": 15}.get(owner, owner)  # 1,024 /24s per block
    out = [str(ipaddress.ip_network((0x64400000 + ((block << 10) + j << 8), 24))) for j in range(v4)]
    hi = {"ecmp": 0x2000, "lan": 0x2001}.get(owner, 0x1000 + (owner if isinstance(owner, int) else 0))
    base = (0x20010DB8 << 96) + (hi << 80)
    out += [str(ipaddress.ip_network((base + (j << 64), 64))) for j in range(v6)]
    if isinstance(owner, int):
        out += [str(ipaddress.ip_network((0x64400000 + ((block << 10) + 1023 << 8) + 64, 26))),
                str(ipaddress.ip_network((base + (0xFFFF << 64), 96))), str(ipaddress.ip_network((base, 48)))]
    return out


def neighbour_prefixes(i, v4, v6):
    """Everything neighbour i originates: its own prefixes and its shares."""
    name = NEIGHBOURS[i][0]
    return prefixes(i, v4, v6) + [p for key, who in SHARED.items() if name in who
                                  for p in prefixes(key, max(1, v4 // 2), max(1, v6 // 2))]


def ospf_conf(hostname, router_id, interfaces):
    """ospfd's and ospf6d's configuration: interfaces maps a name to its
    extra lines (network type, priority, cost)."""
    v4, v6 = ["hostname %s" % hostname], ["hostname %s" % hostname]
    for name, extra in interfaces.items():
        lines = TIMERS + extra
        v4 += ["interface %s" % name] + [" " + x for x in lines if x.startswith("ip ")]
        v6 += ["interface %s" % name] + [" " + x for x in lines if x.startswith("ipv6 ")]
    v4 += ["router ospf", " ospf router-id " + router_id, " redistribute kernel", " maximum-paths 8",
           " timers throttle spf 0 50 500"]
    v6 += ["router ospf6", " ospf6 router-id " + router_id, " redistribute kernel", " timers throttle spf 0 50 500"]
    return "\n".join(v4) + "\n", "\n".join(v6) + "\n"


class OspfEnv(FrrEnv):
    """The namespaces, FRR on the router and each neighbour, fibnicd and the
    BAR reader. FrrEnv's process handling (start_frr, stop, vtysh, close) and
    kdiff.Env's device(), generation() and view()."""

    def __init__(self, fibnicd, bar_tool, v4=8, v6=4, web_port=0):
        """v4, v6: each neighbour's own IPv4 /24s and IPv6 /64s (half as many shared);
        web_port: fibnicd's REST API in the router namespace (0: none)."""
        self.fpm_delay, self.nhg = 0.0, 1
        self.ns = "%s-%d-m" % (os.environ.get("OSPF_NS_PREFIX", "os"), os.getpid())
        self.peers = ["%s-%s" % (self.ns, n[0]) for n in NEIGHBOURS]
        self.host = self.ns + "-lan"  # the LAN's bridge
        self.v4, self.v6, self.web_port = v4, v6, web_port
        self._build(fibnicd, bar_tool)

    def node(self, i):
        return NEIGHBOURS[i][0], self.peers[i]

    def _link(self, a_ns, a, b_ns, b):
        sh("ip", "-n", a_ns, "link", "add", a, "type", "veth", "peer", "name", b, "netns", b_ns)

    def _setup(self):
        self._namespaces()
        sh("ip", "-n", self.ns, "addr", "add", ROUTER_ID + "/32", "dev", "lo")
        sh("ip", "-n", self.host, "link", "add", "br0", "type", "bridge")
        sh("ip", "-n", self.host, "link", "set", "br0", "up")
        for name in ("k0", "k1", "k3"):
            i = [n[1] for n in NEIGHBOURS].index(name)
            self._link(self.ns, name, self.peers[i], "p" + name)
        self._link(self.ns, "k2", self.host, "pk2")
        for i in (2, 3):
            self._link(self.host, "l%d" % i, self.peers[i], "pk2")
        for i in (2, 3):
            sh("ip", "-n", self.host, "link", "set", "l%d" % i, "master", "br0", "up")
        sh("ip", "-n", self.host, "link", "set", "pk2", "master", "br0", "up")
        for name, addr in ROUTER_ADDR.items():
            sh("ip", "-n", self.ns, "addr", "add", addr, "dev", name)
            sh("ip", "-n", self.ns, "link", "set", name, "up")
        for i, (name, rif, addr, _) in enumerate(NEIGHBOURS):
            ns = self.peers[i]
            lo = "10.255.1.%d/32" % (i + 1)
            sh("ip", "-n", ns, "addr", "add", lo, "dev", "lo")
            sh("ip", "-n", ns, "addr", "add", addr + ("/32" if rif == "k3" else "/24"), "dev", "p" + rif)
            sh("ip", "-n", ns, "link", "set", "p" + rif, "up")
            sh("ip", "-n", ns, "-batch", "-", inp="".join(
                "route add blackhole %s\n" % p for p in neighbour_prefixes(i, self.v4, self.v6)))
        w = self.work
        with open(w + "/frr/zebra.conf", "w") as f:
            f.write("hostname router\nfpm address 127.0.0.1 port 2620\n")
        router_ifs = {"k0": ["ip ospf network point-to-point", "ipv6 ospf6 network point-to-point"],
                      "k1": ["ip ospf network point-to-point", "ipv6 ospf6 network point-to-point"],
                      "k2": ["ip ospf priority 1", "ipv6 ospf6 priority 1"],
                      "k3": ["ip ospf network point-to-point", "ipv6 ospf6 network point-to-point"]}
        self._write_ospf("frr", "router", ROUTER_ID, router_ifs)
        for i, (name, rif, _, prio) in enumerate(NEIGHBOURS):
            os.makedirs("%s/%s" % (w, name))
            with open("%s/%s/zebra.conf" % (w, name), "w") as f:
                f.write("hostname %s\n" % name)
            extra = (["ip ospf priority %d" % prio, "ipv6 ospf6 priority %d" % prio] if prio is not None else
                     ["ip ospf network point-to-point", "ipv6 ospf6 network point-to-point"])
            self._write_ospf(name, name, "10.255.1.%d" % (i + 1), {"p" + rif: extra})
        sh("chown", "-R", "frr:frr", w)
        self._fibnicd_config(2620, "batch_delay: 1ms", self.web_port)
        self.start_fibnicd()
        for i in range(len(NEIGHBOURS)):
            self.start_zebra(self.node(i))
        self.start_zebra()
        for i in range(len(NEIGHBOURS)):
            for d in ("ospfd", "ospf6d"):
                self.start_frr(d, self.node(i))
        for d in ("ospfd", "ospf6d"):
            self.start_frr(d)
        self.oracle = KernelOracle(self.ns)

    def _write_ospf(self, d, hostname, router_id, interfaces):
        v4, v6 = ospf_conf(hostname, router_id, interfaces)
        for daemon, text in (("ospfd", v4), ("ospf6d", v6)):
            with open("%s/%s/%s.conf" % (self.work, d, daemon), "w") as f:
                f.write(text)

    def start_fibnicd(self, tick=None):
        super().start_fibnicd(tick)
        self.daemon = self.procs["fibnicd"]  # kdiff.Env.quiesce's fibnicd_busy (ip netns exec execs it)

    def quiesce(self):
        kdiff.Env.quiesce(self)

    # --- what the scenarios do -------------------------------------------
    def restart_ospf(self, node=None):
        """SIGTERM ospfd and ospf6d (node: a neighbour's index; else the router's) and start them again."""
        self.stop_ospf(node)
        self.start_ospf(node)

    def stop_ospf(self, node=None):
        for d in ("ospfd", "ospf6d"):
            self.stop("%s-%s" % (NEIGHBOURS[node][0], d) if node is not None else d)

    def start_ospf(self, node=None):
        for d in ("ospfd", "ospf6d"):
            self.start_frr(d, self.node(node) if node is not None else None)

    def set_cost(self, ifname, cost):
        """The router's OSPF cost on one interface, both families."""
        self.vtysh("configure terminal", "interface " + ifname, "ip ospf cost %d" % cost)
        self.vtysh("configure terminal", "interface " + ifname, "ipv6 ospf6 cost %d" % cost)

    def carrier(self, i, up):
        """Neighbour i's end of its link down/up: the router's port loses carrier."""
        rif = NEIGHBOURS[i][1]
        ns, dev = (self.host, "pk2") if rif == "k2" else (self.peers[i], "p" + rif)
        sh("ip", "-n", ns, "link", "set", dev, "up" if up else "down")

    def admin(self, ifname, up):
        sh("ip", "-n", self.ns, "link", "set", ifname, "up" if up else "down")

    # --- OSPF's own state (preconditions of a scenario, not the oracle) ----
    def full_neighbours(self):
        """Router ids with a Full adjacency to the router: (OSPFv2's, OSPFv3's)."""
        v2 = self.vtysh("show ip ospf neighbor")
        v3 = self.vtysh("show ipv6 ospf6 neighbor")
        full = re.compile(r"^(\d+\.\d+\.\d+\.\d+)\s.*\bFull\b", re.M)
        return set(full.findall(v2)), set(full.findall(v3))

    def dr(self, ifname="k2"):
        """The DR's router id on a broadcast interface, OSPFv2 and OSPFv3."""
        v2 = re.search(r"Designated Router \(ID\) (\S+)", self.vtysh("show ip ospf interface " + ifname))
        v3 = re.search(r"\bDR: (\S+)", self.vtysh("show ipv6 ospf6 interface " + ifname))
        return v2 and v2.group(1), v3 and v3.group(1)

    def ifname(self, ifindex):
        return self.ifnames().get(ifindex, "if%d" % ifindex)

    def ifnames(self):
        return {link["ifindex"]: link["ifname"] for link in self.ip_json("link", "show")}
