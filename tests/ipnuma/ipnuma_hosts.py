"""Two IP-NUMA hosts in network namespaces, each with ipnumad (file backend)
and ipnuma-emu on a veth: what the namespace test (emu_namespace_test.py) and
the bench (bench/ipnuma) both run on.

  hosts = TwoHosts(bin_dir, "ipe", wire="bridge")   # or wire="veth"; memory="bpf"
  try:
      hosts.setup_network()
      hosts.write_config("a", exports="")           # then "b", with its exports
      hosts.start_ipnumad("a"); ...; hosts.start_emus()
      ...
  finally:
      hosts.close()

wire="bridge" joins the hosts' veths in a bridge in a third namespace (the
wire), whose ports take nftables loss rules (set_loss); wire="veth" joins the
two hosts by one veth pair, nothing between them.

memory="file" keeps each host's BAR0 and pool in regular files in the work
folder; memory="bpf" mounts a bpffs there (DIR/bpffs, seen inside `ip netns
exec`, which remounts only /sys) and has ipnumad make BAR0 and the pool as
BPF maps pinned in it (a_bar, a_pool, ...: a bpffs refuses names with a
dot), the memory an XDP receive path reaches. Every reader here (u64,
counter, ext, page_pcid, check_export) reads either (pinned.py).

Every namespace, interface, mount and work folder is named after this
process's pid and a prefix, recorded when made, and removed by that record
only.
"""
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pinned import read_bytes  # noqa: E402

PORT = 4790
POOL_A, POOL_B = 0x100000000, 0x200000000
POOL_BASE = {"a": POOL_A, "b": POOL_B}
NIC_IP = {"a": "10.232.0.1", "b": "10.232.0.2"}
MGMT_IP = {"a": "10.231.0.1", "b": "10.231.0.2"}
MAC = {"a": "02:00:5e:10:00:01", "b": "02:00:5e:10:00:02"}
PEER = {"a": "b", "b": "a"}

# BAR0 offsets (device/ipnuma_regs.h; docs/contract/IPNUMA.md).
OFF_COUNTERS, OFF_EXT, OFF_PEER_STATE, OFF_REGION, OFF_PAGEMAP = 0x100, 0x200, 0x4000, 0x20000, 0x100000
TX_WRITES, RX_WRITES, RX_DENIED, RETRANSMITS = 0, 1, 2, 3
OFF_MAX_PAYLOAD, OFF_RETRY_LIMIT, OFF_EPOCH_BASE = 0x40, 0x44, 0x48
TX_UNMAPPED, TX_PEER_DOWN_REFUSED, PEERS_DOWN, RX_MALFORMED = 0, 1, 6, 7


def sh(*cmd, check=True):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    return r


def in_ns(ns, *cmd, check=True):
    return sh("ip", "netns", "exec", ns, *cmd, check=check)


def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def wait_for(what, cond, timeout=20.0):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def u64(path, off):
    """The little-endian u64 at off of a BAR0 file or pinned map."""
    return struct.unpack("<Q", read_bytes(path, off, 8))[0]


def counter(bar, k):
    return u64(bar, OFF_COUNTERS + 8 * k)


def ext(bar, k):
    return u64(bar, OFF_EXT + 8 * k)


def page_pcid(bar, page):
    return u64(bar, OFF_PAGEMAP + 8 * page) >> 48


def secret(path, text):
    with open(path, "w") as f:
        f.write(text + "\n")
    os.chmod(path, 0o600)


class TwoHosts:
    def __init__(self, bin_dir, prefix, wire="bridge", pages=64, pool_bytes=1 << 20, memory="file", host_link=False):
        assert wire in ("bridge", "veth")
        assert memory in ("file", "bpf")
        assert pool_bytes % 4096 == 0 or memory == "file", "a pool map holds whole 4 KiB values"
        pid = os.getpid()
        self.bin, self.wire, self.pages, self.pool_bytes = bin_dir, wire, pages, pool_bytes
        self.memory = memory
        self.bpffs = None  # the bpffs this mounted (memory="bpf"), unmounted by close()
        self.ns = {"a": f"{prefix}{pid}a", "b": f"{prefix}{pid}b"}
        self.ns_wire = f"{prefix}{pid}w"
        self.iface = {"a": f"ia{pid}", "b": f"ib{pid}"}      # the hosts' ends
        self.wire_if = {"a": f"wa{pid}", "b": f"wb{pid}"}    # the bridge's ports (wire="bridge")
        self.bridge = f"br{pid}"
        # host_link: each host's NIC gets a host link (a veth pair in its
        # namespace: the NIC's end, the programs' end), and start_emus gives
        # the emulators --host-link: posted writes leave from the kernel.
        self.host_link = host_link
        self.link_nic = {"a": f"na{pid}", "b": f"nb{pid}"}
        self.link_host = {"a": f"ha{pid}", "b": f"hb{pid}"}
        self.created_ns = []
        self.procs = []
        self.work = tempfile.mkdtemp(prefix=f"ipnuma-{prefix}-{pid}-")

    def path(self, name):
        return os.path.join(self.work, name)

    def bar(self, h):
        """h's BAR0: a file, or the pin ipnumad makes."""
        return os.path.join(self.work, "bpffs", f"{h}_bar") if self.memory == "bpf" else self.path(f"{h}.bar")

    def pool(self, h):
        """h's host memory: a file, or the pin ipnumad makes (from pool.size)."""
        return os.path.join(self.work, "bpffs", f"{h}_pool") if self.memory == "bpf" else self.path(f"{h}.pool")

    def start(self, name, ns, *cmd, **popen):
        log = open(self.path(name + ".log"), "w")
        p = subprocess.Popen(["ip", "netns", "exec", ns, *cmd], stdout=log, stderr=subprocess.STDOUT, **popen)
        self.procs.append((name, p))
        return p

    def track(self, name, p):
        """A process started elsewhere, stopped by close() with the others."""
        self.procs.append((name, p))
        return p

    def setup_network(self):
        namespaces = [self.ns["a"], self.ns["b"]] + ([self.ns_wire] if self.wire == "bridge" else [])
        for ns in namespaces:
            sh("ip", "netns", "add", ns)
            self.created_ns.append(ns)
            in_ns(ns, "ip", "link", "set", "lo", "up")
        if self.wire == "veth":
            a, b = self.iface["a"], self.iface["b"]
            sh("ip", "link", "add", a, "netns", self.ns["a"], "type", "veth", "peer", "name", b, "netns", self.ns["b"])
        else:
            in_ns(self.ns_wire, "ip", "link", "add", self.bridge, "type", "bridge")
            in_ns(self.ns_wire, "ip", "link", "set", self.bridge, "up")
            for h in ("a", "b"):
                in_ns(self.ns_wire, "ip", "link", "add", self.wire_if[h], "type", "veth", "peer", "name", self.iface[h])
                in_ns(self.ns_wire, "ip", "link", "set", self.iface[h], "netns", self.ns[h])
                in_ns(self.ns_wire, "ip", "link", "set", self.wire_if[h], "master", self.bridge, "up")
        for h in ("a", "b"):
            in_ns(self.ns[h], "ip", "addr", "add", MGMT_IP[h] + "/24", "dev", self.iface[h])
            in_ns(self.ns[h], "ip", "link", "set", self.iface[h], "up")
            if self.host_link:
                # MTU 4200: a page of data per doorbell frame (skb-mode XDP takes any MTU).
                in_ns(self.ns[h], "ip", "link", "add", self.link_nic[h], "mtu", "4200", "type", "veth", "peer", "name",
                      self.link_host[h], "mtu", "4200")
                for i in (self.link_nic[h], self.link_host[h]):
                    in_ns(self.ns[h], "sysctl", "-qw", f"net.ipv6.conf.{i}.disable_ipv6=1")
                    in_ns(self.ns[h], "ip", "link", "set", i, "up")

    def set_loss(self, percent):
        """Drops that share of IP-NUMA frames both ways on A's wire end (the
        bridge's port): ingress is A's requests, egress B's answers."""
        assert self.wire == "bridge", "loss rules sit on the bridge's port"
        wa = self.wire_if["a"]
        in_ns(self.ns_wire, "nft", "delete", "table", "netdev", "ipeloss", check=False)
        if percent == 0:
            return
        rules = f"""table netdev ipeloss {{
  chain in {{ type filter hook ingress device {wa} priority 0; udp dport {PORT} numgen random mod 100 < {percent} drop; }}
  chain out {{ type filter hook egress device {wa} priority 0; udp dport {PORT} numgen random mod 100 < {percent} drop; }}
}}"""
        r = subprocess.run(["ip", "netns", "exec", self.ns_wire, "nft", "-f", "-"], input=rules, capture_output=True,
                           text=True)
        if r.returncode != 0:
            raise RuntimeError("nft: " + r.stderr)

    def prepare_files(self):
        """The peers' shared secret, each host's API token and pool file (with
        memory="bpf": the bpffs where ipnumad makes the pool and BAR0 maps; a
        bpffs that cannot be mounted fails the test)."""
        secret(self.path("ab.secret"), "0123456789abcdef0123456789abcdef-emu")
        for h in ("a", "b"):
            secret(self.path(f"{h}.token"), f"token-{h}")
        if self.memory == "bpf":
            d = self.path("bpffs")
            os.mkdir(d)
            r = sh("mount", "-t", "bpf", "bpf", d, check=False)
            if r.returncode != 0:
                raise RuntimeError(f"cannot mount a bpffs at {d} (memory='bpf' needs one): {r.stderr.strip()}")
            self.bpffs = d
            return
        for h in ("a", "b"):
            with open(self.pool(h), "wb") as f:
                f.truncate(self.pool_bytes)

    # Where each host's NIC stands on its network, and how its ipnumad learns
    # the peer's MAC: one segment and a static neighbour here; a subclass
    # (xrack_hosts) puts the hosts behind gateways.
    nic_ip, mac, mgmt_ip = NIC_IP, MAC, MGMT_IP

    def local_net(self, h):
        return "netmask: 255.255.255.0, gateway: 10.232.0.254"

    def neighbours_yaml(self, h):
        p = PEER[h]
        return f"{{source: static, static: [{{address: {self.nic_ip[p]}, mac: '{self.mac[p]}'}}]}}"

    def write_config(self, h, exports="", local_extra=""):
        """exports: YAML list items under `exports:`; local_extra: more keys of
        `local:` (", max_payload: 1024" ...)."""
        p, d = PEER[h], self.work
        # A pool map is made by ipnumad, at the size given.
        pool_size = f", size: {self.pool_bytes:#x}" if self.memory == "bpf" else ""
        text = f"""device: {{kind: file, path: {self.bar(h)}, model: {{pages: {self.pages}, pcid_entries: 16, region_entries: 8}}}}
local: {{address: {self.nic_ip[h]}, {self.local_net(h)}, mac: '{self.mac[h]}', udp_port: {PORT}, retransmit_timeout: 20us{local_extra}}}
pool: {{kind: file, path: {self.pool(h)}, base: {POOL_BASE[h]:#x}{pool_size}}}
neighbours: {self.neighbours_yaml(h)}
api: {{listen: '127.0.0.1:7471', token_file: {d}/{h}.token}}
peer_api: {{listen: '{self.mgmt_ip[h]}:7470', timeout: 1s}}
reconcile_interval: 200ms
peers:
  - {{name: {p}, address: {self.nic_ip[p]}, api: '{self.mgmt_ip[p]}:7470', secret_file: {d}/ab.secret}}
exports:
{exports}"""
        with open(self.path(f"{h}.yaml"), "w") as f:
            f.write(text)

    def start_ipnumad(self, h, name=None):
        return self.start(name or f"ipnumad-{h}", self.ns[h], os.path.join(self.bin, "ipnumad"), "--config",
                          self.path(f"{h}.yaml"))

    def start_emus(self, *extra, link=None):
        """ipnuma-emu on both hosts, once ipnumad made their BAR0 (and pool)
        files or maps; waits for the doorbells. link: give them their host
        links (--host-link; default: when the hosts have them)."""
        link = self.host_link if link is None else link
        wait_for("both BAR0 and pools", lambda: all(os.path.exists(p) for h in ("a", "b")
                                                    for p in (self.bar(h), self.pool(h))))
        for h in ("a", "b"):
            self.start(f"emu-{h}", self.ns[h], os.path.join(self.bin, "ipnuma-emu"), "--bar", self.bar(h), "--pages",
                       self.path(f"{h}.pages"), "--pool", self.pool(h), "--pool-base", hex(POOL_BASE[h]),
                       "--interface", self.iface[h], *extra,
                       *(["--host-link", f"{self.link_nic[h]}:{self.link_host[h]}"] if link else []))
        for h in ("a", "b"):
            wait_for(f"ipnuma-emu {h}'s doorbell", lambda h=h: os.path.exists(self.path(f"{h}.pages.sock")))

    def stop_emus(self):
        """Stops both emulators (a NIC reset each: restarted together, no
        receiver holds a stream the other's new one would collide with)."""
        for name, p in list(self.procs):
            if name.startswith("emu-"):
                stop(p)
                self.procs.remove((name, p))

    def emu_pid(self, h):
        return next(p.pid for name, p in self.procs if name == f"emu-{h}")

    def ctl(self, h):
        return ["ip", "netns", "exec", self.ns[h], os.path.join(self.bin, "ipnumactl"), "--api", "127.0.0.1:7471",
                "--token-file", self.path(f"{h}.token")]

    def wait_api(self, h):
        wait_for(f"ipnumad {h}'s API", lambda: sh(*self.ctl(h), "status", check=False).returncode == 0)

    def map(self, h, name, export, first_page, pages):
        """Maps pages of h's BAR2 onto the peer's export through ipnumactl and
        the peer agreement; returns their PC ID."""
        sh(*self.ctl(h), "map", name, PEER[h], export, "0", str(first_page), str(pages))
        bar = self.bar(h)
        wait_for(f"{h}'s pages mapped to {PEER[h]}",
                 lambda: all(page_pcid(bar, p) != 0 for p in range(first_page, first_page + pages)))
        return page_pcid(bar, first_page)

    def dump_logs(self, tail=3000):
        for name in sorted(os.listdir(self.work)):
            if name.endswith(".log"):
                with open(self.path(name)) as f:
                    print(f"---- {name}\n{f.read()[-tail:]}")

    def close(self):
        for _, p in reversed(self.procs):
            if p.stdin:
                p.stdin.close()
            stop(p)
        for ns in self.created_ns:
            sh("ip", "netns", "del", ns, check=False)
        if self.bpffs:  # its pins, and the maps with them, go with it
            sh("umount", self.bpffs, check=False)
        shutil.rmtree(self.work, ignore_errors=True)


class EmuWriter:
    """tests/ipnuma's ipnuma_emu_writer on a pages file, one command a line
    ("w OFF HEX", ...), in namespace ns when given; its answers as (errno, text)."""

    def __init__(self, hosts, tbin, pages_file, ns=None):
        argv = [os.path.join(tbin, "ipnuma_emu_writer"), pages_file]
        self.p = subprocess.Popen((["ip", "netns", "exec", ns] if ns else []) + argv, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        hosts.track("writer", self.p)

    def cmd(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        ans = self.p.stdout.readline().strip()
        if ans == "ok" or ans.startswith("ok "):
            return 0, ans[3:]
        parts = ans.split(" ", 2)
        assert parts[0] == "err", f"writer said {ans!r}"
        return int(parts[1]), parts[2] if len(parts) > 2 else ""

    def write(self, off, data):
        return self.cmd(f"w {off} {data.hex()}")


def run_test(hosts, main):
    """Runs a namespace test's main(): its exit status; an exception fails it
    with the hosts' logs; the hosts are removed either way."""
    rc = 1
    try:
        rc = main()
    except Exception as e:  # noqa: BLE001 - the test's verdict, with the logs
        print(f"FAIL: {e}", flush=True)
        hosts.dump_logs()
    finally:
        hosts.close()
    sys.exit(rc)


def random_writes(rng, writer, oracle, n, label, size_bits=16, posted=False):
    """n writes through `writer` of random bytes at random offsets of the
    export (oracle: its expected contents, updated), 1 B to 2**size_bits B,
    mostly small. posted: ipnuma_write_posted each, one flush at the end
    (later writes overlap earlier ones still in flight: they must land in
    order). Returns the bytes written."""
    t0 = time.time()
    total = 0
    for i in range(n):
        size = min(1 << size_bits, int(2 ** rng.uniform(0, size_bits)))
        off = rng.randrange(0, len(oracle) - size + 1)
        data = rng.randbytes(size)
        rc, msg = writer.cmd(f"{'p' if posted else 'w'} {off} {data.hex()}")
        assert rc == 0, f"{label}: write {i} ({size} B at {off:#x}) refused: {rc} {msg}"
        oracle[off:off + size] = data
        total += size
    if posted:
        rc, msg = writer.cmd("flush")
        assert rc == 0, f"{label}: flush: {rc} {msg}"
    print(f"{label}: {n} writes, {total} bytes in {time.time() - t0:.2f} s", flush=True)
    return total


def check_export(pool_file, off, oracle, label):
    """B's memory (its pool file or map from off) against the oracle, a plain
    byte array of what was written; names the first offset that differs."""
    got = read_bytes(pool_file, off, len(oracle))
    if got != bytes(oracle):
        first = next((i for i in range(len(oracle)) if i >= len(got) or got[i] != oracle[i]), len(got))
        raise AssertionError(f"{label}: B's memory differs from the oracle first at export offset {first:#x}")
    print(f"{label}: B's memory equals the oracle", flush=True)
