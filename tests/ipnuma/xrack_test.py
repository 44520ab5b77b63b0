#!/usr/bin/env python3
"""IP-NUMA across racks through the software FIBNIC (xrack_hosts.py): a
program on host A writes through libipnuma into the region host B, in the
other rack, exported; B's memory must equal a plain byte array to which the
same writes were applied, and the frames must have been forwarded by
fibnic-emu (the card's PORT_COUNTERS count exactly the NICs' packets, the
router kernel's ForwDatagrams stays still). Then the path to B goes away
(the router loses its neighbour entry for B's NIC, fibnicd takes it off the
card, which punts; the router's kernel cannot resolve B): A's stream goes
down. Once the path is back, ipnumad (not the test) finds PEER_STATE DOWN,
has B grant the mapping again over the management network, resets the
stream, and writes flow again.

  xrack_test.py BIN_DIR TESTS_BIN_DIR   (root; FIBNIC_SEED replays a run)
"""
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ipnuma_hosts import (OFF_PEER_STATE, PEERS_DOWN, RETRANSMITS, RX_WRITES, TX_WRITES, EmuWriter,  # noqa: E402
                          check_export, counter, ext, random_writes, run_test,
                          in_ns, u64, wait_for)
from xrack_hosts import (EXPORT_LEN, EXPORT_OFF, FORWARDED, MAC, NIC_IP, PUNTED, TX, XrackHosts, bring_up,  # noqa: E402
                         card_counter, forw_datagrams)

BIN, TBIN = sys.argv[1], sys.argv[2]
PAGES = 64
ACKS = 4               # COUNTERS: ACK packets sent
ACKS_RECEIVED = 4      # EXT_COUNTERS: answers the sender took
EHOSTDOWN = 112
VIA_GATEWAY = 2

hosts = XrackHosts(BIN, "ipx", pages=PAGES)


def check_pool(oracle, label):
    check_export(hosts.path("b.pool"), EXPORT_OFF, oracle, label)


def snapshot(bar_a, bar_b):
    fib = hosts.fib_bar
    return {"writes": counter(bar_a, TX_WRITES), "retx": counter(bar_a, RETRANSMITS), "applied": counter(bar_b, RX_WRITES),
            "acks": counter(bar_b, ACKS), "acks_taken": ext(bar_a, ACKS_RECEIVED),
            "fwd0": card_counter(fib, 0, FORWARDED), "fwd1": card_counter(fib, 1, FORWARDED),
            "punt0": card_counter(fib, 0, PUNTED), "punt1": card_counter(fib, 1, PUNTED),
            "tx1": card_counter(fib, 1, TX), "tx0": card_counter(fib, 0, TX), "kernel": forw_datagrams(hosts.ns_router)}


def main():
    if os.geteuid() != 0:
        print("FAIL: needs root (network namespaces, AF_PACKET)")
        return 1
    missing = hosts.missing_tools()
    if not os.access(os.path.join(TBIN, "ipnuma_emu_writer"), os.X_OK):
        missing.append(os.path.join(TBIN, "ipnuma_emu_writer"))
    if missing:
        print(f"FAIL: needs {', '.join(missing)} (iproute2, iputils-ping; the build's bin folder)")
        return 1
    seed = int(os.environ.get("FIBNIC_SEED", "0"), 0) or random.randrange(1, 2**63)
    print(f"seed {seed} (FIBNIC_SEED={seed} replays it)", flush=True)
    rng = random.Random(seed)

    pcid = bring_up(hosts, PAGES)
    bar_a, bar_b = hosts.bar("a"), hosts.bar("b")
    # A's entry for B: B's IP with the gateway's MAC (the router's port 0), via the gateway.
    entry = bytearray(open(bar_a, "rb").read()[0x10000 + 16 * pcid:0x10000 + 16 * pcid + 16])
    assert bytes(entry[0:4]) == bytes(int(x) for x in NIC_IP["b"].split(".")), f"PC ID {pcid} IP {entry[0:4].hex()}"
    assert entry[4:10].hex(":") == "02:fb:00:00:00:00", f"PC ID {pcid} MAC {entry[4:10].hex(':')}: not the gateway's"
    assert entry[10] & VIA_GATEWAY, f"PC ID {pcid} flags {entry[10]:#x}: VIA_GATEWAY not set"
    print(f"A's PC ID {pcid}: {NIC_IP['b']} via the gateway's MAC {entry[4:10].hex(':')}", flush=True)

    writer = EmuWriter(hosts, TBIN, hosts.path("a.pages"), ns=hosts.ns["a"])
    oracle = bytearray(EXPORT_LEN)
    before = snapshot(bar_a, bar_b)
    total = random_writes(rng, writer, oracle, 80, "across the racks", size_bits=14)
    check_pool(oracle, f"80 writes, {total} bytes, across the racks")
    after = snapshot(bar_a, bar_b)
    d = {k: after[k] - before[k] for k in before}
    print(f"A sent {d['writes']} WRITE packets ({d['retx']} again), B applied {d['applied']} and sent {d['acks']} "
          f"ACKs; card port 0 forwarded {d['fwd0']}, port 1 forwarded {d['fwd1']}; router kernel forwarded "
          f"{d['kernel']}", flush=True)
    assert d["writes"] > 0 and d["applied"] == d["writes"], f"B applied {d['applied']} of {d['writes']} packets"
    # The router's kernel forwarded nothing and the card punted nothing, so
    # every packet that crossed between the racks was forwarded by the card:
    # at least each applied WRITE and each ACK A took, at most what was sent
    # (equal without loss); and all it forwarded left on the other port.
    assert d["kernel"] == 0, f"the router's kernel forwarded {d['kernel']} datagrams"
    assert d["punt0"] == 0 and d["punt1"] == 0, f"the card punted {d['punt0']} / {d['punt1']} frames"
    assert d["applied"] <= d["fwd0"] <= d["writes"] + d["retx"], f"card port 0 forwarded {d['fwd0']}"
    assert d["acks_taken"] <= d["fwd1"] <= d["acks"], f"card port 1 forwarded {d['fwd1']}"
    assert d["tx1"] == d["fwd0"] and d["tx0"] == d["fwd1"], f"card sent {d['tx1']} / {d['tx0']}"
    rc, data = writer.cmd("r 8192 256")
    assert rc == 0 and bytes.fromhex(data) == bytes(oracle[8192:8448]), f"read back: {rc} {data[:40]}"
    print("read back through the NIC across the racks equals the oracle", flush=True)

    # The path goes away: the router forgets B's NIC, fibnicd takes the entry
    # off the card, which punts; the router's kernel cannot resolve B (no ARP).
    down0 = ext(bar_a, PEERS_DOWN)
    in_ns(hosts.ns_router, "ip", "neigh", "del", NIC_IP["b"], "dev", "h1")
    punted0 = card_counter(hosts.fib_bar, 0, PUNTED)
    # Until fibnicd has taken the entry off the card, writes still arrive.
    end = time.time() + 20
    while True:
        rc, msg = writer.write(0, b"\x5a" * 64)
        if rc != 0 or time.time() > end:
            break
        oracle[0:64] = b"\x5a" * 64
        time.sleep(0.05)
    assert rc == EHOSTDOWN, f"write with no path to B: {rc} {msg}"
    assert ext(bar_a, PEERS_DOWN) == down0 + 1, f"peers_down {ext(bar_a, PEERS_DOWN)}"
    assert card_counter(hosts.fib_bar, 0, PUNTED) > punted0, "the card did not punt A's packets without a route"
    print("no path to B: A's stream went down, the write was refused", flush=True)
    in_ns(hosts.ns_router, "ip", "neigh", "replace", NIC_IP["b"], "lladdr", MAC["b"], "dev", "h1", "nud", "permanent")
    # The test never resets the stream: ipnumad does, when it finds PEER_STATE
    # DOWN and B's ipnumad confirms the mapping again.
    # The refused write may still land: the router's kernel queued its
    # packets waiting for B's address to resolve and sends them once the
    # neighbour is back, before the new stream's first packet (a later one
    # would be of an older epoch, dropped). The write after the reset goes
    # to the same bytes, so the oracle is exact again.
    t0 = time.time()
    wait_for("a write to B after ipnumad reset the stream", lambda: writer.write(0, b"\xa5" * 64)[0] == 0,
             timeout=30)
    oracle[0:64] = b"\xa5" * 64
    assert u64(bar_a, OFF_PEER_STATE + 4 * pcid) & 1 == 0, "PEER_STATE still DOWN"
    print(f"path back: writes flow again after {time.time() - t0:.1f} s (ipnumad reset PEER_STATE[{pcid}])",
          flush=True)
    check_pool(oracle, "after the outage")
    log = open(hosts.path("ipnumad-a.log")).read()
    assert "reset" in log and "PEER_STATE" in log, "ipnumad's log does not name the reset"
    return 0


if __name__ == "__main__":
    run_test(hosts, main)
