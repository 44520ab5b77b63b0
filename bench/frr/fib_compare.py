"""The device's answer against the kernel's, for bench/frr.

Device: the BAR image fibnicd's file backend writes, decoded by kdiff_bar
(HwLookup, as the device contract describes the hardware). Kernel: its own
answer over rtnetlink (tests/kdiff/kernel_oracle.py). A destination is
misforwarded when the device forwards it (port, MAC) where the kernel would
not send it (docs/oracle.md); a punt is always acceptable.
"""
import ipaddress
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tests/kdiff"))
from kernel_oracle import RTN_UNICAST, KernelOracle, USABLE_NUD, acceptable  # noqa: E402

BATCH = 2000  # addresses per kdiff_bar request line


def first_address(prefix):
    return str(ipaddress.ip_network(prefix, strict=False).network_address)


class FibCompare:
    def __init__(self, ns, bar_tool, bar_path, ports):
        """ports: interface name -> FIBNIC port."""
        self.ns, self.ports = ns, ports
        self.oracle = KernelOracle(ns)
        self.bar = subprocess.Popen([bar_tool, bar_path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.refresh()

    def close(self):
        self.oracle.close()
        self.bar.stdin.close()
        self.bar.wait()

    def _ip_json(self, *args):
        out = subprocess.run(["ip", "-n", self.ns, "-j", *args], capture_output=True, text=True, check=True).stdout
        return json.loads(out or "[]")

    def refresh(self):
        """Links and usable neighbour entries (what acceptable() needs)."""
        links = self._ip_json("link", "show")
        by_name = {l["ifname"]: l["ifindex"] for l in links}
        self.port_of = {by_name[n]: p for n, p in self.ports.items() if n in by_name}
        self.neigh = {}
        for n in self._ip_json("neigh", "show", "nud", "all"):
            if "lladdr" in n and n.get("dev") in by_name and USABLE_NUD & set(n.get("state", [])):
                self.neigh[(by_name[n["dev"]], str(ipaddress.ip_address(n["dst"])))] = n["lladdr"]

    def generation(self):
        self.bar.stdin.write("gen\n")
        self.bar.stdin.flush()
        return self.bar.stdout.readline().strip()

    def device(self, addrs):
        """Per address None (punt) or (port, MAC). read_at: when the read
        ended (each answer was read at or before it)."""
        out = []
        for i in range(0, len(addrs), BATCH):
            self.bar.stdin.write(" ".join(addrs[i:i + BATCH]) + "\n")
            self.bar.stdin.flush()
            for a in self.bar.stdout.readline().split():
                if a.startswith("f,"):
                    _, port, mac = a.split(",")
                    out.append((int(port), mac))
                else:
                    out.append(None)
        self.read_at = time.monotonic()
        return out

    def _ok(self, addr, dev, full):
        if full:
            return acceptable(dev, [self.oracle.answers(addr)], self.port_of.get, self.neigh)
        # One RTM_GETROUTE: the bench's routes are single-path; a mismatch is
        # confirmed with the whole oracle (every multipath flow) before it counts.
        r = self.oracle._get(addr)
        if r is None or r[0][7] != RTN_UNICAST:
            return False
        fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
        return acceptable(dev, [{self.oracle._hop(fam, addr, r[1])}], self.port_of.get, self.neigh)

    def misforwarded(self, addrs):
        """The addresses the device forwards where the kernel would not, with
        the device's answer: [(addr, (port, MAC))]; read_at: when the device
        read that found them ended."""
        suspects = [(a, d) for a, d in zip(addrs, self.device(addrs)) if d is not None and not self._ok(a, d, False)]
        if not suspects:
            return []
        self.refresh()  # a neighbour may have been resolved meanwhile
        suspects = [a for a, d in suspects if not self._ok(a, d, True)]
        if not suspects:
            return []
        # The device was read before the kernel: a route the kernel changed in
        # between is no misforward. Read the device again, now after the
        # kernel's answer, and ask the kernel once more: an answer wrong by
        # both kernel answers around it is wrong by whatever the kernel held.
        before = {a: self.oracle.answers(a) for a in suspects}
        again = list(zip(suspects, self.device(suspects)))
        return [(a, d) for a, d in again
                if d is not None and not acceptable(d, [before[a]], self.port_of.get, self.neigh)
                and not self._ok(a, d, True)]
