#!/usr/bin/env python3
"""ipnuma-emu moves bytes: two hosts in network namespaces, each with ipnumad
(file backend) and ipnuma-emu on a veth, joined by a bridge in a third
namespace (the wire). B exports a region, A maps pages to it through ipnumad's
peer agreement, and a program on A writes through libipnuma; B's pool
must equal a plain byte array to which the same writes were applied. Then the
same with 1 % and 10 % loss on the wire, an unreachable peer, and a revoke.

  emu_namespace_test.py BIN_DIR TESTS_BIN_DIR [file|bpf|xdp|xdptx]   (root; FIBNIC_SEED replays a run)

bpf: each host's BAR0 and pool are BPF maps pinned on a bpffs the test
mounts (TwoHosts memory="bpf"), as an XDP receive path needs them.
xdp: the same, and the emulators take requests in the kernel (ipnuma-emu
--xdp): every write below lands in B's memory through the XDP program.
xdptx: as xdp, and each NIC has a host link (ipnuma-emu --host-link): every
write below is posted (then flushed), so it leaves A from the kernel's
transmit path, and the faults are seen at the flush.

Everything is named after this process's pid and removed by that name only.
"""
import json
import os
import random
import re
import shutil
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ipnuma_hosts import (MAC, PORT, POOL_B, RETRANSMITS, RX_DENIED, RX_MALFORMED, TX_PEER_DOWN_REFUSED, TX_UNMAPPED,
                          TX_WRITES, OFF_EPOCH_BASE, OFF_MAX_PAYLOAD, OFF_PEER_STATE, PEERS_DOWN, TwoHosts, counter, ext,
                          EmuWriter, check_export, in_ns, page_pcid, random_writes, run_test, sh, stop, u64,
                          wait_for)
from pinned import is_bpffs

BIN, TBIN = sys.argv[1], sys.argv[2]
MODE = sys.argv[3] if len(sys.argv) > 3 else "file"
if MODE not in ("file", "bpf", "xdp", "xdptx"):
    sys.exit(f"emu_namespace_test.py: mode {MODE!r} is not file, bpf, xdp or xdptx")
MEMORY = "file" if MODE == "file" else "bpf"
EMU_ARGS = ["--xdp"] if MODE in ("xdp", "xdptx") else []
POSTED = MODE == "xdptx"
EXPORT_OFF, EXPORT_LEN = 0x10000, 0x40000  # B's export inside its pool: 64 pages
PAGES = 64
EACCES, ENXIO, EHOSTDOWN = 13, 6, 112

hosts = TwoHosts(BIN, "ipe", wire="bridge", pages=PAGES, memory=MEMORY, host_link=MODE == "xdptx")
work = hosts.work
NS_A, NS_B = hosts.ns["a"], hosts.ns["b"]
VA, VB = hosts.iface["a"], hosts.iface["b"]


def write_and_flush(writer, off, data):
    """A write as the mode makes them: answered, or posted and then flushed
    (the flush tells how it went)."""
    if not POSTED:
        return writer.write(off, data)
    rc, msg = writer.cmd(f"p {off} {data.hex()}")
    assert rc == 0, f"posted write {off:#x}: {rc} {msg}"
    return writer.cmd("flush")


def checksum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def inject_malformed(mac_b):
    """Two frames to B's NIC from A's interface, written here byte by byte: a
    WRITE whose UDP checksum is wrong, and a datagram the codec refuses (bad
    magic). B must count both and change nothing."""
    import socket
    src, dst = bytes([10, 232, 0, 1]), bytes([10, 232, 0, 2])

    def frame(payload, corrupt_sum):
        udp = struct.pack("!HHHH", PORT, PORT, 8 + len(payload), 0) + payload
        pseudo = src + dst + struct.pack("!BBH", 0, 17, len(udp))
        csum = checksum(pseudo + udp) ^ (0x0101 if corrupt_sum else 0)
        udp = udp[:6] + struct.pack("!H", csum or 0xFFFF) + udp[8:]
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0x4000, 64, 17, 0, src, dst)
        ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
        return bytes.fromhex(mac_b.replace(":", "")) + bytes.fromhex("020000000099") + b"\x08\x00" + ip + udp

    # A well-formed WRITE of 4 bytes at B's export, from A's address.
    write = struct.pack("!IBBBBHHII", 0x49504E4D, 1, 1, 0, 0, 0, 0, 0, 0)
    write += bytes([0x60, 0, 0, 1, 0, 0, 0, 0x0F]) + struct.pack("!Q", POOL_B + EXPORT_OFF)
    write += b"\xEE" * 4 + struct.pack("!I", 0x49504E45)
    bad_magic = b"\0" * 40
    code = f"""import socket,sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(({VA!r}, 0))
for f in sys.argv[1:]:
    s.send(bytes.fromhex(f))
"""
    in_ns(NS_A, sys.executable, "-c", code, frame(write, True).hex(), frame(bad_magic, False).hex())


def check_pool(oracle, label):
    check_export(hosts.pool("b"), EXPORT_OFF, oracle, label)


def main():
    # What it cannot run without fails it, saying why: never a silent skip.
    if os.geteuid() != 0:
        print("FAIL: needs root (network namespaces, AF_PACKET)")
        return 1
    for tool in ("ip", "nft"):
        if shutil.which(tool) is None:
            print(f"FAIL: needs {tool} (iproute2, nftables: scripts/install-deps.sh installs them)")
            return 1
    seed = int(os.environ.get("FIBNIC_SEED", "0"), 0) or random.randrange(1, 2**63)
    print(f"seed {seed} (FIBNIC_SEED={seed} replays it); BAR0 and pool: {MEMORY}, receive: "
          f"{'kernel (XDP)' if MODE in ('xdp', 'xdptx') else 'ipnuma-emu'}, posted writes: "
          f"{'kernel (host link)' if POSTED else 'ipnuma-emu'}", flush=True)
    rng = random.Random(seed)

    hosts.setup_network()
    hosts.prepare_files()
    hosts.write_config("a")
    hosts.write_config("b", f"  - {{name: rx, base: {POOL_B + EXPORT_OFF:#x}, length: {EXPORT_LEN:#x}, "
                            "allow: 10.232.0.1/32}\n")
    bar_a, bar_b = hosts.bar("a"), hosts.bar("b")
    ipnumad_a = hosts.start_ipnumad("a")
    hosts.start_ipnumad("b")
    hosts.start_emus(*EMU_ARGS)
    ctl_b = hosts.ctl("b")
    hosts.wait_api("a")
    hosts.wait_api("b")
    pcid = hosts.map("a", "to-b", "rx", 0, PAGES)
    # What the test set up is what ran: pins on the bpffs, or files.
    for path in (bar_a, bar_b, hosts.pool("a"), hosts.pool("b")):
        assert is_bpffs(path) == (MEMORY == "bpf"), f"{path} is not on the memory asked for ({MEMORY})"
    # The offline decoder reads A's BAR0, a file or a pin alike.
    pages = json.loads(sh(os.path.join(BIN, "ipnumactl"), "decode", bar_a).stdout)["pages"]
    assert pages == [{"first_page": 0, "pages": PAGES, "pcid": pcid, "remote_base": hex(POOL_B + EXPORT_OFF)}], pages

    writer = EmuWriter(hosts, TBIN, f"{work}/a.pages")
    oracle = bytearray(EXPORT_LEN)
    # ipnumad enabled both NICs at a newer epoch; MAX_PAYLOAD is the default:
    # 64-byte packets, one write-combined TLP each, as the thesis builds it.
    assert u64(bar_a, OFF_EPOCH_BASE) & 0xFFFF == 1 and u64(bar_b, OFF_EPOCH_BASE) & 0xFFFF == 1, "EPOCH_BASE not raised"
    assert u64(bar_a, OFF_MAX_PAYLOAD) == 0, "A's MAX_PAYLOAD/RETRY_LIMIT not the defaults"
    total = random_writes(rng, writer, oracle, 60, "no loss, 64 B packets", posted=POSTED)
    assert counter(bar_a, TX_WRITES) * 64 >= total, "A's packets are larger than 64 bytes"
    check_pool(oracle, "no loss, 64 B packets")
    # A's ipnumad restarted with MAX_PAYLOAD 1 KiB and RETRY_LIMIT 4 writes
    # them into the running NIC, which uses them from the next store on; the
    # NIC stayed enabled, so the epoch does not move.
    stop(ipnumad_a)
    hosts.write_config("a", local_extra=", max_payload: 1024, retry_limit: 4")
    ipnumad_a = hosts.start_ipnumad("a", "ipnumad-a1")
    wait_for("A's new MAX_PAYLOAD", lambda: u64(bar_a, OFF_MAX_PAYLOAD) == 1024 | 4 << 32)
    assert u64(bar_a, OFF_EPOCH_BASE) & 0xFFFF == 1, "EPOCH_BASE moved while the NIC ran"
    hosts.wait_api("a")
    # A mapping made through the API lasts until the restart: made again.
    wait_for("A's pages unmapped by the restart", lambda: page_pcid(bar_a, 0) == 0)
    pcid = hosts.map("a", "to-b", "rx", 0, PAGES)
    tx0 = counter(bar_a, TX_WRITES)
    total = random_writes(rng, writer, oracle, 60, "no loss, 1 KiB packets", posted=POSTED)
    assert (counter(bar_a, TX_WRITES) - tx0) * 64 < total, "A's packets are not larger than 64 bytes"
    # One 8-byte write at a time, call to answer (informational: a software
    # NIC on a loaded machine, not the FPGA's 2 us).
    times = []
    for i in range(100):
        off, data = rng.randrange(0, EXPORT_LEN - 8), rng.randbytes(8)
        t0 = time.perf_counter()
        assert writer.write(off, data)[0] == 0
        times.append(time.perf_counter() - t0)
        oracle[off:off + 8] = data
    times.sort()
    print(f"8-byte write, call to answer: p50 {times[50] * 1e6:.0f} us, p90 {times[90] * 1e6:.0f} us", flush=True)
    check_pool(oracle, "no loss")
    for percent, n in ((10, 20), (1, 150)):
        hosts.set_loss(percent)
        retx0 = counter(bar_a, RETRANSMITS)
        random_writes(rng, writer, oracle, n, f"{percent} % loss", posted=POSTED)
        retx = counter(bar_a, RETRANSMITS) - retx0
        print(f"{percent} % loss: {retx} packets retransmitted", flush=True)
        assert retx > 0, f"{percent} % loss caused no retransmission"
        check_pool(oracle, f"{percent} % loss")
    random_writes(rng, writer, oracle, 100, "1 % loss, posted", posted=True)
    check_pool(oracle, "1 % loss, posted")
    hosts.set_loss(0)
    assert ext(bar_b, RX_MALFORMED) == 0 and ext(bar_a, RX_MALFORMED) == 0, "frames counted malformed"
    inject_malformed(MAC["b"])
    wait_for("B counting the broken frames", lambda: ext(bar_b, RX_MALFORMED) == 2)
    check_pool(oracle, "after broken frames")
    rc, data = writer.cmd(f"r 4096 100")
    assert rc == 0 and bytes.fromhex(data) == bytes(oracle[4096:4196]), f"read back: {rc} {data[:40]}"
    print("read back through the NIC equals the oracle", flush=True)

    # An unreachable peer: retransmissions, then down; writes refused until reset.
    retx0 = counter(bar_a, RETRANSMITS)
    in_ns(NS_B, "ip", "link", "set", VB, "down")
    rc, msg = write_and_flush(writer, 0, b"\x5a" * 64)
    assert rc == EHOSTDOWN, f"write to an unreachable peer: {rc} {msg}"
    assert counter(bar_a, RETRANSMITS) == retx0 + 4, f"{counter(bar_a, RETRANSMITS) - retx0} retransmissions, RETRY_LIMIT 4"
    assert ext(bar_a, PEERS_DOWN) == 1, f"peers_down {ext(bar_a, PEERS_DOWN)}"
    assert u64(bar_a, OFF_PEER_STATE + 4 * pcid) & 1, f"PEER_STATE[{pcid}] does not read DOWN"
    rc, msg = writer.write(64, b"\x5a" * 64)
    assert rc == EHOSTDOWN and ext(bar_a, TX_PEER_DOWN_REFUSED) >= 1, f"write while down: {rc} {msg}"
    print(f"link down: peer down after {counter(bar_a, RETRANSMITS) - retx0} retransmissions, writes refused",
          flush=True)
    in_ns(NS_B, "ip", "link", "set", VB, "up")
    assert writer.cmd(f"reset {pcid}")[0] == 0
    wait_for("the wire back", lambda: writer.write(0, b"\xa5" * 64)[0] == 0)
    oracle[0:64] = b"\xa5" * 64
    check_pool(oracle, "after reset")

    # Revoke: with A's ipnumad stopped it cannot be told, so its pages still
    # name B: the next write reaches B, is denied and counted there.
    stop(ipnumad_a)
    denied0 = counter(bar_b, RX_DENIED)
    sh(*ctl_b, "export", "remove", "rx")
    rc, msg = write_and_flush(writer, 128, b"\x77" * 64)
    assert rc == EACCES, f"write after revoke: {rc} {msg}"
    assert counter(bar_b, RX_DENIED) == denied0 + 1, "the denied write is not counted at B"
    check_pool(oracle, "after revoke")
    # A's ipnumad, back, learns of the revoke and unmaps: refused locally.
    hosts.start_ipnumad("a", "ipnumad-a2")
    wait_for("A's pages unmapped", lambda: page_pcid(bar_a, 0) == 0, timeout=30)
    rc, msg = write_and_flush(writer, 128, b"\x77" * 64)
    assert rc == ENXIO and ext(bar_a, TX_UNMAPPED) >= 1, f"write to an unmapped page: {rc} {msg}"
    check_pool(oracle, "after unmap")
    print("revoke: denied at B at once (counted), then unmapped at A", flush=True)
    if POSTED:
        # What ran is what was asked for: A's posted writes left from the kernel.
        hosts.stop_emus()
        with open(hosts.path("emu-a.log")) as f:
            log = f.read()
        m = re.search(r"kernel transmit: (\d+) sent in the kernel, (\d+) passed up, (\d+) lost", log)
        assert m, f"emulator A's log has no kernel transmit line:\n{log[-2000:]}"
        sent, punted, lost = map(int, m.groups())
        print(f"A's kernel transmit path: {sent} packets sent, {punted} stores passed up, {lost} lost", flush=True)
        assert sent > 100, "A's posted writes did not leave from the kernel"
        assert lost == 0, "the host link lost doorbell frames"
    return 0


if __name__ == "__main__":
    run_test(hosts, main)
