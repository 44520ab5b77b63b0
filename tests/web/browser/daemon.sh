# Shared by the browser tests (sourced): needs $here. Fails unless
# playwright-core is installed; free_port prints a free loopback port;
# start_daemon LOG URL CMD... runs CMD in the background (output in LOG,
# killed when the script exits) and waits until URL answers, printing LOG
# if CMD dies first.
if [ ! -d "$here/node_modules/playwright-core" ]; then
  echo "browser test: playwright-core is not installed; run scripts/setup/web.sh" >&2
  exit 1
fi
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
start_daemon() {
  local log=$1 url=$2
  shift 2
  "$@" > "$log" 2>&1 &
  daemon_pid=$!
  trap 'kill "$daemon_pid" 2>/dev/null; wait "$daemon_pid" 2>/dev/null || true' EXIT
  for _ in $(seq 300); do
    curl -sf "$url" >/dev/null && return 0
    kill -0 "$daemon_pid" 2>/dev/null || { cat "$log"; exit 1; }
    sleep 0.1
  done
}
