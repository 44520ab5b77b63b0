#!/usr/bin/env bash
# Installs the browser test's npm dependencies (playwright-core, pinned by
# tests/web/browser/package-lock.json). It drives Debian's chromium; no
# browser is downloaded. npm comes from Debian unless node already ships it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir="$root/tests/web/browser"
if ! command -v npm >/dev/null; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup/web: npm is missing and installing it needs root" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends npm
fi
stamp="$dir/node_modules/.fibnic-lock"
if [ -f "$stamp" ] && cmp -s "$stamp" "$dir/package-lock.json"; then
  exit 0
fi
(cd "$dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
cp "$dir/package-lock.json" "$stamp"
