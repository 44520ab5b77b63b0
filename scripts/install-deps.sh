#!/usr/bin/env bash
# Installs the Debian 12 packages the project needs: the union of the lists in
# scripts/deps/*.txt (one per area, so each area names its own) — what the
# programs and the lab need (scripts/run.sh) — and, with --tests, of those in
# scripts/deps/test/*.txt too: what the tests and benches need besides
# (scripts/test.sh, scripts/bench.sh). Idempotent and quick when everything is
# present.
#   scripts/install-deps.sh [--tests]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lists=("$here"/deps/*.txt)
case "${1:-}" in
  "") ;;
  --tests) lists+=("$here"/deps/test/*.txt) ;;
  *) echo "install-deps: unknown option '$1' (--tests)" >&2; exit 2 ;;
esac
mapfile -t pkgs < <(cat "${lists[@]}" | sed 's/#.*//' | tr -s ' \t' '\n' | sed '/^$/d' | sort -u)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#pkgs[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: need root to install packages (run as root or with sudo)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
