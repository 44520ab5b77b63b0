#!/usr/bin/env python3
"""OSPF-driven offload against the kernel (docs/oracle.md "The OSPF oracle").
Root, FRR (zebra, ospfd, ospf6d).

  ospfdiff.py FIBNICD KDIFF_BAR

The router of ospf_env.py (real ospfd and ospf6d, five neighbours with their
own: equal-cost paths from two of them, numbered point-to-point links, a
broadcast LAN with a DR election, an unnumbered point-to-point link with
onlink next hops, OSPFv3's link-local next hops) and fibnicd following its
kernel. Scenarios, one phase each: cost change and back, carrier loss and
return, admin down and up of the unnumbered link, the DR's ospfd stopped and
started, the router's ospfd and ospf6d restarted.

During each phase the watched destinations (first and last address of every
originated prefix) are read in rounds: the device's answer (the BAR decoded
by kdiff_bar), then the kernel's (RTM_GETROUTE, its neighbour table). A
device answer must be a punt or acceptable under some state the kernel held
since the phase began (fibnicd may lag the kernel, never invent a path): one
that is not is a path outside the kernel's. How long the device lagged
(device_lag.py: the device read every few ms against the kernel's change
dated by its events) is measured, not failed. A phase ends once OSPF is
where the scenario leads (zebra's paths: e.g. both equal-cost paths, or
one), the kernel's OSPF routes and the BAR's GENERATION have been still, and
every watched destination the kernel forwards by a port with a resolved
neighbour is forwarded the same way by the device. Then tests/kdiff's
quiescent check: sampled routes, neighbours, martians, the watched
destinations and every originated prefix's first address, each a punt or
the kernel's answer — 0 misforwards.

Prints per phase: kernel convergence (last OSPF route change after the
event), device convergence (last batch written), their ratio, reads taken,
reads outside the kernel's paths, the misforward window and the longest
lag, the end check. Fails on a read outside the kernel's paths, a
misforward at the end, a phase that does not converge within
OSPF_PHASE_SECONDS (default 45), or a device that
never forwarded.

Environment: FIBNIC_SEED (the end checks' sampling; printed, replays it),
OSPF_V4 / OSPF_V6 (each neighbour's own IPv4 /24s and IPv6 /64s, default
8 / 4; half as many shared), OSPF_WATCH (most destinations read per round,
default 400), OSPF_PHASES (a subset, space-separated keys), OSPF_KEEP=DIR
(keep logs and BARs), OSPF_NS_PREFIX (namespace prefix, default "os")."""
import ipaddress
import json
import os
import random
import select
import signal
import socket
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench", "frr"))
from ospf_env import NEIGHBOURS, OspfEnv, neighbour_prefixes, prefixes, kdiff  # noqa: E402
from kernel_oracle import acceptable, netns_socket  # noqa: E402
from device_lag import DevicePoller, LagMeter  # noqa: E402
from route_watch import NEXTHOPS, RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE, RTNLGRP_NEXTHOP, SOL_NETLINK, \
    NETLINK_ADD_MEMBERSHIP, drain  # noqa: E402

RTPROT_OSPF = 188  # zebra's OSPF and OSPFv3 routes
RTNLGRP_LINK = 1
GENERATION = 0x18
PHASE_SECONDS = float(os.environ.get("OSPF_PHASE_SECONDS", "45"))


class Clock(threading.Thread):
    """Stamps the kernel's last change of an OSPF route (or of a next-hop
    object) and the device's last GENERATION change, from a thread of its
    own, so the sampler's rounds do not blur them."""

    def __init__(self, ns, bar_path):
        super().__init__(daemon=True)
        self.sock = netns_socket(ns)
        self.sock.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE
        for group in (RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE, RTNLGRP_NEXTHOP):
            self.sock.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, group)
        self.sock.setblocking(False)
        # A link's loss or return changes the kernel's answers with no route
        # event (IPv4 routes through a link that went down go silently).
        self.links = netns_socket(ns)
        self.links.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, RTNLGRP_LINK)
        self.links.setblocking(False)
        self.bar = os.open(bar_path, os.O_RDONLY)
        self.stop, self.overruns = False, 0
        self.mark()

    def mark(self):
        self.spans = {}  # route_watch.last_change's: when the kernel last changed a prefix, or an object
        self.gen = os.pread(self.bar, 4, GENERATION)
        self.kernel_last = self.device_last = None
        self.counts = {"events": 0}

    def run(self):
        while not self.stop:
            select.select([self.sock, self.links], [], [], 0.005)
            try:
                while self.links.recv(1 << 16):
                    self.spans[NEXTHOPS] = time.monotonic()  # last_change: may move any destination
            except OSError:  # BlockingIOError: none waiting
                pass
            try:
                self.kernel_last = drain(self.sock, {}, self.spans, self.kernel_last, self.counts, RTPROT_OSPF)
            except OSError:  # ENOBUFS: events lost; the stamp is still the last one seen
                self.overruns += 1
            g = os.pread(self.bar, 4, GENERATION)
            if g != self.gen:
                self.gen, self.device_last = g, time.monotonic()

    def close(self):
        self.stop = True
        self.join()
        self.sock.close()
        self.links.close()
        os.close(self.bar)


def first_addresses(v4, v6):
    """The first address of every originated prefix (the end checks')."""
    return sorted({str(ipaddress.ip_network(p)[0]) for i in range(len(NEIGHBOURS))
                   for p in neighbour_prefixes(i, v4, v6)})


def watched(v4, v6, limit, rng):
    """(every destination read, those the device must forward once the kernel
    forwards them by a port): first and last address of each /24 or /64, and
    inside the longer prefixes (which must punt) their first address and
    their /24's or /64's."""
    addrs, forward = set(), set()
    for i in range(len(NEIGHBOURS)):
        for p in neighbour_prefixes(i, v4, v6):
            n = ipaddress.ip_network(p)
            unit = 24 if n.version == 4 else 64
            if n.prefixlen == unit:
                forward |= {str(n[0]), str(n[-1])}
            elif n.prefixlen < unit:
                addrs |= {str(n[0]), str(n[-1])}
            else:
                addrs |= {str(n[0]), str(n.supernet(new_prefix=unit)[1])}
    addrs |= forward
    addrs |= {n[2] for n in NEIGHBOURS}
    if len(addrs) > limit:
        addrs = set(rng.sample(sorted(addrs), limit))
    return sorted(addrs), forward & addrs


class Sampler:
    """Rounds of kernel, device, kernel over the watched destinations."""

    def __init__(self, env, addrs, forward, poller, clock):
        self.env, self.addrs, self.forward = env, addrs, forward
        self.meter = LagMeter(poller, clock, self.exact)
        self.history = {}

    def exact(self, a, d, state):
        """d is acceptable under state (answer sets, port map, neighbours),
        and a forward where the kernel forwards a by ports with resolved
        neighbours and a must be forwarded."""
        k, port_of, neigh = state
        must = a in self.forward and all(h and all(port_of.get(i) is not None and (i, gw) in neigh for i, gw in h)
                                         for h in k)
        return acceptable(d, k, port_of.get, neigh) and (d is not None or not must)

    def _states(self):
        port_of, contexts, neigh, _ = self.env.view(with_routes=False)
        return kdiff.kernel_sets(self.env, contexts, self.addrs), port_of, neigh

    def begin(self):
        self.prev_at = time.monotonic()
        self.prev = self._states()
        self.history = {a: set() for a in self.addrs}
        self._note(*self.prev)
        self.meter.begin()
        self.reads = self.outside = 0
        self.examples = []

    def _note(self, k, port_of, neigh):
        p, n = tuple(sorted(port_of.items())), tuple(sorted(neigh.items()))
        for a in self.addrs:
            self.history[a].add((tuple(k[a]), p, n))

    def round(self):
        """One round: the device, then the kernel (the device read lies
        between this kernel read and the last round's). Returns whether the
        device was exact: every destination acceptable under the kernel's
        latest answer, and forwarded where it must be (the kernel by a port,
        a resolved neighbour)."""
        dev = self.env.device(self.addrs)
        t = time.monotonic()
        k0 = self.prev[0]
        k1, port1, neigh1 = self.prev = self._states()
        since, self.prev_at = self.prev_at, t
        self._note(k1, port1, neigh1)
        exact = True
        for a, d in zip(self.addrs, dev):
            if k1[a] != k0[a]:
                self.meter.changed(a, since, time.monotonic(), (k1[a], port1, neigh1))
            self.reads += 1
            if not any(acceptable(d, list(k), dict(p).get, dict(n)) for k, p, n in self.history[a]):
                self.outside += 1
                if len(self.examples) < 5:
                    self.examples.append("%s: device %s, the kernel's states since the phase began: %s" % (
                        a, d, "; ".join(sorted(str([sorted(h) for h in k]) for k, _, _ in self.history[a]))))
            exact = exact and self.exact(a, d, (k1[a], port1, neigh1))
        self.meter.settle()
        return exact


def table_paths(env, prefix):
    """The paths of prefix's route in the kernel's main table: {(interface name, next hop)}."""
    out = set()
    for r in env.ip_json("-6" if ":" in prefix else "-4", "route", "show", "table", "main", "exact", prefix):
        for h in r.get("nexthops", [r]):
            out.add((h.get("dev"), h.get("gateway")))
    return out


def zebra_routes(env):
    """zebra's selected OSPF and OSPFv3 routes: prefix -> {(interface name,
    next hop)} of the active next hops (what OSPF decided; the kernel may
    hold less)."""
    out = {}
    for cmd in ("show ip route ospf json", "show ipv6 route ospf6 json"):
        try:
            routes = json.loads(env.vtysh(cmd) or "{}")
        except ValueError:
            continue
        for prefix, entries in routes.items():
            for r in entries:
                if r.get("selected"):
                    out[prefix] = {(h.get("interfaceName"), h.get("ip")) for h in r.get("nexthops", [])
                                   if h.get("active")}
    return out


class Scenario:
    """What OSPF must have done (read from ospfd, ospf6d and zebra, never
    from the code under test) for a phase to be over. zebra's routes, not the
    kernel's: after a link's carrier came back FRR 8.4's zebra re-used a
    next-hop group the kernel had shrunk while the link was down, so the
    kernel kept one path where zebra holds two (noted, not failed: the
    kernel stays the oracle of the device)."""

    def __init__(self, env, v4, v6):
        self.env = env
        first = lambda owner, fam: prefixes(owner, 1, 0)[0] if fam == 4 else prefixes(owner, 0, 1)[0]
        owners = list(range(len(NEIGHBOURS))) + ["ecmp", "lan"]
        self.prefix = {(o, f): first(o, f) for o in owners for f in (4, 6)}

    def why_not(self, ecmp=None, lan=None, own=(), gone=(), full=5, dr=None, lan_families=(4, 6)):
        """None once zebra holds what the scenario leads to, else what is
        missing: ecmp, the interfaces of the shared equal-cost prefixes; lan,
        the LAN's shared prefixes' IPv4 next hops (in lan_families); own, the
        neighbours whose prefixes go by their link; gone, those whose
        prefixes have no route; full, Full adjacencies per family; dr, the
        LAN's DR (router id)."""
        env = self.env
        f2, f3 = env.full_neighbours()
        if len(f2) != full or len(f3) != full:
            return "Full adjacencies: OSPFv2 %d, OSPFv3 %d of %d" % (len(f2), len(f3), full)
        if dr and env.dr() != (dr, dr):
            return "DR on the LAN: %s, not %s" % (env.dr(), dr)
        zebra = zebra_routes(env)
        for fam in (4, 6):
            got = zebra.get(self.prefix[("ecmp", fam)], set())
            if ecmp and ({i for i, _ in got} != set(ecmp) or len(got) != len(ecmp)):
                return "IPv%d equal-cost paths %s, not by %s" % (fam, sorted(got), list(ecmp))
            got = zebra.get(self.prefix[("lan", fam)], set())
            if lan and fam in lan_families and (len(got) != len(lan) or {i for i, _ in got} != {"k2"} or
                        fam == 4 and {g for _, g in got} != set(lan)):
                return "IPv%d LAN paths %s, not via %s" % (fam, sorted(got), list(lan))
            for i, (name, rif, addr, _) in enumerate(NEIGHBOURS):
                got = zebra.get(self.prefix[(i, fam)], set())
                if i in gone and got:
                    return "%s's IPv%d prefixes still routed: %s" % (name, fam, sorted(got))
                if i in own and (len(got) != 1 or next(iter(got))[0] != rif or next(iter(got))[1] != addr and
                                 not (fam == 6 and next(iter(got))[1].startswith("fe80:"))):
                    return "%s's IPv%d prefixes: %s, not via %s" % (
                        name, fam, sorted(got), addr if fam == 4 else "a link-local address on " + rif)
        return None

    def kernel_differs(self):
        """Probes whose route in the kernel's table has other paths than
        zebra's: (prefix, zebra, kernel)."""
        out, zebra = [], zebra_routes(self.env)
        for key in sorted(self.prefix, key=str):
            p = self.prefix[key]
            z, k = zebra.get(p, set()), table_paths(self.env, p)
            if z != k:
                out.append((p, sorted(z), sorted(k)))
        return out


def phases(env):
    """(key, what happens, the action, what OSPF must have done) in order.
    The link losses come last: after one, FRR 8.4's zebra keeps a next-hop
    group the kernel shrank (Scenario), and the kernel holds one path of the
    equal-cost pair from then on."""
    both, lan, every = ("k0", "k1"), ("10.2.0.2", "10.2.0.3"), tuple(range(len(NEIGHBOURS)))
    return [
        ("converge", "OSPF comes up (both families, 5 neighbours)", lambda: None,
         {"ecmp": both, "lan": lan, "own": every}),
        ("cost", "cost 100 on k0: ECMP collapses to k1", lambda: env.set_cost("k0", 100), {"ecmp": ("k1",)}),
        ("cost-back", "cost 10 on k0: ECMP again", lambda: env.set_cost("k0", 10), {"ecmp": both}),
        ("dr-loss", "the LAN's DR (n2) stops ospfd, ospf6d: n3 becomes DR",
         lambda: env.stop_ospf(2), {"lan": ("10.2.0.3",), "gone": (2,), "full": 4, "dr": "10.255.1.4",
                                    "lan_families": (4,)}),
        ("dr-back", "n2 starts ospfd, ospf6d again", lambda: env.start_ospf(2), {"lan": lan, "own": (2,)}),
        ("restart", "the router's ospfd and ospf6d restarted", lambda: env.restart_ospf(),
         {"ecmp": both, "lan": lan, "own": every}),
        ("carrier", "n1's end down: k1 loses carrier", lambda: env.carrier(1, False),
         {"ecmp": ("k0",), "gone": (1,), "full": 4}),
        ("carrier-back", "n1's end up again", lambda: env.carrier(1, True), {"ecmp": both, "own": (1,)}),
        ("admin", "k3 (unnumbered, onlink) admin down", lambda: env.admin("k3", False), {"gone": (4,), "full": 4}),
        ("admin-back", "k3 admin up", lambda: env.admin("k3", True), {"own": (4,)}),
    ]


def run_phase(env, clock, sampler, scenario, action, expect, rng, end_addrs):
    """Returns the phase's row (dict) and its failures."""
    sampler.begin()
    clock.mark()
    t0 = time.monotonic()
    action()
    why, exact_since, next_look, rounds = "not looked at yet", None, 0.0, 0
    while True:
        exact = sampler.round()
        rounds += 1
        now = time.monotonic()
        if now >= next_look:
            why = scenario.why_not(**expect)
            next_look = now + 0.5
        quiet = min(now - (clock.kernel_last or t0), now - (clock.device_last or t0))
        if why is None and exact and quiet >= 1.5:
            exact_since = exact_since or now
            if now - exact_since >= 1.0:
                break
        else:
            exact_since = None
        if now - t0 > PHASE_SECONDS:
            break
        time.sleep(0.02)  # the sampler leaves the daemons a share of the CPU
    sampler.meter.settle(final=True)
    seconds = time.monotonic() - t0
    failures = []
    if why is not None or exact_since is None:
        failures.append("did not converge within %.0f s: %s" % (
            PHASE_SECONDS, why or "the device was not exact (a destination punted or lagging)"))
    if sampler.outside:
        failures.append("%d reads outside the kernel's paths, e.g. %s" % (sampler.outside, sampler.examples))
    notes = ["the kernel differs from zebra for %s: zebra %s, kernel %s" % x for x in scenario.kernel_differs()]
    if expect.get("lan_families", (4, 6)) != (4, 6):
        unasked = scenario.why_not(**dict(expect, lan_families=(4, 6)))
        if unasked:
            notes.append("OSPF (not required here): " + unasked)
    bad, forwards = kdiff.check_quiescent(env, rng, sorted(set(sampler.addrs) | set(end_addrs)))
    if bad:
        failures.append("end check: %d misforwarded, e.g. %s" % (
            len(bad), "; ".join("%s: device %s, kernel %s" % x for x in bad[:3])))
    k = None if clock.kernel_last is None else clock.kernel_last - t0
    d = None if clock.device_last is None else clock.device_last - t0
    return {"kernel_s": k, "device_s": d, "events": clock.counts["events"], "reads": sampler.reads,
            "outside": sampler.outside, "mf": len(sampler.meter.mf), "mf_s": sampler.meter.mf_worst,
            "lag_s": sampler.meter.worst,
            "bad": len(bad), "forwards": 0 if bad else forwards,
            "rounds": rounds, "seconds": seconds, "notes": notes}, failures


def fmt(x, digits=3):
    return "-" if x is None else "%.*f" % (digits, x)


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    if os.geteuid() != 0:
        print("FAIL: ospfdiff needs root (network namespaces, FRR)")
        return 1
    missing = [d for d in ("zebra", "ospfd", "ospf6d") if not os.access("/usr/lib/frr/" + d, os.X_OK)]
    if missing:
        print("FAIL: FRR's %s not installed in /usr/lib/frr (scripts/install-deps.sh)" % ", ".join(missing))
        return 1
    fibnicd, bar_tool = sys.argv[1], sys.argv[2]
    env_seed = os.environ.get("FIBNIC_SEED")
    seed = int(env_seed, 0) if env_seed else int.from_bytes(os.urandom(6), "little")
    v4, v6 = int(os.environ.get("OSPF_V4", "8")), int(os.environ.get("OSPF_V6", "4"))
    keys = os.environ.get("OSPF_PHASES", "").split()
    print("ospfdiff: seed %d (FIBNIC_SEED=%d replays the end checks' sampling); %d IPv4 /24s and %d IPv6 /64s "
          "per neighbour" % (seed, seed, v4, v6), flush=True)
    rng = random.Random(seed)
    t_start = time.monotonic()
    env = OspfEnv(fibnicd, bar_tool, v4, v6)
    clock = poller = None
    failed, forwards = [], 0
    try:
        addrs, forward = watched(v4, v6, int(os.environ.get("OSPF_WATCH", "400")), rng)
        end_addrs = first_addresses(v4, v6)
        clock = Clock(env.ns, env.work + "/bar0.img")
        clock.start()
        poller = DevicePoller(bar_tool, env.work + "/bar0.img", addrs)
        poller.start()
        sampler, scenario = Sampler(env, addrs, forward, poller, clock), Scenario(env, v4, v6)
        print("ospfdiff: %d destinations watched (%d must be forwarded once the kernel forwards them); setup %.1f s"
              % (len(addrs), len(forward), time.monotonic() - t_start), flush=True)
        print("%-13s %8s %8s %7s %6s %7s %7s %7s %11s %7s %10s" % (
            "phase", "kernel_s", "device_s", "dev/krn", "dev-ms", "events", "reads", "outside", "mf_window",
            "lag_ms", "misfwd_end"))
        for key, what, action, expect in phases(env):
            if keys and key not in keys and key != "converge":
                continue
            row, failures = run_phase(env, clock, sampler, scenario, action, expect, rng, end_addrs)
            if key == "converge":
                onlink = kdiff.sh("ip", "-n", env.ns, "route", "show", prefixes(4, 1, 0)[0])
                if "onlink" not in onlink:
                    failures.append("n4's routes are not onlink over the unnumbered link: %s" % onlink.strip())
            k, d = row["kernel_s"], row["device_s"]
            print("%-13s %8s %8s %7s %6s %7d %7d %7d %11s %7.0f %10d" % (
                key, fmt(k), fmt(d), fmt(d / k if k and d else None), "%+.0f" % ((d - k) * 1000) if k and d else "-",
                row["events"], row["reads"], row["outside"], "%d/%.3fs" % (row["mf"], row["mf_s"]),
                row["lag_s"] * 1000, row["bad"]), flush=True)
            print("    %s; %d rounds of reads (one every %.0f ms), %d forwarding answers at the end" % (
                what, row["rounds"], row["seconds"] * 1000 / max(row["rounds"], 1), row["forwards"]))
            for n in row["notes"]:
                print("    note: " + n)
            forwards += row["forwards"]
            for f in failures:
                print("    FAIL: " + f, flush=True)
            if failures:
                failed.append(key)
                if key == "converge":
                    break
        print("kernel_s: the kernel's last change of an OSPF route (or next-hop object) after the phase's event; "
              "device_s: fibnicd's last batch written (GENERATION); outside: device reads outside every path the "
              "kernel held in the phase; mf_window: destinations the device still sent where the kernel no longer "
              "did / the longest from the kernel's change; lag_ms: the longest from a kernel change to the device's "
              "exact answer under it (forwarded where it must be; the device read every %.1f ms); misfwd_end: misforwarded in the "
              "quiescent check once converged" % ((time.monotonic() - t_start) * 1000 / max(poller.polls, 1)))
        if clock.overruns:
            print("ospfdiff: %d netlink overruns: kernel_s is a lower bound" % clock.overruns)
        if forwards == 0:
            print("FAIL: the device never forwarded a checked destination")
            failed.append("no forwarding")
        print("ospfdiff: %s in %.0f s (FIBNIC_SEED=%d)" % ("FAILED: " + ", ".join(failed) if failed else
                                                           "every phase passed, 0 misforwards",
                                                           time.monotonic() - t_start, seed))
        if failed:
            print(env.logs())
        return 1 if failed else 0
    finally:
        if poller:
            poller.close()
        if clock:
            clock.close()
        keep = os.environ.get("OSPF_KEEP")
        if keep:
            os.makedirs(keep, exist_ok=True)
            kdiff.sh("cp", "-r", env.work, keep)
        env.close()


if __name__ == "__main__":
    sys.exit(main())
