#!/usr/bin/env python3
"""fibnic-emu on real frames, in XDP mode (--mode xdp: skb-mode XDP;
--mode xdp-native: in the veth driver) or its user-space mode (--mode user),
each frame held to the frame model (emu_xdp_bar_tool model:
fpga/model RunPipelineModel on the live BAR map).

One network namespace (xdp-t<pid>) holds the card's wires w0..w2 and host
sides e0..e2 and their veth peers p0..p2 (the peers' wires) and x0..x2 (the
router's interfaces). The BAR is a BAR map pinned in a bpffs mounted for the
test, made by the same backend fibnicd uses. Shown:
  1. the lab's captured frames (tests/emu/lab_frames.txt), crafted ones
     (TTL 1, ARP, IPv4 options, a bad checksum, not our MAC) and 300 random
     ones around every check's edges (seed printed; XDP_TEST_SEED replays):
     every forwarded frame leaves on the model's egress byte for byte, every
     punt reaches the host side of its port unchanged, drops go nowhere;
  2. tables changed under a stream (SRAM code to 0, a new next-hop MAC, a
     VALID|DROP entry): each frame follows the BAR as it is when it arrives;
  3. PORT_COUNTERS and DROP_COUNTERS equal to what the model's verdicts add up to;
  4. XDP modes: the emulator's account at exit shows the program forwarded
     and dropped exactly the frames the model forwards and drops (but those
     shorter than 55 bytes, which the model decides in user space), and the
     user-space path saw only the rest (native mode: the veths' own XDP
     statistics agree).
A test that cannot run (not root, no bpffs, no XDP) fails saying why; in
native mode an interface without native XDP is refused with the reason.
"""
import argparse
import ctypes
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import time

PORTS = 3
MACS = [bytes([2, 0xFB, 0, 0, 0, k]) for k in range(PORTS)]
REASON_TTL = 10
MIN_FAST = 55  # the XDP program's shortest frame (fpga::kInPlaceMinBytes)
fails = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails.append(what)


def run(*cmd, **kw):
    return subprocess.run([str(c) for c in cmd], check=True, text=True, capture_output=True, **kw).stdout


class Bar:
    def __init__(self, tool, pin):
        self.tool, self.pin = tool, pin

    def poke(self, offset, data):
        run(self.tool, "poke", self.pin, hex(offset), data.hex())

    def peek(self, offset, n):
        return bytes.fromhex(run(self.tool, "peek", self.pin, hex(offset), n).strip())

    def model(self, frames):
        lines = "".join(f"{p} {f.hex()}\n" for p, f in frames)
        out = []
        for line in run(self.tool, "model", self.pin, input=lines).splitlines():
            w = line.split()
            out.append((w[0], int(w[1]), int(w[2]), bytes.fromhex(w[3]) if len(w) > 3 else b""))
        return out

    def counters(self):
        rows = {}
        for line in run(self.tool, "counters", self.pin).splitlines():
            w = [int(x) for x in line.split()]
            rows[w[0]] = w[1:]
        return rows


def enter_netns(name):
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/var/run/netns/{name}", os.O_RDONLY)
    if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
        raise OSError(ctypes.get_errno(), "setns")
    os.close(fd)


def packet_socket(ifname):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))  # ETH_P_ALL
    s.bind((ifname, 0))
    s.setblocking(False)
    return s


def ipv4(src, dst, ttl=64, options=b"", bad_sum=False, payload=bytes(range(32))):
    ihl = 5 + len(options) // 4
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, ihl * 4 + len(payload), 1, 0, ttl, 17, 0,
                    socket.inet_aton(src), socket.inet_aton(dst)) + options
    s = sum(struct.unpack(f"!{len(h) // 2}H", h))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    csum = (~s & 0xFFFF) ^ (1 if bad_sum else 0)
    return h[:10] + struct.pack("!H", csum) + h[12:] + payload


def eth(dst, src, etype, body):
    return dst + src + struct.pack("!H", etype) + body


PEER = [bytes([2, 0xBE, 0, 0, 0, k]) for k in range(PORTS)]


def crafted():
    """Frames the lab capture lacks: a punt of every kind the fast path must pass up."""
    f = []
    f.append((0, eth(MACS[0], PEER[0], 0x0800, ipv4("10.0.0.1", "198.18.1.9", ttl=1))))  # TTL expiry
    f.append((1, eth(MACS[1], PEER[1], 0x0800, ipv4("10.1.0.1", "198.18.2.9", ttl=2))))  # TTL 2: forwarded with 1
    f.append((0, eth(b"\xff" * 6, PEER[0], 0x0806, bytes(46))))  # ARP broadcast
    f.append((0, eth(MACS[0], PEER[0], 0x0800, ipv4("10.0.0.1", "198.18.1.9", options=b"\x01\x01\x01\x00"))))
    f.append((0, eth(MACS[0], PEER[0], 0x0800, ipv4("10.0.0.1", "198.18.1.9", bad_sum=True))))
    f.append((0, eth(MACS[1], PEER[0], 0x0800, ipv4("10.0.0.1", "198.18.1.9"))))  # another port's MAC
    f.append((2, eth(MACS[2], PEER[2], 0x0800, ipv4("10.2.0.1", "1.0.5.77"))))  # the table prefix, to its own port
    f.append((0, eth(MACS[0], PEER[0], 0x0800, ipv4("10.0.0.1", "203.0.113.1"))))  # no route: code 0
    f.append((0, eth(MACS[0], PEER[0], 0x0800, ipv4("10.0.0.1", "10.1.0.1"))))  # connected: NEIGH hit
    f.append((0, eth(MACS[0], PEER[0], 0x0800, ipv4("10.0.0.1", "10.1.0.99"))))  # connected: NEIGH miss
    return f


def ipv6(src, dst, next_header=17, hop_limit=64, payload=bytes(range(32))):
    return struct.pack("!IHBB", 0x60000000, len(payload), next_header, hop_limit) + \
        socket.inet_pton(socket.AF_INET6, src) + socket.inet_pton(socket.AF_INET6, dst) + payload


def randomized(rng, n):
    """Frames drawn around the edges the checks and tables have: every
    destination MAC kind, ethertype, IPv4 version/IHL/checksum/TTL, IPv6
    next header/hop limit/ICMPv6 type, destinations routed, connected (NEIGH
    hit or miss), unrouted, and random header fields (so the checksum takes
    many values)."""
    v4_dst = ["198.18.0.9", "198.18.1.9", "198.18.2.9", "1.0.5.1", "10.0.0.1", "10.1.0.1", "10.2.0.1",
              "10.1.0.77", "203.0.113.9", "198.18.3.1"]
    v6_dst = ["fd10::9", "fd10:1::9", "fd10:2::9", "2001:200:900::1", "fd00:1::1", "fd00:2::5", "fd99::1"]
    out = []
    for _ in range(n):
        port = rng.randrange(PORTS)
        dst_mac = rng.choice([MACS[port]] * 6 + [MACS[(port + 1) % PORTS], b"\xff" * 6, b"\x33\x33\x00\x00\x00\x01",
                                                  b"\x01\x00\x5e\x00\x00\x05"])
        src_mac = bytes([2, 0xBE, 0, 0, rng.randrange(256), port])
        payload = bytes(rng.randrange(256) for _ in range(rng.choice([0, 6, 26, 200, 1400])))
        kind = rng.randrange(10)
        if kind < 5:
            h = bytearray(ipv4("10.0.0.1", rng.choice(v4_dst), ttl=rng.choice([0, 1, 2, 3, 64, 255]), payload=payload,
                               bad_sum=rng.random() < 0.1))
            h[4:6] = rng.randrange(65536).to_bytes(2, "big")  # a new ID: fix the checksum for it
            h[10:12] = b"\0\0"
            s = sum(struct.unpack("!10H", bytes(h[:20])))
            while s >> 16:
                s = (s & 0xFFFF) + (s >> 16)
            h[10:12] = (~s & 0xFFFF).to_bytes(2, "big")
            if rng.random() < 0.1:
                h[0] = rng.choice([0x46, 0x44, 0x55, 0x65])  # options, a short IHL, other versions
            if rng.random() < 0.1:
                h[10] ^= 0x40
            out.append((port, eth(dst_mac, src_mac, 0x0800, bytes(h))))
        elif kind < 9:
            nh = rng.choice([17, 17, 6, 58, 58, 0, 43])
            icmp = bytes([rng.choice([128, 129, 133, 134, 135, 136, 137, 1])]) + bytes(7)
            body = ipv6("fd00::1", rng.choice(v6_dst), nh, rng.choice([0, 1, 2, 64, 255]),
                        (icmp if nh == 58 else b"") + payload)
            if rng.random() < 0.05:
                body = bytes([0x40]) + body[1:]  # version 4 under the IPv6 ethertype
            out.append((port, eth(dst_mac, src_mac, 0x86DD, body)))
        else:
            # ARP, LLDP, runts. No 802.1Q tag: a veth hands it to packet
            # sockets beside the frame, not in it, on both sides of the card.
            etype = rng.choice([0x0806, 0x88CC, 0x0800, 0x86DD])
            out.append((port, eth(dst_mac, src_mac, etype, payload[:40])))
    return out


class Wires:
    def __init__(self):
        self.tx = [packet_socket(f"p{k}") for k in range(PORTS)]
        self.rx = {("wire", k): self.tx[k] for k in range(PORTS)}
        self.rx.update({("host", k): packet_socket(f"x{k}") for k in range(PORTS)})

    def drain(self, wait):
        """Frames that arrived on the peers within `wait` seconds: [(exit, port, bytes)]."""
        got, end = [], time.monotonic() + wait
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return got
            ready, _, _ = select.select(list(self.rx.values()), [], [], left)
            for (kind, k), s in self.rx.items():
                if s in ready:
                    while True:
                        try:
                            data, addr = s.recvfrom(4096)
                        except BlockingIOError:
                            break
                        if addr[2] != socket.PACKET_OUTGOING:
                            got.append((kind, k, data))

    def exchange(self, frames, expect):
        """Sends frames one by one; each must come out where the model says."""
        for (port, f), (kind, k, _, want) in zip(frames, expect):
            self.tx[port].send(f)
            got = self.drain(0.05 if kind == "none" else 0.0)
            deadline = time.monotonic() + 2
            while kind != "none" and not got and time.monotonic() < deadline:
                got = self.drain(0.02)
            got += self.drain(0.01)
            want_out = [] if kind == "none" else [(kind, k, want)]
            if got != want_out:
                return f"frame from port {port} {f.hex()}: model says {want_out}, card gave {got}"
        return None


def expected_counters(frames, verdicts, base):
    c = {p: list(v) for p, v in base.items()}
    for (port, f), (kind, k, why, _) in zip(frames, verdicts):
        n = len(f) + 4
        c[port][0] += 1
        c[port][6] += n
        if kind == "wire":
            c[port][1] += 1
            c[k][5] += 1
            c[k][7] += n
        elif kind == "host":
            c[port][2] += 1
            c[port][3] += why == REASON_TTL
        else:
            c[port][8] += 1
    return c


def xdp_redirects(ifname):
    total = 0
    for line in run("ethtool", "-S", ifname).splitlines():
        name, _, value = line.strip().partition(":")
        if name.endswith("xdp_redirect"):
            total += int(value)
    return total


def main():
    ap = argparse.ArgumentParser()
    for a in ("--mode", "--emu", "--tool", "--compile", "--data", "--work"):
        ap.add_argument(a, required=True)
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("FAIL: needs root (a network namespace, a bpffs, BPF maps)")
        return 1
    if "VM_WORK" in os.environ:  # inside tests/vm/run.sh's guest: the build tree is read-only
        a.work = os.path.join(os.environ["VM_WORK"], os.path.basename(a.work))
    os.makedirs(a.work, exist_ok=True)
    bpffs = os.path.join(a.work, "bpffs")
    ns = f"xdp-t{os.getpid()}"
    emu = None
    mounted = False
    try:
        os.makedirs(bpffs, exist_ok=True)
        r = subprocess.run(["mount", "-t", "bpf", "bpf", bpffs], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL: cannot mount a bpffs at {bpffs} (kernel without BPF file system?): {r.stderr.strip()}")
            return 1
        mounted = True
        pin = os.path.join(bpffs, "bar0")
        img = os.path.join(a.work, "bar0.img")
        run(a.compile, "--routes", f"{a.data}/lab_routes.txt", "--neighbors", f"{a.data}/lab_neighbors.txt",
            "--code-bits", "4", "--out", img)
        with open(img, "r+b") as f:
            for k in range(PORTS):
                f.seek(0x40 + 8 * k)
                f.write(MACS[k])
        bar = Bar(a.tool, pin)
        run(a.tool, "load", img, pin)

        run("ip", "netns", "add", ns)
        enter_netns(ns)
        run("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
        for k in range(PORTS):
            for card, peer in ((f"w{k}", f"p{k}"), (f"e{k}", f"x{k}")):
                run("ip", "link", "add", card, "type", "veth", "peer", "name", peer)
                run("ip", "link", "set", card, "up")
                run("ip", "link", "set", peer, "up")
            # Native mode: a redirect into a veth is received by its far
            # end's NAPI; GRO on that end turns it on (kernel 5.13 and later).
            if a.mode == "xdp-native":
                run("ethtool", "-K", f"p{k}", "gro", "on")
        args = [a.emu, "--bar", pin]
        if a.mode != "user":
            args.insert(1, "--xdp" if a.mode == "xdp" else "--xdp-native")
        for k in range(PORTS):
            args += ["--port", f"{k}=w{k}", "--host", f"{k}=e{k}"]
        log = open(os.path.join(a.work, "emu.log"), "w")
        emu = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        for _ in range(100):
            if "forwarding" in open(log.name).read() or emu.poll() is not None:
                break
            time.sleep(0.05)
        text = open(log.name).read()
        if "forwarding" not in text:
            print(f"FAIL: fibnic-emu --mode {a.mode} did not start:\n{text}")
            return 1
        print(text.strip())
        if a.mode == "xdp-native":
            # A driver without native XDP (a bridge) is refused with the
            # reason: never a silent fall back to skb mode or to user space.
            run("ip", "link", "add", "xd0", "type", "bridge")
            run("ip", "link", "add", "xh0", "type", "bridge")
            run("ip", "link", "set", "xd0", "up")
            run("ip", "link", "set", "xh0", "up")
            r = subprocess.run([a.emu, "--xdp-native", "--bar", pin, "--port", "0=xd0", "--host", "0=xh0"],
                               capture_output=True, text=True, timeout=10)
            check(r.returncode == 1 and "cannot attach the program to xd0 in native mode" in r.stderr,
                  f"native XDP on a bridge is refused: exit {r.returncode}, {r.stderr.strip()}")
        wires = Wires()
        time.sleep(0.2)
        wires.drain(0.1)
        base = bar.counters()

        # 1. The lab's frames and the crafted punts.
        frames = []
        for line in open(f"{a.data}/lab_frames.txt"):
            if line.strip() and not line.startswith("#"):
                p, h = line.split()
                frames.append((int(p), bytes.fromhex(h)))
        frames += crafted()
        seed = int(os.environ.get("XDP_TEST_SEED", str(int(time.time()))))
        print(f"random frames: seed {seed} (XDP_TEST_SEED={seed} replays them)")
        frames += randomized(__import__("random").Random(seed), 300)
        verdicts = bar.model(frames)
        kinds = [v[0] for v in verdicts]
        check(kinds.count("wire") >= 40 and kinds.count("host") >= 8,
              f"the frames cover forwards and punts ({kinds.count('wire')} forwarded, {kinds.count('host')} punted)")
        check(any(v[2] == REASON_TTL for v in verdicts), "a TTL expiry is among them")
        err = wires.exchange(frames, verdicts)
        check(err is None, f"{len(frames)} frames leave where the model says, byte for byte" + (f": {err}" if err else ""))
        all_frames, all_verdicts = list(frames), list(verdicts)

        # 2. The BAR changed under a stream to 198.18.1.0/24 (port 1).
        probe = (0, eth(MACS[0], PEER[0], 0x0800, ipv4("10.0.0.1", "198.18.1.7")))
        slash24 = (198 << 16) | (18 << 8) | 1
        word_off = 0x1000000 + 2 * (slash24 >> 2)
        shift = 4 * (slash24 & 3)
        word = int.from_bytes(bar.peek(word_off, 2), "little")
        code = (word >> shift) & 15
        nh_off = 0x1000 + 16 * code
        nh = bar.peek(nh_off, 16)
        steps = [
            ("as compiled", None),
            ("SRAM code 0: punt", lambda: bar.poke(word_off, (word & ~(15 << shift)).to_bytes(2, "little") + bar.peek(word_off + 2, 2))),
            ("code back", lambda: bar.poke(word_off, word.to_bytes(2, "little") + bar.peek(word_off + 2, 2))),
            ("next-hop MAC changed", lambda: bar.poke(nh_off, bytes([2, 0xBE, 0, 0, 0, 0x41]) + nh[6:8])),
            ("next-hop VALID|DROP", lambda: bar.poke(nh_off + 4, nh[4:6] + nh[6:7] + bytes([nh[7] | 4]))),
            ("next-hop restored", lambda: bar.poke(nh_off, nh[:8])),
        ]
        outcomes = []
        for what, change in steps:
            if change:
                change()
            burst = [probe] * 20
            v = bar.model(burst)
            err = wires.exchange(burst, v)
            check(err is None, f"table change '{what}': 20 frames follow the live BAR" + (f": {err}" if err else ""))
            outcomes.append((v[0][0], v[0][3][:6].hex()))
            all_frames += burst
            all_verdicts += v
        check(len(set(outcomes)) >= 4, f"the changes changed the verdicts: {outcomes}")

        # 3. Counters: the emulator publishes at least every 50 ms (XDP) or per batch.
        time.sleep(0.3)
        want = expected_counters(all_frames, all_verdicts, base)
        got = bar.counters()
        check(got == want, f"PORT_COUNTERS and DROP_COUNTERS exact: {got}" + ("" if got == want else f" != {want}"))

        # 4. Who forwarded: the program takes every forward and drop but of
        # frames shorter than the in-place model's 55 bytes (user space's).
        forwarded = sum(1 for v in all_verdicts if v[0] == "wire")
        fast = [(f, v) for f, v in zip(all_frames, all_verdicts) if len(f[1]) >= MIN_FAST]
        fast_fwd = sum(1 for _, v in fast if v[0] == "wire")
        fast_drop = sum(1 for _, v in fast if v[0] == "none")
        check(forwarded > fast_fwd > 300, f"short frames among the forwards ({forwarded - fast_fwd}), most are not")
        redirects = sum(xdp_redirects(f"w{k}") for k in range(PORTS))
        emu.send_signal(signal.SIGTERM)
        emu.wait(5)
        text = open(log.name).read()
        if a.mode == "user":
            check(redirects == 0 and "XDP path" not in text, "user-space mode: no XDP")
        else:
            want = (f"XDP path forwarded {fast_fwd} and dropped {fast_drop} frames; "
                    f"user-space path saw {len(all_frames) - fast_fwd - fast_drop} from wires")
            check(want in text, f"the XDP program handled every forward and drop: '{want}' in\n{text}")
            if a.mode == "xdp-native":
                check(redirects == fast_fwd, f"the veths' XDP statistics: {redirects} redirects")
    finally:
        if emu is not None and emu.poll() is None:
            emu.send_signal(signal.SIGTERM)
            try:
                emu.wait(5)
            except subprocess.TimeoutExpired:
                emu.kill()
                emu.wait()
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        if mounted:
            subprocess.run(["umount", bpffs], capture_output=True)
    print(f"{0 if fails else 1} passed, {1 if fails else 0} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
