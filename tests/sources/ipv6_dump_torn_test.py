"""What the kernel source's sweep assumes of the kernel's IPv6 route dump,
shown on the running kernel (KernelTable::BeginSweep's torn dumps). Root.

1. A dump of a table nothing changes lists every route.
2. When routes already sent are deleted between two parts of a dump (the
   dump resumes by position), any route the dump leaves out that the
   kernel still holds comes with route events a listener subscribed to the
   route group heard during the dump. The source counts such a dump as torn
   and keeps what it did not list; were a route ever left out with no event
   to show it, the source would sweep a route the kernel holds, and this
   test fails.

Exits 0 when both hold, 1 with the one that did not. Prints how many held
routes this kernel left out (6.18: none in this race)."""
import ipaddress
import os
import socket
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kdiff"))
from kernel_oracle import netns_socket  # noqa: E402

NS = "torn%d" % os.getpid()
N = 4000
RTM_NEWROUTE, RTM_DELROUTE, RTM_GETROUTE = 24, 25, 26
NLM_F_REQUEST, NLM_F_DUMP, NLM_F_DUMP_INTR = 1, 0x300, 0x10
NLMSG_DONE, RTA_DST = 3, 1
SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, RTNLGRP_IPV6_ROUTE = 270, 1, 11


def ip(*args, inp=None):
    subprocess.run(["ip", "-n", NS, *args], input=inp, text=True, check=True, capture_output=True)


def dump(delete_after_first_part):
    """The /48s a dump listed, whether it was marked interrupted, and the
    route events a listener heard meanwhile."""
    listener = netns_socket(NS)
    listener.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)  # SO_RCVBUFFORCE: hear every event
    listener.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, RTNLGRP_IPV6_ROUTE)
    listener.setblocking(False)
    s = netns_socket(NS)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32768)  # many parts
    body = struct.pack("=BBBBBBBBI", socket.AF_INET6, 0, 0, 0, 0, 0, 0, 0, 0)
    s.send(struct.pack("=IHHII", 16 + len(body), RTM_GETROUTE, NLM_F_REQUEST | NLM_F_DUMP, 1, 0) + body)
    listed, parts, intr, deleted = set(), 0, False, set()
    done = False
    while not done:
        data = s.recv(32768)
        parts += 1
        i = 0
        while i + 16 <= len(data):
            ln, typ, flags = struct.unpack_from("=IHH", data, i)
            if typ == NLMSG_DONE:
                done = True
                break
            intr |= bool(flags & NLM_F_DUMP_INTR)
            if typ == RTM_NEWROUTE and data[i + 17] == 48:  # rtm_dst_len
                j = i + 28
                while j + 4 <= i + ln:
                    alen, atyp = struct.unpack_from("=HH", data, j)
                    if atyp == RTA_DST:
                        listed.add(socket.inet_ntop(socket.AF_INET6, data[j + 4:j + 20]))
                    j += (alen + 3) & ~3
            i += (ln + 3) & ~3
        if parts == 2 and delete_after_first_part:
            deleted = set(sorted(listed)[:200])
            ip("-6", "-batch", "-", inp="".join("route del %s/48 dev d0\n" % a for a in deleted))
    heard = 0
    while True:
        try:
            data = listener.recv(1 << 20)
        except BlockingIOError:
            break
        i = 0
        while i + 16 <= len(data):
            ln, typ = struct.unpack_from("=IH", data, i)
            heard += typ in (RTM_NEWROUTE, RTM_DELROUTE)
            i += (ln + 3) & ~3
    s.close()
    listener.close()
    return listed, intr, heard, deleted


def main():
    subprocess.run(["ip", "netns", "add", NS], check=True)
    try:
        ip("link", "add", "d0", "type", "veth", "peer", "name", "d1")
        ip("link", "set", "d0", "up")
        ip("link", "set", "d1", "up")
        held = {str(ipaddress.IPv6Address("2001:db8:%x::" % i)) for i in range(N)}
        ip("-6", "-batch", "-", inp="".join("route add %s/48 dev d0\n" % a for a in sorted(held)))
        listed, _, heard, _ = dump(False)
        if listed != held:
            print("FAIL: a dump nothing changed left out %d of %d routes" % (len(held - listed), N))
            return 1
        print("a dump nothing changed: all %d routes, %d route events heard" % (N, heard))
        listed, intr, heard, deleted = dump(True)
        left_out = (held - deleted) - listed
        print("200 routes deleted after the first part: %d held routes left out, NLM_F_DUMP_INTR %s, "
              "%d route events heard during the dump" % (len(left_out), "set" if intr else "not set", heard))
        if left_out and not heard and not intr:
            print("FAIL: the dump left out routes the kernel holds with nothing to tell it was torn")
            return 1
        return 0
    finally:
        subprocess.run(["ip", "netns", "del", NS])


if __name__ == "__main__":
    sys.exit(main())
