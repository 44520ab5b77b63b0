#!/usr/bin/env bash
# Browser test of the dashboard's IP-NUMA page against a real ipnumad (file
# backend, a file pool, one peer that never answers), its API on a free
# loopback port. Values are written into the BAR file as the NIC would
# count them; the page must show them (ipnuma_dashboard_test.mjs).
#   run_ipnumad.sh IPNUMAD_BINARY OUT_DIR
set -euo pipefail
ipnumad=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/daemon.sh"
rm -rf "$out"
mkdir -p "$out"
port=$(free_port) peer_port=$(free_port)
truncate -s 1M "$out/pool"
printf '%s\n' 0123456789abcdef0123456789abcdef-dash >"$out/peer.secret"
chmod 600 "$out/peer.secret"
cat > "$out/ipnumad.yaml" <<YAML
device: {kind: file, path: $out/bar0, model: {pages: 64, pcid_entries: 16, region_entries: 8}}
local: {address: 10.9.0.1, netmask: 255.255.255.0, gateway: 10.9.0.254, mac: '02:00:5e:09:00:01', udp_port: 4790, retransmit_timeout: 20us}
pool: {kind: file, path: $out/pool, base: 0x100000000}
neighbours: {source: static, static: [{address: 10.9.0.2, mac: '02:00:5e:09:00:02'}]}
api: {listen: '127.0.0.1:$port'}
peer_api: {listen: '127.0.0.1:$peer_port', timeout: 200ms}
reconcile_interval: 200ms
peers:
  - {name: far, address: 10.9.0.2, api: '127.0.0.1:9', secret_file: $out/peer.secret}
exports:
  - {name: rx, base: 0x100010000, length: 0x4000, allow: 10.9.0.2/32}
YAML
start_daemon "$out/ipnumad.log" "http://127.0.0.1:$port/api/v1/ipnuma/status" "$ipnumad" --config "$out/ipnumad.yaml"
node "$here/ipnuma_dashboard_test.mjs" "http://127.0.0.1:$port" "$out/bar0" "$out/screenshots"
