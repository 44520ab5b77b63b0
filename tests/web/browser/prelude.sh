# Shared by the dashboard's browser tests (sourced): needs $here, $shared and
# $out. Writes part of the shared Internet table (60k IPv4 + 6k IPv6 routes,
# 3 gateways) to $out/routes.txt and $out/neigh.txt.
. "$here/daemon.sh"
mkdir -p "$out"
tool="python3 $shared/tools/make-routes $shared/data/full-table-2024-03.prefixes.gz --gateways 3"
$tool --family 4 --limit 60000 --out "$out/r4.txt" --neigh "$out/neigh.txt" 2>/dev/null
$tool --family 6 --limit 6000 --out "$out/r6.txt" 2>/dev/null
cat "$out/r4.txt" "$out/r6.txt" > "$out/routes.txt"
