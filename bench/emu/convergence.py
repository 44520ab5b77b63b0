#!/usr/bin/env python3
"""BGP convergence in packets, on the lab with fibnic-emu on its wires.

Peer 1 announces (birdc enable) and withdraws (birdc disable) its host's LAN,
198.18.1.0/24 and fd10:1::/64, while host 0 sends a numbered UDP probe to
host 1 in both families every millisecond. In the same run, from the peer's
action (t0):
  kernel  the router's kernel has the route (rtnetlink RTM_NEWROUTE in the router namespace;
          withdrawal: RTM_DELROUTE);
  hw      the first probe host 1 receives that the card forwarded
          (withdrawal: the last one). A probe the router's kernel forwarded
          left the router on h1 and so crossed the card's host-facing port e1
          (captured there); every other probe at host 1 crossed the card's
          pipeline. The card's port-0 `forwarded` counter must have grown by
          at least as many.
Times are the kernel's packet timestamps and the watcher's receive times, one
clock (CLOCK_REALTIME) for every namespace.

  convergence.py run --build DIR [--trials N] [--routes N]   (root)
  convergence.py send FILE | capture IFACE FILE | routes FILE   (helpers, one per namespace)
"""
import argparse
import json
import os
import signal
import socket
import statistics
import struct
import subprocess
import sys
import time

PORT = 40100
MAGIC = b"fibnic-conv"
PREFIX = {4: ("198.18.1.0", 24), 6: ("fd10:1::", 64)}
TARGET = {4: "198.18.1.2", 6: "fd10:1::2"}
STATIC = {4: "lan4", 6: "lan6"}  # peer 1's bird protocols holding PREFIX (lab/lab.sh)
HERE = os.path.abspath(__file__)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
LAB = os.path.join(ROOT, "lab", "lab.sh")


def on_term(stop):
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))


# --- helpers, each run inside one namespace -------------------------------

def send(path):
    """Host 0: one probe per family every millisecond, numbered. Logs every
    pause longer than 2 ms ("gap FROM TO"): the figure is no finer there."""
    socks = {4: socket.socket(socket.AF_INET, socket.SOCK_DGRAM), 6: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)}
    stop = []
    on_term(stop)
    seq, tick, last = 0, time.monotonic(), None
    with open(path, "w", buffering=1) as out:
        out.write("ready\n")
        while not stop:
            now = time.time()
            if last is not None and now - last > 0.002:
                out.write(f"gap {last:.6f} {now:.6f}\n")
            last = now
            for fam, s in socks.items():
                try:
                    s.sendto(MAGIC + struct.pack("!I", seq), (TARGET[fam], PORT))
                except OSError:  # no route yet at the sender's side: the probe is simply lost
                    pass
            seq += 1
            tick += 0.001
            delay = tick - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            else:
                tick = time.monotonic()  # fell behind: no burst to catch up


def probe_of(frame):
    """(family, seq) of a probe frame, or None."""
    eth = struct.unpack_from("!H", frame, 12)[0] if len(frame) >= 14 else 0
    if eth == 0x0800 and len(frame) >= 34 and frame[23] == 17:
        udp = 14 + (frame[14] & 15) * 4
        fam = 4
    elif eth == 0x86DD and len(frame) >= 62 and frame[20] == 17:
        udp, fam = 54, 6
    else:
        return None
    body = frame[udp + 8:udp + 8 + len(MAGIC) + 4]
    if len(frame) < udp + 8 or struct.unpack_from("!H", frame, udp + 2)[0] != PORT or not body.startswith(MAGIC):
        return None
    if len(body) != len(MAGIC) + 4:
        return None
    return fam, struct.unpack("!I", body[len(MAGIC):])[0]


def capture(iface, path):
    """Probe frames IFACE receives: "time family seq", kernel timestamps."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))  # ETH_P_ALL
    s.setsockopt(socket.SOL_SOCKET, 35, 1)  # SO_TIMESTAMPNS
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind((iface, 0))
    s.settimeout(0.2)
    sinks = []  # host 1 takes the probe (no port unreachable back through the router)
    if iface == "eth0":
        for fam, addr in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
            sinks.append(socket.socket(fam, socket.SOCK_DGRAM))
            sinks[-1].setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # full at once: dropped quietly
            if fam == socket.AF_INET6:
                sinks[-1].setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sinks[-1].bind((addr, PORT))
    stop = []
    on_term(stop)
    with open(path, "w", buffering=1) as out:
        out.write("ready\n")
        while not stop:
            try:
                frame, anc, _, addr = s.recvmsg(2048, 64)
            except (socket.timeout, InterruptedError):
                continue
            if addr[2] == 4:  # PACKET_OUTGOING
                continue
            p = probe_of(frame)
            if p is None:
                continue
            t = time.time()
            for level, kind, data in anc:
                if level == socket.SOL_SOCKET and kind == 35:
                    sec, nsec = struct.unpack("qq", data[:16])
                    t = sec + nsec / 1e9
            out.write(f"{t:.6f} {p[0]} {p[1]}\n")


def routes(path):
    """The router's kernel: "time new|del family" for the watched prefixes."""
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    s.bind((0, (1 << 6) | (1 << 10)))  # RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE
    s.settimeout(0.2)
    want = {(socket.AF_INET, socket.inet_pton(socket.AF_INET, PREFIX[4][0]), PREFIX[4][1]): 4,
            (socket.AF_INET6, socket.inet_pton(socket.AF_INET6, PREFIX[6][0]), PREFIX[6][1]): 6}
    stop = []
    on_term(stop)
    with open(path, "w", buffering=1) as out:
        out.write("ready\n")
        while not stop:
            try:
                data = s.recv(1 << 20)
            except (socket.timeout, InterruptedError):
                continue
            except OSError:  # ENOBUFS: lost events would make a time unmeasurable, say so
                out.write(f"{time.time():.6f} overrun 0\n")
                continue
            t = time.time()
            off = 0
            while off + 28 <= len(data):
                length, mtype = struct.unpack_from("=IH", data, off)
                if length < 16:
                    break
                if mtype in (24, 25):  # RTM_NEWROUTE, RTM_DELROUTE
                    fam, dst_len = data[off + 16], data[off + 17]
                    a = off + 28  # after struct rtmsg
                    while a + 4 <= off + length:
                        alen, atype = struct.unpack_from("=HH", data, a)
                        if alen < 4:
                            break
                        if atype == 1:  # RTA_DST
                            fam_of = want.get((fam, bytes(data[a + 4:a + alen]), dst_len))
                            if fam_of:
                                out.write(f"{t:.6f} {'new' if mtype == 24 else 'del'} {fam_of}\n")
                        a += (alen + 3) & ~3
                off += (length + 3) & ~3


# --- the driver, in the host's namespace ------------------------------------

class Lab:
    def __init__(self, a):
        self.dir = os.environ["LAB_DIR"]
        self.name = os.environ["LAB_NAME"]
        self.bin = os.path.join(a.build, "bin")
        self.procs = []

    def files(self, name):
        return os.path.join(self.dir, name)

    def spawn(self, ns, *args, ready=None):
        # Real-time priority: on a loaded machine the probe, the captures and
        # the watcher must not wait for a core (the router, fibnicd and the
        # card run as they are; they are what is measured).
        p = subprocess.Popen(["ip", "netns", "exec", ns, "chrt", "-f", "10", sys.executable, HERE, *args])
        self.procs.append(p)
        if ready:
            for _ in range(100):
                if os.path.exists(ready) and open(ready).readline().startswith("ready"):
                    return
                time.sleep(0.05)
            raise SystemExit(f"bench/emu convergence: the {args[0]} helper in {ns} did not start")

    def stop_helpers(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
        self.procs = []

    def birdc(self, cmd):
        subprocess.run(["ip", "netns", "exec", self.name + "-p1", "birdc", "-s", self.files("p1-bird.ctl"), *cmd.split()],
                       check=True, stdout=subprocess.DEVNULL)

    def forwarded(self, port):  # the card's PORT_COUNTERS[port].forwarded, as the BAR holds it
        with open(self.files("bar0.img"), "rb") as f:
            f.seek(0x100 + 64 * port + 8)
            return struct.unpack("<Q", f.read(8))[0]

    def hw_forwards(self, fam):
        out = subprocess.run([os.path.join(self.bin, "fibnicctl"), "lookup", TARGET[fam], "--bar",
                              self.files("bar0.img"), "--json"], capture_output=True, text=True)
        try:
            return json.loads(out.stdout)["hardware"]["forward"] is True
        except (ValueError, KeyError, TypeError):
            return False

    def kernel_has(self, fam):
        out = subprocess.run(["ip", "netns", "exec", self.name + "-r", "ip", f"-{fam}", "route", "show",
                              f"{PREFIX[fam][0]}/{PREFIX[fam][1]}"], capture_output=True, text=True)
        return bool(out.stdout.strip())


def read(path):
    with open(path) as f:
        return [line.split() for line in f if not line.startswith("ready")]


def wait_until(what, cond, limit):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.05)
    raise SystemExit(f"bench/emu convergence: {what} within {limit:.0f} s")


def phase(lab, fams, announce):
    """One announcement or withdrawal of peer 1's LAN in FAMS; returns {fam: (kernel_s, hw_s, kernel_fwd, hw_fwd)}."""
    fwd0 = lab.forwarded(0)
    t0 = {}
    for fam in fams:
        t0[fam] = time.time()
        lab.birdc(f"{'enable' if announce else 'disable'} {STATIC[fam]}")
    state = (lambda fam: lab.kernel_has(fam) and lab.hw_forwards(fam)) if announce else \
        (lambda fam: not lab.kernel_has(fam) and not lab.hw_forwards(fam))
    wait_until(f"the router did not {'take' if announce else 'drop'} peer 1's LAN in kernel and device",
               lambda: all(state(f) for f in fams), 60)
    time.sleep(1.0)  # probes still in flight arrive; the card's counters are published per batch
    t_end = time.time()
    kind = "new" if announce else "del"
    overruns = [r for r in read(lab.files("conv-routes.txt")) if r[1] == "overrun" and float(r[0]) >= t0[4]]
    if overruns:
        raise SystemExit("bench/emu convergence: the route watcher lost netlink events; rerun on a quieter machine")
    by_kernel = {(int(f), int(s)) for t, f, s in read(lab.files("conv-kernel.txt"))}
    arrived = [(float(t), int(f), int(s)) for t, f, s in read(lab.files("conv-arrive.txt")) if float(t) <= t_end]
    out = {}
    for fam in fams:
        arrived_f = [(t, s) for t, f, s in arrived if f == fam and t >= t0[fam]]
        ev = [float(t) for t, k, f in read(lab.files("conv-routes.txt")) if k == kind and int(f) == fam and float(t) >= t0[fam]]
        if not ev:
            raise SystemExit(f"bench/emu convergence: no RTM_{kind.upper()}ROUTE for {PREFIX[fam][0]} after the peer's action")
        hw = [t for t, s in arrived_f if (fam, s) not in by_kernel]
        kern = [t for t, s in arrived_f if (fam, s) in by_kernel]
        if announce and not hw:
            raise SystemExit(f"bench/emu convergence: no IPv{fam} probe crossed the card after the announcement")
        t_hw = (min(hw) if announce else max(hw, default=t0[fam])) - t0[fam]
        # The probe's longest pause between the two events (and 2 ms before).
        lo, hi = t0[fam] + min(ev[0] - t0[fam], t_hw) - 0.002, t0[fam] + max(ev[0] - t0[fam], t_hw)
        gap = max((float(b) - float(a) for _, a, b in read(lab.files("conv-send.txt"))
                   if float(a) < hi and float(b) > lo), default=0.001)
        out[fam] = (ev[0] - t0[fam], t_hw, len(kern), len(hw), gap)
    grew = lab.forwarded(0) - fwd0
    hw_total = sum(v[3] for v in out.values())
    if grew < hw_total:
        raise SystemExit(f"bench/emu convergence: host 1 got {hw_total} probes past the card's pipeline, "
                         f"but its port-0 forwarded counter grew by only {grew}")
    return out


def run(a):
    # This run's own lab (the pid in its name): its teardown can only take
    # down what this run made, also when `up` is refused.
    os.environ.setdefault("LAB_NAME", "bench-emu-%d" % os.getpid())
    os.environ.setdefault("LAB_DIR", "/run/fibnic-" + os.environ["LAB_NAME"])
    os.environ["FIBNIC_BIN"] = os.path.join(a.build, "bin")
    os.environ["LAB_START_PEERS"] = "1"
    lab = Lab(a)

    def down(*_):
        lab.stop_helpers()
        subprocess.run([LAB, "down"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        subprocess.run([LAB, "up", "--wire", "card", "--routes", str(a.routes), "--web-port", "18483"],
                       check=True, stdout=subprocess.DEVNULL)
        # Converged: peer 1's LAN in the kernel and (IPv4) the card, then
        # withdrawn before the first trial. IPv6 is measured when the card's
        # 32-entry TCAM holds fd10:1::/64 among the table's IPv6 routes.
        wait_until("the lab did not converge (peer 1's LAN in the kernel, 198.18.1.0/24 in the card)",
                   lambda: lab.kernel_has(4) and lab.kernel_has(6) and lab.hw_forwards(4), 180)
        time.sleep(3)
        fams = (4, 6) if lab.hw_forwards(6) else (4,)
        lab.spawn(lab.name + "-r", "routes", lab.files("conv-routes.txt"), ready=lab.files("conv-routes.txt"))
        lab.spawn(lab.name + "-emu", "capture", "e1", lab.files("conv-kernel.txt"), ready=lab.files("conv-kernel.txt"))
        lab.spawn(lab.name + "-h1", "capture", "eth0", lab.files("conv-arrive.txt"), ready=lab.files("conv-arrive.txt"))
        lab.spawn(lab.name + "-h0", "send", lab.files("conv-send.txt"), ready=lab.files("conv-send.txt"))
        phase(lab, fams, announce=False)
        results = {True: [], False: []}
        for _ in range(a.trials):
            for announce in (True, False):
                results[announce].append(phase(lab, fams, announce))
        report(results, fams, a)
    except subprocess.CalledProcessError as e:
        raise SystemExit(f"bench/emu convergence: {' '.join(e.cmd)} failed (exit {e.returncode})")
    finally:
        down()


def report(results, fams, a):
    print(f"bench/emu: BGP convergence in packets ({a.trials} trials, {a.routes or 'all'} IPv4 routes loaded; "
          "probe every 1 ms per family, host 0 -> host 1 through the card)")
    print("  peer 1 announces / withdraws its LAN; seconds from its action to: the router's kernel has (drops)")
    print("  the route; the first (last) probe forwarded by the card arrives at host 1. Medians of the trials;")
    print("  card-kernel: the card's lag per trial; 'via kernel': probes the router's kernel forwarded meanwhile")
    print("  (the card still punted them); probe gap: the probe's longest pause around the events, worst trial")
    print("  (the figures are no finer).")
    print(f"  {'family':<7} {'event':<9} {'kernel_s':>9} {'card_s':>9} {'card/kernel':>12} {'card-kernel_ms':>15} {'via kernel':>11}"
          f" {'probe gap_ms':>13}   per trial card-kernel_ms")
    for announce in (True, False):
        for fam in fams:
            rows = [r[fam] for r in results[announce]]
            k = statistics.median(r[0] for r in rows)
            h = statistics.median(r[1] for r in rows)
            lag = statistics.median((r[1] - r[0]) * 1e3 for r in rows)
            via = statistics.median(r[2] for r in rows)
            ratio = f"{h / k:.2f}" if k > 0 else "-"
            gap = max(r[4] for r in rows) * 1e3
            each = " ".join(f"{(r[1] - r[0]) * 1e3:.1f}" for r in rows)
            print(f"  IPv{fam:<3} {'announce' if announce else 'withdraw':<9} {k:>9.3f} {h:>9.3f} {ratio:>12} {lag:>15.1f} {via:>11g}"
                  f" {gap:>13.1f}   {each}")
    if 6 not in fams:
        print("  IPv6: fd10:1::/64 is not in the card's 32-entry TCAM next to this table's IPv6 routes (--routes 100 fits)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--build", required=True)
    r.add_argument("--trials", type=int, default=5)
    r.add_argument("--routes", type=int, default=100, help="IPv4 routes in the lab, and N/5 IPv6 (0 = the whole table)")
    sd = sub.add_parser("send")
    sd.add_argument("file")
    c = sub.add_parser("capture")
    c.add_argument("iface")
    c.add_argument("file")
    w = sub.add_parser("routes")
    w.add_argument("file")
    a = ap.parse_args()
    if a.cmd == "run":
        if a.trials < 1:
            raise SystemExit("bench/emu convergence: --trials must be at least 1")
        if os.geteuid() != 0:
            raise SystemExit("bench/emu convergence: needs root (network namespaces)")
        for t in ("fibnic-emu", "fibnicd", "fibnicctl"):
            if not os.access(os.path.join(a.build, "bin", t), os.X_OK):
                raise SystemExit(f"bench/emu convergence: {a.build}/bin/{t} not built (scripts/build.sh release)")
        run(a)
    elif a.cmd == "send":
        send(a.file)
    elif a.cmd == "capture":
        capture(a.iface, a.file)
    else:
        routes(a.file)


if __name__ == "__main__":
    main()
