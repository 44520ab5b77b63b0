#!/usr/bin/env python3
"""End-of-phase check for bench/frr: the first address of EVERY prefix the
peers announce (the lab's table.txt: what the kernel holds and what it may
have dropped) and each peer host's address, decoded from the BAR and asked
of the kernel (fib_compare.py). Prints one JSON line:
  {"checked": N, "forwarded": F, "misforwarded": M, "examples": [...], "seconds": S}
  bar_check.py NS KDIFF_BAR BAR_FILE TABLE_TXT IFNAME=PORT...
"""
import json
import sys
import time

from fib_compare import FibCompare, first_address


def main():
    ns, bar_tool, bar_path, table = sys.argv[1:5]
    ports = {n: int(p) for n, p in (a.split("=") for a in sys.argv[5:])}
    t0 = time.monotonic()
    addrs = set()
    with open(table) as f:
        for line in f:
            words = line.split()
            if words and not words[0].startswith("#"):
                addrs.add(first_address(words[0]))
    k = len(ports)
    addrs |= {f"198.18.{i}.2" for i in range(k)} | {f"fd10:{i}::2" for i in range(k)}
    addrs = sorted(addrs)
    cmp = FibCompare(ns, bar_tool, bar_path, ports)
    forwarded = sum(d is not None for d in cmp.device(addrs))
    bad = cmp.misforwarded(addrs)
    cmp.close()
    print(json.dumps({"checked": len(addrs), "forwarded": forwarded, "misforwarded": len(bad),
                      "examples": [f"{a}->port {d[0]}" for a, d in bad[:5]],
                      "seconds": round(time.monotonic() - t0, 1)}))


if __name__ == "__main__":
    main()
