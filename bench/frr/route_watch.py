#!/usr/bin/env python3
"""Watches a namespace's kernel FIB and fibnicd side by side, for bench/frr
and bench/bird.

Run inside the router's namespace, one phase at a time. Kernel: an rtnetlink
socket subscribed to IPv4/IPv6 route events counts the routing daemon's route
changes (rtm_protocol --proto: bgp for zebra's BGP routes, bird for BIRD's
kernel protocol) and stamps the last one (or the last next-hop object
change). Device: the BAR's GENERATION,
read from the image file, stamps the last batch written. While
the phase runs:
- fibnicd's REST status is polled from a thread of its own; the worst answer
  latency is kept, and how long its answers came without the sources (their
  loop, fibnicd's main thread, did not answer within 2 s); an answer
  outstanding, or the sources missing, for longer than --stall-bound takes a
  stack dump of every fibnicd thread (gdb) into --stall-dump;
- destinations whose kernel route just changed are sampled (every 0.5 s, up
  to 2000) and decoded from the BAR against the kernel (fib_compare.py: a
  device answer counts as wrong only when wrong by the kernel's answers
  read before and after it); those seen wrong are looked at again every
  0.5 s until right. The misforward window is how long after the kernel's
  last change of a route covering one (or of a next-hop object) the device
  was still seen sending it where the kernel would not: from the change's
  stamp to the end of the device read that found it wrong. A thread of its
  own (Clock) stamps each kernel event as it arrives and each GENERATION
  change, so neither end waits for the sampling's rounds.
The phase is over when the --run command has returned, kernel and device
have both been quiet for --quiet seconds after the kernel's first change (or,
--no-kernel, after the command returned), the kernel holds at least
--min-kernel-routes and at most --max-kernel-routes of --proto's routes, and
fibnicd's --source has settled (fpm: zebra connected with nothing stale
pending; kernel: not dumping); or at --limit. swept: the routes and
neighbours the kernel source's re-dumps removed (their deletion events were
lost: the device held them until the dump), no groups (the kernel's next-hop
objects go with their events). Prints one JSON line,
times relative to the start of the watch (the event that starts the phase).
"""
import argparse
import ipaddress
import itertools
import json
import os
import random
import select
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.request

from fib_compare import FibCompare

RTM_NEWROUTE, RTM_DELROUTE = 24, 25
RTM_NEWNEXTHOP, RTM_DELNEXTHOP = 104, 105
RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE, RTNLGRP_NEXTHOP = 7, 11, 32
SOL_NETLINK, NETLINK_ADD_MEMBERSHIP = 270, 1
RTA_DST = 1
# rtm_protocol by name (iproute2's rt_protos): the routing daemon whose routes are watched.
PROTOCOLS = {"bgp": 186, "bird": 12, "zebra": 11, "static": 4, "boot": 3}
SAMPLE = 2000


class ApiPoller(threading.Thread):
    """GET /api/v1/status every 0.1 s; a refused connection (fibnicd not
    listening: a restart) is not an answer and not a latency."""

    def __init__(self, url):
        super().__init__(daemon=True)
        self.url, self.stop = url + "/api/v1/status", False
        self.worst, self.answers, self.timeouts, self.down = 0.0, 0, 0, 0
        # Answers saying the sources' loop did not answer within 2 s (fibnicd's
        # main loop busy), and the longest run of them: how long the sources
        # were seen unresponsive.
        self.loop_late, self.late_since, self.loop_worst = 0, None, 0.0
        # Routes the kernel source's re-dumps swept (their events were lost:
        # the device held them until the dump); swept_groups stays 0 (the
        # kernel's next-hop objects go with their events). From the source's
        # own counter as last seen, kept across the reset of self.last when
        # the phase's command returns; 0 once fibnicd refused a connection (a
        # new process counts from 0).
        self.swept_routes, self.swept_groups = 0, 0
        self.kernel_swept = None
        self.last, self.since = None, None  # the last answer; when the outstanding request was sent

    def outstanding(self):
        s = self.since
        return 0.0 if s is None else time.monotonic() - s

    def count_sweep(self, kernel):
        n = kernel.get("swept")
        if n is not None:
            if self.kernel_swept is not None and n > self.kernel_swept:
                self.swept_routes += n - self.kernel_swept
            self.kernel_swept = n

    def run(self):
        while not self.stop:
            self.since = t0 = time.monotonic()
            try:
                with urllib.request.urlopen(self.url, timeout=120) as r:
                    body = json.load(r)
                self.worst = max(self.worst, time.monotonic() - t0)
                self.answers += 1
                if "error" in body.get("sources", {}):
                    self.loop_late += 1
                    self.late_since = self.late_since or t0
                    self.loop_worst = max(self.loop_worst, time.monotonic() - self.late_since)
                else:
                    self.late_since = None
                    self.count_sweep(source_of(body, "kernel"))
                    self.last = body
            except ConnectionRefusedError:
                self.down += 1
                self.kernel_swept = 0 if self.kernel_swept is not None else None
            except (socket.timeout, TimeoutError):
                self.worst = max(self.worst, time.monotonic() - t0)
                self.timeouts += 1
            except (OSError, ValueError) as e:
                if isinstance(getattr(e, "reason", None), ConnectionRefusedError):
                    self.down += 1
                    self.kernel_swept = 0 if self.kernel_swept is not None else None
                else:
                    self.worst = max(self.worst, time.monotonic() - t0)
                    self.timeouts += 1
            self.since = None
            time.sleep(0.1)


def source_of(status, name="fpm"):
    return (status or {}).get("sources", {}).get(name, {})


def settled(status, name):
    """fibnicd's source has caught up: FPM connected (zebra's replies have
    a peer), or the kernel source not in a dump."""
    s = source_of(status, name)
    if name == "kernel":
        return status is not None and not s.get("dumping", False)
    return status is not None and s.get("connected", True)


def kernel_routes(proto):
    n = 0
    for fam in ("-4", "-6"):
        out = subprocess.run(["ip", fam, "route", "show", "proto", str(proto)], capture_output=True, text=True).stdout
        n += out.count("\n")
    return n


def dst_of(data, off, length):
    """The first address of a route message's destination (None: a default route)."""
    fam = data[off + 16]
    i, end = off + 28, off + length
    while i + 4 <= end:
        ln, ty = struct.unpack_from("=HH", data, i)
        if ln < 4:
            break
        if ty == RTA_DST:
            return socket.inet_ntop(socket.AF_INET6 if fam == socket.AF_INET6 else socket.AF_INET,
                                    bytes(data[i + 4:i + ln]))
        i += (ln + 3) & ~3
    return None


def drain(s, changed, spans, kernel_last, counts=None, proto=PROTOCOLS["bgp"], before=None):
    """Reads every pending route event: stamps changed[first address] (what
    is sampled) and spans[(first address, length)] (what last_change() asks),
    and returns the time of the last change of proto's routes or of objects.
    before, when given, keeps each span's stamp before its latest."""
    try:
        while True:
            data = s.recv(1 << 20)
            t = time.monotonic()
            off = 0
            while off + 16 <= len(data):
                length, mtype = struct.unpack_from("=IH", data, off)
                if length < 16:
                    break
                # struct rtmsg after the 16-byte header: family, dst_len, src_len, tos, table, protocol
                if mtype in (RTM_NEWROUTE, RTM_DELROUTE) and off + 28 <= len(data):
                    if data[off + 16 + 5] == proto:
                        if counts is not None:
                            counts["events"] += 1
                        kernel_last = t
                        d = dst_of(data, off, length) or ("::" if data[off + 16] == socket.AF_INET6 else "0.0.0.0")
                        key = (d, data[off + 17])
                        if before is not None and key in spans:
                            before[key] = spans[key]
                        changed[d] = spans[key] = t
                elif mtype in (RTM_NEWNEXTHOP, RTM_DELNEXTHOP):
                    if before is not None and NEXTHOPS in spans:
                        before[NEXTHOPS] = spans[NEXTHOPS]
                    kernel_last = spans[NEXTHOPS] = t
                off += (length + 3) & ~3
    except BlockingIOError:
        pass
    return kernel_last


NEXTHOPS = "nexthop objects"  # spans[] key: a next-hop object's change moves every route using it


def covering_keys(addr):
    """spans[] keys of every route that may cover addr, and of objects."""
    a = ipaddress.ip_address(addr)
    bits = a.max_prefixlen
    keys = [NEXTHOPS]
    for length in range(bits + 1):
        net = ipaddress.ip_network((int(a) >> (bits - length) << (bits - length), length)) if length else \
            ipaddress.ip_network((0, 0) if a.version == 4 else "::/0")
        keys.append((str(net.network_address), length))
    return keys


def last_change(spans, addr):
    """When the kernel last changed a route covering addr (any length), or
    any next-hop object: the device's answer for addr may rightly lag that
    change, no older one."""
    return max(spans.get(k, 0.0) for k in covering_keys(addr))


def last_change_by(spans, before, addr, t):
    """last_change as of time t: per span its latest stamp, or the one before
    it when the latest came after t. None when both came after t (the device
    read at t cannot be placed against a change)."""
    stamps = []
    for k in covering_keys(addr):
        s = spans.get(k, 0.0)
        if s > t:
            s = before.get(k, 0.0)
            if s > t:
                return None
        stamps.append(s)
    return max(stamps)


class Clock(threading.Thread):
    """Stamps, from a thread of its own, each kernel route event when it is
    read (blocked on the socket, not when the phase loop next turns: a
    compare takes up to a few hundred ms) and the device's GENERATION when it
    changes (read from the BAR file every 2 ms). Both ends of dev-ms and of
    the misforward window come from here, so the sampling does not blur
    them."""

    GENERATION = 0x18  # the BAR register the host writes after each committed batch

    def __init__(self, s, bar_path, proto):
        super().__init__(daemon=True)
        # The thread takes the interpreter lock within half a millisecond of
        # wanting it (the default lets the sampling hold it for 5 ms).
        sys.setswitchinterval(0.0005)
        self.sock, self.proto = s, proto
        self.bar = os.open(bar_path, os.O_RDONLY)
        self.gen = os.pread(self.bar, 4, self.GENERATION)
        self.changed, self.spans, self.before = {}, {}, {}
        self.addrs = []  # changed's keys in order of first change: sampled without copying the dict
        self.kernel_last = self.device_last = None
        self.counts, self.overruns, self.stop = {"events": 0}, 0, False
        # A stamp is when its event was read; the events of one drain waited
        # at most as long as it took (from the socket's wake-up to empty), so
        # the longest drain, and the drain of the last change, bound how late
        # a stamp can be.
        self.drain_max = self.last_drain = 0.0

    def run(self):
        while not self.stop:
            select.select([self.sock], [], [], 0.002)
            t0, last, known = time.monotonic(), self.kernel_last, len(self.changed)
            try:
                self.kernel_last = drain(self.sock, self.changed, self.spans, self.kernel_last, self.counts,
                                         self.proto, self.before)
            except OSError:  # ENOBUFS: events were lost; the stamp is still the last one seen
                self.overruns += 1
            took = time.monotonic() - t0
            if len(self.changed) != known:  # new addresses are the dict's last keys, in insertion order
                self.addrs.extend(itertools.islice(reversed(self.changed), len(self.changed) - known))
            self.drain_max = max(self.drain_max, took)
            if self.kernel_last != last:
                self.last_drain = took
            g = os.pread(self.bar, 4, self.GENERATION)
            if g != self.gen:
                self.gen, self.device_last = g, time.monotonic()

    def close(self):
        self.stop = True
        self.join()
        os.close(self.bar)


def stack_dump(pid_file, path):
    try:
        pid = open(pid_file).read().strip()
        out = subprocess.run(["gdb", "-p", pid, "-batch", "-ex", "thread apply all bt"],
                             capture_output=True, text=True, timeout=120).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        out = f"stack dump failed: {e}\n"
    with open(path, "w") as f:
        f.write(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--api", default="http://127.0.0.1:8080")
    ap.add_argument("--quiet", type=float, default=3.0)
    ap.add_argument("--limit", type=float, default=900.0)
    ap.add_argument("--run", help="shell command that starts the phase, run once the watch is set up")
    ap.add_argument("--netns", default="lab-r", help="the router's namespace (lab/lab.sh's LAB_NAME-r)")
    ap.add_argument("--bar-tool", required=True)
    ap.add_argument("--bar", required=True)
    ap.add_argument("--ports", nargs="+", default=["h0=0", "h1=1", "h2=2"])
    ap.add_argument("--no-kernel", action="store_true", help="the phase changes nothing in the kernel")
    ap.add_argument("--min-kernel-routes", type=int, default=0)
    ap.add_argument("--max-kernel-routes", type=int, default=-1,
                    help="--proto routes the kernel holds at most once the phase is over (a loaded zebra may pause longer than --quiet)")
    ap.add_argument("--proto", default="bgp",
                    help="rtm_protocol of the routes watched and counted, a name (bgp, bird, ...) or a number")
    ap.add_argument("--source", default="fpm", choices=("fpm", "kernel"),
                    help="what fibnicd must have settled: fpm (zebra connected, nothing stale) or kernel (no dump)")
    ap.add_argument("--pid-file", help="fibnicd's pid, for the stack dump")
    ap.add_argument("--stall-bound", type=float, default=10.0)
    ap.add_argument("--stall-dump", default="/dev/null")
    a = ap.parse_args()
    proto = int(a.proto) if a.proto.isdigit() else PROTOCOLS[a.proto]

    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    s.setsockopt(socket.SOL_SOCKET, 33, 256 << 20)  # SO_RCVBUFFORCE: a full table arrives in bursts
    s.bind((0, (1 << (RTNLGRP_IPV4_ROUTE - 1)) | (1 << (RTNLGRP_IPV6_ROUTE - 1))))
    # Next-hop objects too: deleting one removes the routes using it with no
    # message per route (a peer's loss), so its deletion stamps the kernel.
    s.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, RTNLGRP_NEXTHOP)
    s.setblocking(False)
    cmp = FibCompare(a.netns, a.bar_tool, a.bar, {n: int(p) for n, p in (x.split("=") for x in a.ports)})
    api = ApiPoller(a.api)
    api.start()

    gen_before = cmp.generation()
    clock = Clock(s, a.bar, proto)
    start = time.monotonic()
    clock.start()
    runner = subprocess.Popen(a.run or "true", shell=True)
    run_end = settled_at = None
    next_sample, next_count = start + 0.5, start
    wrong = set()  # seen misforwarded at the last look
    mf_seen, mf_max_age, mf_checked, mf_examples, mf_unplaced, mf_worst = set(), 0.0, 0, [], 0, None
    dumped = None
    while True:
        now = time.monotonic()
        kernel_last, device_last = clock.kernel_last, clock.device_last
        if now >= next_sample and clock.addrs:
            # Those seen misforwarded are looked at again until they are right:
            # the window is how long one stays wrong.
            pool = clock.addrs
            addrs = list(wrong) + random.sample(pool, min(SAMPLE, len(pool)))
            mf_checked += len(addrs)
            found = cmp.misforwarded(addrs)
            seen_at = cmp.read_at  # the end of the device read that found them wrong
            wrong = set()
            for addr, dev in found:
                wrong.add(addr)
                mf_seen.add(addr)
                changed_at = last_change_by(clock.spans, clock.before, addr, seen_at)
                if changed_at is None:  # the kernel changed it twice since the read: looked at again
                    mf_unplaced += 1
                    continue
                age = seen_at - changed_at
                worst = age > mf_max_age
                mf_max_age = max(mf_max_age, age)
                if len(mf_examples) < 5 or worst:
                    hops = cmp.oracle.answers(addr)
                    kernel = sorted(cmp.port_of.get(i, f"if{i}") for i, _ in hops) if hops else "no route"
                    example = f"{addr}: device port {dev[0]}, kernel {kernel}, {age:.3f}s"
                    if len(mf_examples) < 5:
                        mf_examples.append(example)
                    if worst:
                        mf_worst = example
            next_sample = time.monotonic() + 0.5
        late = api.late_since
        stalled = api.outstanding() > a.stall_bound or (late is not None and now - late > a.stall_bound)
        if dumped is None and a.pid_file and stalled:
            dumped = a.stall_dump
            stack_dump(a.pid_file, a.stall_dump)
        if run_end is None and runner.poll() is not None:
            run_end, api.last = now, None  # a restarted daemon: only its own answers count
        source_settled = settled(api.last, a.source)
        if run_end is not None and settled_at is None and source_settled:
            settled_at = now
        begun = kernel_last is not None or a.no_kernel
        stamps = [t for t in (kernel_last, device_last, run_end) if t is not None]
        if begun and run_end is not None and now - max(stamps) >= a.quiet:
            if source_settled and now >= next_count:
                n = kernel_routes(proto) if a.min_kernel_routes > 0 or a.max_kernel_routes >= 0 else 0
                if n >= a.min_kernel_routes and (a.max_kernel_routes < 0 or n <= a.max_kernel_routes):
                    break
                next_count = time.monotonic() + 2
        if now - start >= a.limit:
            break
        time.sleep(0.005)
    api.stop = True
    api.join(timeout=130)
    clock.close()
    kernel_last, device_last = clock.kernel_last, clock.device_last
    end_status = api.last
    rel = lambda t: None if t is None else round(t - start, 3)
    print(json.dumps({"kernel_s": rel(kernel_last), "device_s": rel(device_last), "kernel_events": clock.counts["events"],
                      "run_s": rel(run_end), "settled_s": rel(settled_at),
                      "overruns": clock.overruns, "stamp_lag_max_s": round(clock.drain_max, 4),
                      "stamp_lag_last_s": round(clock.last_drain, 4), "timed_out": time.monotonic() - start >= a.limit,
                      "gen_before": gen_before, "gen_after": cmp.generation(),
                      "api_worst_s": round(api.worst, 3), "api_answers": api.answers, "api_timeouts": api.timeouts,
                      "api_loop_late": api.loop_late, "loop_worst_s": round(api.loop_worst, 3),
                      "api_refused": api.down, "stall_dump": dumped,
                      "mf_destinations": len(mf_seen), "mf_max_age_s": round(mf_max_age, 3), "mf_checked": mf_checked,
                      "mf_unplaced": mf_unplaced,
                      "mf_examples": mf_examples, "mf_worst": mf_worst, "swept_routes": api.swept_routes, "swept_groups": api.swept_groups,
                      a.source: source_of(end_status, a.source)}))
    cmp.close()


if __name__ == "__main__":
    main()
