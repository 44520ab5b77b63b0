#!/usr/bin/env bash
# Frames captured in the lab through fibnic-emu's forwarder and the RTL
# (emu_rtl_replay): the BAR0 image is compiled from the lab's routes and
# neighbours (4-bit codes, as the lab runs), the port MACs are the lab's.
#   rtl_replay.sh EMU_RTL_REPLAY FIBNIC_COMPILE DATA_DIR WORK_DIR
set -euo pipefail
replay=$1 compile=$2 data=$3 work=$4
mkdir -p "$work"
"$compile" --routes "$data/lab_routes.txt" --neighbors "$data/lab_neighbors.txt" --code-bits 4 \
  --out "$work/bar0.img" --report "$work/report.json" >/dev/null
exec "$replay" --image "$work/bar0.img" --frames "$data/lab_frames.txt" \
  --port-mac 0=02:fb:00:00:00:00 --port-mac 1=02:fb:00:00:00:01 --port-mac 2=02:fb:00:00:00:02
