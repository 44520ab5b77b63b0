#!/usr/bin/env bash
# End to end (root; ctest label "integration"): fibnicd with the file backend
# and the kernel source in a fresh network namespace. Routes added, changed and
# deleted with `ip` must appear in the BAR file as the hardware would decode
# them (HwLookup via `fibnicctl lookup --bar`, polled with a bounded timeout),
# `fibnicctl lookup` through the API must find RIB and hardware agreeing, SIGTERM
# must leave the BAR untouched and a restart on the same table write nothing.
#   fibnicd_e2e_test.sh FIBNICD FIBNICCTL
set -euo pipefail
fibnicd=$1
ctl=$2
ns=fibnicd-e2e-$$
work=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
in_ns() { ip netns exec "$ns" "$@"; }
fail() { echo "FAIL: $*"; echo "--- fibnicd log"; cat "$work/log" || true; exit 1; }

ip netns add "$ns"
in_ns ip link set lo up
for i in 0 1; do
  in_ns ip link add "d$i" type veth peer name "p$i"
  in_ns ip link set "p$i" up
  in_ns ip link set "d$i" address "02:00:00:00:0$i:01" up
  in_ns ip addr add "10.$((i + 1)).0.1/24" dev "d$i"
  in_ns ip neigh add "10.$((i + 1)).0.2" lladdr "02:00:00:00:0$i:02" dev "d$i" nud permanent
done

cat >"$work/fibnicd.yaml" <<YAML
# 4-bit codes: 15 next-hops (the two connected subnets take two of them).
device: {backend: file, path: $work/bar0.img, code_bits: 4}
ports:
  - {interface: d0, port: 0}
  - {interface: d1, port: 1}
sources:
  kernel: {enabled: true, tables: [255, 254]}
web: {listen: 127.0.0.1:18123, token: e2e-token-0123456789}
YAML

start() {
  local before
  before=$(grep -c "ready:" "$work/log" 2>/dev/null || true)
  # ip netns exec execs fibnicd: $! is the daemon itself.
  ip netns exec "$ns" "$fibnicd" --config "$work/fibnicd.yaml" >>"$work/log" 2>&1 &
  pid=$!
  for _ in $(seq 200); do
    [ "$(grep -c "ready:" "$work/log" 2>/dev/null || true)" -gt "${before:-0}" ] && return 0
    sleep 0.05
  done
  fail "fibnicd not ready within 10 s"
}
stop() {
  kill -TERM "$pid"
  wait "$pid" || fail "fibnicd exited non-zero on SIGTERM"
  pid=
}

# hw ADDRESS → "forward port mac" or "punt why", decoded from the BAR file.
hw() {
  "$ctl" --json lookup "$1" --bar "$work/bar0.img" | python3 -c '
import json, sys
h = json.load(sys.stdin)["hardware"]
print("forward %s %s" % (h["port"], h["dst_mac"]) if h["forward"] else "punt " + h["why"])'
}
# Polls until the BAR answers $2 for $1; prints the time it took.
expect_hw() {
  local t0 now
  t0=$(date +%s%N)
  while true; do
    now=$(date +%s%N)
    if [ "$(hw "$1")" = "$2" ]; then
      echo "  $1 -> $2 within $(( (now - t0) / 1000000 )) ms"
      return 0
    fi
    [ $(( (now - t0) / 1000000 )) -lt 2000 ] || break
  done
  fail "$1: BAR says '$(hw "$1")', expected '$2' (waited 2 s)"
}

start
echo "== route add"
in_ns ip route add 198.51.100.0/24 via 10.1.0.2 dev d0
expect_hw 198.51.100.7 "forward 0 02:00:00:00:00:02"
in_ns ip route add 203.0.113.0/24 via 10.2.0.2 dev d1
expect_hw 203.0.113.9 "forward 1 02:00:00:00:01:02"

echo "== fibnicctl lookup through the API agrees with the RIB"
in_ns "$ctl" --server 127.0.0.1:18123 --json lookup 198.51.100.7 >"$work/lookup.json"
python3 - "$work/lookup.json" <<'PY' || fail "API lookup disagrees"
import json, sys
j = json.load(open(sys.argv[1]))
rib, hw = j["rib"], j["hardware"]
assert j["verdict"] == "match", j
assert rib["matched"] == "198.51.100.0/24", rib
assert hw["forward"] and hw["port"] == rib["expected"]["port"] == 0, j
assert hw["mac"] == rib["expected"]["mac"] == "02:00:00:00:00:02", j
print("  verdict match: rib", rib["matched"], "port", rib["expected"]["port"], "= hardware port", hw["port"])
PY
in_ns "$ctl" --server 127.0.0.1:18123 lookup 198.51.100.7

echo "== fibnicctl routes: --family 4|6, pages through --after, --token-file"
api() { in_ns "$ctl" --server 127.0.0.1:18123 "$@"; }
api --json routes --family 4 --limit 1 >"$work/page1.json" || fail "routes --family 4 failed"
next=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert [r["family"] for r in j["routes"]]==["ipv4"], j; assert j["next"], j; print(j["next"])' "$work/page1.json") ||
  fail "routes --family 4 --limit 1: not one IPv4 route and a cursor"
api --json routes --family 4 --limit 1 --after "$next" >"$work/page2.json" || fail "routes --after failed"
python3 - "$work/page1.json" "$work/page2.json" <<'PY' || fail "the second page does not follow the first"
import ipaddress, json, sys
a, b = (json.load(open(f))["routes"] for f in sys.argv[1:])
first, second = (ipaddress.ip_network(r[0]["prefix"]) for r in (a, b))
assert (first.network_address, first.prefixlen) < (second.network_address, second.prefixlen), (first, second)
print("  page 1:", first, " page 2 (--after %s):" % first, second)
PY
api routes --family 4 --limit 1 | grep -q "^more: add --after $next\$" || fail "a human page does not say how to get the next"
api --json routes --family 6 | python3 -c 'import json,sys; r=json.load(sys.stdin)["routes"]; assert all(x["family"]=="ipv6" for x in r), r' ||
  fail "routes --family 6 returned a non-IPv6 route"
if api routes --family 5 2>"$work/err"; then fail "--family 5 accepted"; fi
grep -q "is not 4 or 6" "$work/err" || fail "--family 5: $(cat "$work/err")"
printf 'e2e-token-0123456789\n' >"$work/token"
chmod 644 "$work/token"
if api --token-file "$work/token" status 2>"$work/err" >/dev/null; then fail "a token file others may read was used"; fi
grep -q "may be read by others (mode 644)" "$work/err" || fail "--token-file 644: $(cat "$work/err")"
chmod 600 "$work/token"
api --token-file "$work/token" status >/dev/null || fail "--token-file with mode 600 refused"
printf 'wrong-token-0123456789\n' >"$work/token"
if api --token-file "$work/token" status 2>/dev/null >/dev/null; then fail "fibnicd took a wrong token from --token-file"; fi

echo "== fibnicctl --server: a host name, an http:// URL"
in_ns "$ctl" --server localhost:18123 status >/dev/null || fail "--server localhost:18123 refused"
in_ns "$ctl" --server http://localhost:18123/ --json status >/dev/null || fail "--server http://localhost:18123/ refused"
if in_ns "$ctl" --server https://127.0.0.1:18123 status 2>"$work/err" >/dev/null; then fail "--server https:// accepted"; fi
grep -q "https is not served" "$work/err" || fail "--server https://: $(cat "$work/err")"
if in_ns "$ctl" --server no-such-host.invalid:18123 status 2>"$work/err" >/dev/null; then fail "an unknown host accepted"; fi
grep -q "cannot resolve host 'no-such-host.invalid'" "$work/err" || fail "--server no-such-host.invalid: $(cat "$work/err")"
if in_ns "$ctl" --server 127.0.0.1:1 status 2>"$work/err" >/dev/null; then fail "status from a port nobody listens on"; fi
grep -q "fibnicd: cannot connect to 127.0.0.1:1: .*is fibnicd running" "$work/err" || fail "--server 127.0.0.1:1: $(cat "$work/err")"

echo "== status shows the source registry (kernel, the API's own source) and the pipeline"
in_ns "$ctl" --server 127.0.0.1:18123 --json status | python3 -c '
import json, sys
s = json.load(sys.stdin)["sources"]
assert set(s) == {"kernel", "api", "pipeline"}, s
assert s["kernel"]["dumping"] is False and s["kernel"]["routes"] >= 2 and s["kernel"]["errors"] == 0, s["kernel"]
assert s["kernel"]["state"] == "up", s["kernel"]
assert s["api"] == {"routes": 0, "upserts": 0, "deletes": 0, "state": "up"}, s["api"]
print("  sources:", ", ".join(sorted(s)))' || fail "status sources"

echo "== the human views show the kernel's routes"
api status >"$work/status.txt" || fail "status failed"
grep -qE '^kernel +up ' "$work/status.txt" || fail "status: no kernel source up: $(cat "$work/status.txt")"
api routes --family 4 >"$work/routes.txt" || fail "routes failed"
grep -qE '^198\.51\.100\.0/24 +offloaded +via 10\.1\.0\.2 port 0 +kernel +-$' "$work/routes.txt" ||
  fail "routes: 198.51.100.0/24 is not offloaded via 10.1.0.2 port 0 from the kernel: $(cat "$work/routes.txt")"
grep -qE '^203\.0\.113\.0/24 +offloaded +via 10\.2\.0\.2 port 1 +kernel +-$' "$work/routes.txt" ||
  fail "routes: 203.0.113.0/24 is not offloaded via 10.2.0.2 port 1 from the kernel: $(cat "$work/routes.txt")"
echo "  kernel source up; both routes listed prefix first, offloaded, with their gateway and port"

echo "== route change and delete"
in_ns ip route replace 198.51.100.0/24 via 10.2.0.2 dev d1
expect_hw 198.51.100.7 "forward 1 02:00:00:00:01:02"
in_ns ip route del 203.0.113.0/24
expect_hw 203.0.113.9 "punt code-0"
echo "== the host's own address punts (local table)"
expect_hw 10.1.0.1 "punt code-0"

echo "== SIGTERM leaves the BAR untouched"
sum=$(md5sum <"$work/bar0.img")
stop
[ "$(md5sum <"$work/bar0.img")" = "$sum" ] || fail "SIGTERM changed the BAR"
expect_hw 198.51.100.7 "forward 1 02:00:00:00:01:02"

echo "== warm restart"
# The run above left a slot numbering shaped by its history (routes added,
# replaced, deleted); the restarted daemon adopts it from the readback, so the
# FIRST restart on the same table already writes nothing.
for n in first second; do
  sum=$(md5sum <"$work/bar0.img")
  cp "$work/bar0.img" "$work/before-restart.img"
  start
  sleep 0.2
  if [ "$(md5sum <"$work/bar0.img")" != "$sum" ]; then
    "$ctl" image diff "$work/before-restart.img" "$work/bar0.img" || true
    fail "$n restart on an unchanged table rewrote the BAR"
  fi
  stop
  tail -1 "$work/log" | grep -q "stopped: .* 0 device writes" || fail "$n restart wrote to the device"
  grep "warm start: kept" "$work/log" | tail -1 | sed 's/^/  /'
  echo "  $n restart: 0 device writes, BAR identical"
done
echo "fibnicd end-to-end OK"
