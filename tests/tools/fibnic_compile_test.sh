#!/usr/bin/env bash
# fibnic-compile as a user runs it: a small table (gateway, ECMP lines, a
# connected route, a route longer than /24 that keeps its /24 uniform, IPv6)
# compiled to a BAR image whose lookups, decoded offline by `fibnicctl lookup
# --bar` (HwLookup), give the next-hops the file names; the JSON report counts
# the lines; a bad line fails with file:line: reason and writes nothing.
#   fibnic_compile_test.sh FIBNIC_COMPILE FIBNICCTL
set -euo pipefail
compile=$1
ctl=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cat >"$work/routes.txt" <<'ROUTES'
# gateway routes; 10.2.0.0/16 is ECMP over two lines, apart
10.1.0.0/16 192.0.2.1 1
10.2.0.0/16 192.0.2.2 2
10.3.0.0/16 connected 3
10.1.7.0/25 192.0.2.1 1
10.1.7.128/25 192.0.2.1 1
10.2.0.0/16 192.0.2.1 1
2001:db8::/32 2001:db8:ffff::1 2
ROUTES
cat >"$work/neigh.txt" <<'NEIGH'
192.0.2.1 02:00:00:00:00:01 1
192.0.2.2 02:00:00:00:00:02 2
NEIGH
"$compile" --routes "$work/routes.txt" --neighbors "$work/neigh.txt" --out "$work/bar.img" \
  --report "$work/report.json" >"$work/out" || fail "compile exited $?: $(cat "$work/out")"

# expect ADDRESS FORWARD PORT MAC
expect() {
  local got
  got=$("$ctl" lookup "$1" --bar "$work/bar.img")
  grep -q "^hardware.forward: *$2\$" <<<"$got" || fail "$1: want forward $2, got: $got"
  [ "$2" = false ] && return
  grep -q "^hardware.port: *$3\$" <<<"$got" || fail "$1: want port $3, got: $got"
  grep -q "^hardware.dst_mac: *$4\$" <<<"$got" || fail "$1: want MAC $4, got: $got"
}
expect 10.1.2.3 true 1 02:00:00:00:00:01
expect 10.1.7.200 true 1 02:00:00:00:00:01   # /25 halves with the /16's answer: still one code
expect 10.2.9.9 true 1 02:00:00:00:00:01     # ECMP "first": the lowest-address path
expect 10.3.0.9 false                        # connected, no neighbour known: punt
expect 10.9.0.1 false                        # no route: punt
expect 2001:db8::1 false                     # its gateway has no neighbour: punt

python3 - "$work/report.json" <<'PY' || fail "report: $(cat "$work/report.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["input"]["route_lines"] == {"ipv4": 6, "ipv6": 1}, r["input"]
assert r["input"]["ecmp_lines"] == 1, r["input"]
assert r["routes"]["ipv4"]["best_routes"] == 5, r["routes"]["ipv4"]
PY

printf '10.1.0.0/16 192.0.2.1 1\n10.2.0.0/33 192.0.2.2 2\n' >"$work/bad.txt"
if "$compile" --routes "$work/bad.txt" --out "$work/bad.img" 2>"$work/err"; then fail "bad line accepted"; fi
grep -q "bad.txt:2: .*10.2.0.0/33" "$work/err" || fail "error does not name file:line and the prefix: $(cat "$work/err")"
[ ! -e "$work/bad.img" ] || fail "an image was written for a bad file"
printf '10.1.0.0/16 192.0.2.1 1\n10.1.0.0/16 192.0.2.1 1\n' >"$work/dup.txt"
if "$compile" --routes "$work/dup.txt" --out "$work/dup.img" 2>"$work/err"; then fail "duplicate line accepted"; fi
grep -q "dup.txt:2: .*duplicate route 10.1.0.0/16" "$work/err" || fail "duplicate: $(cat "$work/err")"
echo "fibnic-compile: image decodes as the file says; bad lines rejected by file:line"
