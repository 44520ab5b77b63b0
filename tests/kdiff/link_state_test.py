#!/usr/bin/env python3
"""Link states the random stream of kdiff.py cannot set up on purpose, on the
real kernel. Root.

  link_state_test.py FIBNICD KDIFF_BAR

The carrier (IFF_LOWER_UP) and the operational state (IFF_RUNNING) of a link
can disagree, and the kernel's FIB follows each in its own way:

- Dormant: a port with carrier held DORMANT until 802.1X lets it in (`ip
  link set DEV mode dormant state dormant`, as wpa_supplicant and hostapd
  do). IPv6 counts it as not ready and holds its routes through it linkdown;
  under ignore_routes_with_linkdown the kernel refuses them. The device must
  punt, not forward by the carrier alone.
- A carrier lost and back before linkwatch ran: the kernel acts on a
  carrier change only when linkwatch runs, which it paces to once a second.
  A link message sent meanwhile (here an MTU change) shows the carrier gone
  while the link is still running, and if the carrier is back before
  linkwatch runs, the kernel's FIB never changed: its next-hop objects
  through the link stay, and so must the device's forwarding by them.

Each phase is checked once fibnicd is quiescent, every answer against the
kernel's own (RTM_GETROUTE and its neighbour table, kernel_oracle.py); a
phase that must forward fails on a punt, so an all-punt device cannot pass.
The kernel's side of each premise is checked too: a kernel that behaves
otherwise makes the test fail and say so.
Exits 0 when every phase holds, 1 with what did not."""
import os
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kdiff import Env, sh  # noqa: E402
from kdiff_events import connected  # noqa: E402
from kernel_oracle import acceptable, netns_listener, netns_socket  # noqa: E402

V6_DEST, V4_DEST, OBJ_DEST = "2001:db8:100:1::9", "198.18.3.4", "203.0.113.9"
HOST_LOCAL, HOST_UNICAST, HOST_OTHER = "198.51.100.7", "198.51.100.8", "198.51.101.9"  # the device punts a /24 with a longer route
IFF_RUNNING, IFF_LOWER_UP = 0x40, 0x10000
RTM_NEWLINK, RTM_SETLINK, IFLA_MTU, RTNLGRP_LINK = 16, 19, 4, 1
FLAP_INDEX = 77  # k3 and its peer both: a veth's carrier change is then paced (not urgent to linkwatch)


def link(env, name):
    return env.ip_json("link", "show", "dev", name)[0]


def peer_mac(env, name):
    return sh("ip", "-n", env.peer, "-br", "link", "show", name).split()[2]


def answers(env, dests):
    """(address, device answer, kernel answer set, acceptable) for dests,
    read again up to three times 0.5 s apart while one is not acceptable (a
    slow commit on a loaded machine is not a divergence)."""
    for attempt in range(3):
        env.quiesce()
        port_of, _, neigh, _ = env.view(with_routes=False)
        env.oracle.refresh()
        kernel = [env.oracle.answers(a, 0, env.ignore_linkdown(a)) for a in dests]
        dev = env.device(dests)
        out = [(a, d, k, acceptable(d, [k], port_of.get, neigh)) for a, d, k in zip(dests, dev, kernel)]
        if all(ok for *_, ok in out) or attempt == 2:
            return out
        time.sleep(0.5)


class Test:
    def __init__(self, env):
        self.env = env
        self.failures = []

    def fail(self, text):
        self.failures.append(text)

    def phase(self, name, dests, forward_port=None):
        """Checks dests; forward_port: the port every one of them must be forwarded on."""
        out = answers(self.env, dests)
        print(name)
        for a, d, k, ok in out:
            print("  %s: device %s, kernel %s%s" % (a, d or "punt", sorted(k) or "none (local or refused)",
                                                     "" if ok else "  <- not acceptable"))
            if not ok:
                self.fail("%s: the device answered %s for %s, the kernel %s" % (name, d, a, sorted(k) or "none (local or refused)"))
            if forward_port is not None and (d is None or d == "drop" or d[0] != forward_port):
                self.fail("%s: the device did not forward %s on port %d (%s)" % (name, a, forward_port, d or "punt"))
        return out

    def dormant(self):
        env = self.env
        for fam in ("ipv4", "ipv6"):
            env.sysctl(env.ns, "net/%s/conf/all/ignore_routes_with_linkdown" % fam, 1)
        mac = peer_mac(env, "pk0")
        env.run_lines([("r", "neigh replace 2001:db8::2 dev k0 lladdr %s nud permanent" % mac),
                       ("r", "neigh replace 10.0.0.2 dev k0 lladdr %s nud permanent" % mac),
                       ("r", "route add 2001:db8:100::/48 via 2001:db8::2 dev k0"),
                       ("r", "route add 198.18.0.0/16 via 10.0.0.2 dev k0")], force=False)
        self.phase("dormant 1. k0 up", [V6_DEST, V4_DEST], forward_port=0)
        env.run_lines([("r", "link set k0 mode dormant state dormant")], force=False)
        out = self.phase("dormant 2. k0 dormant (carrier, no IFF_RUNNING)", [V6_DEST, V4_DEST])
        flags = link(env, "k0")["flags"]
        # iproute2 prints NO-CARRIER for a link up without IFF_RUNNING.
        if not ("LOWER_UP" in flags and "NO-CARRIER" in flags):
            self.fail("dormant: k0 is not a link with carrier and without IFF_RUNNING (%s)" % flags)
        if out[0][2]:
            self.fail("dormant: this kernel forwards %s over a dormant link under ignore_routes_with_linkdown (%s); "
                      "the test's premise does not hold here" % (V6_DEST, sorted(out[0][2])))
        env.run_lines([("r", "link set k0 state up")], force=False)
        self.phase("dormant 3. k0 let in (state up)", [V6_DEST, V4_DEST], forward_port=0)

    def host_scope(self):
        """Routes of scope host through k1 outlive k1 going down; its last address going takes them."""
        env = self.env
        mac = peer_mac(env, "pk0")
        env.run_lines([("r", "neigh replace 10.0.0.2 dev k0 lladdr %s nud permanent" % mac),
                       ("r", "route add 198.51.0.0/16 via 10.0.0.2 dev k0"),
                       ("r", "route add local %s/32 dev k1 table main" % HOST_LOCAL),
                       ("r", "route add %s/32 dev k1 scope host" % HOST_UNICAST)], force=False)
        dests = [HOST_LOCAL, HOST_UNICAST, HOST_OTHER]
        out = self.phase("host scope 1. k1 up", dests)
        self.forwarded_on(out, HOST_OTHER, 0, "host scope 1")
        env.run_lines([("r", "link set k1 down")], force=False)
        out = self.phase("host scope 2. k1 down: the kernel keeps both routes of scope host", dests)
        self.forwarded_on(out, HOST_OTHER, 0, "host scope 2")
        routes = sh("ip", "-n", env.ns, "-4", "route", "show", "table", "main", "dev", "k1", check=False)
        if HOST_LOCAL not in routes or HOST_UNICAST not in routes:
            self.fail("host scope: this kernel flushed a route of scope host when k1 went down (%r); "
                      "the test's premise does not hold here" % routes)
        env.run_lines([("r", "link set k1 up")], force=False)
        for a in sh("ip", "-n", env.ns, "-4", "-o", "addr", "show", "dev", "k1").split("\n"):
            if a.strip():
                env.run_lines([("r", "addr del %s dev k1" % a.split()[3])], force=False)
        out = self.phase("host scope 3. k1's last IPv4 address gone: the kernel flushes both", dests)
        for a in dests:
            self.forwarded_on(out, a, 0, "host scope 3")
        routes = sh("ip", "-n", env.ns, "-4", "route", "show", "table", "main", "dev", "k1", check=False)
        if routes.strip():
            self.fail("host scope: this kernel kept routes through k1 without an IPv4 address (%r); "
                      "the test's premise does not hold here" % routes)

    def forwarded_on(self, out, dest, port, name):
        for a, d, _, _ in out:
            if a == dest and (d is None or d == "drop" or d[0] != port):
                self.fail("%s: the device did not forward %s on port %d (%s)" % (name, a, port, d or "punt"))

    def flap(self):
        """k3's carrier lost and back while linkwatch holds the change."""
        env = self.env
        # Ports and peers sharing an ifindex make the veth's carrier changes
        # non-urgent to linkwatch (the kernel's own pacing applies).
        env.run_lines([("r", "link del k3"),
                       ("r", "link add k3 index %d type veth peer name pk3 index %d netns %s"
                        % (FLAP_INDEX, FLAP_INDEX, env.peer)),
                       ("r", "link set k3 up"), ("p", "link set pk3 up"),
                       ("p", "addr add 10.3.0.2/24 dev pk3")] + connected(3), force=False)
        mac = peer_mac(env, "pk3")
        env.run_lines([("r", "neigh replace 10.3.0.2 dev k3 lladdr %s nud permanent" % mac),
                       ("r", "nexthop add id 70 via 10.3.0.2 dev k3"),
                       ("r", "route add 203.0.113.0/24 nhid 70")], force=False)
        self.phase("flap 1. k3 up, 203.0.113.0/24 by next-hop object 70", [OBJ_DEST], forward_port=3)
        for attempt in range(5):
            if self.flap_once():
                break
            print("  linkwatch ran before the carrier was back (attempt %d); again" % (attempt + 1))
        else:
            self.fail("flap: five times linkwatch acted on the carrier loss before it was back; the premise "
                      "(the kernel paces a veth's carrier changes) does not hold here")
            return
        if "id 70 " not in sh("ip", "-n", env.ns, "nexthop", "show", "id", "70", check=False) + " ":
            self.fail("flap: the kernel lost object 70 though linkwatch never saw the carrier gone")
        self.phase("flap 2. after the carrier came back before linkwatch ran", [OBJ_DEST], forward_port=3)

    def flap_once(self):
        """One try: True when a message showed k3 running without carrier and
        the kernel's object 70 outlived it."""
        env = self.env
        time.sleep(1.1)  # linkwatch idle: the next change runs it at once, then it waits a second
        listen = netns_listener(env.ns, [RTNLGRP_LINK], 8, 1 << 20)  # SO_RCVBUF
        try:
            sh("ip", "-n", env.peer, "link", "set", "pu0", "down")  # arms the pacing: linkwatch runs now
            time.sleep(0.1)
            t0 = time.time()
            sh("ip", "-n", env.peer, "link", "set", "pk3", "down")
            set_mtu(env.ns, FLAP_INDEX, 1400)  # by ifindex: `ip link` would ask RTM_GETLINK, which runs linkwatch
            sh("ip", "-n", env.peer, "link", "set", "pk3", "up")
            took = time.time() - t0
            sh("ip", "-n", env.peer, "link", "set", "pu0", "up")
            time.sleep(1.2)  # linkwatch's paced run
            flags = [f for i, f in link_messages(listen) if i == FLAP_INDEX]
        finally:
            listen.close()
        print("  k3's link messages in %.3f s: %s" % (took, " ".join("%#x" % f for f in flags)))
        running_no_carrier = any(f & IFF_RUNNING and not f & IFF_LOWER_UP for f in flags)
        gone = any(not f & (IFF_RUNNING | IFF_LOWER_UP) for f in flags)
        if not running_no_carrier or gone:
            # Put the link back as it was for the next try.
            set_mtu(env.ns, FLAP_INDEX, 1500)
            env.run_lines([("r", "nexthop replace id 70 via 10.3.0.2 dev k3"),
                           ("r", "route replace 203.0.113.0/24 nhid 70")], force=False)
            return False
        return True


def set_mtu(ns, ifindex, mtu):
    s = netns_socket(ns)
    try:
        body = struct.pack("=BxHiII", 0, 0, ifindex, 0, 0) + struct.pack("=HHI", 8, IFLA_MTU, mtu)
        s.send(struct.pack("=IHHII", 16 + len(body), RTM_SETLINK, 0x1 | 0x4, 1, 0) + body)  # REQUEST | ACK
        err = struct.unpack_from("=i", s.recv(4096), 16)[0]
        if err:
            raise OSError(-err, "RTM_SETLINK mtu %d on ifindex %d" % (mtu, ifindex))
    finally:
        s.close()


def link_messages(sock):
    """(ifindex, flags) of every RTM_NEWLINK queued on sock."""
    out = []
    while True:
        try:
            data = sock.recv(1 << 20)
        except BlockingIOError:
            return out
        i = 0
        while i + 32 <= len(data):
            ln, typ = struct.unpack_from("=IH", data, i)
            if ln < 16:
                break
            if typ == RTM_NEWLINK:
                _, _, ifindex, flags = struct.unpack_from("=BxHiI", data, i + 16)
                out.append((ifindex, flags))
            i += (ln + 3) & ~3


def main():
    fibnicd, bar_tool = sys.argv[1], sys.argv[2]
    env = Env(fibnicd, bar_tool, "ls")
    test = Test(env)
    try:
        test.dormant()
        test.host_scope()
        test.flap()
    finally:
        env.close()
    for f in test.failures:
        print("FAIL: " + f)
    return 1 if test.failures else 0


if __name__ == "__main__":
    sys.exit(main())
