# Shared by the browser tests (sourced): needs $here, $shared and $out. Checks
# that playwright-core is installed and writes part of the shared Internet
# table (60k IPv4 + 6k IPv6 routes, 3 gateways) to $out/routes.txt and
# $out/neigh.txt.
if [ ! -d "$here/node_modules/playwright-core" ]; then
  echo "browser test: playwright-core is not installed; run scripts/setup/web.sh" >&2
  exit 1
fi
mkdir -p "$out"
tool="python3 $shared/tools/make-routes $shared/data/full-table-2024-03.prefixes.gz --gateways 3"
$tool --family 4 --limit 60000 --out "$out/r4.txt" --neigh "$out/neigh.txt" 2>/dev/null
$tool --family 6 --limit 6000 --out "$out/r6.txt" 2>/dev/null
cat "$out/r4.txt" "$out/r6.txt" > "$out/routes.txt"
