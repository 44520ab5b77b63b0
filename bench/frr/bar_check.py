#!/usr/bin/env python3
"""End-of-phase check for bench/frr and bench/bird: the first address of
every prefix the peers announce (the lab's table.txt: what the kernel holds
and what it may have dropped) — or of a random SAMPLE of them
(BENCH_CHECK_SEED, or FRR_BENCH_CHECK_SEED, replays one) — and each peer
host's address, decoded from the BAR and asked of the
kernel (fib_compare.py). Prints one JSON line:
  {"checked": N, "of": ALL, "seed": S, "forwarded": F, "misforwarded": M, "examples": [...], "seconds": S}
  bar_check.py NS KDIFF_BAR BAR_FILE TABLE_TXT SAMPLE IFNAME=PORT...   (SAMPLE 0: every prefix)
"""
import json
import os
import random
import sys
import time

from fib_compare import FibCompare, first_address


def main():
    ns, bar_tool, bar_path, table, sample = sys.argv[1:6]
    ports = {n: int(p) for n, p in (a.split("=") for a in sys.argv[6:])}
    seed = int(os.environ.get("BENCH_CHECK_SEED") or os.environ.get("FRR_BENCH_CHECK_SEED")
               or random.SystemRandom().randrange(1 << 32))
    t0 = time.monotonic()
    addrs = set()
    with open(table) as f:
        for line in f:
            words = line.split()
            if words and not words[0].startswith("#"):
                addrs.add(first_address(words[0]))
    every = len(addrs)
    addrs = sorted(addrs)
    if 0 < int(sample) < every:
        addrs = random.Random(seed).sample(addrs, int(sample))
    k = len(ports)
    addrs += [f"198.18.{i}.2" for i in range(k)] + [f"fd10:{i}::2" for i in range(k)]
    cmp = FibCompare(ns, bar_tool, bar_path, ports)
    forwarded = sum(d is not None for d in cmp.device(addrs))
    bad = cmp.misforwarded(addrs)
    cmp.close()
    print(json.dumps({"checked": len(addrs), "of": every, "seed": seed, "forwarded": forwarded, "misforwarded": len(bad),
                      "examples": [f"{a}->port {d[0]}" for a, d in bad[:5]],
                      "seconds": round(time.monotonic() - t0, 1)}))


if __name__ == "__main__":
    main()
