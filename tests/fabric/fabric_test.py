#!/usr/bin/env python3
"""A BGP-unnumbered Clos fabric with real FRR, two leaves under test
(docs/fabric.md). Root only.

  fabric_test.py FIBNICD FIBNICCTL KDIFF_BAR

Two spines (AS 65100) and three leaves, every leaf linked to every spine,
every link a BGP session over IPv6 link-local addresses (`neighbor IFACE
interface`, router advertisements on the fabric links, no IPv4 addresses).
Every leaf announces IPv4 and IPv6 prefixes. Leaves l0 and l1 are routers
under test: their two spine links are FIBNIC ports 0 and 1, fibnicd runs
beside zebra (-M dplane_fpm_nl) on the file backend with the kernel and FPM
sources. l0 runs zebra's next-hop-group mode (kernel `nhid N via inet6 fe80::…`,
FPM next-hop objects), l1 the inline mode (`no zebra nexthop kernel enable`,
`no fpm use-next-hop-groups`: `via 169.254.0.1 dev IFACE onlink`).

The oracle is each leaf's own kernel: for every BGP-learned route, the decoded
BAR (kdiff_bar) must forward to a port and MAC the kernel itself uses for the
destination (RTM_GETROUTE, all ECMP paths, + its neighbour table) — or punt,
but in a settled fabric every route the device can hold must be forwarded
(offloaded). Checked settled; with spine 0's links to the leaves down; after
spine 1, then the only path, changes its interfaces' MACs; with spine 0's
links back up; after spine 0 (the ECMP path fibnicd picks) changes its MACs.

Environment: FABRIC_KEEP=1 keeps the logs and configs of a failing run."""
import ipaddress
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kdiff"))
from kernel_oracle import KernelOracle, USABLE_NUD, acceptable  # noqa: E402
from kdiff import bar_answers  # noqa: E402

FIBNICD, FIBNICCTL, KDIFF_BAR = sys.argv[1:4]
CONFIGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "configs", "frr")
TAG = "clos-%d" % os.getpid()
SPINES = ["s0", "s1"]
# Leaf → next-hop mode of its zebra (None: not under test, announces only).
LEAVES = {"l0": "nhg", "l1": "inline", "l2": None}
V4_PER_LEAF, V6_PER_LEAF = 12, 8  # IPv6: the learned routes fit the 32-entry TCAM
SETTLE = 60  # seconds a phase may take to converge


def sh(*args, check=True):
    r = subprocess.run(args, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(args), r.stderr.strip()))
    return r.stdout


def ns(name):
    return "%s-%s" % (TAG, name)


def nsx(name, *args, check=True):
    return sh("ip", "netns", "exec", ns(name), *args, check=check)


def leaf_prefixes(leaf):
    i = int(leaf[1:])
    v4 = ["10.%d.%d.0/24" % (100 + i, j) for j in range(V4_PER_LEAF - 1)] + ["10.%d.255.7/32" % (100 + i)]
    v6 = ["2001:db8:%x:%x::/64" % (100 + i, j) for j in range(V6_PER_LEAF - 1)] + ["2001:db8:%x:ff::7/128" % (100 + i)]
    return v4, v6


def frr_conf(name):
    """configs/frr/fabric-{leaf,spine}.conf made this router's: its name, AS,
    router-id and prefixes, the next-hop mode of a leaf under test; and, for
    the test only, a 1 s connect retry and prefixes announced without a route."""
    spine = name in SPINES
    mode = LEAVES.get(name)
    i = int(name[1:])
    path = os.path.join(CONFIGS, "fabric-spine.conf" if spine else "fabric-leaf.conf")
    text = open(path).read()
    v4, v6 = ([], []) if spine else leaf_prefixes(name)
    subs = [(r"(?m)^hostname .*$", "hostname " + name),
            (r"(?m)^router bgp \d+$", "router bgp %d" % (65100 if spine else 65001 + i)),
            (r"(?m)^ bgp router-id .*$", " bgp router-id 10.255.%d.%d\n no bgp network import-check"
             % (1 if spine else 2, i + 1)),
            (r"(?m)^( neighbor fabric remote-as external\n)", r"\1 neighbor fabric timers connect 1\n"),
            (r"(?m)^ address-family ipv4 unicast\n(  network .*\n)*",
             " address-family ipv4 unicast\n" + "".join("  network %s\n" % p for p in v4)),
            (r"(?m)^  neighbor fabric activate\n(  network .*\n)*",
             "  neighbor fabric activate\n" + "".join("  network %s\n" % p for p in v6))]
    if not spine and not mode:
        subs.append((r"(?m)^fpm address .*\n", ""))
    if mode == "inline":
        subs.append((r"(?m)^!(no zebra nexthop kernel enable|no fpm use-next-hop-groups)$", r"\1"))
    for pattern, repl in subs:
        text, n = re.subn(pattern, repl, text)
        if n == 0:
            raise RuntimeError("%s: no line matches %r (the test edits that file)" % (path, pattern))
    return text


class Fabric:
    def __init__(self):
        self.work = tempfile.mkdtemp(prefix="fibnic-fabric-")
        os.chmod(self.work, 0o755)
        self.procs = []
        self.oracles = {}
        self.bars = {}
        self.per_port = {}  # FIBNIC port → routes forwarded there, in the last check
        self.names = SPINES + list(LEAVES)

    def spawn(self, name, log, *cmd):
        f = open(os.path.join(self.work, name, log), "w")
        self.procs.append(subprocess.Popen(["ip", "netns", "exec", ns(name)] + list(cmd), stdout=f,
                                           stderr=subprocess.STDOUT))

    def build(self):
        for n in self.names:
            sh("ip", "netns", "add", ns(n))
            for k, v in [("net/ipv4/ip_forward", 1), ("net/ipv6/conf/all/forwarding", 1),
                         ("net/ipv6/conf/default/accept_dad", 0), ("net/ipv6/conf/all/accept_dad", 0),
                         # a spine whose MAC changes tells its neighbours (unsolicited NA)
                         ("net/ipv6/conf/default/ndisc_notify", 1), ("net/ipv6/conf/all/ndisc_notify", 1),
                         ("net/ipv4/fib_multipath_hash_policy", 1), ("net/ipv6/fib_multipath_hash_policy", 1)]:
                nsx(n, "sh", "-c", "echo %s > /proc/sys/%s" % (v, k))
            nsx(n, "ip", "link", "set", "lo", "up")
            d = os.path.join(self.work, n)
            os.mkdir(d)
        for i, leaf in enumerate(LEAVES):
            for j, spine in enumerate(SPINES):
                sh("ip", "link", "add", "swp%d" % (j + 1), "netns", ns(leaf), "address",
                   "02:1e:%02x:00:00:%02x" % (i, j), "type", "veth", "peer", "name", "swp%d" % (i + 1),
                   "netns", ns(spine), "address", "02:5b:%02x:00:00:%02x" % (j, i))
                nsx(leaf, "ip", "link", "set", "swp%d" % (j + 1), "up")
                nsx(spine, "ip", "link", "set", "swp%d" % (i + 1), "up")
        for leaf, mode in LEAVES.items():
            if mode:
                self.start_fibnicd(leaf)
        for n in self.names:
            self.start_frr(n)
        for leaf, mode in LEAVES.items():
            if mode:
                self.oracles[leaf] = KernelOracle(ns(leaf))
                self.bars[leaf] = subprocess.Popen([KDIFF_BAR, self.bar_path(leaf)], stdin=subprocess.PIPE,
                                                   stdout=subprocess.PIPE, text=True)

    def bar_path(self, leaf):
        return os.path.join(self.work, leaf, "bar0.img")

    def start_fibnicd(self, leaf):
        cfg = os.path.join(self.work, leaf, "fibnicd.yaml")
        with open(cfg, "w") as f:
            f.write("device: {backend: file, path: %s, code_bits: 2}\n"
                    "ports:\n  - {interface: swp1, port: 0}\n  - {interface: swp2, port: 1}\n"
                    "sources:\n  kernel: {enabled: true, tables: [255, 254]}\n"
                    "  fpm: {enabled: true, listen: 127.0.0.1:2620}\n"
                    "policies: {batch_delay: 1ms}\nweb: {listen: 127.0.0.1:8080}\n" % self.bar_path(leaf))
        self.spawn(leaf, "fibnicd.log", FIBNICD, "--config", cfg)
        log = os.path.join(self.work, leaf, "fibnicd.log")
        deadline = time.time() + 20
        while "ready:" not in open(log).read():
            if self.procs[-1].poll() is not None or time.time() > deadline:
                raise RuntimeError("fibnicd on %s did not start:\n%s" % (leaf, open(log).read()))
            time.sleep(0.05)

    def start_frr(self, name):
        d = os.path.join(self.work, name)
        with open(os.path.join(d, "frr.conf"), "w") as f:
            f.write(frr_conf(name))
        sh("chown", "-R", "frr:frr", d)
        common = ["-f", d + "/frr.conf", "-z", d + "/zserv.api", "--vty_socket", d, "-u", "frr", "-g", "frr",
                  "-P", "0"]
        fpm = ["-M", "dplane_fpm_nl"] if LEAVES.get(name) else []
        self.spawn(name, "zebra.log", "/usr/lib/frr/zebra", "-i", d + "/zebra.pid", *common, *fpm)
        wait(20, "zebra on " + name, lambda: os.path.exists(d + "/zebra.vty"))
        self.spawn(name, "bgpd.log", "/usr/lib/frr/bgpd", "-i", d + "/bgpd.pid", *common)

    def close(self, keep):
        for o in self.oracles.values():
            o.close()
        for p in list(self.bars.values()) + self.procs[::-1]:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if keep:
            print("kept: logs in %s (namespaces deleted)" % self.work)
        for n in self.names:
            subprocess.run(["ip", "netns", "del", ns(n)], capture_output=True)
        if not keep:
            shutil.rmtree(self.work, ignore_errors=True)

    def vtysh(self, name, command):
        return sh("vtysh", "--vty_socket", os.path.join(self.work, name), "-c", command, check=False)

    # --- what a leaf under test should learn, and what its kernel does with it

    def expected(self, leaf):
        """One destination inside every prefix the other leaves announce."""
        out = []
        for other in LEAVES:
            if other == leaf:
                continue
            for p in sum(leaf_prefixes(other), []):
                net = ipaddress.ip_network(p)
                out.append((p, str(net[1] if net.num_addresses > 1 else net[0])))
        return out

    def neighbours(self, leaf):
        """(ifindex, address) → MAC for the leaf's usable neighbour entries."""
        index = {l["ifname"]: l["ifindex"] for l in json.loads(nsx(leaf, "ip", "-j", "link", "show"))}
        out = {}
        for n in json.loads(nsx(leaf, "ip", "-j", "neigh", "show")):
            if "lladdr" in n and set(n.get("state", [])) & USABLE_NUD:
                out[(index[n["dev"]], n["dst"])] = n["lladdr"]
        return out, index

    def kernel_paths(self, leaf):
        """Per expected destination the set of (ifindex, next-hop) the kernel uses."""
        o = self.oracles[leaf]
        return {addr: o.answers(addr) for _, addr in self.expected(leaf)}

    def device(self, leaf, addrs):
        return bar_answers(self.bars[leaf], addrs)  # kdiff_bar prints MACs in lower case, as the kernel does

    def generation(self, leaf):
        bar = self.bars[leaf]
        bar.stdin.write("gen\n")
        bar.stdin.flush()
        return bar.stdout.readline().strip()

    def quiesce(self, leaf):
        """fibnicd's queue is empty and the BAR's GENERATION stopped moving."""
        deadline = time.time() + 10
        last, since = None, time.time()
        while time.time() < deadline:
            s = json.loads(nsx(leaf, FIBNICCTL, "--json", "status", check=False) or "{}")
            depth = s.get("sources", {}).get("pipeline", {}).get("queue_depth", 1)
            gen = self.generation(leaf)
            if gen != last or depth != 0:
                last, since = gen, time.time()
            elif time.time() - since >= 0.4:
                return
            time.sleep(0.1)

    def check(self, leaf):
        """Per expected route: the device's answer against the kernel's.
        Returns (routes the device can hold, routes it forwards, [problems])."""
        self.quiesce(leaf)
        paths = self.kernel_paths(leaf)
        neigh, index = self.neighbours(leaf)
        port_of = {index["swp1"]: 0, index["swp2"]: 1}.get
        exp = self.expected(leaf)
        dev = self.device(leaf, [a for _, a in exp])
        problems, forwarded, owed = [], 0, 0
        self.per_port = {}
        for (prefix, addr), d in zip(exp, dev):
            hops = paths[addr]
            net = ipaddress.ip_network(prefix)
            # The device holds IPv4 down to /24 and IPv6 down to /64 (docs/contract/FIBNIC.md):
            # a longer prefix is owed a punt or the kernel's answer, not forwarding.
            held = net.prefixlen <= (24 if net.version == 4 else 64)
            if not hops:
                problems.append("%s: the kernel does not forward %s (not learned?)" % (prefix, addr))
                continue
            if not acceptable(d, [hops], port_of, neigh):
                kernel = ["%s via %s (%s)" % (k, gw, neigh.get((i, gw), "no neighbour"))
                          for i, gw in sorted(hops) for k, v in index.items() if v == i]
                problems.append("%s: device forwards to port %d MAC %s, the kernel to %s"
                                % (prefix, d[0], d[1], "; ".join(kernel)))
            elif d is None and held:
                why = [" ".join(l.split()) for l in nsx(leaf, FIBNICCTL, "lookup", addr, check=False).splitlines()
                       if l.split()[:1] in (["reason"], ["why"])]
                problems.append("%s: punted (not offloaded): %s" % (prefix, "; ".join(why)))
            elif d is not None:
                forwarded += held
                self.per_port[d[0]] = self.per_port.get(d[0], 0) + 1
            owed += held
        return owed, forwarded, problems


def wait(seconds, what, cond):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if cond():
            return
        time.sleep(0.2)
    raise RuntimeError("%s: not within %d s" % (what, seconds))


def main():
    if os.geteuid() != 0:
        print("fabric_test: needs root (network namespaces)")
        return 1
    fab = Fabric()
    ok = False
    try:
        t0 = time.time()
        fab.build()
        under_test = [l for l, m in LEAVES.items() if m]
        ports = {}  # leaf → {ifindex: spine interface name}
        failures = []  # phases where a device disagreed with its kernel or punted

        def spans(leaf, want):
            """Every expected destination is routed by the kernel over exactly the interfaces `want`."""
            if leaf not in ports:
                _, index = fab.neighbours(leaf)
                ports[leaf] = {v: k for k, v in index.items()}
            for hops in fab.kernel_paths(leaf).values():
                if {ports[leaf].get(i) for i, _ in hops} != want:
                    return False
            return True

        def phase(name, want):
            for leaf in under_test:
                wait(SETTLE, "%s: %s routes over %s" % (name, leaf, sorted(want)), lambda: spans(leaf, want))
            failed = False
            for leaf in under_test:
                deadline = time.time() + 20
                while True:
                    n, fwd, problems = fab.check(leaf)
                    if not problems or time.time() > deadline:
                        break
                    time.sleep(0.5)
                print("%-20s %s (%-6s): %d of %d BGP routes offloaded (+%d longer than /24 or /64, punted), "
                      "ports %s, %d problems" % (name, leaf, LEAVES[leaf], fwd, n, len(fab.expected(leaf)) - n,
                                                 dict(sorted(fab.per_port.items())), len(problems)))
                for p in problems[:8]:
                    print("    " + p)
                failed |= bool(problems)
            if failed:
                failures.append(name)

        phase("settled", {"swp1", "swp2"})
        print("converged in %.1f s" % (time.time() - t0))

        def links(spine, state):
            for i, leaf in enumerate(LEAVES):
                if LEAVES[leaf]:
                    nsx(spine, "ip", "link", "set", "swp%d" % (i + 1), state)

        def change_mac(j):
            """Spine j's interfaces to the leaves under test take new MACs; wait
            until each leaf's kernel has learned them (the spine's unsolicited NA)."""
            new = {}
            for i, leaf in enumerate(LEAVES):
                if LEAVES[leaf]:
                    new[leaf] = "02:5b:%02x:ff:00:%02x" % (j, i)
                    nsx(SPINES[j], "ip", "link", "set", "swp%d" % (i + 1), "address", new[leaf])
            for leaf in under_test:
                def learned():
                    neigh, index = fab.neighbours(leaf)
                    return new[leaf] in {m for (i, _), m in neigh.items() if i == index["swp%d" % (j + 1)]}
                wait(SETTLE, "%s learns spine %d's new MAC %s" % (leaf, j, new[leaf]), learned)

        def inline_note(j):
            for leaf in (l for l in under_test if LEAVES[l] == "inline"):
                neigh, index = fab.neighbours(leaf)
                if neigh.get((index["swp%d" % (j + 1)], "169.254.0.1"), "").startswith("02:5b:%02x:00" % j):
                    print("    note: zebra left %s's 169.254.0.1 on swp%d at spine %d's old MAC: its kernel and "
                          "device keep sending there (FRR 8.4, docs/fabric.md)" % (leaf, j + 1, j))

        # Spine 1 becomes the only path, then changes MAC: every route must follow it.
        links("s0", "down")
        phase("spine 0 links down", {"swp2"})
        change_mac(1)
        phase("spine 1 MAC changed", {"swp2"})
        inline_note(1)
        links("s0", "up")
        phase("spine 0 links up", {"swp1", "swp2"})
        # Both paths up; the MAC of spine 0 (the path of lowest address, which
        # fibnicd picks for an ECMP route) changes.
        change_mac(0)
        phase("spine 0 MAC changed", {"swp1", "swp2"})
        inline_note(0)
        if failures:
            raise AssertionError("the device disagrees with the kernel or punts in: " + ", ".join(failures))
        print("fabric test: passed in %.1f s" % (time.time() - t0))
        ok = True
    except (AssertionError, RuntimeError) as e:
        print("FAIL: %s" % e)
        for n in SPINES + list(LEAVES):
            print("--- %s: show bgp summary" % n)
            print(fab.vtysh(n, "show bgp summary"))
        for leaf in (l for l, m in LEAVES.items() if m):
            log = os.path.join(fab.work, leaf, "fibnicd.log")
            print("--- %s fibnicd.log (tail)" % leaf)
            print("".join(open(log).readlines()[-15:]))
            print("--- %s ip route (head) / ip neigh" % leaf)
            print("".join(nsx(leaf, "ip", "route", check=False).splitlines(True)[:12]) +
                  nsx(leaf, "ip", "neigh", check=False))
    finally:
        fab.close(keep=not ok and os.environ.get("FABRIC_KEEP") == "1")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
