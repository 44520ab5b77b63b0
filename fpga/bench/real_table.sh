#!/usr/bin/env bash
# The bench on the shared real table: make-routes (IPv4, 3 gateways) ->
# fibnic-compile -> BAR0 image -> RTL vs model. Everything is made at test time.
#   real_table.sh BENCH FIBNIC_COMPILE SHARED_DIR WORK_DIR [bench args...]
set -euo pipefail
bench=$1 compile=$2 shared=$3 work=$4
shift 4
mkdir -p "$work"
python3 "$shared/tools/make-routes" "$shared/data/full-table-2024-03.prefixes.gz" --gateways 3 --family 4 \
  --out "$work/routes.txt" --neigh "$work/neigh.txt"
"$compile" --routes "$work/routes.txt" --neighbors "$work/neigh.txt" --code-bits 2 --out "$work/bar.img"
exec "$bench" --image "$work/bar.img" "$@"
