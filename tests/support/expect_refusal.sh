# Sourced by the command-line refusal tests: `expect EXIT_CODE TEXT ARGS...`
# runs "$prog" ARGS and counts a failure in $fails unless it exits EXIT_CODE
# with a message containing TEXT.
fails=0
expect() {
  local want=$1 text=$2 rc=0 out
  shift 2
  out=$("$prog" "$@" 2>&1) || rc=$?
  if [ "$rc" != "$want" ] || ! grep -qF -- "$text" <<<"$out"; then
    echo "FAIL: $(basename "$prog") $* -> exit $rc, '$out' (want exit $want and '$text')"
    fails=$((fails + 1))
  fi
}
