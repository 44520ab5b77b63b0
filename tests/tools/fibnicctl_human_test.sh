#!/usr/bin/env bash
# fibnicctl's human views against a running fibnicd (file BAR, a route file,
# one static route through the API; no root). Each check is written from the
# routes this test installed: the routes table lists exactly their prefixes,
# prefix first, with their paths and sources; the status family table counts
# them; the next-hop table shows each gateway's port and the MAC the neighbour
# file gave it. `--json` must still be the API's answer, unchanged, and the
# exit status must tell usage, daemon errors and an unreachable daemon apart.
#   fibnicctl_human_test.sh FIBNICD FIBNICCTL
set -euo pipefail
fibnicd=$1
ctl=$2
work=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- fibnicd log"; cat "$work/log" || true; exit 1; }

# Four IPv4 prefixes (one ECMP, one whose gateway has no neighbour) and two
# IPv6 ones from the file; one IPv4 prefix from the API below.
cat >"$work/routes.txt" <<'EOF'
198.51.100.0/24 192.0.2.1 0
203.0.113.0/24 192.0.2.1 0
203.0.113.0/24 192.0.2.2 1
10.20.0.0/16 192.0.2.2 1
100.64.0.0/10 192.0.2.9 2
2001:db8:1::/48 2001:db8::1 0
2001:db8:2::/48 2001:db8::2 1
EOF
cat >"$work/neigh.txt" <<'EOF'
192.0.2.1 52:54:00:00:00:01 0
192.0.2.2 52:54:00:00:00:02 1
2001:db8::1 52:54:00:00:00:11 0
2001:db8::2 52:54:00:00:00:12 1
EOF
token=human-test-token-0123456789
cat >"$work/fibnicd.yaml" <<YAML
# 4-bit codes: 15 next-hop slots.
device: {backend: file, path: $work/bar0.img, code_bits: 4}
sources:
  kernel: {enabled: false}
  file: {routes: $work/routes.txt, neighbors: $work/neigh.txt}
web: {listen: 127.0.0.1:0, token: $token}
YAML

"$fibnicd" --config "$work/fibnicd.yaml" >"$work/log" 2>&1 &
pid=$!
port=
for _ in $(seq 400); do
  grep -q "ready:" "$work/log" && port=$(grep -oE 'REST API at http://127\.0\.0\.1:[0-9]+/' "$work/log" | grep -oE '[0-9]+/$' | tr -d /)
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || fail "fibnicd exited"
  sleep 0.05
done
[ -n "$port" ] || fail "fibnicd not ready within 20 s"
api() { "$ctl" --server "127.0.0.1:$port" "$@"; }
get() { python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' \
  "http://127.0.0.1:$port$1"; }

cp "$work/bar0.img" "$work/before-api.img"
python3 - "$port" "$token" <<'PY' || fail "PUT of the static route failed"
import sys, urllib.request
req = urllib.request.Request("http://127.0.0.1:%s/api/v1/routes/static/172.16.0.0/12" % sys.argv[1], method="PUT",
                             data=b'{"paths":[{"gateway":"192.0.2.1","port":0}]}',
                             headers={"Content-Type": "application/json", "Authorization": "Bearer " + sys.argv[2]})
urllib.request.urlopen(req).read()
PY
# The route is on the device once the API lists it offloaded.
for _ in $(seq 100); do
  get "/api/v1/routes?prefix=172.16.0.0/12" | grep -q '"state":"offloaded"' && break
  sleep 0.05
done

# What the test installed, in the order fibnicd lists routes: IPv4 before
# IPv6, then by address, then by length.
cat >"$work/installed.txt" <<'EOF'
10.20.0.0/16 static via 192.0.2.2 port 1
100.64.0.0/10 static via 192.0.2.9 port 2
172.16.0.0/12 api via 192.0.2.1 port 0
198.51.100.0/24 static via 192.0.2.1 port 0
203.0.113.0/24 static via 192.0.2.1 port 0|via 192.0.2.2 port 1
2001:db8:1::/48 static via 2001:db8::1 port 0
2001:db8:2::/48 static via 2001:db8::2 port 1
EOF

echo "== routes: prefix first, then state, paths (one per line), source, reason"
api routes >"$work/routes.out" || fail "routes failed"
sed 's/^/  /' "$work/routes.out"
api --json routes >"$work/routes.json"
python3 - "$work/routes.out" "$work/installed.txt" "$work/routes.json" <<'PY' || fail "routes table"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
head = lines[0]
assert head.split() == ["PREFIX", "STATE", "PATHS", "SOURCE", "REASON"], head
cols = [head.index(c) for c in ("STATE", "PATHS", "SOURCE", "REASON")]
def cut(line):
    edges = [0] + cols + [len(line) + 1]
    return [line[a:b].strip() for a, b in zip(edges, edges[1:])]
rows = []
for line in lines[1:]:
    c = cut(line)
    if c[0]:
        rows.append({"prefix": c[0], "state": c[1], "paths": [c[2]], "source": c[3], "reason": c[4]})
    else:  # a further path of the route above: only the PATHS column is set
        assert c[2] and not any(c[i] for i in (1, 3, 4)), line
        rows[-1]["paths"].append(c[2])
want = [l.split(" ", 2) for l in open(sys.argv[2]).read().splitlines()]
assert [r["prefix"] for r in rows] == [w[0] for w in want], [r["prefix"] for r in rows]
for r, (prefix, source, paths) in zip(rows, want):
    assert r["source"] == source, (r, source)
    assert r["paths"] == paths.split("|"), (r, paths)
# The state and reason are the API's, as printed.
api = {r["prefix"]: r for r in json.load(open(sys.argv[3]))["routes"]}
for r in rows:
    assert r["state"] == api[r["prefix"]]["state"], (r, api[r["prefix"]])
    reason = api[r["prefix"]]["reason"]
    assert r["reason"].startswith(reason if reason != "none" else "-"), (r, reason)
# The gateway without a neighbour cannot be forwarded to.
assert [r["state"] for r in rows if r["prefix"] == "100.64.0.0/10"] == ["punted"], rows
print("  %d routes, prefixes in order, paths and sources as installed" % len(rows))
PY
api routes --family 4 --limit 2 >"$work/page.out"
grep -q "^more: add --after 100.64.0.0/10$" "$work/page.out" || fail "a page of 2 does not end with --after 100.64.0.0/10: $(cat "$work/page.out")"
[ "$(awk 'NR > 1 && !/^more:/ {print $1}' "$work/page.out" | tr '\n' ' ')" = "10.20.0.0/16 100.64.0.0/10 " ] ||
  fail "the first page is not the first two IPv4 prefixes"
api routes --family 4 --limit 2 --after 100.64.0.0/10 | awk 'NR == 2 {print $1}' | grep -qx "172.16.0.0/12" ||
  fail "--after 100.64.0.0/10 does not start at 172.16.0.0/12"
api routes 192.0.2.0/24 >"$work/none.out"
[ "$(cat "$work/none.out")" = "no routes" ] || fail "an empty answer: $(cat "$work/none.out")"

echo "== status: header, families, slots, sources, pipeline"
# The counts follow the commits by themselves, a moment after the last change
# (docs/web.md, Counts): the table below is checked once they caught up.
for _ in $(seq 100); do
  api --json status | python3 -c 'import json, sys; s = json.load(sys.stdin); sys.exit(s["counts_commits"] != s["commits"])' &&
    break
  sleep 0.1
done
api status >"$work/status.out" || fail "status failed"
sed 's/^/  /' "$work/status.out"
python3 - "$work/status.out" "$work/bar0.img" <<'PY' || fail "status"
import re, sys
text = open(sys.argv[1]).read()
lines = text.splitlines()
assert re.match(r"fibnicd \S+, up \d+s; device file:%s, FIBNIC [\d.]+, generation \d+; \d+ commits$" % re.escape(sys.argv[2]),
                lines[0]), lines[0]
def table(first_col):
    i = next(i for i, l in enumerate(lines) if l.split()[:1] == [first_col])
    head = lines[i].split()
    rows = {}
    for l in lines[i + 1:]:
        if not l.strip():
            break
        rows[l.split()[0]] = dict(zip(head, l.split()))
    return rows
fam = table("FAMILY")
# Five IPv4 prefixes (four from the file, one from the API), two IPv6 ones.
assert fam["ipv4"]["TOTAL"] == "5" and fam["ipv6"]["TOTAL"] == "2", fam
for f in fam.values():
    assert int(f["TOTAL"]) == sum(int(f[k]) for k in ("OFFLOADED", "PARTIAL", "PUNTED", "SHADOWED")), f
# 100.64.0.0/10 has no neighbour; the others resolve.
assert fam["ipv4"]["PUNTED"] == "1" and fam["ipv4"]["OFFLOADED"] == "4", fam
assert fam["ipv6"]["OFFLOADED"] == "2", fam
src = table("SOURCE")
# "file" is the file source's name in the registry; it holds the 6 prefixes of routes.txt.
assert src["file"]["STATE"] == "up" and src["file"]["ROUTES"] == "6", src
assert src["api"]["STATE"] == "up" and src["api"]["ROUTES"] == "1", src
assert set(src) == {"file", "api"}, src
m = re.search(r"^slots +(\d+)/15 used \(4-bit codes\)$", text, re.M)
assert m, "no slots line for 4-bit codes"
open(sys.argv[1] + ".slots", "w").write(m.group(1))
assert len(re.findall(r"^caps ", text, re.M)) == 1 and "code_bits" not in text, "capabilities not once"
assert re.search(r"^rates +[\d.]+ routes/s, [\d.]+ (B|KiB|MiB)/s to the device, [\d.]+ commits/s$", text, re.M), "rates"
# Numbers are rounded (the header's versions aside).
for l in lines[1:]:
    assert not re.search(r"\d\.\d\d", l), "more than one decimal: " + l
assert re.search(r"^pipeline  queue \d+ \(max \d+\), \d+ batches;", text, re.M), "pipeline"
assert re.search(r"^ +0 push errors, 0 resyncs$", text, re.M), "pipeline errors"
print("  families, sources, slots, caps once, rates rounded")
PY

echo "== nexthops: one row per code"
api nexthops >"$work/nexthops.out" || fail "nexthops failed"
sed 's/^/  /' "$work/nexthops.out"
python3 - "$work/nexthops.out" "$work/status.out.slots" <<'PY' || fail "nexthops"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
used = int(open(sys.argv[2]).read())
assert lines[0] == "%d of 15 codes in use" % used, (lines[0], used)
head = lines[2]
assert head.split() == ["CODE", "NEXT-HOP", "PORT", "MAC", "STATE", "COVERS"], head
rows = [l for l in lines[3:] if re.match(r" *\d+  ", l)]
assert len(rows) == 15, rows
cols = [head.index(c) for c in ("NEXT-HOP", "PORT", "MAC", "STATE", "COVERS")]
def cut(line):
    edges = [0] + cols + [len(line) + 1]
    return [line[a:b].strip() for a, b in zip(edges, edges[1:])]
cells = [cut(l) for l in rows]
assert [c[0] for c in cells] == [str(i) for i in range(1, 16)], cells
assert sum(c[4] != "free" for c in cells) == used, cells
# Each gateway with a neighbour has a code: its port, the neighbour's MAC.
by_hop = {c[1]: c for c in cells}
for gw, port, mac in (("192.0.2.1", 0, "52:54:00:00:00:01"), ("192.0.2.2", 1, "52:54:00:00:00:02"),
                      ("2001:db8::1", 0, "52:54:00:00:00:11"), ("2001:db8::2", 1, "52:54:00:00:00:12")):
    c = by_hop["via %s port %d" % (gw, port)]
    assert c[2] == str(port) and c[3] == mac and c[4] == "active", c
print("  %d codes in use, each gateway with its port and MAC" % used)
PY

echo "== --json is the API's answer, unchanged"
for what in routes nexthops tcam neighbors; do
  api --json "$what" >"$work/$what.ctl.json"
  get "/api/v1/$what" | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin), indent=2, ensure_ascii=False))' \
    >"$work/$what.api.json"
  cmp -s "$work/$what.ctl.json" "$work/$what.api.json" || fail "--json $what differs from the API's answer"
done
api --json status | python3 -c 'import json, sys; s = json.load(sys.stdin); assert s["routes"]["ipv4"]["total"] == 5, s' ||
  fail "--json status"

echo "== exit status: 0 ok, 1 fibnicd said no, 2 usage, 3 unreachable, 4 images differ"
code() { set +e; "$@" >/dev/null 2>"$work/err"; echo $?; set -e; }
[ "$(code api status)" = 0 ] || fail "status did not exit 0"
[ "$(code api routes --state bogus)" = 1 ] || fail "a request fibnicd refuses did not exit 1: $(cat "$work/err")"
grep -q "fibnicd: 400" "$work/err" || fail "--state bogus: $(cat "$work/err")"
[ "$(code api bogus)" = 2 ] || fail "an unknown command did not exit 2"
[ "$(code api lookup not-an-address)" = 2 ] || fail "a bad lookup address did not exit 2"
[ "$(code "$ctl" --server 127.0.0.1:1 status)" = 3 ] || fail "a port nobody listens on did not exit 3"
[ "$(code "$ctl" --server no-such-host.invalid:1 status)" = 3 ] || fail "an unknown host did not exit 3"
grep -q "cannot resolve host" "$work/err" || fail "unknown host: $(cat "$work/err")"
[ "$(code "$ctl" image diff "$work/bar0.img" "$work/bar0.img")" = 0 ] || fail "image diff of one image did not exit 0"
[ "$(code "$ctl" image diff "$work/before-api.img" "$work/bar0.img")" = 4 ] ||
  fail "image diff before and after a route did not exit 4"
"$ctl" --help | grep -q "^3 fibnicd could not be reached" || fail "--help does not document the exit status"

kill -TERM "$pid"
wait "$pid" || fail "fibnicd exited non-zero on SIGTERM"
pid=
echo "fibnicctl human views OK"
