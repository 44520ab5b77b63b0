#!/usr/bin/env python3
"""Watches a namespace's kernel FIB and fibnicd side by side, for bench/frr
and bench/bird.

Run inside the router's namespace, one phase at a time. The clock
(route_clock, a C++ co-process: RouteClock) follows the kernel's IPv4/IPv6
route and next-hop object events, counts the routing daemon's route changes
(rtm_protocol --proto: bgp for zebra's BGP routes, bird for BIRD's kernel
protocol) and stamps each as it is read; it stamps the device's last batch
by the BAR's GENERATION, read from the image file. While the phase runs:
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
  stamp to the end of the device read that found it wrong. The clock runs
  beside the sampling, so neither end waits for its rounds.
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
import json
import socket
import struct
import subprocess
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


def drain(s, changed, spans, kernel_last, counts=None, proto=PROTOCOLS["bgp"]):
    """Reads every pending route event: stamps changed[first address] (what
    is sampled) and spans[(first address, length)] (what last_change() asks),
    and returns the time of the last change of proto's routes or of objects."""
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
                        changed[d] = spans[(d, data[off + 17])] = t
                elif mtype in (RTM_NEWNEXTHOP, RTM_DELNEXTHOP):
                    kernel_last = spans[NEXTHOPS] = t
                off += (length + 3) & ~3
    except BlockingIOError:
        pass
    return kernel_last


NEXTHOPS = "nexthop objects"  # spans[] key: a next-hop object's change moves every route using it


def last_change(spans, addr):
    """When the kernel last changed a route covering addr (any length), or
    any next-hop object: the device's answer for addr may rightly lag that
    change, no older one."""
    a = ipaddress.ip_address(addr)
    bits = a.max_prefixlen
    stamps = [spans.get(NEXTHOPS, 0.0)]
    for length in range(bits + 1):
        net = ipaddress.ip_network((int(a) >> (bits - length) << (bits - length), length)) if length else \
            ipaddress.ip_network((0, 0) if a.version == 4 else "::/0")
        stamps.append(spans.get((str(net.network_address), length), 0.0))
    return max(stamps)


class RouteClock:
    """The watch's clock, route_clock (C++, beside the bar tool's build):
    stamps each kernel route event and each GENERATION change as it comes,
    on a thread of its own, fast enough for a routing daemon's bursts (a
    Python reader falls behind them, and then stamps late or ages a
    misforward from an older change of a covering route). Its times are
    time.monotonic()'s."""

    def __init__(self, tool, bar_path, proto, netns=None):
        """netns: run it in that namespace (the watch runs in the router's already)."""
        where = ["ip", "netns", "exec", netns] if netns else []
        self.p = subprocess.Popen([*where, tool, bar_path, str(proto)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)

    def _ask(self, line):
        try:
            self.p.stdin.write(line + "\n")
            self.p.stdin.flush()
            answer = self.p.stdout.readline()
        except BrokenPipeError:
            answer = ""
        if not answer:  # it exited: its own message on stderr says why
            raise RuntimeError(f"route_clock exited ({self.p.poll()}) when asked '{line.split()[0]}'")
        return answer.split()

    def state(self):
        """(kernel_last, device_last, events, overruns, busy_max, busy_last)."""
        w = self._ask("state")
        t = lambda x: None if x == "-" else float(x)
        return t(w[0]), t(w[1]), int(w[2]), int(w[3]), t(w[4]) or 0.0, t(w[5]) or 0.0

    def gen_time(self, g):
        """When GENERATION was first seen at g or past it (None: not seen)."""
        w = self._ask(f"gen_time {int(g)}")[0]
        return None if w == "-" else float(w)

    def sample(self, n):
        return self._ask(f"sample {n}")

    def changed_at(self, t, addrs):
        """Per address, when the kernel last changed a route covering it (or
        an object) as of t; None when it changed twice since t."""
        return [None if w == "?" else float(w) for w in self._ask(f"age {t:.6f} " + " ".join(addrs))] if addrs else []

    def close(self):
        self.p.stdin.close()
        self.p.wait()


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
    ap.add_argument("--clock-tool", required=True, help="route_clock (bench/frr/route_clock.cc)")
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

    cmp = FibCompare(a.netns, a.bar_tool, a.bar, {n: int(p) for n, p in (x.split("=") for x in a.ports)})
    api = ApiPoller(a.api)
    api.start()

    gen_before = cmp.generation()
    clock = RouteClock(a.clock_tool, a.bar, proto)
    clock.state()  # answered once its socket listens
    start = time.monotonic()
    runner = subprocess.Popen(a.run or "true", shell=True)
    run_end = settled_at = None
    next_sample, next_count = start + 0.5, start
    wrong = set()  # seen misforwarded at the last look
    mf_seen, mf_max_age, mf_checked, mf_examples, mf_unplaced, mf_worst = set(), 0.0, 0, [], 0, None
    dumped = None
    while True:
        now = time.monotonic()
        kernel_last, device_last, events = clock.state()[:3]
        if now >= next_sample and events:
            # Those seen misforwarded are looked at again until they are right:
            # the window is how long one stays wrong.
            addrs = list(wrong) + clock.sample(SAMPLE)
            mf_checked += len(addrs)
            found = cmp.misforwarded(addrs)
            seen_at = cmp.read_at  # the end of the device read that found them wrong
            wrong = set()
            for (addr, dev), changed_at in zip(found, clock.changed_at(seen_at, [addr for addr, _ in found])):
                wrong.add(addr)
                mf_seen.add(addr)
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
    kernel_last, device_last, events, overruns, busy_max, busy_last = clock.state()
    end_status = api.last
    # The device's last safe write: past it, only the IPv6 entry choice wrote.
    safe_gen = ((end_status or {}).get("sources", {}).get("pipeline", {}) or {}).get("safe_generation")
    safe_last = clock.gen_time(safe_gen) if safe_gen and device_last is not None else None
    if safe_last is not None and kernel_last is not None and safe_last < kernel_last:
        safe_last = None  # the device needed no safe write after the kernel's last change
    clock.close()
    rel = lambda t: None if t is None else round(t - start, 3)
    print(json.dumps({"kernel_s": rel(kernel_last), "device_s": rel(device_last), "device_safe_s": rel(safe_last),
                      "kernel_events": events,
                      "run_s": rel(run_end), "settled_s": rel(settled_at),
                      "overruns": overruns, "stamp_lag_max_s": round(busy_max, 4),
                      "stamp_lag_last_s": round(busy_last, 4), "timed_out": time.monotonic() - start >= a.limit,
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
