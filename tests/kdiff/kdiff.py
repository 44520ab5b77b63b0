#!/usr/bin/env python3
"""Kernel differential harness (docs/oracle.md). Root only.

  kdiff.py FIBNICD KDIFF_BAR

A router namespace with k0..k3 mapped to FIBNIC ports 0..3 and u0 not mapped,
fibnicd (file backend, kernel source) running in it, and a seeded random
stream of real `ip` changes (kdiff_events.py). After each chunk of events,
once fibnicd is quiescent (its GENERATION stopped moving), every sampled
destination's hardware answer (HwLookup on the BAR file, via KDIFF_BAR) must
be a punt or what the kernel itself does (RTM_GETROUTE + its neighbour
table). Some chunks run one event at a time with the device sampled between
events: there the answer must be a punt or one the kernel gave at some point
since the last quiescent check.

A divergence prints the seed and the shortest event prefix that shows it
(found by replaying prefixes in fresh namespaces) and exits 1.

Environment: FIBNIC_SEED (replay), KDIFF_EVENTS (default 3000; up to three
times as many while the device has not forwarded), KDIFF_SECONDS
(default 150: stop after this long), KDIFF_CHECK_EVERY (quiescent check every
N chunks, default 1), KDIFF_WINDOW (share of chunks run as a window check,
default 0.08), KDIFF_BATCH_MAX (fibnicd batch_max, default 4),
KDIFF_NO_SHRINK=1 (report without shrinking), KDIFF_SPECIAL_ROUTES (share of
route events that add a blackhole, unreachable or prohibit route, default
0.12), KDIFF_REQUIRE_DROP=1 (fail unless the device dropped some sampled
destination, which only a kernel blackhole allows), KDIFF_HOLD_SECONDS=N (keep the
namespaces, fibnicd and its BAR N seconds after a divergence, to question
them), KDIFF_RECORD=FILE (record the kernel's messages and its answers at
each passing quiescent check for KernelTable's replay test, netlink_record.py),
KDIFF_NS_PREFIX (namespace
name prefix, default "kd"), KDIFF_PROGRESS (print a progress
line every N events; default 0 = none), KDIFF_NO_VRF=1 (no VRF events even
where the kernel has VRF), KDIFF_REQUIRE_VRF=1 (fail unless the
kernel has VRF and the run checked forwarding answers with every port in it,
going on past the bounds for that, at most KDIFF_VRF_SECONDS, by default
twice KDIFF_SECONDS: the VRF run
in a virtual machine, tests/vm)."""
import ipaddress
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kdiff_events import EventStream, IFS, PORTS, SUBNET, connected  # noqa: E402
from kernel_oracle import FLOWS, KernelOracle, NeighWatch, USABLE_NUD, acceptable  # noqa: E402
from netlink_record import Recorder  # noqa: E402

MARTIANS = ["224.0.0.5", "239.1.2.3", "255.255.255.255", "0.1.2.3", "127.0.0.1", "240.0.0.1",
            "ff02::1", "ff0e::5", "fe80::1", "::1", "::ffff:10.1.0.2"]


def sh(*args, inp=None, check=True):
    r = subprocess.run(args, input=inp, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(args), r.stderr.strip()))
    return r.stdout


class Env:
    """Namespaces + fibnicd + the BAR reader, built fresh for each (re)play."""

    def __init__(self, fibnicd, bar_tool, tag):
        # KDIFF_NS_PREFIX: several harnesses on one machine (CI, soaks) never share a name.
        self.ns = "%s-%d-%s" % (os.environ.get("KDIFF_NS_PREFIX", "kd"), os.getpid(), tag)
        self.peer = self.ns + "-p"
        self.work = tempfile.mkdtemp(prefix="kdiff-")
        self.daemon = self.bar = self.oracle = self.recorder = None
        self.sysctls = {}
        self.quiesce_timeouts = 0
        self.drops = 0  # device answers that dropped (the kernel blackholed them), at quiescent checks
        # Answers checked while a mapped port was in the VRF (split or not), and
        # forwarding answers while all were (fibnicd follows table 10).
        self.vrf_checked = self.vrf_forwards = self.vrf_all_checks = 0
        try:
            self._setup(fibnicd, bar_tool)
        except BaseException:
            self.close()
            raise

    def _setup(self, fibnicd, bar_tool):
        for ns in (self.ns, self.peer):
            sh("ip", "netns", "add", ns)
            self.sysctl(ns, "net/ipv6/conf/default/accept_dad", 0)
            self.sysctl(ns, "net/ipv6/conf/all/accept_dad", 0)
        for k, v in [("net/ipv4/ip_forward", 1), ("net/ipv6/conf/all/forwarding", 1),
                     ("net/ipv4/fib_multipath_hash_policy", 1), ("net/ipv6/fib_multipath_hash_policy", 1)]:
            self.sysctl(self.ns, k, v)
        # VRF is a module some kernels lack (then the stream has no VRF events;
        # KDIFF_NO_VRF=1 gives that stream where the kernel has VRF).
        self.vrf = os.environ.get("KDIFF_NO_VRF") != "1" and subprocess.run(
            ["ip", "-n", self.ns, "link", "add", "kdvrf", "type", "vrf", "table", "10"],
            capture_output=True).returncode == 0
        lines = [("r", "link set lo up"), ("p", "link set lo up")] + ([("r", "link set kdvrf up")] if self.vrf else [])
        for i, name in enumerate(IFS):
            lines += [("r", "link add %s type veth peer name p%s netns %s" % (name, name, self.peer)),
                      ("r", "link set %s up" % name), ("p", "link set p%s up" % name),
                      ("p", "addr add 10.%d.0.2/24 dev p%s" % (SUBNET[i], name)),
                      ("p", "addr add 2001:db8:%d::2/64 dev p%s nodad" % (SUBNET[i], name))] + connected(i)
        self.run_lines(lines, force=False)
        ports = "\n".join("  - {interface: k%d, port: %d}" % (i, i) for i in range(PORTS))
        cfg = os.path.join(self.work, "fibnicd.yaml")
        with open(cfg, "w") as f:
            f.write("device: {backend: file, path: %s/bar0.img, code_bits: 4}\nports:\n%s\n"
                    "sources:\n  kernel: {enabled: true, tables: [255, 254%s]}\n"
                    # A short slot hold: the stream changes neighbours and routes every
                    # few events, and held slots (60 s by default) would leave the device
                    # punting most of a slow run (a guest under emulation) with little
                    # to check; 1 s still holds, lapses and reviews.
                    "policies: {batch_delay: 1ms, batch_max: %s, slot_hold: 1s}\nweb: %s\n"
                    % (self.work, ports, ", 10" if self.vrf else "", os.environ.get("KDIFF_BATCH_MAX", "4"),
                       # Held after a divergence: its REST API (fibnicctl --server) to question its RIB.
                       "{listen: 127.0.0.1:%d}" % (20000 + os.getpid() % 10000) if os.environ.get("KDIFF_HOLD_SECONDS")
                       else "{enabled: false}"))
        self.log = open(os.path.join(self.work, "log"), "w+")
        self.daemon = subprocess.Popen(["ip", "netns", "exec", self.ns, fibnicd, "--config", cfg],
                                       stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while "ready:" not in open(self.log.name).read():
            if self.daemon.poll() is not None or time.time() > deadline:
                raise RuntimeError("fibnicd did not start:\n" + open(self.log.name).read())
            time.sleep(0.05)
        self.bar = subprocess.Popen([bar_tool, os.path.join(self.work, "bar0.img")], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, text=True)
        self.oracle = KernelOracle(self.ns)
        if os.environ.get("KDIFF_RECORD"):  # for KernelTable's replay test (netlink_record.py)
            self.recorder = Recorder(self.ns, os.environ["KDIFF_RECORD"])

    def close(self):
        if self.recorder:
            self.recorder.close()
        if self.oracle:
            self.oracle.close()
        for p in (self.bar, self.daemon):
            if p and p.poll() is None:
                p.terminate()
                p.wait()
        for ns in (self.ns, self.peer):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        subprocess.run(["rm", "-rf", self.work])

    def sysctl(self, ns, path, value):
        # The value alone, no newline: some kernels (Debian's 6.1.192) answer a
        # write of net.ipv6.conf.all.ignore_routes_with_linkdown with the count
        # of the digit only, and the newline's second write fails.
        sh("ip", "netns", "exec", ns, "sh", "-c", "printf %%s %s > /proc/sys/%s" % (value, path))
        if ns == self.ns:
            self.sysctls[path] = str(value)

    def ignore_linkdown(self, addr):
        fam = "ipv6" if ":" in addr else "ipv4"
        return self.sysctls.get("net/%s/conf/all/ignore_routes_with_linkdown" % fam) == "1"

    def run_lines(self, lines, force=True):
        """Runs (target, line) items, batching consecutive ones per target."""
        i = 0
        while i < len(lines):
            target = lines[i][0]
            j = i
            while j < len(lines) and lines[j][0] == target:
                j += 1
            if target == "s":
                for _, text in lines[i:j]:
                    path, value = text.split()
                    self.sysctl(self.ns, path, value)
            else:
                ns = self.ns if target == "r" else self.peer
                sh("ip", "-n", ns, *(["-force"] if force else []), "-batch", "-",
                   inp="".join(text.replace("PEER", self.peer) + "\n" for _, text in lines[i:j]),
                   check=not force)
            i = j

    def device(self, addrs):
        return bar_answers(self.bar, addrs)

    def generation(self):
        self.bar.stdin.write("gen\n")
        self.bar.stdin.flush()
        return self.bar.stdout.readline().strip()

    def fibnicd_busy(self):
        """True while fibnicd has work in hand: a thread runnable, or a netlink
        message waiting in one of its sockets. On a loaded machine it may not
        run for a while after the kernel changed, and GENERATION alone would
        then look quiescent."""
        pid = self.daemon.pid
        try:
            for task in os.listdir("/proc/%d/task" % pid):
                with open("/proc/%d/task/%s/stat" % (pid, task)) as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "R":
                        return True
            inodes = set()
            for fd in os.listdir("/proc/%d/fd" % pid):
                link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
                if link.startswith("socket:["):
                    inodes.add(link[8:-1])
            with open("/proc/%d/net/netlink" % pid) as f:  # its namespace's sockets
                for line in f.readlines()[1:]:
                    col = line.split()
                    if col[9] in inodes and int(col[4]) > 0:  # Rmem: bytes queued
                        return True
        except (OSError, IndexError):  # gone, or a thread/fd vanished while read
            return self.daemon.poll() is None
        return False

    def settle_links(self):
        """Makes the kernel act now on every carrier change it still holds.
        A veth's carrier change reaches the FIB (LINKDOWN, the neighbour
        flush, RTM_NEWLINK) only when linkwatch runs, which the kernel paces
        to once a second when changes come often: the kernel may change a
        while after the event that caused it, by itself, between the quiesce
        and the reads that follow. RTM_GETLINK for a device (not a dump)
        runs its pending linkwatch work at once (rtnl_getlink)."""
        names = [l["ifname"] for l in self.ip_json("link", "show")]
        sh("ip", "-n", self.ns, "-force", "-batch", "-", inp="".join("link show dev %s\n" % n for n in names),
           check=False)

    def quiesce(self):
        """Waits until the kernel holds no carrier change back (settle_links),
        fibnicd is idle (fibnicd_busy) and GENERATION has not moved for 60 ms,
        at most 30 s (counted in quiesce_timeouts)."""
        self.settle_links()
        time.sleep(0.02)
        last, stable, t0 = self.generation(), 0, time.time()
        while stable < 6:
            if time.time() - t0 > 30:
                self.quiesce_timeouts += 1
                return
            time.sleep(0.01)
            g = self.generation()
            stable = stable + 1 if g == last and not self.fibnicd_busy() else 0
            last = g

    def ip_json(self, *args):
        return json.loads(sh("ip", "-n", self.ns, "-j", *args) or "[]")

    def view(self, with_routes=True):
        """The kernel state the oracle needs besides RTM_GETROUTE (with_routes=False:
        without the route list, which a sampler reading many times a second
        does not need)."""
        links = self.ip_json("-d", "link", "show")
        by_name = {l["ifname"]: l for l in links}
        port_of = {l["ifindex"]: IFS.index(l["ifname"]) for l in links if l["ifname"] in IFS[:PORTS]}
        contexts = sorted({by_name[l["master"]]["ifindex"] if l.get("master") else 0
                           for l in links if l["ifname"] in IFS[:PORTS]}) or [0]
        neigh = {}
        for n in self.ip_json("neigh", "show", "nud", "all"):  # plain "show" hides NOARP
            if "lladdr" in n and n["dev"] in by_name and USABLE_NUD & set(n.get("state", [])):
                neigh[(by_name[n["dev"]]["ifindex"], str(ipaddress.ip_address(n["dst"])))] = n["lladdr"]
        routes = []
        for fam in ("-4", "-6") if with_routes else ():
            for r in self.ip_json(fam, "route", "show", "table", "all"):
                d = r["dst"]
                if d == "default":
                    d = "0.0.0.0/0" if fam == "-4" else "::/0"
                elif "/" not in d:
                    d += "/32" if fam == "-4" else "/128"
                routes.append(d)
        return port_of, contexts, neigh, routes


def bar_answers(bar, addrs):
    """The device's answers for addrs from a kdiff_bar process: None (punt),
    "drop" (a DROP entry) or (port, MAC)."""
    bar.stdin.write(" ".join(addrs) + "\n")
    bar.stdin.flush()
    out = []
    for a in bar.stdout.readline().split():
        if a == "p":
            out.append(None)
        elif a == "d":
            out.append("drop")
        else:
            _, port, mac = a.split(",")
            out.append((int(port), mac))
    return out


def sample(rng, routes, neigh, cap=160):
    """Every live route's first/last/random address, every neighbour, random
    addresses and martians."""
    out = set(MARTIANS)
    for d in rng.sample(routes, min(len(routes), cap)):
        try:
            n = ipaddress.ip_network(d, strict=False)
        except ValueError:
            continue
        out.add(str(n[0]))
        out.add(str(n[-1]))
        out.add(str(n[rng.randrange(n.num_addresses)]))
    for (_, a) in neigh:
        out.add(a)
    for _ in range(10):
        out.add(str(ipaddress.IPv4Address(rng.getrandbits(32))))
        out.add(str(ipaddress.IPv4Address(0xC6120000 + rng.getrandbits(17))))
        out.add(str(ipaddress.IPv6Address((0x20010DB8 << 96) + rng.getrandbits(96))))
    return sorted(out)


def kernel_sets(env, contexts, addrs, flows=FLOWS):
    env.oracle.refresh()
    return {a: [env.oracle.answers(a, c, env.ignore_linkdown(a), flows) for c in contexts] for a in addrs}


def check_quiescent(env, rng, extra=()):
    env.quiesce()
    port_of, contexts, neigh, routes = env.view()
    addrs = sorted(set(sample(rng, routes, neigh)) | set(extra))
    bad = []
    for attempt in range(3):  # a slow commit on a loaded machine is not a divergence
        ks = kernel_sets(env, contexts, addrs)
        dev = env.device(addrs)
        # A path of a group that 16 flows did not find: ask with 512 before calling it wrong.
        again = [a for a, d in zip(addrs, dev) if not acceptable(d, ks[a], port_of.get, neigh)]
        ks.update(kernel_sets(env, contexts, again, FLOWS * 32))
        bad = [(a, d, [{(i, gw, port_of.get(i), neigh.get((i, gw), "no usable neighbour")) for i, gw in hops}
                       for hops in ks[a]])
               for a, d in zip(addrs, dev) if not acceptable(d, ks[a], port_of.get, neigh)]
        # The recording keeps the failing check too: the replay test then shows it without a kernel.
        if getattr(env, "recorder", None) and (not bad or attempt == 2):  # frrdiff's and ospfdiff's record nothing
            env.recorder.check(ks, port_of)
        if not bad:
            env.oracle.object_forwards += sum(d not in (None, "drop") and a in env.oracle.by_object
                                              for a, d in zip(addrs, dev))
            env.drops += sum(d == "drop" for d in dev)
            forwards = sum(d not in (None, "drop") for d in dev)
            if contexts != [0]:
                env.vrf_checked += len(addrs)
                if 0 not in contexts and len(contexts) == 1:
                    env.vrf_all_checks += 1
                    env.vrf_forwards += forwards
            return [], forwards
        time.sleep(0.5)
        port_of, contexts, neigh, _ = env.view()
    return bad, len(addrs)


def run_window(env, rng, events):
    """Events one at a time, device sampled between them: each answer must be a
    punt or one the kernel gave since the window began. It begins quiescent:
    after a chunk without a check the device may still be catching up with
    states from before the window."""
    env.quiesce()
    port_of, contexts, neigh, routes = env.view()
    addrs = sample(rng, routes, neigh, cap=30)
    seen = {a: set() for a in addrs}
    snaps = []
    watch = NeighWatch(env.ns)
    last = {}  # the kernel's answers at the previous note

    def note():
        p, c, n, _ = env.view()
        pk = tuple(sorted(p.items()))
        # A neighbour the kernel announced since the last note held between
        # the two samples, with the routes of one of them.
        between = [tuple(sorted({**n, (ifindex, addr): mac}.items())) for ifindex, addr, mac in watch.drain()]
        for a, sets in kernel_sets(env, c, addrs).items():
            now = frozenset(sets)
            seen[a].add((now, tuple(sorted(n.items())), pk))
            for held in between:
                for s in {now, last.get(a, now)}:
                    seen[a].add((s, held, pk))
            last[a] = now

    try:
        note()
        snaps.append(env.device(addrs))  # the window's start: quiescent, so the kernel's answer now
        for ev in events:
            env.run_lines(ev)
            snaps.append(env.device(addrs))
            note()
        # The kernel changes during the wait without an event of the stream: a
        # neighbour fibnicd asked for resolves (its MAC appears), another times
        # out. The last read is held to the kernel's states around it too.
        env.quiesce()
        note()
        snaps.append(env.device(addrs))
        note()
    finally:
        watch.close()
    bad = []
    for i, snap in enumerate(snaps):
        for a, d in zip(addrs, snap):
            if not any(acceptable(d, list(s), dict(p).get, dict(n)) for s, n, p in seen[a]):
                states = sorted({str([sorted(x) for x in s]) for s, _, _ in seen[a]})
                when = "at the window's start" if i == 0 else "after event %d of %d" % (i, len(events))
                bad.append((a, d, "none of the window (device read %s; the kernel's answers in it: %s)"
                            % (when, "; ".join(states))))
    return bad


def replay_shows(fibnicd, bar_tool, seed, events, addrs, pauses):
    """Replays events with the original run's chunks and quiescent pauses
    (pauses: event counts after which the run waited), then checks."""
    env = Env(fibnicd, bar_tool, "r")
    try:
        start = 0
        for end in [p for p in pauses if p < len(events)] + [len(events)]:
            env.run_lines([x for ev in events[start:end] for x in ev])
            env.quiesce()
            start = end
        bad, _ = check_quiescent(env, random.Random(seed), addrs)
        return bad
    finally:
        env.close()


def shrink(fibnicd, bar_tool, seed, events, addrs, pauses):
    """Shortest prefix (binary search over replays) that still diverges."""
    lo, hi = 0, len(events)  # events[:hi] diverges; events[:lo] assumed not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if replay_shows(fibnicd, bar_tool, seed, events[:mid], addrs, pauses):
            hi = mid
        else:
            lo = mid
    return hi


def tell(seed, n, bad):
    print("DIVERGENCE (seed %d, after %d events; FIBNIC_SEED=%d replays it)" % (seed, n, seed))
    for a, d, k in bad[:10]:
        print("  %s: device %s, kernel %s" % (a, d or "punt", k))
    sys.stdout.flush()


def report(seed, events, n, bad, fibnicd, bar_tool, pauses):
    if os.environ.get("KDIFF_NO_SHRINK") != "1":
        addrs = [a for a, _, _ in bad]
        m = shrink(fibnicd, bar_tool, seed, events[:n], addrs, pauses)
        again = replay_shows(fibnicd, bar_tool, seed, events[:m], addrs, pauses)
        if again:
            n = m
            print("shortest prefix that shows it: %d events" % n)
            for a, d, k in again[:5]:
                print("  %s: device %s, kernel %s" % (a, d or "punt", k))
        else:  # timing-dependent (or a window-only divergence): give the whole stream
            print("replays of prefixes did not show it reliably; the whole stream:")
    for i, ev in enumerate(events[:n]):
        print("  %4d %s" % (i, " ; ".join("%s: %s" % x for x in ev)))


def log_tail(env, lines=15):
    with open(env.log.name) as f:
        return "".join(f.readlines()[-lines:])


def verdict(forwards):
    """A run's exit status once no answer diverged: an all-punt device agrees
    with anything, so a run in which it never forwarded proved nothing."""
    if forwards == 0:
        print("FAIL: the device never forwarded a sampled destination")
        return 1
    return 0


def main():
    fibnicd, bar_tool = sys.argv[1], sys.argv[2]
    # Stopped by a signal (a soak in the background ignores SIGINT), the
    # namespaces and fibnicd still go: the finally clauses run.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, _: sys.exit(128 + signum))
    env_seed = os.environ.get("FIBNIC_SEED")
    seed = int(env_seed, 0) if env_seed else int.from_bytes(os.urandom(6), "little")
    print("kdiff: seed %d (FIBNIC_SEED=%d replays it)" % (seed, seed), flush=True)
    max_events = int(os.environ.get("KDIFF_EVENTS", "3000"))
    max_seconds = float(os.environ.get("KDIFF_SECONDS", "150"))
    check_every = int(os.environ.get("KDIFF_CHECK_EVERY", "1"))
    window_share = float(os.environ.get("KDIFF_WINDOW", "0.08"))
    progress = int(os.environ.get("KDIFF_PROGRESS", "0"))
    # Chunk sizes and window choices depend on the seed alone, and each check
    # samples with its own generator: what one check finds (the kernel's
    # routes and neighbours) never shifts where the next chunk ends, so a
    # seed replays with the same pauses.
    chunker = random.Random(seed ^ 0x5EED)
    env = Env(fibnicd, bar_tool, "m")
    require_vrf = os.environ.get("KDIFF_REQUIRE_VRF") == "1"
    vrf_seconds = float(os.environ.get("KDIFF_VRF_SECONDS", 2 * max_seconds))
    stream = EventStream(seed, "PEER", env.vrf)  # run_lines names the peer namespace
    events, checks, forwards, chunks, pauses = [], 0, 0, 0, []
    t0 = time.time()
    next_progress = progress
    try:
        if not env.vrf:
            print("kdiff: no VRF (kernel %s%s): no VRF events in the stream"
                  % (os.uname().release, ", KDIFF_NO_VRF=1" if os.environ.get("KDIFF_NO_VRF") == "1" else ""))
            if require_vrf:
                print("FAIL: KDIFF_REQUIRE_VRF=1 and no VRF (is vrf.ko loaded?)")
                return 1
        while (len(events) < max_events and time.time() - t0 < max_seconds or
               # A run whose device never forwarded proved nothing (verdict):
               # a stream that had built no forwarding state by the budget's
               # end goes on for up to three times as many events.
               not forwards and len(events) < 3 * max_events and time.time() - t0 < max_seconds or
               # KDIFF_REQUIRE_VRF: until the device was checked with every
               # port in the VRF, at most KDIFF_VRF_SECONDS (default twice as long)
               require_vrf and env.vrf and not env.vrf_forwards and time.time() - t0 < vrf_seconds):
            chunk = [stream.next() for _ in range(chunker.randint(1, 40))]
            events += chunk
            chunks += 1
            sampler = random.Random("%d/%d" % (seed, chunks))
            if chunker.random() < window_share:
                bad = run_window(env, sampler, chunk)
            else:
                env.run_lines([x for ev in chunk for x in ev])
                bad = []
            if not bad and chunks % check_every == 0:
                pauses.append(len(events))
                bad, n = check_quiescent(env, sampler)
                checks += 1
                forwards += n
            if env.daemon.poll() is not None:  # a dead fibnicd leaves the BAR as it was
                print("FAIL: fibnicd exited (status %s) after %d events (FIBNIC_SEED=%d replays it); its log "
                      "ends:\n%s" % (env.daemon.returncode, len(events), seed, log_tail(env)))
                return 1
            if bad:
                tell(seed, len(events), bad)  # before a hold, so the held state can be read knowing what differs
                print("fibnicd's log ends:\n" + log_tail(env))
                hold = float(os.environ.get("KDIFF_HOLD_SECONDS", "0"))
                if hold > 0:  # to look at the live kernel (ip -n NS ...) and the BAR before the teardown
                    print("holding namespace %s, fibnicd (log %s, REST API 127.0.0.1:%d in it) and the BAR "
                          "%s/bar0.img for %.0f s" % (env.ns, env.log.name, 20000 + os.getpid() % 10000, env.work, hold),
                          flush=True)
                    time.sleep(hold)
                env.close()
                env = None
                report(seed, events, len(events), bad, fibnicd, bar_tool, pauses[:-1])
                return 1
            if progress and len(events) >= next_progress:
                next_progress += progress
                dt = time.time() - t0
                print("kdiff: %d events, %.0f s, %.0f events/s, %d checks, %d forwarding answers (%d with every "
                      "port in the VRF), load %.1f" % (len(events), dt, len(events) / dt, checks, forwards,
                                                      env.vrf_forwards, os.getloadavg()[0]), flush=True)
        dt = time.time() - t0
        print("kdiff: %d events in %.1f s (%.0f events/s incl. checks), %d quiescent checks, %d forwarding "
              "answers checked (%d by a route by next-hop object), %d drop answers (blackholes), 0 divergences "
              "(seed %d, load %.1f, quiesce timeouts %d)"
              % (len(events), dt, len(events) / dt, checks, forwards, env.oracle.object_forwards, env.drops, seed,
                 os.getloadavg()[0], env.quiesce_timeouts))
        if os.environ.get("KDIFF_REQUIRE_DROP") == "1" and env.drops == 0:
            print("FAIL: KDIFF_REQUIRE_DROP=1 and the device never dropped a sampled destination "
                  "(no blackhole was checked in the card)")
            return 1
        if env.vrf:
            vrf_events = sum(any("master" in text for _, text in ev) for ev in events)
            print("kdiff: VRF (kernel %s): %d VRF events, %d answers checked with a port in the VRF; %d checks "
                  "with every port in it, %d forwarding answers there" % (os.uname().release, vrf_events,
                                                                        env.vrf_checked, env.vrf_all_checks,
                                                                        env.vrf_forwards))
            if require_vrf and (vrf_events == 0 or env.vrf_forwards == 0):
                print("FAIL: KDIFF_REQUIRE_VRF=1 and the run never checked the device in the VRF's context")
                return 1
        return verdict(forwards)
    finally:
        if env:
            env.close()


if __name__ == "__main__":
    sys.exit(main())
