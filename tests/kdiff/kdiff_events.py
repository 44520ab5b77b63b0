"""The event grammar of the kernel differential harness: a seeded random stream
of real changes, each a short list of (target, line) where target is
"r" (an `ip -batch` line in the router namespace), "p" (one in the peer
namespace, whose veth ends give the router's links their carrier) or "s"
(a sysctl "path value" in the router namespace). The stream depends on the
seed alone — never on what the kernel answered — so a prefix replays exactly.

Interfaces: k0..k3 (FIBNIC ports 0..3) and u0 (not a port), veths into the
peer namespace (pk0..pk3, pu0); VRF kdvrf (table 10); extra table 100."""
import os
import random

PORTS = 4
IFS = ["k0", "k1", "k2", "k3", "u0"]
SUBNET = [0, 1, 2, 3, 9]  # 10.S.0.0/24 and 2001:db8:S::/64 on IFS[i]
V4_DESTS = ["0.0.0.0/0", "198.18.0.0/15", "198.18.0.0/16", "198.18.0.0/24", "198.18.0.128/25",
            "198.18.1.0/24", "198.19.0.0/16", "198.19.7.0/24", "198.19.7.7/32", "203.0.113.0/24",
            "203.0.113.64/26", "203.0.113.77/32", "192.0.2.0/24", "10.0.0.0/8", "10.1.0.0/16",
            "100.64.0.0/10"]
V6_DESTS = ["::/0", "2001:db8:100::/40", "2001:db8:100::/48", "2001:db8:100:1::/64",
            "2001:db8:100:1::7/128", "2001:db8:180::/41", "2001:db8:200::/48", "2001:db8:200:5::/64",
            "2001:db8::/32", "2001:db8:1::/48"]
NUD = ["permanent"] * 3 + ["reachable"] * 3 + ["stale", "noarp", "failed", "delay", "probe"]
V4_NH, V6_NH, V4_GROUP, V6_GROUP = [1, 2, 3], [4, 5, 6], 10, 11


def gateway(i, host, v6):
    return "2001:db8:%d::%d" % (SUBNET[i], host) if v6 else "10.%d.0.%d" % (SUBNET[i], host)


def connected(i, name=None):
    """Lines that give a (re)created interface (now called `name`) its addresses."""
    s = SUBNET[i]
    return [("r", "addr add 10.%d.0.1/24 dev %s" % (s, name or IFS[i])),
            ("r", "addr add 2001:db8:%d::1/64 dev %s nodad" % (s, name or IFS[i]))]


class EventStream:
    def __init__(self, seed, peer_ns, vrf=True):
        self.rng = random.Random(seed)
        # Preferred sources draw from a generator of their own, so adding them
        # left every seed's events as they were (only some routes gain `src`).
        self.src_rng = random.Random(seed * 7 + 1)
        self.vrf = vrf
        # Share of route events that add a blackhole, unreachable or prohibit
        # route (KDIFF_SPECIAL_ROUTES; the stream of a seed depends on it too).
        self.special = float(os.environ.get("KDIFF_SPECIAL_ROUTES", "0.12"))
        self.peer_ns = peer_ns
        self.name = list(IFS)      # current name (renames)
        self.exists = [True] * len(IFS)

    def _if(self, ports_only=False):
        live = [i for i in range(PORTS if ports_only else len(IFS)) if self.exists[i]]
        return self.rng.choice(live) if live else None

    def _hop(self, v6):
        i = self._if()
        if i is None:
            return None
        return "via %s dev %s" % (gateway(i, self.rng.randint(2, 4), v6), self.name[i])

    def _route(self):
        r = self.rng
        v6 = r.random() < 0.4
        dest = r.choice(V6_DESTS if v6 else V4_DESTS)
        words = [dest]
        # Where the kernel has VRF, more of table 10: the device forwards only
        # by routes via gateways, and in the VRF only by table 10's.
        table = r.choices(["", "table 100", "table 10"], [45, 15, 40] if self.vrf else [70, 15, 15])[0]
        metric = r.choices(["", "metric 100", "metric 200"], [50, 25, 25])[0]
        tos = "tos 0x10" if not v6 and r.random() < 0.08 else ""
        op = r.choices(["add", "replace", "append", "prepend", "del"], [30, 30, 8, 7, 25])[0]
        kind = r.random()
        if op == "del":
            if kind < 0.3:
                hop = self._hop(v6)
                if hop:
                    words.append(hop)
        elif kind < self.special:
            words.insert(0, r.choice(["blackhole", "unreachable", "prohibit"]))
        elif kind < 0.55:
            hop = self._hop(v6)
            if hop is None:
                return None
            words.append(hop)
        elif kind < 0.65:
            i = self._if()
            if i is None:
                return None
            words.append("dev " + self.name[i])
        elif kind < 0.82:
            hops = [self._hop(v6) for _ in range(r.randint(2, 3))]
            if None in hops:
                return None
            words += ["nexthop " + h for h in hops]
        else:
            words.append("nhid %d" % r.choice((V6_NH if v6 else V4_NH) + [V6_GROUP if v6 else V4_GROUP]))
        if op != "del" and r.random() < 0.1:
            words.append(r.choice(["mtu 1400", "advmss 1200", "rtt 10ms"]))
        if not v6 and op != "del" and self.src_rng.random() < 0.15:
            # A preferred source that `addr` events add and delete: deleting an
            # address the host no longer holds anywhere takes the routes naming
            # it (fib_sync_down_addr; announced, checked on 6.1 and 6.18), in
            # main or the link's VRF only. The kernel refuses a source it does
            # not hold, as it would an operator's.
            i = self.src_rng.randrange(len(IFS))
            words.append("src 10.%d.%d.1" % (SUBNET[i], self.src_rng.randint(0, 2)))
        return [("r", " ".join(["route", op] + words + [table, metric, tos]).strip())]

    def _neigh(self):
        r = self.rng
        i = self._if()
        if i is None:
            return None
        gw = gateway(i, r.randint(2, 5), r.random() < 0.4)
        dev = self.name[i]
        if r.random() < 0.15:
            return [("r", "neigh del %s dev %s" % (gw, dev))]
        mac = "02:00:00:%02x:%02x:%02x" % (i, r.randint(0, 3), r.randint(0, 3))
        # replace = add or change. Plain add/change would succeed or fail
        # depending on whether fibnicd's resolution request created the entry
        # first, and a replayed prefix would then reach another state.
        return [("r", "neigh replace %s lladdr %s dev %s nud %s" % (gw, mac, dev, r.choice(NUD)))]

    def _nexthop(self):
        r = self.rng
        if r.random() < 0.15:
            return [("r", "nexthop del id %d" % r.choice(V4_NH + V6_NH + [V4_GROUP, V6_GROUP]))]
        if r.random() < 0.25:
            v6 = r.random() < 0.5
            members = r.sample(V6_NH if v6 else V4_NH, r.randint(1, 3))
            return [("r", "nexthop replace id %d group %s" % (V6_GROUP if v6 else V4_GROUP,
                                                              "/".join(map(str, members))))]
        nid = r.choice(V4_NH + V6_NH)
        hop = self._hop(nid in V6_NH)
        return [("r", "nexthop replace id %d %s" % (nid, hop))] if hop else None

    def _link(self):
        r = self.rng
        i = r.randrange(len(IFS))
        what = r.random()
        if not self.exists[i]:  # recreate it under its port name
            self.exists[i], self.name[i] = True, IFS[i]
            return [("r", "link add %s type veth peer name p%s netns %s" % (IFS[i], IFS[i], self.peer_ns)),
                    ("r", "link set %s up" % IFS[i]),
                    ("p", "link set p%s up" % IFS[i]),
                    ("p", "addr add 10.%d.0.2/24 dev p%s" % (SUBNET[i], IFS[i])),
                    ("p", "addr add 2001:db8:%d::2/64 dev p%s nodad" % (SUBNET[i], IFS[i]))] + connected(i)
        dev = self.name[i]
        if what < 0.3:
            return [("r", "link set %s %s" % (dev, r.choice(["down", "up", "up"])))]
        if what < 0.6:  # carrier: the peer end goes down or up
            return [("p", "link set p%s %s" % (IFS[i], r.choice(["down", "up", "up"])))]
        if what < 0.85:  # rename away from the port name, or back
            new = IFS[i] if dev != IFS[i] else IFS[i] + "x"
            self.name[i] = new
            return [("r", "link set %s down" % dev), ("r", "link set %s name %s" % (dev, new)),
                    ("r", "link set %s up" % new)]
        self.exists[i] = False
        return [("r", "link del " + dev)]

    def _addr(self):
        r = self.rng
        i = self._if()
        if i is None:
            return None
        op = r.choice(["add", "del"])
        k = r.randint(0, 2)
        if r.random() < 0.5:
            a = "10.%d.%d.1/24" % (SUBNET[i], k)
        else:
            a = "2001:db8:%d:%d::1/64" % (SUBNET[i], k)
        return [("r", "addr %s %s dev %s" % (op, a, self.name[i]))]

    def _vrf(self):
        i = self._if(ports_only=True)
        if i is None or not self.vrf:  # (the draw above keeps non-VRF streams as they were)
            return None
        # One port at a time alone rarely puts all four in the VRF, the state
        # where fibnicd follows table 10: 60 % of these events move every
        # live port together (three quarters of them into the VRF), and give them
        # their addresses again as an operator would (the kernel cycles a
        # link it enslaves or releases, which drops its IPv6 addresses).
        r = self.rng
        if r.random() < 0.6:
            how = "master kdvrf" if r.random() < 0.75 else "nomaster"
            live = [j for j in range(PORTS) if self.exists[j]]
            lines = ([("r", "link set %s %s" % (self.name[j], how)) for j in live] +
                     [line for j in live for line in connected(j, self.name[j])])
            mapped = [j for j in live if self.name[j] == IFS[j]]
            if how != "nomaster" and mapped:
                # and a route of the VRF's via the peer (which answers ARP) on a
                # port: the device forwards only by routes via gateways, and the
                # cycle dropped the table's others through these links
                j = r.choice(mapped)
                lines.append(("r", "route replace %s via %s dev %s table 10" % (r.choice(V4_DESTS), gateway(j, 2, False),
                                                                                self.name[j])))
            return lines
        return [("r", "link set %s %s" % (self.name[i], r.choice(["master kdvrf", "nomaster", "nomaster"])))]

    def _rule(self):
        r = self.rng
        dest = r.choice(V4_DESTS[1:] + V6_DESTS[1:])
        return [("r", "rule %s to %s table 100 pref %d" % (r.choice(["add", "del", "del"]), dest,
                                                          100 + V4_DESTS.index(dest) if dest in V4_DESTS
                                                          else 200 + V6_DESTS.index(dest)))]

    def _sysctl(self):
        r = self.rng
        path = r.choice(["net/ipv4/conf/all/ignore_routes_with_linkdown",
                         "net/ipv6/conf/all/ignore_routes_with_linkdown", "net/ipv4/nexthop_compat_mode"])
        return [("s", "%s %d" % (path, r.randint(0, 1)))]

    def next(self):
        gens = [self._route, self._neigh, self._nexthop, self._link, self._addr, self._vrf, self._rule,
                self._sysctl]
        while True:
            ev = self.rng.choices(gens, [40, 22, 9, 7, 6, 6, 5, 3])[0]()
            if ev:
                return ev
