"""The kernel's own answer, asked over rtnetlink (RTM_GETROUTE) from inside the
harness's router namespace, and what the FIBNIC may do with a destination
given that answer (see docs/oracle.md).

A device answer is acceptable when it is a punt, or when, in every forwarding
context of the mapped ports (the main table, or the VRF a port is enslaved
to), the kernel sends the destination out of an interface that is mapped to
the same FIBNIC port, to a next hop whose neighbour entry on that interface
holds the same MAC in a usable state. A device drop is acceptable only where,
in every context, the kernel's answer is a blackhole's: RTM_GETROUTE refuses
with EINVAL (`ip route get` prints "Invalid argument"), where an unreachable
route answers EHOSTUNREACH, a prohibit route EACCES and no route ENETUNREACH."""
import errno
import ctypes
import os
import socket
import struct
import subprocess
import sys

RTM_NEWROUTE, RTM_GETROUTE, NLMSG_ERROR = 24, 26, 2
NLM_F_REQUEST = 1
RTM_F_FIB_MATCH = 0x2000
RTA_DST, RTA_OIF, RTA_GATEWAY, RTA_MULTIPATH, RTA_VIA = 1, 4, 5, 9, 18
RTA_NH_ID, RTA_IP_PROTO, RTA_SPORT, RTA_DPORT = 30, 27, 28, 29
RTN_UNICAST = 1
RTNH_F_DEAD, RTNH_F_LINKDOWN = 1, 16
CLONE_NEWNET = 0x40000000
# States in which the kernel sends to the cached MAC.
USABLE_NUD = {"REACHABLE", "STALE", "DELAY", "PROBE", "PERMANENT", "NOARP"}
FLOWS = 16  # source ports tried on a multipath route (hash policy 1 = L4)
# The answer set of a destination the kernel blackholes: one pseudo hop that
# names no interface, so no forward can match it.
BLACKHOLE = frozenset({("blackhole", "")})


def netns_socket(ns):
    """A NETLINK_ROUTE socket living in network namespace `ns`."""
    libc = ctypes.CDLL(None, use_errno=True)
    here = os.open("/proc/self/ns/net", os.O_RDONLY)
    there = os.open("/run/netns/" + ns, os.O_RDONLY)
    try:
        if libc.setns(there, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns " + ns)
        s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
        if libc.setns(here, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns back")
    finally:
        os.close(here)
        os.close(there)
    s.bind((0, 0))
    return s


def netns_listener(ns, groups, rcvbuf_opt, rcvbuf):
    """A non-blocking NETLINK_ROUTE socket in `ns` that hears the rtnetlink
    multicast `groups` (RTNLGRP_ numbers), with the receive buffer set by
    socket option `rcvbuf_opt` (SO_RCVBUF, or SO_RCVBUFFORCE = 33)."""
    s = netns_socket(ns)
    s.setsockopt(socket.SOL_SOCKET, rcvbuf_opt, rcvbuf)
    for g in groups:
        s.setsockopt(270, 1, g)  # SOL_NETLINK, NETLINK_ADD_MEMBERSHIP
    s.setblocking(False)
    return s


class NeighWatch:
    """The neighbour entries the kernel announces (RTM_NEWNEIGH) in a usable
    state: one it resolves or changes by itself (neighbour discovery answering
    a probe fibnicd asked for) may hold only between two samples of the
    neighbour table, and a device that followed it then is not wrong."""
    RTM_NEWNEIGH, NDA_DST, NDA_LLADDR, RTNLGRP_NEIGH = 28, 1, 2, 3
    USABLE = 0x02 | 0x04 | 0x08 | 0x10 | 0x40 | 0x80  # NUD_ REACHABLE STALE DELAY PROBE NOARP PERMANENT

    def __init__(self, ns):
        self.sock = netns_listener(ns, [self.RTNLGRP_NEIGH], socket.SO_RCVBUF, 4 << 20)

    def drain(self):
        """(ifindex, address, MAC) of every usable entry announced since the last drain."""
        out = []
        while True:
            try:
                data = self.sock.recv(1 << 20)
            except (BlockingIOError, InterruptedError):
                return out
            except OSError as e:  # ENOBUFS: some were lost; a lost one only makes the check stricter
                if e.errno != errno.ENOBUFS:
                    raise
                continue
            i = 0
            while i + 28 <= len(data):
                ln, typ = struct.unpack_from("=IH", data, i)
                if ln < 16:
                    break
                if typ == self.RTM_NEWNEIGH:
                    fam, ifindex, state = struct.unpack_from("=BxxxiH", data, i + 16)
                    a = _attrs(data[i + 28:i + ln])
                    if state & self.USABLE and self.NDA_DST in a and self.NDA_LLADDR in a and len(a[self.NDA_LLADDR]) == 6:
                        out.append((ifindex, socket.inet_ntop(fam, a[self.NDA_DST]), a[self.NDA_LLADDR].hex(":")))
                i += (ln + 3) & ~3

    def close(self):
        self.sock.close()


def _attrs(data):
    out = {}
    i = 0
    while i + 4 <= len(data):
        ln, ty = struct.unpack_from("=HH", data, i)
        if ln < 4:
            break
        out[ty & 0x3FFF] = data[i + 4:i + ln]
        i += (ln + 3) & ~3
    return out


def _rta(ty, payload):
    ln = 4 + len(payload)
    return struct.pack("=HH", ln, ty) + payload + b"\0" * (((ln + 3) & ~3) - ln)


# Inserting an IPv6 xfrm policy bumps the namespace's IPv6 route generation;
# this one matches no packet of the harness and goes at once.
_GENERATION_BUMP = ("xfrm policy add src 2001:db8:ffff:ffff::1/128 dst 2001:db8:ffff:ffff::2/128 dir out action allow\n"
                    "xfrm policy del src 2001:db8:ffff:ffff::1/128 dst 2001:db8:ffff:ffff::2/128 dir out\n")


class KernelOracle:
    def __init__(self, ns):
        self.ns = ns
        self.sock = netns_socket(ns)
        self.refresh_failed = False
        self.seq = 0
        self.by_object = set()  # addresses whose route (fib match) names a next-hop object
        self.object_forwards = 0  # device answers that forwarded such an address (kdiff counts)
        self.last_errno = 0  # of the last RTM_GETROUTE the kernel refused

    def close(self):
        self.sock.close()

    def refresh(self):
        """Before a round of questions: makes IPv6 drop its per-CPU copies of
        routes by next-hop object. A copy made for a route that has since
        gone keeps forwarding along the object, but loses its link to a route,
        and RTM_GETROUTE on that CPU then answers "Network is unreachable"
        for every other route of the object (kernel 6.18; tests/kdiff/
        pcpu_answer_test.py shows both halves, docs/oracle.md "IPv6's per-CPU
        copies"). A new route generation makes the kernel build fresh copies,
        which answer as it forwards."""
        r = subprocess.run(["ip", "-n", self.ns, "-batch", "-"], input=_GENERATION_BUMP,
                           capture_output=True, text=True)
        if r.returncode != 0 and not self.refresh_failed:
            self.refresh_failed = True
            print("kernel_oracle: cannot bump IPv6's route generation (%s); IPv6 answers of routes by object "
                  "may be refused on a CPU whose copy went stale" % r.stderr.strip(), file=sys.stderr, flush=True)

    def _get(self, addr, oif=0, flags=0, sport=0):
        """One RTM_GETROUTE; returns (rtmsg fields, attrs) or None on an error."""
        fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
        raw = socket.inet_pton(fam, addr)
        body = struct.pack("=BBBBBBBBI", fam, len(raw) * 8, 0, 0, 0, 0, 0, 0, flags)
        body += _rta(RTA_DST, raw)
        if oif:
            body += _rta(RTA_OIF, struct.pack("=I", oif))
        if sport:
            body += _rta(RTA_IP_PROTO, b"\x11") + _rta(RTA_SPORT, struct.pack("!H", sport))
            body += _rta(RTA_DPORT, struct.pack("!H", 4789))
        self.seq += 1
        self.sock.send(struct.pack("=IHHII", 16 + len(body), RTM_GETROUTE, NLM_F_REQUEST, self.seq, 0) + body)
        while True:
            msg = self.sock.recv(65536)
            ln, ty, _, seq, _ = struct.unpack_from("=IHHII", msg, 0)
            if seq != self.seq:
                continue
            if ty == NLMSG_ERROR:
                self.last_errno = -struct.unpack_from("=i", msg, 16)[0]
                return None
            if ty != RTM_NEWROUTE:
                return None
            rt = struct.unpack_from("=BBBBBBBBI", msg, 16)
            return rt, _attrs(msg[28:ln])

    @staticmethod
    def _hop(fam, addr, attrs):
        oif = struct.unpack("=I", attrs[RTA_OIF])[0] if RTA_OIF in attrs else 0
        if RTA_GATEWAY in attrs:
            return oif, socket.inet_ntop(fam, attrs[RTA_GATEWAY])
        if RTA_VIA in attrs:  # a gateway of the other family (IPv4 via inet6 fe80::…, RFC 5549)
            via_fam = struct.unpack_from("=H", attrs[RTA_VIA])[0]
            return oif, socket.inet_ntop(via_fam, attrs[RTA_VIA][2:])
        return oif, addr

    def answers(self, addr, ctx_oif=0, ignore_linkdown=False, flows=FLOWS):
        """The set of (ifindex, next-hop address) the kernel sends `addr` to in
        the context of VRF device `ctx_oif` (0 = main); empty = not forwarded.
        A multipath route gives every path the kernel may hash a flow to: its
        live paths (fib match) and what `flows` flows were actually given. A
        route by next-hop group has only the flows (its fib match lists no
        paths), and 16 of them miss one of four paths for ~1 % of addresses:
        a check asks again with more before it calls a path wrong."""
        fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
        r = self._get(addr, ctx_oif)
        if r is None and self.last_errno == errno.EINVAL:
            return BLACKHOLE
        if r is None or r[0][7] != RTN_UNICAST:
            return frozenset()
        hops = {self._hop(fam, addr, r[1])}
        fib = self._get(addr, ctx_oif, RTM_F_FIB_MATCH)
        if fib is not None and RTA_NH_ID in fib[1]:
            self.by_object.add(addr)
        else:
            self.by_object.discard(addr)
        if fib is not None and RTA_MULTIPATH in fib[1]:
            mp, i = fib[1][RTA_MULTIPATH], 0
            while i + 8 <= len(mp):
                ln, flags, _, ifindex = struct.unpack_from("=HBBi", mp, i)
                if ln < 8:
                    break
                if not flags & RTNH_F_DEAD and not (flags & RTNH_F_LINKDOWN and ignore_linkdown):
                    path = _attrs(mp[i + 8:i + ln])
                    path[RTA_OIF] = struct.pack("=I", ifindex)
                    hops.add(self._hop(fam, addr, path))
                i += (ln + 3) & ~3
        if fib is not None and (RTA_MULTIPATH in fib[1] or RTA_NH_ID in fib[1]):
            for sport in range(1, flows + 1):
                f = self._get(addr, ctx_oif, sport=sport * 7919 % 60000 + 1024)
                if f is not None and f[0][7] == RTN_UNICAST:
                    hops.add(self._hop(fam, addr, f[1]))
        return frozenset(hops)


def acceptable(device, contexts, port_of, neigh):
    """device: None (punt), "drop" or (port, mac). contexts: per forwarding
    context the kernel's answer set. port_of: ifindex → FIBNIC port or None.
    neigh: (ifindex, address) → MAC in a usable state."""
    if device is None:
        return True
    if device == "drop":
        return all(hops == BLACKHOLE for hops in contexts)
    port, mac = device
    for hops in contexts:
        if not any(port_of(i) == port and neigh.get((i, gw)) == mac for i, gw in hops):
            return False
    return True
