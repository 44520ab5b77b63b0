"""What the oracle assumes of IPv6's per-CPU route copies (docs/oracle.md,
"IPv6's per-CPU copies"), shown on the running kernel. Root, two CPUs.

IPv6 keeps, per next-hop object and per CPU, a copy of the route last looked
up through it. When the route the copy was made for goes, the copy stays and
loses its link to a route; RTM_GETROUTE on that CPU then answers "Network is
unreachable" for every other route by the same object (kernel 6.18; frrdiff
soaks stopped at it after a BGP block withdrawal). The oracle takes that
answer as the kernel's word only if the kernel also drops the packets. This
test checks that it does not: packets that enter on that CPU are forwarded
along the object all the same. So KernelOracle.refresh() (a new IPv6 route
generation before each round of questions) is right to make the kernel build
fresh copies, which answer as it forwards. Should a kernel ever drop those
packets, this test fails and the refresh would hide a real kernel drop.

Exits 0 when every claim holds, 1 with the claim that did not, 77 (skipped)
with one CPU."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_oracle import KernelOracle  # noqa: E402

PID = os.getpid()
R, P, S = "pca%d-r" % PID, "pca%d-p" % PID, "pca%d-s" % PID
GW = "2001:db8:1::2"
A, B, C, D = ("2001:db8:100:a::1", "2001:db8:100:b::1", "2001:db8:100:c::1", "2001:db8:100:d::1")
PACKETS = 5


def ip(*args, ns=None, check=True):
    argv = ["ip"] + (["-n", ns] if ns else []) + list(args)
    return subprocess.run(argv, check=check, capture_output=True, text=True).stdout


def mac(ns, dev):
    return ip("-br", "link", "show", dev, ns=ns).split()[2]


def forwarded():
    out = subprocess.run(["ip", "netns", "exec", R, "cat", "/proc/net/snmp6"], capture_output=True, text=True).stdout
    return int(next(line.split()[1] for line in out.splitlines() if line.split()[:1] == ["Ip6OutForwDatagrams"]))


def setup():
    for ns in (R, P, S):
        ip("netns", "add", ns)
        ip("link", "set", "lo", "up", ns=ns)
    ip("link", "add", "k1", "type", "veth", "peer", "name", "pk1", "netns", P, ns=R)
    ip("link", "add", "u0", "type", "veth", "peer", "name", "su0", "netns", S, ns=R)
    for ns, dev in ((R, "k1"), (R, "u0"), (P, "pk1"), (S, "su0")):
        ip("link", "set", dev, "up", ns=ns)
    subprocess.run(["ip", "netns", "exec", R, "sysctl", "-qw", "net.ipv6.conf.all.forwarding=1"], check=True)
    ip("addr", "add", "2001:db8:1::1/64", "dev", "k1", "nodad", ns=R)
    ip("addr", "add", GW + "/64", "dev", "pk1", "nodad", ns=P)
    ip("addr", "add", "2001:db8:9::1/64", "dev", "u0", "nodad", ns=R)
    ip("addr", "add", "2001:db8:9::2/64", "dev", "su0", "nodad", ns=S)
    ip("-6", "route", "add", "2001:db8:100::/48", "via", "2001:db8:9::1", ns=S)
    # Permanent neighbours: no resolution traffic, no neighbour state in play.
    ip("neigh", "replace", GW, "dev", "k1", "lladdr", mac(P, "pk1"), "nud", "permanent", ns=R)
    ip("neigh", "replace", "2001:db8:9::2", "dev", "u0", "lladdr", mac(S, "su0"), "nud", "permanent", ns=R)
    ip("neigh", "replace", "2001:db8:9::1", "dev", "su0", "lladdr", mac(R, "u0"), "nud", "permanent", ns=S)
    ip("nexthop", "add", "id", "10", "via", GW, "dev", "k1", ns=R)
    ip("-6", "route", "add", "2001:db8:100:a::/64", "nhid", "10", ns=R)
    ip("-6", "route", "add", "2001:db8:100:b::/64", "nhid", "10", ns=R)


def send_on_cpu0(dst, n):
    """n UDP datagrams from S to dst, sent by a process on CPU 0: a veth
    delivers on the sending CPU, so R receives and forwards them there."""
    code = ("import socket\ns = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)\n"
            "for _ in range(%d): s.sendto(b'x', ('%s', 9))\n" % (n, dst))
    subprocess.run(["taskset", "-c", "0", "ip", "netns", "exec", S, sys.executable, "-c", code], check=True)


def main():
    if len(os.sched_getaffinity(0)) < 2:
        print("pcpu_answer_test: needs two CPUs; skipped")
        return 77
    setup()
    oracle = KernelOracle(R)
    k1 = int(ip("-o", "link", "show", "k1", ns=R).split(":")[0])
    want = frozenset({(k1, GW)})
    failures = []
    try:
        os.sched_setaffinity(0, {0})  # RTM_GETROUTE is answered on the asking CPU
        oracle.answers(A)  # CPU 0's copy of object 10 is now A's
        ip("-6", "route", "del", "2001:db8:100:a::/64", ns=R)
        stale = oracle.answers(B)
        os.sched_setaffinity(0, {1})
        other = oracle.answers(B)
        os.sched_setaffinity(0, {0})
        print("RTM_GETROUTE %s after %s went: CPU 0 %s, CPU 1 %s" % (B, A, sorted(stale) or "refused", sorted(other)))
        if other != want:
            failures.append("CPU 1 (no stale copy) did not answer via k1: %s" % sorted(other))
        if stale == want:
            print("this kernel answers on CPU 0 too (no stale copy): the oracle's refresh is not needed here")
        before = forwarded()
        send_on_cpu0(B, PACKETS)
        got = forwarded() - before
        print("%d datagrams to %s entering on CPU 0: %d forwarded" % (PACKETS, B, got))
        if got != PACKETS:
            failures.append("the kernel forwarded %d of %d packets on the CPU that refused to answer: the refusal "
                            "is real, and KernelOracle.refresh() would hide it" % (got, PACKETS))
        # The same with a second object, then the oracle's refresh.
        ip("nexthop", "add", "id", "11", "via", GW, "dev", "k1", ns=R)
        ip("-6", "route", "add", "2001:db8:100:c::/64", "nhid", "11", ns=R)
        ip("-6", "route", "add", "2001:db8:100:d::/64", "nhid", "11", ns=R)
        oracle.answers(C)
        ip("-6", "route", "del", "2001:db8:100:c::/64", ns=R)
        again = oracle.answers(D)
        oracle.refresh()
        fresh = oracle.answers(D)
        print("%s on CPU 0 after %s went: %s; after KernelOracle.refresh(): %s"
              % (D, C, sorted(again) or "refused", sorted(fresh) or "refused"))
        if fresh != want:
            failures.append("after refresh() CPU 0 still answered %s, not via k1" % (sorted(fresh) or "refused"))
        if oracle.refresh_failed:
            failures.append("refresh() could not bump the route generation")
    finally:
        oracle.close()
        for ns in (R, P, S):
            ip("netns", "del", ns, check=False)
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
