#!/usr/bin/env bash
# The folder rules of docs/architecture.md, checked on the tree: each folder
# includes project headers only from the folders its row allows. A route's
# path runs sources → rib → fib → hwif; nothing downstream is included
# upstream (fib/ never sees hwif/, sources/ never see fib/), ipnuma/ sees no
# fibnicd/ or fib/, and only fibnicd/ sees sources, fib and hwif together.
#   include_rules.sh SOURCE_DIR
set -euo pipefail
cd "$1"
# folder  : folders it may include (itself always)
rules=(
  "common:"
  "device:common"
  "rib:common"
  "sources:common rib"
  "fib:common device rib"
  "hwif:common device"
  "web/http:common"
  "web/api:common device rib fib hwif web/http"
  "fibnicd:common device rib sources fib hwif web/http web/api"
  "tools:common device rib sources fib"
  "ipnuma:common device rib sources hwif web/http"
  "fpga:common device"
  "emu:common device hwif fpga"
)
bad=0
for rule in "${rules[@]}"; do
  folder=${rule%%:*}
  allowed="$folder ${rule#*:}"
  [ -d "$folder" ] || continue
  while IFS= read -r hit; do
    file=${hit%%:*}
    inc=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"$hit")
    # The longest known folder the header lives in (web/http before web).
    target=$(dirname "$inc")
    case "$target" in */*) [ -d "$target" ] || target=${target%%/*} ;; esac
    case "$target" in sources/* | fib/* | fpga/* | ipnuma/xdp) target=${target%%/*} ;; esac
    ok=0
    for a in $allowed; do [ "$target" = "$a" ] && ok=1; done
    if [ $ok -eq 0 ]; then
      echo "include rule: $file includes $inc ($folder/ may include only: $allowed)"
      bad=1
    fi
  done < <(grep -rn --include='*.h' --include='*.cc' '^#include "' "$folder" | sed -E 's/^([^:]+):[0-9]+:/\1:/')
done
[ $bad -eq 0 ] && echo "include rules: every folder includes only what its row allows"
exit $bad
