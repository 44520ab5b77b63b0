#!/usr/bin/env python3
"""The device while the kernel changes and FPM trails it (docs/oracle.md).

  frrflux.py FIBNICD KDIFF_BAR

frrdiff's router namespace (FrrEnv), with zebra's FPM stream reaching fibnicd
FRRFLUX_DELAY seconds late (default 3; fpm_delay.py) — what a loaded host
does (bench/frr measured tens of seconds). Peer 0 announces two blocks
(128 IPv4 /24s, 64 IPv6 /64s) inside the kernel source's cover routes to
port 3. Then, each sampled throughout: peer 0's sessions go down (zebra
deletes the routes from the kernel), come back (adds), and bgpd is
restarted (deletes, then adds). Every round reads the kernel's answer
(RTM_GETROUTE), the device's (the decoded BAR) and the kernel's again for
the first address of each prefix; a read is misforwarded when the device
forwards where neither kernel answer sends it, and its age is the time since
the kernel's answer for that address last changed. The run fails when a
misforward is older than FRRFLUX_GRACE (default 1 s: fibnicd's own reading
and commit of the kernel's event) or when the device does not end exact
and forwarding. FRRDIFF_NHG picks the FPM next-hop mode (default 1)."""
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from frrdiff import FrrEnv, kdiff  # noqa: E402
from frrdiff_events import bird_conf, block  # noqa: E402
from kernel_oracle import acceptable  # noqa: E402

DELAY = float(os.environ.get("FRRFLUX_DELAY", "3"))
GRACE = float(os.environ.get("FRRFLUX_GRACE", "1"))


def first_addresses(prefixes):
    import ipaddress
    return [str(ipaddress.ip_network(p)[1]) for p in prefixes]


class Sampler:
    def __init__(self, env, addrs):
        self.env, self.addrs = env, addrs
        self.port_of, self.contexts, self.neigh, _ = env.view()
        self.changed = {a: time.time() for a in addrs}  # when the kernel's answer last changed (at the latest)
        self.last = kdiff.kernel_sets(env, self.contexts, addrs)

    def round(self):
        """One read of kernel, device, kernel: the misforwarded reads' ages."""
        t0 = time.time()
        k0 = kdiff.kernel_sets(self.env, self.contexts, self.addrs)
        dev = self.env.device(self.addrs)
        t1 = time.time()
        k1 = kdiff.kernel_sets(self.env, self.contexts, self.addrs)
        ages = []
        for a, d in zip(self.addrs, dev):
            if k0[a] != self.last[a]:
                self.changed[a] = t0
            elif k1[a] != k0[a]:
                self.changed[a] = t1
            if not acceptable(d, k0[a], self.port_of.get, self.neigh) and \
                    not acceptable(d, k1[a], self.port_of.get, self.neigh):
                ages.append((time.time() - self.changed[a], a, d, k1[a]))
            self.last[a] = k1[a]
        return ages, sum(d is not None for d in dev)

    def watch(self, seconds):
        """Samples for `seconds`: (misforwarded reads, worst age, rounds, an example)."""
        end, reads, worst, rounds, example = time.time() + seconds, 0, 0.0, 0, None
        while time.time() < end:
            ages, _ = self.round()
            rounds += 1
            reads += len(ages)
            for age, a, d, k in ages:
                if age > worst:
                    worst, example = age, (a, d, k)
        return reads, worst, rounds, example

    def settle(self, seconds=30):
        """Until every read is exact and forwarded for a second (FPM caught up): how many it forwards."""
        end, exact_since, ages = time.time() + seconds, None, []
        while time.time() < end:
            ages, forwarded = self.round()
            if ages or forwarded < len(self.addrs):  # every prefix has a route (the blocks or the covers)
                exact_since = None
            elif exact_since is None:
                exact_since = time.time()
            elif time.time() - exact_since > 1.0:
                return forwarded
            time.sleep(0.05)
        for age, a, d, k in ages[:3]:
            print("  not exact: %s: device %s, kernel %s" % (a, d or "punt", [sorted(h) for h in k]))
        return -1


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    fibnicd, bar_tool = sys.argv[1], sys.argv[2]
    nhg = int(os.environ.get("FRRDIFF_NHG", "1"))
    print("frrflux: FPM %.1f s behind the kernel, %s, grace %.1f s" %
          (DELAY, "next-hop groups" if nhg else "inline next hops", GRACE), flush=True)
    env = FrrEnv(fibnicd, bar_tool, "x", nhg, fpm_delay=DELAY)
    failed = False
    try:
        routes = {p: 0 for p in block(0) + block(1)}
        env.apply(("bird", 0, bird_conf(0, routes, "WORKDIR")))
        env.quiesce()
        addrs = first_addresses(sorted(routes))
        s = Sampler(env, addrs)
        forwarded = s.settle(30 + DELAY)
        if forwarded != len(addrs):
            print("FAIL: the device forwards %d of the %d announced prefixes" % (forwarded, len(addrs)))
            return 1
        down = bird_conf(0, routes, "WORKDIR", disabled=("r4", "r6"))
        up = bird_conf(0, routes, "WORKDIR")
        phases = [("peer loss", lambda: env.apply(("bird", 0, down))),
                  ("peer return", lambda: env.apply(("bird", 0, up))),
                  ("bgpd restart", lambda: (env.stop("bgpd"), env.start_frr("bgpd")))]
        for name, act in phases:
            act()
            reads, worst, rounds, example = s.watch(DELAY + 8)
            forwarded = s.settle(30 + DELAY)
            print("frrflux: %-12s %5d reads of %d addresses, %d misforwarded, the oldest %.2f s after the kernel "
                  "changed; then %s" % (name, rounds * len(addrs), len(addrs), reads, worst,
                                        "exact, %d forwarded" % forwarded if forwarded >= 0 else "NOT EXACT"),
                  flush=True)
            if example and worst > GRACE:
                a, d, k = example
                print("  e.g. %s: device %s, kernel %s" % (a, d or "punt", [sorted(h) for h in k]))
            failed = failed or worst > GRACE or forwarded != len(addrs)
        print("frrflux: %s" % ("FAIL: the device forwarded where the kernel no longer (or not yet) did"
                                if failed else "0 misforwards beyond the grace"))
        return 1 if failed else 0
    finally:
        env.close()


if __name__ == "__main__":
    sys.exit(main())
