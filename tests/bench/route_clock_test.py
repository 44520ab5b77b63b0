#!/usr/bin/env python3
"""route_clock (bench/frr/route_clock.cc) against the kernel: routes added
and deleted with `ip` in a namespace of this test's own, a GENERATION written
into a scratch BAR file. Its stamps must fall between the test's own clock
readings around each change, "as of" a time must give the change before it
(and "?" once the route changed twice since), other protocols' routes must
not count, and a bad argument must be refused with a message.
  route_clock_test.py ROUTE_CLOCK   (root)"""
import os
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../../bench/frr"))
sys.path.insert(0, os.path.join(HERE, "../kdiff"))
from route_watch import RouteClock  # noqa: E402

GENERATION = 0x18
BGP = 186


def main():
    tool = sys.argv[1]
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    for args, why in ((["/nonexistent-bar", str(BGP)], "a BAR file that is not there"),
                      ([os.devnull, "bgp"], "a protocol by name")):
        r = subprocess.run([tool, *args], capture_output=True, text=True, input="")
        check(r.returncode != 0 and "route_clock:" in r.stderr, f"{why}: exit {r.returncode}, stderr {r.stderr!r}")

    ns = f"rclk-{os.getpid()}"
    bar = tempfile.NamedTemporaryFile(prefix="rclk-bar-", delete=False)
    bar.write(bytes(4096))
    bar.close()
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        def ip(cmd):
            subprocess.run(f"ip -n {ns} {cmd}", shell=True, check=True)

        ip("link set lo up")
        ip("link add d0 type veth peer name d1")
        ip("link set d0 up")
        ip("link set d1 up")
        ip("addr add 10.9.0.1/24 dev d0")
        ip("-6 addr add 2001:db8::1/64 dev d0 nodad")
        clock = RouteClock(tool, bar.name, BGP, netns=ns)
        clock.state()  # answered once its socket listens

        def step(cmd):
            before = time.monotonic()
            ip(cmd)
            time.sleep(0.05)
            return before, time.monotonic()

        a0, a1 = step("route add 198.51.100.0/24 via 10.9.0.2 proto bgp")
        step("route add 203.0.113.0/24 via 10.9.0.2 proto static")
        with open(bar.name, "r+b") as f:
            g0 = time.monotonic()
            f.seek(GENERATION)
            f.write(struct.pack("<I", 7))
        time.sleep(0.05)
        d0, d1 = step("route del 198.51.100.0/24")
        v0, v1 = step("-6 route add 2001:db8:5::/48 via 2001:db8::2 proto bgp")
        _, device_last, events, overruns, _, _ = clock.state()
        check(events == 3, f"{events} bgp route events counted, 3 made (the static one must not count)")
        check(overruns == 0, f"{overruns} overruns")
        check(device_last is not None and g0 <= device_last <= d0, f"GENERATION stamped at {device_last}, "
              f"written at {g0}")
        at = clock.changed_at(a1, ["198.51.100.7"])[0]
        check(at is not None and a0 <= at <= a1, f"the add stamped {at}, made in [{a0}, {a1}]")
        at = clock.changed_at(d1, ["198.51.100.7"])[0]
        check(at is not None and d0 <= at <= d1, f"the delete stamped {at}, made in [{d0}, {d1}]")
        at = clock.changed_at(v1, ["2001:db8:5:1::1", "2001:db8:6::1"])
        check(at[0] is not None and v0 <= at[0] <= v1 and at[1] == 0.0, f"IPv6 answers {at}")
        ip("route add 198.51.100.0/24 via 10.9.0.2 proto bgp")
        time.sleep(0.05)
        check(clock.changed_at(a1, ["198.51.100.7"]) == [None],
              "a look at the route as of its add, after two later changes, must not be placed")
        check(set(clock.sample(20)) == {"198.51.100.0", "2001:db8:5::"}, "samples must be the bgp routes' first "
              "addresses")
        clock.close()
    finally:
        subprocess.run(["ip", "netns", "del", ns])
        os.unlink(bar.name)
    for f in failures:
        print("FAIL:", f)
    print("route_clock:", "FAILED" if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
