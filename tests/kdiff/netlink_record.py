"""Records what the kernel told a listener during a kdiff run, with the
kernel's own answers at each quiescent check, for KernelTable's replay test
(tests/sources/kernel_table_replay_test.cc: the kernel source fed the same
messages, without root or a kernel, under AddressSanitizer too).

A recording is text, one item a line:
  D <hex>       a message of the start-up dump (links, neighbours, IPv4
                addresses, rules, next-hop objects, routes: the kernel
                source's order)
  E <hex>       an event, in the order the kernel sent it
  C <json>      a check: {"addr": ..., "kernel": [answers per forwarding
                context]}, each answer "blackhole" or a list of [port, gateway]
                (port null: not a FIBNIC port) the kernel may send it to;
                [] = not forwarded
Events the kernel sent during the dump follow it as E lines, as the kernel
source applies what it held after its dump.
"""
import errno
import json
import socket
import struct

from kernel_oracle import BLACKHOLE, netns_listener, netns_socket

# RTNLGRP_: LINK, NEIGH, IPV4_IFADDR, IPV4_ROUTE, IPV4_RULE, IPV6_ROUTE, IPV6_RULE, NEXTHOP
GROUPS = (1, 3, 5, 7, 8, 11, 19, 32)
RTM_GETLINK, RTM_GETADDR, RTM_GETROUTE, RTM_GETNEIGH, RTM_GETRULE, RTM_GETNEXTHOP = 18, 22, 26, 30, 34, 106
NLM_F_REQUEST, NLM_F_DUMP = 1, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3


class Recorder:
    def __init__(self, ns, path):
        self.out = open(path, "w")
        self.ev = netns_listener(ns, GROUPS, 33, 64 << 20)  # SO_RCVBUFFORCE: a lost event spoils the recording
        dump = netns_socket(ns)
        try:
            for seq, (kind, body) in enumerate([
                    (RTM_GETLINK, struct.pack("=BxHiII", 0, 0, 0, 0, 0)),
                    (RTM_GETNEIGH, struct.pack("=BxxxiHBB", 0, 0, 0, 0, 0)),
                    (RTM_GETADDR, struct.pack("=BBBBI", socket.AF_INET, 0, 0, 0, 0)),
                    (RTM_GETRULE, struct.pack("=BBBBBBBBI", 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                    (RTM_GETNEXTHOP, struct.pack("=BBBBI", 0, 0, 0, 0, 0)),
                    (RTM_GETROUTE, struct.pack("=BBBBBBBBI", 0, 0, 0, 0, 0, 0, 0, 0, 0))], 1):
                dump.send(struct.pack("=IHHII", 16 + len(body), kind, NLM_F_REQUEST | NLM_F_DUMP, seq, 0) + body)
                self._read_dump(dump)
        finally:
            dump.close()
        self.events = 0

    def _read_dump(self, sock):
        while True:
            data = sock.recv(1 << 20)
            i = 0
            while i + 16 <= len(data):
                ln, typ = struct.unpack_from("=IH", data, i)
                if typ == NLMSG_DONE:
                    return
                if typ == NLMSG_ERROR:
                    code = struct.unpack_from("=i", data, i + 16)[0]
                    raise OSError(-code, "netlink dump for the recording failed")
                self.out.write("D %s\n" % data[i:i + ln].hex())
                i += (ln + 3) & ~3

    def drain(self):
        """Everything the kernel has sent since the last drain."""
        while True:
            try:
                data = self.ev.recv(1 << 20)
            except BlockingIOError:
                return
            except OSError as e:
                if e.errno == errno.ENOBUFS:
                    raise RuntimeError("the recording lost events (ENOBUFS): it cannot be replayed")
                raise
            i = 0
            while i + 16 <= len(data):
                ln = struct.unpack_from("=I", data, i)[0]
                self.out.write("E %s\n" % data[i:i + ln].hex())
                self.events += 1
                i += (ln + 3) & ~3

    def check(self, answers, port_of):
        """answers: address -> the kernel's answer set per context (kernel_oracle)."""
        self.drain()
        for addr in sorted(answers):
            per_context = ["blackhole" if hops == BLACKHOLE else sorted(([port_of.get(i), gw] for i, gw in hops), key=str)
                           for hops in answers[addr]]
            self.out.write("C %s\n" % json.dumps({"addr": addr, "kernel": per_context}, separators=(",", ":")))

    def close(self):
        self.ev.close()
        self.out.close()
