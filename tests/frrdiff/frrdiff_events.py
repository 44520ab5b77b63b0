"""The event grammar of the FRR differential harness (docs/oracle.md): a seeded
random stream of what a router running FRR lives through. Each event is one
tuple the driver (frrdiff.py) applies:

  ("bird", k, conf, what) peer k's whole bird2 configuration — its announced
                          prefixes (one, or a block of 96 for churn), their
                          AS-path prepends, whether its sessions r4/r6 are
                          disabled (peer loss) — then `birdc configure`;
                          what: the change, for reports
  ("carrier", k, up)      peer k's veth end down/up (the router's port loses carrier)
  ("vtysh", cmds)         FRR statics on the router (staticd through vtysh)
  ("zebra", signal)       zebra killed (TERM or KILL) and started again
  ("fibnicd",)            fibnicd stopped (TERM) and started again

The stream depends on the seed alone — never on what FRR or the kernel did —
so a prefix replays exactly.

Peers 0..2 (bird2, AS 65100+k) sit behind k0..k2 (FIBNIC ports 0..2); k3
(port 3) and u0 (not a port) lead to plain hosts that static routes use."""
import random

BGP_PEERS = 3
# Nested and overlapping prefixes, default routes included.
V4_BGP = ["0.0.0.0/0", "198.18.0.0/15", "198.18.0.0/16", "198.18.0.0/24", "198.18.0.128/25",
          "198.18.1.0/24", "198.19.0.0/16", "198.19.7.0/24", "198.19.7.7/32", "100.64.0.0/10",
          "100.64.1.0/24"]
V6_BGP = ["::/0", "2001:db8:100::/40", "2001:db8:100::/48", "2001:db8:100:1::/64",
          "2001:db8:100:1::7/128", "2001:db8:180::/41", "2001:db8:200::/48", "2001:db8:200:5::/64"]
V4_STATIC = ["203.0.113.0/24", "203.0.113.64/26", "192.0.2.0/24", "198.19.7.0/24", "100.64.0.0/10",
             "198.18.0.0/24"]
V6_STATIC = ["2001:db8:300::/48", "2001:db8:300:1::/64", "2001:db8:200::/48", "2001:db8:100:1::/64"]
# Gateways inside BGP prefixes: statics through them are recursive.
V4_RECURSIVE = ["198.18.0.5", "198.18.1.9", "198.19.7.7", "100.64.1.1", "198.18.200.1"]
V6_RECURSIVE = ["2001:db8:100:1::7", "2001:db8:200::9", "2001:db8:180::1"]
# Blocks a peer announces or withdraws at once (route churn): block b is 64
# IPv4 /24s and 32 IPv6 /64s, inside the nested prefixes above.
BLOCKS = 8


def block(b):
    return (["198.%d.%d.0/24" % (18 + (b * 64 + i) // 256, (b * 64 + i) % 256) for i in range(64)] +
            ["2001:db8:100:%x::/64" % (b * 32 + i) for i in range(32)])


SUBNET = [0, 1, 2, 3, 9]  # 10.S.0.0/24 and 2001:db8:S::/64 on k0..k3, u0 (as tests/kdiff)


def bird_conf(k, routes, ctl_dir, disabled=()):
    """routes: {prefix: prepends}. Announced as unreachable statics (bird
    exports them with itself as the next hop); prepends make the router's best
    path move between peers (equal paths are multipath on the router).
    disabled: the sessions ("r4", "r6") that are down (in the configuration:
    `birdc configure` would bring a session stopped by `birdc disable` back)."""
    asn = 65100 + k
    v4 = "".join("  route %s unreachable;\n" % p for p in sorted(routes) if ":" not in p)
    v6 = "".join("  route %s unreachable;\n" % p for p in sorted(routes) if ":" in p)
    prep = "".join("  if net = %s then {%s }\n" % (p, " bgp_path.prepend(%d);" % asn * n)
                   for p, n in sorted(routes.items()) if n)
    return ("router id 10.%d.0.2;\nlog \"%s/p%d-bird.log\" { warning, error };\nprotocol device {}\n"
            "protocol static s4 { ipv4;\n%s}\nprotocol static s6 { ipv6;\n%s}\n"
            "filter announce {\n%s  accept;\n}\n"
            "protocol bgp r4 { disabled %s; local 10.%d.0.2 as %d; neighbor 10.%d.0.1 as 65000; connect retry time 1;\n"
            "  hold time 9; error wait time 1, 2; ipv4 { import none; export filter announce; }; }\n"
            "protocol bgp r6 { disabled %s; local 2001:db8:%d::2 as %d; neighbor 2001:db8:%d::1 as 65000; connect retry time 1;\n"
            "  hold time 9; error wait time 1, 2; ipv6 { import none; export filter announce; }; }\n"
            % (k, ctl_dir, k, v4, v6, prep, "yes" if "r4" in disabled else "no", k, asn, k,
               "yes" if "r6" in disabled else "no", k, asn, k))


class EventStream:
    def __init__(self, seed, ctl_dir, churn=1):
        """churn: the weight of block events is multiplied by it (the soak's
        route changes per event; part of what a seed replays)."""
        self.rng = random.Random(seed)
        self.weights = [40, 20, 10 * churn, 18, 6, 2, 1, 1]
        self.ctl_dir = ctl_dir
        self.routes = [dict() for _ in range(BGP_PEERS)]
        self.disabled = [set() for _ in range(BGP_PEERS)]
        self.statics = set()   # the vtysh lines currently configured

    def _prefix(self, v6, pool4, pool6):
        return self.rng.choice(pool6 if v6 else pool4)

    def _announce(self, withdraw):
        r = self.rng
        k = r.randrange(BGP_PEERS)
        if withdraw:
            if not self.routes[k]:
                return None
            p = r.choice(sorted(self.routes[k]))
            del self.routes[k][p]
            return self._bird(k, "withdraws " + p)
        v6 = r.random() < 0.4
        p = self._prefix(v6, V4_BGP, V6_BGP)
        # Prepends 0 (multipath with the other peers) to 2.
        self.routes[k][p] = r.choices([0, 1, 2], [50, 30, 20])[0]
        return self._bird(k, "announces %s (prepends %d)" % (p, self.routes[k][p]))

    def _bird(self, k, what):
        return ("bird", k, bird_conf(k, self.routes[k], self.ctl_dir, self.disabled[k]), "peer %d %s" % (k, what))

    def _session(self):
        r = self.rng
        k, af = r.randrange(BGP_PEERS), r.choice(["r4", "r6"])
        if r.random() < 0.6:
            self.disabled[k].discard(af)
            return self._bird(k, "enables session " + af)
        self.disabled[k].add(af)
        return self._bird(k, "disables session " + af)

    def _block(self):
        r = self.rng
        k, b = r.randrange(BGP_PEERS), r.randrange(BLOCKS)
        if r.random() < 0.45:
            for p in block(b):
                self.routes[k].pop(p, None)
            return self._bird(k, "withdraws block %d (%s ...)" % (b, block(b)[0]))
        prepends = r.choices([0, 1, 2], [50, 30, 20])[0]
        self.routes[k].update((p, prepends) for p in block(b))
        return self._bird(k, "announces block %d (%s ..., prepends %d)" % (b, block(b)[0], prepends))

    def _static(self):
        r = self.rng
        if self.statics and r.random() < 0.4:
            line = r.choice(sorted(self.statics))
            self.statics.discard(line)
            return ("vtysh", ["no " + line])
        v6 = r.random() < 0.35
        fam = "ipv6" if v6 else "ip"
        dest = self._prefix(v6, V4_STATIC, V6_STATIC)
        kind = r.random()
        if kind < 0.4:
            gw = r.choice(V6_RECURSIVE if v6 else V4_RECURSIVE)
        elif kind < 0.8:
            i = r.choice([0, 1, 2, 3, 3, 4])
            gw = ("2001:db8:%d::%d" if v6 else "10.%d.0.%d") % (SUBNET[i], r.choice([2, 2, 3]))
        else:
            gw = "blackhole"
        line = "%s route %s %s%s" % (fam, dest, gw, r.choice(["", "", " 15", " 250"]))
        self.statics.add(line)
        return ("vtysh", [line])

    def next(self):
        r = self.rng
        while True:
            kind = r.choices(["announce", "withdraw", "block", "static", "session", "carrier", "zebra",
                              "fibnicd"], self.weights)[0]
            if kind in ("announce", "withdraw"):
                ev = self._announce(kind == "withdraw")
            elif kind == "block":
                ev = self._block()
            elif kind == "static":
                ev = self._static()
            elif kind == "session":
                ev = self._session()
            elif kind == "carrier":
                ev = ("carrier", r.randrange(BGP_PEERS + 1), r.random() < 0.6)
            elif kind == "zebra":
                ev = ("zebra", r.choice(["TERM", "KILL"]))
            else:
                ev = ("fibnicd",)
            if ev is not None:
                return ev


def describe(ev):
    """One line for a report."""
    if ev[0] == "bird":
        return ev[3]
    if ev[0] == "carrier":
        return "k%d carrier %s" % (ev[1], "up" if ev[2] else "down")
    if ev[0] == "vtysh":
        return "router: " + " ; ".join(ev[1])
    if ev[0] == "zebra":
        return "zebra restart (SIG%s)" % ev[1]
    return "fibnicd restart"
