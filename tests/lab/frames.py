#!/usr/bin/env python3
"""Frames on the lab's wires, seen from outside the card (AF_PACKET, no
capture tools needed), and the checks the emulator lab test makes on them.

  frames.py capture IFACE FILE          record every frame IFACE receives
                                        (not its own transmissions) until
                                        SIGTERM: one "time hex" line each
  frames.py udp DST PORT COUNT TTL GAP  send COUNT UDP datagrams
  frames.py ttl FILE PORT TTL SRC_MAC   the UDP frames to PORT in FILE: each
                                        has exactly TTL, a valid IPv4 header
                                        checksum and source MAC SRC_MAC;
                                        prints how many
  frames.py to FILE PREFIX [FROM UNTIL] frames to addresses in PREFIX whose
                                        time is outside [FROM, UNTIL]: one
                                        line each
"""
import ipaddress
import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 3
PACKET_OUTGOING = 4


def capture(iface, path):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    s.settimeout(0.2)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    with open(path, "w", buffering=1) as out:
        out.write("ready\n")
        while not stop:
            try:
                frame, addr = s.recvfrom(65535)
            except socket.timeout:
                continue
            except InterruptedError:
                continue
            if addr[2] == PACKET_OUTGOING:
                continue
            out.write(f"{time.time():.6f} {frame.hex()}\n")


def frames(path):
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2:
                yield float(parts[0]), bytes.fromhex(parts[1])


def ipv4_checksum_ok(header):
    total = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    return total == 0xFFFF


def udp(dst, port, count, ttl, gap):
    fam = socket.AF_INET6 if ":" in dst else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    if fam == socket.AF_INET:
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, ttl)
    else:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, ttl)
    for i in range(count):
        s.sendto(struct.pack("!I", i) + b"fibnic-lab-probe" * 4, (dst, port))
        time.sleep(gap)


def ttl(path, port, want_ttl, src_mac):
    n = bad = 0
    want_mac = bytes.fromhex(src_mac.replace(":", ""))
    for _, f in frames(path):
        if f[12:14] != b"\x08\x00" or f[14 + 9] != 17:
            continue
        ihl = (f[14] & 15) * 4
        if struct.unpack("!H", f[14 + ihl + 2:14 + ihl + 4])[0] != port:
            continue
        n += 1
        why = []
        if f[14 + 8] != want_ttl:
            why.append(f"TTL {f[14 + 8]}, expected {want_ttl}")
        if not ipv4_checksum_ok(f[14:14 + ihl]):
            why.append("IPv4 header checksum does not verify")
        if f[6:12] != want_mac:
            why.append(f"source MAC {f[6:12].hex(':')}, expected {src_mac}")
        if why:
            bad += 1
            if bad <= 5:
                print("BAD frame: " + "; ".join(why), file=sys.stderr)
    print(n)
    return 1 if bad else 0


def dst_of(f):
    if f[12:14] == b"\x08\x00" and len(f) >= 34:
        return ipaddress.ip_address(f[30:34])
    if f[12:14] == b"\x86\xdd" and len(f) >= 54:
        return ipaddress.ip_address(f[38:54])
    return None


def to(path, prefix, lo=None, hi=None):
    net = ipaddress.ip_network(prefix)
    for t, f in frames(path):
        d = dst_of(f)
        if d is None or d.version != net.version or d not in net:
            continue
        if lo is not None and lo <= t <= hi:
            continue
        print(f"{t:.6f} {d} ttl/hop {f[22] if d.version == 4 else f[21]}")


def main(argv):
    cmd = argv[1] if len(argv) > 1 else ""
    if cmd == "capture" and len(argv) == 4:
        capture(argv[2], argv[3])
    elif cmd == "udp" and len(argv) == 7:
        udp(argv[2], int(argv[3]), int(argv[4]), int(argv[5]), float(argv[6]))
    elif cmd == "ttl" and len(argv) == 6:
        return ttl(argv[2], int(argv[3]), int(argv[4]), argv[5])
    elif cmd == "to" and len(argv) in (4, 6):
        lo, hi = (float(argv[4]), float(argv[5])) if len(argv) == 6 else (None, None)
        to(argv[2], argv[3], lo, hi)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
