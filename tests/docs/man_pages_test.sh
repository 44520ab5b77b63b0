#!/usr/bin/env bash
# The man pages and the bash completion against the programs themselves:
# every page renders without a groff/man warning; every option a program's
# --help names is in its page; every key the real config parsers accept (they
# list them when a key is unknown) is in the config file's page; the
# completion offers every fibnicctl command and option --help names.
#   man_pages_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
src=$1
bin=$2
man_dir=$src/docs/man
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

render() { MANWIDTH=200 man --warnings -l "$1" 2>"$work/warn" | col -b; }

for page in "$man_dir"/*.[158]; do
  name=$(basename "$page")
  render "$page" >"$work/$name.txt"
  [ -s "$work/warn" ] && fail "$name: man warns: $(head -3 "$work/warn")"
  grep -q '^NAME' "$work/$name.txt" || fail "$name: no NAME section rendered"
done

# Options each program's --help names, against its rendered page.
check_options() {
  local prog=$1 page=$2
  "$bin/$prog" --help >"$work/help" 2>&1 || true
  local opts
  opts=$(grep -oE -- '--[a-z][a-z-]*' "$work/help" | sort -u)
  [ -n "$opts" ] || { fail "$prog --help names no option"; return; }
  for o in $opts; do
    grep -qF -- "$o" "$work/$page.txt" || fail "$page does not document $o (named by $prog --help)"
  done
  echo "  $page: $(echo "$opts" | wc -w) options of $prog --help documented"
}
check_options fibnicd fibnicd.8
check_options fibnicctl fibnicctl.1
check_options fibnic-compile fibnic-compile.1
check_options ipnumad ipnumad.8
check_options ipnumactl ipnumactl.1

# Config keys: a file where every section holds an unknown key makes the parser
# list, per section, every key it accepts.
check_keys() {
  local prog=$1 page=$2 yaml=$3
  printf '%b' "$yaml" >"$work/probe.yaml"
  "$bin/$prog" --check-config --config "$work/probe.yaml" >"$work/keys" 2>&1 || true
  local keys
  keys=$(grep -oE 'allowed here: .*' "$work/keys" | sed 's/allowed here: //' | tr ',' '\n' | tr -d ' ' | sort -u)
  [ "$(echo "$keys" | wc -w)" -ge 10 ] || { fail "$prog: the parser listed too few keys: $(head -3 "$work/keys")"; return; }
  for k in $keys; do
    grep -qw -- "$k" "$work/$page.txt" || fail "$page does not document the key '$k' (accepted by $prog)"
  done
  echo "  $page: $(echo "$keys" | wc -w) keys accepted by $prog documented"
}
check_keys fibnicd fibnicd.yaml.5 \
  'zz: 1\ndevice: {zz: 1}\nsources: {zz: 1, kernel: {zz: 1}, fpm: {zz: 1}, file: {zz: 1}}\npolicies: {zz: 1}\nweb: {zz: 1}\naudit: {zz: 1}\nlogging: {zz: 1}\nports: [{zz: 1}]\n'
check_keys ipnumad ipnumad.yaml.5 \
  'zz: 1\ndevice: {zz: 1}\nlocal: {zz: 1}\npool: {zz: 1}\nneighbours: {zz: 1}\napi: {zz: 1}\npeer_api: {zz: 1}\npeers: [{zz: 1}]\nexports: [{zz: 1}]\nmappings: [{zz: 1}]\n'

# Completion: the first word offers every command of fibnicctl --help, `routes`
# every routes option.
complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _fibnicctl; echo "${COMPREPLY[*]}"' \
    _ "$src/configs/bash-completion/fibnicctl" "$@"
}
first=$(complete_words fibnicctl "")
for c in status routes lookup nexthops neighbors tcam image; do
  "$bin/fibnicctl" --help | grep -qE "^  ([a-z |]*[ |])?$c( |$)" || fail "fibnicctl --help no longer names '$c' (update the test)"
  [[ " $first " == *" $c "* ]] || fail "completion does not offer '$c' (offers: $first)"
done
routes_opts=$(complete_words fibnicctl routes --)
for o in $("$bin/fibnicctl" --help | sed -n '/^  routes/,/^  lookup/p' | grep -oE -- '--[a-z-]+' | sort -u); do
  [[ " $routes_opts " == *" $o "* ]] || fail "completion of 'routes' does not offer $o (offers: $routes_opts)"
done
[ "$(complete_words fibnicctl routes --family "")" = "4 6" ] || fail "completion of --family is not '4 6'"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "man pages and completion OK"
