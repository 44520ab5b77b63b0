#!/usr/bin/env python3
"""FRR differential harness (docs/oracle.md). Root, FRR and bird2.

  frrdiff.py FIBNICD KDIFF_BAR

A router namespace where zebra (-M dplane_fpm_nl; FRRDIFF_NHG=1 next-hop
groups, 0 `no fpm use-next-hop-groups`), bgpd and staticd install BGP and
static routes into the kernel, which fibnicd (file backend) follows with its
kernel source; zebra's FPM stream reaches fibnicd too, for the offload replies. k0..k2 (FIBNIC ports 0..2) lead to bird2 BGP
peers, k3 (port 3) and u0 (not a port) to a plain host. A seeded random stream
(frrdiff_events.py) of announcements, withdrawals, prepends, session and
carrier loss, statics (recursive ones too), zebra and fibnicd restarts. After
each chunk, once everything has settled (BGP sessions as the stream left
them, zebra's route summaries, the kernel's routes and fibnicd's GENERATION
unchanged), the tests/kdiff oracle checks sampled destinations: the decoded
BAR must punt or do what the kernel does (same port, same MAC). Across a
fibnicd restart the kernel does not change, so every device answer read
while fibnicd restarts must be a punt or the kernel's, and a restart with the
kernel's routes and neighbours unchanged must not write the device.

Environment: FIBNIC_SEED (replay), FRRDIFF_NHG (default 1), FRRDIFF_EVENTS
(default 400), FRRDIFF_SECONDS (default 70), FRRDIFF_ROUTE_CHANGES (stop once
FRR made this many kernel route changes; default: no limit), FRRDIFF_CHUNK
(most events per chunk, default 12), FRRDIFF_CHURN (block events' weight
multiplier, default 1; the soak's is higher), FRRDIFF_NO_SHRINK=1 (report without shrinking),
FRRDIFF_SHRINK_SECONDS (time for shrinking, default 240), FRRDIFF_VERBOSE=1
(print events and settling), FRRDIFF_KEEP=DIR (keep the run's work directory
there: logs, BARs and, at a divergence, the host's and zebra's state)."""
import ipaddress
import json
import os
import random
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kdiff"))
sys.path.insert(0, HERE)
import kdiff  # noqa: E402
from kernel_oracle import KernelOracle, acceptable  # noqa: E402
from frrdiff_events import BGP_PEERS, SUBNET, EventStream, bird_conf, describe  # noqa: E402

IFS = kdiff.IFS  # k0..k3, u0: the names kdiff's view() maps to ports
FRR = "/usr/lib/frr/"
# Route lines of bgpd and staticd, and zebra's next-hop objects (a route that
# changes only its next hops changes its group in next-hop group mode).
PROTO_FRR = re.compile(r"proto (bgp|static|zebra|186|196|11)\b")
NEXTHOP_LINE = re.compile(r"(\[[^]]*\] )?(Deleted )?id \d+ ")
sh = kdiff.sh
VERBOSE = os.environ.get("FRRDIFF_VERBOSE") == "1"


def router_bgp():
    lines = ["hostname router", "router bgp 65000", " bgp router-id 10.255.0.1", " no bgp ebgp-requires-policy",
             " no bgp default ipv4-unicast", " bgp bestpath as-path multipath-relax"]
    for k in range(BGP_PEERS):
        for a in ("10.%d.0.2" % k, "2001:db8:%d::2" % k):
            lines += [" neighbor %s remote-as %d" % (a, 65100 + k), " neighbor %s timers 3 9" % a,
                      " neighbor %s timers connect 1" % a]
    for af, fmt in (("ipv4", "10.%d.0.2"), ("ipv6", "2001:db8:%d::2")):
        lines += [" address-family %s unicast" % af, "  maximum-paths 4"]
        lines += ["  neighbor %s activate" % (fmt % k) for k in range(BGP_PEERS)]
        lines.append(" exit-address-family")
    return "\n".join(lines) + "\n"


class FrrEnv(kdiff.Env):
    """Router + peer namespaces, FRR, bird2 peers, fibnicd and the BAR reader.
    Reuses kdiff.Env's device(), generation(), view() and oracle."""

    def __init__(self, fibnicd, bar_tool, tag, nhg, fpm_delay=0.0):
        """fpm_delay: zebra's FPM stream reaches fibnicd this many seconds
        late (fpm_delay.py), as on a loaded host."""
        assert nhg in (0, 1)
        self.fpm_delay = fpm_delay
        # FRRDIFF_NS_PREFIX: runs side by side on a shared machine keep apart.
        self.ns = "%s-%d-%s" % (os.environ.get("FRRDIFF_NS_PREFIX", "fd"), os.getpid(), tag)
        self.peers = ["%s-p%d" % (self.ns, k) for k in range(BGP_PEERS)]
        self.host = self.ns + "-h"
        self.nhg = nhg
        self.sessions = {(k, af): True for k in range(BGP_PEERS) for af in ("r4", "r6")}
        self.carrier = [True] * (BGP_PEERS + 1)
        self.zebra_restarted = False
        self._build(fibnicd, bar_tool)

    def _build(self, fibnicd, bar_tool):
        """After the subclass named self.ns, self.host and self.peers: the
        common state, then _setup(); a failure removes what it made."""
        self.work = "/tmp/" + self.ns
        self.fibnicd, self.bar_tool = fibnicd, bar_tool
        self.daemon = self.bar = self.oracle = None
        self.procs, self.sysctls = {}, {}
        self.quiesce_timeouts = self.drops = 0
        try:
            self._setup()
        except BaseException:
            self.close()
            raise

    def _peer_ns(self, i):
        return self.peers[i] if i < BGP_PEERS else self.host

    def _namespaces(self):
        """The router's, the host's and the peers' namespaces, the router forwarding."""
        sh("rm", "-rf", self.work)
        os.makedirs(self.work + "/frr")
        for ns in [self.ns, self.host] + self.peers:
            sh("ip", "netns", "add", ns)
            for k in ("default/accept_dad", "all/accept_dad"):
                self.sysctl(ns, "net/ipv6/conf/" + k, 0)
            # A peer's veth end going down (carrier loss) keeps its addresses
            # (OSPFv3's next hop is its link-local one).
            for k in ("default/keep_addr_on_down", "all/keep_addr_on_down"):
                self.sysctl(ns, "net/ipv6/conf/" + k, 1)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        self.sysctl(self.ns, "net/ipv4/ip_forward", 1)
        self.sysctl(self.ns, "net/ipv6/conf/all/forwarding", 1)
        # L4 hashing, so the oracle's 16 flows find every path of a multipath
        # route (fibmatch of an IPv6 route by next-hop object is no help:
        # 6.x answered another prefix's route, e.g. a /64 outside the address).
        self.sysctl(self.ns, "net/ipv4/fib_multipath_hash_policy", 1)
        self.sysctl(self.ns, "net/ipv6/fib_multipath_hash_policy", 1)

    def _setup(self):
        self._namespaces()
        for i, name in enumerate(IFS):
            s, peer = SUBNET[i], self._peer_ns(i)
            sh("ip", "-n", self.ns, "link", "add", name, "type", "veth", "peer", "name", "p" + name, "netns", peer)
            sh("ip", "-n", self.ns, "addr", "add", "10.%d.0.1/24" % s, "dev", name)
            sh("ip", "-n", self.ns, "addr", "add", "2001:db8:%d::1/64" % s, "dev", name, "nodad")
            sh("ip", "-n", self.ns, "link", "set", name, "up")
            for host in (2, 3):  # .3: a second gateway on the same link
                sh("ip", "-n", peer, "addr", "add", "10.%d.0.%d/24" % (s, host), "dev", "p" + name)
                sh("ip", "-n", peer, "addr", "add", "2001:db8:%d::%d/64" % (s, host), "dev", "p" + name, "nodad")
            sh("ip", "-n", peer, "link", "set", "p" + name, "up")
        # Routes of the kernel source (not FRR's) covering the BGP prefixes: a
        # device that loses zebra's routes (e.g. across a fibnicd restart)
        # would send their traffic to port 3 where the kernel does not.
        sh("ip", "-n", self.ns, "route", "add", "198.18.0.0/15", "via", "10.3.0.2", "metric", "1000")
        sh("ip", "-n", self.ns, "route", "add", "2001:db8:100::/40", "via", "2001:db8:3::2", "metric", "1000")
        w = self.work
        with open(w + "/frr/zebra.conf", "w") as f:
            f.write("hostname router\nfpm address 127.0.0.1 port 2620\n%s" %
                    ("" if self.nhg else "no fpm use-next-hop-groups\n"))
        with open(w + "/frr/bgpd.conf", "w") as f:
            f.write(router_bgp())
        open(w + "/frr/staticd.conf", "w").close()
        sh("chown", "-R", "frr:frr", w + "/frr")
        # Held after a divergence: its REST API (fibnicctl --server) to question its RIB.
        # A kept run's too: what fibnicd believed before and after each restart.
        self.web_port = 0
        if os.environ.get("FRRDIFF_HOLD_SECONDS"):
            self.web_port = 18480
        elif os.environ.get("FRRDIFF_KEEP"):
            self.web_port = 18481 + os.getpid() % 2000
        self._fibnicd_config(2621 if self.fpm_delay else 2620, "batch_delay: 1ms, batch_max: 4", self.web_port)
        self.start_fibnicd()
        if self.fpm_delay:  # zebra connects to 2620, as ever
            self._spawn("fpm_delay", [sys.executable, os.path.join(HERE, "fpm_delay.py"), "2620", "2621", str(self.fpm_delay)])
        self.start_zebra()
        self.start_frr("bgpd")
        self.start_frr("staticd")
        for k in range(BGP_PEERS):
            with open("%s/p%d.conf" % (w, k), "w") as f:
                f.write(bird_conf(k, {}, w))
            self.procs["bird%d" % k] = subprocess.Popen(
                ["ip", "netns", "exec", self.peers[k], "bird", "-f", "-c", "%s/p%d.conf" % (w, k),
                 "-s", "%s/p%d.ctl" % (w, k)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        self.oracle = KernelOracle(self.ns)
        # Counts the kernel route changes FRR makes (route_changes()); each line
        # stamped with the wall clock, so a kept run lines it up with fibnicd.log.
        self.monitor_out = open(w + "/monitor.txt", "w")
        self.procs["monitor"] = subprocess.Popen(["ip", "-tshort", "-n", self.ns, "monitor", "route", "nexthop"],
                                                 stdout=self.monitor_out)

    def _fibnicd_config(self, fpm_port, policies, web_port):
        """fibnicd's configuration (self.cfg): k0..k3 as ports 0..3, the kernel
        source (tables 255, 254), FPM on fpm_port, the REST API on web_port (0: none)."""
        ports = "\n".join("  - {interface: k%d, port: %d}" % (i, i) for i in range(kdiff.PORTS))
        self.cfg = self.work + "/fibnicd.yaml"
        with open(self.cfg, "w") as f:
            f.write("device: {backend: file, path: %s/bar0.img, code_bits: 4}\nports:\n%s\n"
                    "sources:\n  kernel: {enabled: true, tables: [255, 254]}\n"
                    "  fpm: {enabled: true, listen: 127.0.0.1:%d}\npolicies: {%s}\nweb: %s\n"
                    % (self.work, ports, fpm_port, policies,
                       "{listen: 127.0.0.1:%d}" % web_port if web_port else "{enabled: false}"))

    def route_changes(self, split=False):
        """Routes and next-hop objects FRR added, replaced or deleted in the
        kernel so far (split: (routes, next-hop objects))."""
        self.monitor_out.flush()
        routes = nexthops = 0
        with open(self.work + "/monitor.txt") as f:
            for line in f:
                if PROTO_FRR.search(line):
                    if NEXTHOP_LINE.match(line):
                        nexthops += 1
                    else:
                        routes += 1
        return (routes, nexthops) if split else routes + nexthops

    def kernel_changes(self):
        """How much the kernel has announced of its routes and next-hop
        objects so far (any daemon's; grows with every change)."""
        return os.path.getsize(self.work + "/monitor.txt")

    # --- processes ---------------------------------------------------------
    def _spawn(self, name, argv, ns=None):
        log = open("%s/%s.log" % (self.work, name), "a")
        self.procs[name] = subprocess.Popen(["ip", "netns", "exec", ns or self.ns] + argv, stdout=log,
                                            stderr=subprocess.STDOUT)
        log.close()

    def start_frr(self, daemon, node=None):
        """node: another FRR instance's (name, namespace); its files are in
        work/<name> and its processes named <name>-<daemon>. Else the router's."""
        name, ns = node or (None, None)
        d = "%s/%s" % (self.work, name or "frr")
        self._spawn("%s-%s" % (name, daemon) if name else daemon,
                    [FRR + daemon, "-f", "%s/%s.conf" % (d, daemon), "-i", "%s/%s.pid" % (d, daemon),
                     "-z", d + "/zserv.api", "--vty_socket", d, "-u", "frr", "-g", "frr", "-P", "0",
                     "--log", "stdout"] + (["-M", "dplane_fpm_nl"] if daemon == "zebra" and not name else []), ns)

    def start_zebra(self, node=None):
        self.start_frr("zebra", node)
        vty = "%s/%s/zebra.vty" % (self.work, node[0] if node else "frr")
        self._wait(lambda: os.path.exists(vty), 15, "zebra's vty")

    def stop(self, name, sig=signal.SIGTERM):
        p = self.procs.pop(name, None)
        if p and p.poll() is None:
            p.send_signal(sig)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def start_fibnicd(self, tick=None):
        log = self.work + "/fibnicd.log"
        before = open(log).read().count("ready:") if os.path.exists(log) else 0
        self._spawn("fibnicd", [self.fibnicd, "--config", self.cfg])
        # Its first write comes after the kernel's dump.
        self._wait(lambda: open(log).read().count("ready:") > before, 20, "fibnicd ready", tick)
        if self.bar is None:  # the BAR file outlives fibnicd, as a card does: one reader
            self.bar = subprocess.Popen([self.bar_tool, self.work + "/bar0.img"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)

    def _wait(self, cond, seconds, what, tick=None):
        deadline = time.time() + seconds
        while not cond():
            if tick:
                tick()
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise RuntimeError("%s exited: %s" % (name, self.logs()))
            if time.time() > deadline:
                raise RuntimeError("timed out waiting for %s: %s" % (what, self.logs()))
            time.sleep(0.01 if tick else 0.05)

    def logs(self):
        return sh("sh", "-c", "tail -n 15 %s/*.log" % self.work, check=False)

    def close(self):
        if self.oracle:
            self.oracle.close()
            self.oracle = None
        for name in list(self.procs):
            self.stop(name)
        if self.bar:
            self.bar.terminate()
            self.bar.wait()
        for ns in [self.ns, self.host] + self.peers:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        keep = os.environ.get("FRRDIFF_KEEP")
        if keep and self.ns.endswith("-m"):  # the run's own, not a shrinking replay's
            os.makedirs(keep, exist_ok=True)
            subprocess.run(["mv", self.work, keep])
            print("frrdiff: work directory (logs, BARs, host state) kept in %s/%s" % (keep, os.path.basename(self.work)))
        subprocess.run(["rm", "-rf", self.work])

    def save_fibnicd_state(self, name):
        """With a REST API (a kept or held run): fibnicd's own view — status,
        routes, next-hop slots, neighbours, TCAM — in work/<name>.json, so a
        restart that wrote the device shows what the old run believed."""
        if not self.web_port:
            return
        ctl = os.path.join(os.path.dirname(self.fibnicd), "fibnicctl")
        out = {}
        for cmd in (["status"], ["routes", "--limit", "1000"], ["nexthops"], ["neighbors"], ["tcam"]):
            r = subprocess.run(["ip", "netns", "exec", self.ns, ctl, "--server", "127.0.0.1:%d" % self.web_port,
                                "--json"] + cmd, capture_output=True, text=True)
            out[cmd[0]] = r.stdout if r.returncode == 0 else "exit %d: %s" % (r.returncode, r.stderr)
        with open("%s/%s.json" % (self.work, name), "w") as f:
            json.dump(out, f, indent=1)

    def save_host_state(self, name, addrs=()):
        """With FRRDIFF_KEEP: what the host and zebra hold now, for a report,
        and the kernel's own words on the first few `addrs` (a lookup that
        fails says why: `ip route get` prints the kernel's error)."""
        if not os.environ.get("FRRDIFF_KEEP"):
            return
        with open("%s/%s.txt" % (self.work, name), "w") as f:
            f.write("# saved at %s\n" % clock(time.time()))
            for a in list(addrs)[:3]:
                # Each CPU once: IPv6 keeps a per-CPU copy of a route next to the FIB.
                for argv in ([["taskset", "-c", str(c), "ip", "-n", self.ns, "route", "get", a]
                              for c in range(os.cpu_count() or 1)][:4] +
                             [["ip", "-n", self.ns, "route", "get", "fibmatch", a]]):
                    out = subprocess.run(argv, capture_output=True, text=True)
                    f.write("# %s\n%s%s\n" % (" ".join(argv), out.stdout, out.stderr))
            for key in ("net/ipv6/conf/all/forwarding", "net/ipv4/ip_forward"):
                out = subprocess.run(["ip", "netns", "exec", self.ns, "cat", "/proc/sys/" + key], capture_output=True, text=True)
                f.write("# %s = %s\n" % (key, out.stdout.strip()))
            for argv in (["ip", "-n", self.ns, "-d", "route", "show", "table", "all"],
                         ["ip", "-n", self.ns, "-d", "-6", "route", "show", "table", "all"],
                         ["ip", "-n", self.ns, "-d", "nexthop", "show"], ["ip", "-n", self.ns, "neigh", "show", "nud", "all"],
                         ["ip", "-n", self.ns, "-d", "link", "show"], ["ip", "-n", self.ns, "rule", "show"],
                         ["ip", "-n", self.ns, "-6", "rule", "show"], ["ip", "-n", self.ns, "-6", "addr", "show"],
                         # IPv6 keeps per-destination clones (exceptions) beside its FIB and
                         # answers from them first: a stale one outvotes the FIB.
                         ["ip", "-n", self.ns, "-d", "-6", "route", "show", "cache", "table", "all"],
                         ["ip", "-n", self.ns, "-s", "-6", "neigh", "show", "nud", "all"],
                         ["ip", "netns", "exec", self.ns, "cat", "/proc/net/rt6_stats"]):
                f.write("# %s\n%s\n" % (" ".join(argv), sh(*argv, check=False)))
            for c in ("show ip route", "show ipv6 route", "show nexthop-group rib"):
                f.write("# vtysh %s\n%s\n" % (c, self.vtysh(c)))

    # --- events ------------------------------------------------------------
    def vtysh(self, *cmds, node=None):
        """node: another FRR instance's name (start_frr), else the router's."""
        args = ["vtysh", "--vty_socket", "%s/%s" % (self.work, node or "frr")]
        for c in cmds:
            args += ["-c", c]
        return subprocess.run(args, capture_output=True, text=True).stdout

    def apply(self, ev):
        kind = ev[0]
        if kind == "bird":
            path = "%s/p%d.conf" % (self.work, ev[1])
            with open(path, "w") as f:
                f.write(ev[2].replace("WORKDIR", self.work))
            self.birdc(ev[1], "configure")
            for af in ("r4", "r6"):
                self.sessions[(ev[1], af)] = "protocol bgp %s { disabled no" % af in ev[2]
        elif kind == "carrier":
            sh("ip", "-n", self._peer_ns(ev[1]), "link", "set", "p" + IFS[ev[1]], "up" if ev[2] else "down")
            self.carrier[ev[1]] = ev[2]
        elif kind == "vtysh":
            self.vtysh("configure terminal", *ev[1])
        elif kind == "zebra":
            self.stop("zebra", signal.SIGKILL if ev[1] == "KILL" else signal.SIGTERM)
            os.path.exists(self.work + "/frr/zebra.vty") and os.unlink(self.work + "/frr/zebra.vty")
            self.start_zebra()
            self.zebra_restarted = True
        elif kind == "fibnicd":
            self.stop("fibnicd")
            self.start_fibnicd()

    def diagnose(self, addr):
        """What zebra, the kernel and fibnicd say about addr (for a report)."""
        fam = "ipv6" if ":" in addr else "ip"
        return "zebra:\n%s\nkernel: %s\nfibnicd log:\n%s" % (
            self.vtysh("show %s route %s" % (fam, addr)).strip(),
            sh("ip", "-n", self.ns, "route", "get", "fibmatch", addr, check=False).strip() or "no route",
            sh("tail", "-n", "8", self.work + "/fibnicd.log", check=False).rstrip())

    def birdc(self, k, cmd):
        sh("birdc", "-s", "%s/p%d.ctl" % (self.work, k), *cmd.split(), check=False)

    # --- settling ----------------------------------------------------------
    def _sessions_as_expected(self):
        try:
            j = json.loads(self.vtysh("show bgp summary json") or "{}")
        except ValueError:
            return False
        for (k, af), enabled in self.sessions.items():
            addr = str(ipaddress.ip_address(("10.%d.0.2" if af == "r4" else "2001:db8:%d::2") % k))
            peers = j.get("ipv4Unicast" if af == "r4" else "ipv6Unicast", {}).get("peers", {})
            up = peers.get(addr, {}).get("state") == "Established"
            if up != (enabled and self.carrier[k]):
                self.waiting_for = "%s %s (%s)" % (addr, "up" if enabled else "down", peers.get(addr, {}).get("state"))
                return False
        return True

    def _snapshot(self):
        return (self.generation(), self.vtysh("show ip route summary", "show ipv6 route summary"),
                sh("ip", "-n", self.ns, "route", "show", "table", "all"),
                sh("ip", "-n", self.ns, "-6", "route", "show", "table", "all"))

    def bar_image(self):
        with open(self.work + "/bar0.img", "rb") as f:
            return f.read()

    def host_state(self):
        """The kernel's routes, next-hop objects and usable neighbours: what
        fibnicd reads (a fibnicd restart with this unchanged must not write)."""
        _, _, neigh, _ = self.view()
        return (sh("ip", "-n", self.ns, "route", "show", "table", "all"),
                sh("ip", "-n", self.ns, "-6", "route", "show", "table", "all"),
                sh("ip", "-n", self.ns, "nexthop", "show", check=False), sorted(neigh.items()))

    def quiesce(self):
        """BGP sessions as the stream left them (at most 30 s: a session may
        take a hold time to notice a lost carrier), then zebra's summaries, the
        kernel's routes and GENERATION unchanged for 0.6 s (at most 20 s).
        Carrier changes the kernel still holds back are acted on first
        (kdiff.Env.settle_links)."""
        self.settle_links()
        t0 = time.time()
        while self.zebra_restarted and time.time() < t0 + 30:
            # A new zebra is settled once bgpd and staticd are back and have
            # sent their routes (bgpd reconnects after a few seconds).
            clients = self.vtysh("show zebra client summary")
            if all(re.search(r"^%s\s" % c, clients, re.M) for c in ("bgp", "static")):
                self.zebra_restarted = False
                time.sleep(1)
            else:
                time.sleep(0.2)
        while not self._sessions_as_expected() and time.time() < t0 + 30:
            time.sleep(0.2)
        t1 = time.time()
        last, stable = self._snapshot(), 0
        while stable < 3 and time.time() < t1 + 20:
            time.sleep(0.2)
            snap = self._snapshot()
            stable = stable + 1 if snap == last else 0
            last = snap
        if VERBOSE:
            print("  settled: sessions %.1f s%s, routes %.1f s" % (
                t1 - t0, " (waited for %s)" % self.waiting_for if t1 - t0 > 29 else "", time.time() - t1), flush=True)


def restart_window(env, rng):
    """fibnicd stopped and started again while FRR and the kernel stay put: the
    BAR (like a card) keeps its contents, and every answer read from it from
    the stop until fibnicd is quiescent again must be a punt or the kernel's.
    When the kernel's routes, next-hop objects and usable neighbours stay the
    same from before the old run's last writes until the new one is settled,
    the restart must not write the device at all: GENERATION and the BAR as
    the old run left them.
    Returns (divergences, whether fibnicd wrote the device, whether the host
    stayed unchanged)."""
    env.quiesce()
    port_of, contexts, neigh, routes = env.view()
    addrs = kdiff.sample(rng, routes, neigh, cap=60)
    before = kdiff.kernel_sets(env, contexts, addrs)
    state0 = env.host_state()
    changes0 = env.kernel_changes()
    env.save_fibnicd_state("fibnicd_before_restart")
    reads = []

    def settle(most, read):
        """GENERATION unmoved for 0.5 s (at most `most` seconds); `read`: the device read meanwhile."""
        last, stable, t0 = env.generation(), 0, time.time()
        while stable < 50 and time.time() < t0 + most:
            if read:
                reads.append((time.time(), env.device(addrs)))
            time.sleep(0.01)
            g = env.generation()
            stable = stable + 1 if g == last else 0
            last = g

    # The old run may still be writing what the kernel did before state0 (a
    # zebra that came back sends its routes in bursts the quiesce above can
    # fall between): it finishes, and the device as it leaves it is what the
    # new run is held to.
    settle(10, read=False)
    env.stop("fibnicd")
    gen0 = env.generation()
    image0 = env.bar_image()
    reads.append((time.time(), env.device(addrs)))
    env.start_fibnicd(tick=lambda: reads.append((time.time(), env.device(addrs))))
    unchanged = env.host_state() == state0
    settle(float("inf"), read=True)
    # The host must have stayed put through the whole window, not only until
    # fibnicd was ready: zebra may still be installing a BGP update that came
    # in two parts, a second apart, after the settle looked quiet.
    time.sleep(0.1)  # what the kernel announced by now has reached the monitor
    unchanged = unchanged and env.host_state() == state0 and env.kernel_changes() == changes0
    after = kdiff.kernel_sets(env, contexts, addrs)
    # A group's path that 16 flows missed: asked again with 512 (kdiff.check_quiescent).
    doubtful = {a for _, snap in reads for a, d in zip(addrs, snap)
                if not acceptable(d, before[a], port_of.get, neigh) and not acceptable(d, after[a], port_of.get, neigh)}
    after.update(kdiff.kernel_sets(env, contexts, sorted(doubtful), kdiff.FLOWS * 32))
    bad = []
    for i, (t, snap) in enumerate(reads):
        for a, d in zip(addrs, snap):
            if not acceptable(d, before[a], port_of.get, neigh) and not acceptable(d, after[a], port_of.get, neigh):
                bad.append((a, d, "read %d of %d across the fibnicd restart (%s); the kernel: %s" %
                            (i + 1, len(reads), clock(t), [sorted(h) for h in before[a]])))
    gen1, image1 = env.generation(), env.bar_image()
    wrote = gen1 != gen0 or image1 != image0
    if wrote and unchanged:
        env.save_host_state("host_at_restart")
        env.save_fibnicd_state("fibnicd_after_restart")
        with open(env.work + "/before.img", "wb") as f:
            f.write(image0)
        diff = sh(os.path.join(os.path.dirname(env.fibnicd), "fibnicctl"), "image", "diff", env.work + "/before.img",
                  env.work + "/bar0.img", check=False).strip()
        bad.append(("GENERATION", "%s -> %s" % (gen0, gen1),
                    "a fibnicd restart with the kernel's routes and neighbours unchanged wrote the device:\n    " +
                    diff.replace("\n", "\n    ")))
    return bad[:10], wrote, unchanged


def new_stats():
    return {"fibnicd restarts": 0, "of them with the host unchanged": 0, "restarts that wrote the device": 0,
            "zebra restarts": 0}


def run_chunk(env, rng, chunk, stats):
    """Applies a chunk; a fibnicd restart in it is checked as a window."""
    for ev in chunk:
        if ev[0] == "fibnicd":
            bad, wrote, unchanged = restart_window(env, rng)
            stats["fibnicd restarts"] += 1
            stats["of them with the host unchanged"] += unchanged
            stats["restarts that wrote the device"] += wrote
            if bad:
                return bad
        else:
            if VERBOSE:
                print("  %s" % describe(ev), flush=True)
            env.apply(ev)
            stats["zebra restarts"] += ev[0] == "zebra"
    return []


def replay_shows(args, seed, events, addrs, pauses):
    try:
        return replay_shows_once(args, seed, events, addrs, pauses)
    except RuntimeError as e:  # a replay's own failure (a daemon exited, a timeout) shows nothing
        print("  (a shrinking replay failed: %s)" % str(e).splitlines()[0], flush=True)
        return False


def replay_shows_once(args, seed, events, addrs, pauses):
    env = FrrEnv(args[0], args[1], "r", args[2])
    try:
        rng, start = random.Random(seed), 0
        for end in [p for p in pauses if p < len(events)] + [len(events)]:
            bad = run_chunk(env, rng, events[start:end], new_stats())
            if bad:
                return bad
            env.quiesce()
            start = end
        # A restart that wrote the device shows in run_chunk; the rest are addresses.
        addrs = [a for a in addrs if a != "GENERATION"]
        return addrs and kdiff.check_quiescent(env, rng, addrs)[0]
    finally:
        env.close()


def replay_env(seed, nhg):
    """The settings a seed's event stream and chunking depend on."""
    return "FIBNIC_SEED=%d FRRDIFF_NHG=%d FRRDIFF_CHUNK=%s FRRDIFF_CHURN=%s" % (
        seed, nhg, os.environ.get("FRRDIFF_CHUNK", "12"), os.environ.get("FRRDIFF_CHURN", "1"))


def clock(t):
    """Wall-clock time as fibnicd.log and monitor.txt print it."""
    return time.strftime("%H:%M:%S", time.localtime(t)) + ".%03d" % (t % 1 * 1000)


def report(args, seed, events, bad, pauses):
    print("DIVERGENCE (seed %d, after %d events, reported at %s; %s replays it)" %
          (seed, len(events), clock(time.time()), replay_env(seed, args[2])))
    for a, d, k in bad[:10]:
        print("  %s: device %s, kernel %s" % (a, d or "punt", k))
    n = len(events)
    if os.environ.get("FRRDIFF_NO_SHRINK") != "1":
        addrs = [a for a, _, _ in bad]
        budget = time.time() + float(os.environ.get("FRRDIFF_SHRINK_SECONDS", "240"))
        lo, hi = 0, n  # events[:hi] diverges
        while hi - lo > 1 and time.time() < budget:
            mid = (lo + hi) // 2
            if replay_shows(args, seed, events[:mid], addrs, pauses):
                hi = mid
            else:
                lo = mid
        n = hi
        print("shortest prefix found that shows it%s: %d events" %
              ("" if hi - lo <= 1 else " (shrink budget spent)", n))
    for i, ev in enumerate(events[:n]):
        print("  %4d %s" % (i, describe(ev)))


def main():
    # A soak stopped with SIGTERM/SIGINT still tears its namespaces down.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    fibnicd, bar_tool = sys.argv[1], sys.argv[2]
    env_seed = os.environ.get("FIBNIC_SEED")
    seed = int(env_seed, 0) if env_seed else int.from_bytes(os.urandom(6), "little")
    nhg = int(os.environ.get("FRRDIFF_NHG", "1"))
    print("frrdiff: seed %d, %s (%s replays it)" %
          (seed, "next-hop groups" if nhg else "inline next hops", replay_env(seed, nhg)), flush=True)
    max_events = int(os.environ.get("FRRDIFF_EVENTS", "400"))
    max_seconds = float(os.environ.get("FRRDIFF_SECONDS", "70"))
    max_chunk = int(os.environ.get("FRRDIFF_CHUNK", "12"))
    max_changes = int(os.environ.get("FRRDIFF_ROUTE_CHANGES", "0"))
    args = (fibnicd, bar_tool, nhg)
    rng = random.Random(seed ^ 0x5EED)
    env = FrrEnv(fibnicd, bar_tool, "m", nhg)
    churn = int(os.environ.get("FRRDIFF_CHURN", "1"))
    stream = EventStream(seed, "WORKDIR", churn)  # apply() names the (re)play's own directory
    events, pauses, checks, forwards = [], [], 0, 0
    stats = new_stats()
    t0 = time.time()
    try:
        env.quiesce()
        next_progress = t0 + 60
        while (len(events) < max_events and time.time() - t0 < max_seconds and
               (not max_changes or env.route_changes() < max_changes)):
            if time.time() > next_progress:
                next_progress += 60
                print("  %.0f s: %d events, %d FRR-driven route changes, %d checks, %d forwarding answers" %
                      (time.time() - t0, len(events), env.route_changes(), checks, forwards), flush=True)
            chunk = [stream.next() for _ in range(rng.randint(1, max_chunk))]
            events += chunk
            bad = run_chunk(env, rng, chunk, stats)
            if not bad:
                pauses.append(len(events))
                bad, n = kdiff.check_quiescent(env, rng)
                checks += 1
                forwards += n
            if bad:
                print("  after %.0f s, %d FRR-driven route changes" % (time.time() - t0, env.route_changes()))
                env.save_host_state("host_at_divergence", [a for a, _, _ in bad if a != "GENERATION"])
                if bad[0][0] != "GENERATION":
                    print("  " + env.diagnose(bad[0][0]).replace("\n", "\n  "))
                hold = float(os.environ.get("FRRDIFF_HOLD_SECONDS", "0"))
                if hold > 0:  # to look at the live kernel (ip -n NS ...) before the teardown
                    print("  holding namespace %s (and FRR, fibnicd) for %.0f s" % (env.ns, hold), flush=True)
                    time.sleep(hold)
                env.close()
                env = None
                report(args, seed, events, bad, pauses[:-1])
                return 1
        dt = time.time() - t0
        print("frrdiff: %d events in %.1f s (%.1f events/s incl. settling and checks), %d quiescent checks, "
              "%d forwarding answers checked, %s, 0 divergences" %
              (len(events), dt, len(events) / dt, checks, forwards,
               ", ".join("%d %s" % (v, k) for k, v in stats.items())))
        routes, nexthops = env.route_changes(split=True)
        print("frrdiff: FRR-driven route changes: %d (%.1f/s; in the kernel: %d routes and %d next-hop objects "
              "added, replaced or deleted)" % (routes + nexthops, (routes + nexthops) / dt, routes, nexthops))
        return kdiff.verdict(forwards)
    finally:
        if env:
            env.close()


if __name__ == "__main__":
    sys.exit(main())
