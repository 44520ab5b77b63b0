#!/usr/bin/env bash
# The Debian packages on a fresh Debian 12: build them (scripts/package.sh),
# lintian (warnings fail), then in a debootstrap'd minimal root — a machine
# that has never seen the project — `apt-get install ./fibnic_*.deb
# ./ipnumad_*.deb` must pull every library from the Depends line alone, and
# the installed programs must run from their installed paths:
#   - fibnicd --check-config on the shipped conffile, fibnicctl and
#     fibnic-compile compile a route file with the installed programs;
#   - units, man pages, completion and conffiles where Debian puts them;
#     fibnicd enabled (its default needs no card), ipnumad not (its config
#     must be edited: --check-config names the missing secret file);
#   - the system users fibnic and ipnuma (sysusers.d, made by the postinst),
#     /etc/fibnic and /etc/ipnumad root:<group> 0750, the udev rules;
#   - booted with systemd as PID 1 (systemd-nspawn, private network): the
#     package's postinst enabled fibnicd and it is running under its unit's
#     hardening as user fibnic with CAP_NET_ADMIN alone (/proc/PID/status),
#     adopted a root-owned image an older version left (state now fibnic's),
#     answers fibnicctl, reloads and restarts; ipnumad refuses an API token
#     left to root naming the fix, then starts as user ipnuma with no
#     capability (a file-backed NIC), its state ipnuma's 0600, and restarts;
#   - a changed conffile survives a reinstall; purge removes everything but
#     the two users (kept, Debian's practice).
#   package_test.sh SOURCE_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
tmp=$(mktemp -d /var/tmp/fibnic-pkgtest.XXXXXX)
root="$tmp/root"
# The root's /proc is mounted in a private mount namespace (unshare -m per
# command), so nothing stays mounted under $tmp when it is removed; the root's
# own /dev nodes (debootstrap made them) are enough for apt and dpkg.
nspawn_pid=
cleanup() {
  if [ -n "$nspawn_pid" ] && kill -0 "$nspawn_pid" 2>/dev/null; then
    kill "$nspawn_pid"; wait "$nspawn_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

echo "== build the packages, lintian"
mapfile -t debs < <("$src/scripts/package.sh" --lintian | grep '\.deb$')
[ ${#debs[@]} -eq 2 ] || fail "expected 2 packages, got: ${debs[*]}"

echo "== a fresh Debian 12 root"
"$src/scripts/debian-root.sh" bookworm "$root" >/dev/null
cp /etc/resolv.conf "$root/etc/resolv.conf"
# Only the mirror the host uses (the root's own default is deb.debian.org).
cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/" 2>/dev/null && rm -f "$root/etc/apt/sources.list" || true
cp "${debs[@]}" "$root/tmp/"
in_root() {
  unshare -m --propagation private sh -c 'mount -t proc proc "$0/proc" && exec chroot "$0" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"' "$root" "$@"
}

echo "== apt-get install the two packages (dependencies from their Depends)"
in_root apt-get update -qq
# systemd as init, for the boot below; minbase has none.
in_root apt-get install -y -qq --no-install-recommends systemd systemd-sysv dbus >"$tmp/apt.log" 2>&1 \
  || { tail -30 "$tmp/apt.log"; fail "apt-get install systemd in the root"; }
in_root sh -c 'apt-get install -y -qq --no-install-recommends /tmp/fibnic_*.deb /tmp/ipnumad_*.deb' >"$tmp/apt.log" 2>&1 \
  || { tail -30 "$tmp/apt.log"; fail "apt-get install of the packages"; }
for p in fibnic ipnumad; do
  [ "$(in_root dpkg-query -W -f='${Status}' $p)" = "install ok installed" ] || fail "$p not installed"
done

echo "== installed paths"
for f in /usr/sbin/fibnicd /usr/bin/fibnicctl /usr/bin/fibnic-compile /usr/sbin/ipnumad /usr/bin/ipnumactl; do
  [ -x "$root$f" ] || fail "$f missing"
done
for f in /lib/systemd/system/fibnicd.service /lib/systemd/system/ipnumad.service \
         /usr/share/man/man8/fibnicd.8.gz /usr/share/man/man1/fibnicctl.1.gz /usr/share/man/man5/fibnicd.yaml.5.gz \
         /usr/share/man/man8/ipnumad.8.gz /usr/share/bash-completion/completions/fibnicctl \
         /usr/share/doc/fibnic/copyright /usr/share/doc/ipnumad/copyright; do
  [ -f "$root$f" ] || fail "$f missing"
done
grep -q '^ExecStart=/usr/sbin/fibnicd ' "$root/lib/systemd/system/fibnicd.service" || fail "fibnicd.service does not run /usr/sbin/fibnicd"
grep -q '^ExecStart=/usr/sbin/ipnumad ' "$root/lib/systemd/system/ipnumad.service" || fail "ipnumad.service does not run /usr/sbin/ipnumad"
in_root dpkg-query -W -f='${Conffiles}\n' fibnic | grep -q '/etc/fibnic/fibnicd.yaml' || fail "fibnicd.yaml is not a conffile"
in_root dpkg-query -W -f='${Conffiles}\n' ipnumad | grep -q '/etc/ipnumad/ipnumad.yaml' || fail "ipnumad.yaml is not a conffile"
[ -L "$root/etc/systemd/system/multi-user.target.wants/fibnicd.service" ] || fail "fibnicd.service not enabled"
[ ! -e "$root/etc/systemd/system/multi-user.target.wants/ipnumad.service" ] || fail "ipnumad.service enabled before it is configured"

echo "== system users, /etc modes, udev rules"
# owner:group mode of a path in the root, by name (the root's own passwd).
perms() { in_root stat -c '%U:%G %a' "$1"; }
for u in fibnic ipnuma; do
  entry=$(in_root getent passwd $u) || fail "no user $u after install"
  echo "$entry"
  uid=$(cut -d: -f3 <<<"$entry")
  [ "$uid" -gt 0 ] && [ "$uid" -lt 1000 ] || fail "$u is not a system user (uid $uid)"
  [ "$(cut -d: -f7 <<<"$entry")" = /usr/sbin/nologin ] || fail "$u can log in"
  in_root getent group $u >/dev/null || fail "no group $u"
done
[ "$(perms /etc/fibnic)" = "root:fibnic 750" ] || fail "/etc/fibnic is $(perms /etc/fibnic), not root:fibnic 750"
[ "$(perms /etc/ipnumad)" = "root:ipnuma 750" ] || fail "/etc/ipnumad is $(perms /etc/ipnumad), not root:ipnuma 750"
for f in /usr/lib/sysusers.d/fibnic.conf /usr/lib/sysusers.d/ipnumad.conf \
         /lib/udev/rules.d/60-fibnic.rules /lib/udev/rules.d/60-ipnumad.rules; do
  [ -f "$root$f" ] || fail "$f missing"
done
for f in /lib/udev/fibnic-pci-bar-access /lib/udev/ipnuma-pci-bar-access; do
  [ -x "$root$f" ] || fail "$f missing"
  grep -q "RUN+=\"$f " "$root/lib/udev/rules.d/"60-*.rules || fail "no rule runs $f"
done

echo "== the installed programs run"
in_root /usr/sbin/fibnicd --check-config --config /etc/fibnic/fibnicd.yaml
in_root /usr/bin/fibnicctl --help >/dev/null
printf '10.0.0.0/8 192.0.2.1 0\n' >"$root/tmp/routes.txt"
printf '192.0.2.1 02:00:00:00:00:01 0\n' >"$root/tmp/neighbors.txt"
in_root /usr/bin/fibnic-compile --routes /tmp/routes.txt --neighbors /tmp/neighbors.txt --out /tmp/bar0.img >/dev/null
[ -s "$root/tmp/bar0.img" ] || fail "fibnic-compile wrote no image"
in_root /usr/bin/fibnicctl lookup 10.1.2.3 --bar /tmp/bar0.img | tee "$tmp/lookup.txt"
grep -q '02:00:00:00:00:01' "$tmp/lookup.txt" || fail "the installed fibnicctl does not decode 10.1.2.3 to the neighbour's MAC"
if in_root /usr/sbin/ipnumad --check-config --config /etc/ipnumad/ipnumad.yaml >"$tmp/ipnumad.txt" 2>&1; then
  fail "ipnumad accepts its unedited example config"
fi
grep -q 'secret' "$tmp/ipnumad.txt" || { cat "$tmp/ipnumad.txt"; fail "ipnumad's refusal does not name what to edit"; }

echo "== boot the root with systemd: the services under their units"
cat >"$root/etc/ipnumad/test.yaml" <<'YAML'
device: {kind: file, path: /var/lib/ipnumad/nic.bar, model: {pages: 256, pcid_entries: 16, region_entries: 8}}
local: {address: 10.0.0.1, netmask: 255.255.255.0, gateway: 10.0.0.254, mac: '02:00:00:00:00:0a', udp_port: 4790, retransmit_timeout: 5us}
pool: {kind: reserved, base: 0x100000000, size: 0x100000}
neighbours: {source: static, static: []}
api: {listen: '127.0.0.1:7471', token_file: /etc/ipnumad/api.token}
peer_api: {listen: '127.0.0.1:7470', timeout: 1s}
reconcile_interval: 1s
peers: []
YAML
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$root/etc/ipnumad/api.token"
# Left to root on purpose first: ipnumad (user ipnuma) must refuse it, saying so.
chmod 600 "$root/etc/ipnumad/api.token"
# An image a root-run fibnicd (before the fibnic user) left: adopted and chowned.
mkdir -m 0755 "$root/var/lib/fibnic"
cp "$root/tmp/bar0.img" "$root/var/lib/fibnic/bar0.img"
mkdir -p "$root/etc/systemd/system/ipnumad.service.d"
printf '[Service]\nExecStartPre=\nExecStart=\nExecStartPre=/usr/sbin/ipnumad --check-config --config /etc/ipnumad/test.yaml\nExecStart=/usr/sbin/ipnumad --config /etc/ipnumad/test.yaml\n' \
  >"$root/etc/systemd/system/ipnumad.service.d/test.conf"
systemd-nspawn -q -D "$root" -b --private-network --register=no --keep-unit -M fibnic-pkgtest >"$tmp/boot.log" 2>&1 &
nspawn_pid=$!
init=
for _ in $(seq 100); do
  init=$(pgrep -P "$nspawn_pid" | head -1) && [ -n "$init" ] && [ "$(cat /proc/$init/comm 2>/dev/null)" = systemd ] && break
  init=; sleep 0.1
done
[ -n "$init" ] || { cat "$tmp/boot.log"; fail "the root did not boot with systemd (systemd-nspawn)"; }
in_boot() { nsenter -t "$init" -a -r -w /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
# is-system-running --wait needs the bus: ask until it answers.
state=
for _ in $(seq 300); do
  state=$(in_boot systemctl is-system-running --wait 2>/dev/null || true)
  case "$state" in running|degraded) break ;; esac
  sleep 0.2
done
echo "system: $state"
[ "$state" = running ] || { in_boot systemctl --failed --no-pager | cat; fail "the booted root is '$state', not running"; }
active() { for _ in $(seq 50); do [ "$(in_boot systemctl is-active "$1")" = active ] && return 0; sleep 0.2; done; return 1; }
active fibnicd || { in_boot systemctl status fibnicd --no-pager -n 30 | cat; fail "fibnicd.service is not running after boot"; }
in_boot systemctl show fibnicd -p User -p NoNewPrivileges -p CapabilityBoundingSet | tee "$tmp/show.txt"
# runs_as UNIT USER CAPS: the unit's main process has USER's uid and gid (real,
# effective, saved, fs) and exactly CAPS effective, permitted and bounding.
runs_as() {
  local pid uid gid st
  pid=$(in_boot systemctl show -p MainPID --value "$1")
  [ -n "$pid" ] && [ "$pid" != 0 ] || fail "$1 has no main process"
  uid=$(in_boot id -u "$2") gid=$(in_boot id -g "$2")
  st=$(in_boot cat "/proc/$pid/status")
  grep -E '^(Uid|Gid|Groups|CapEff|CapPrm|CapBnd|CapAmb):' <<<"$st" | sed "s/^/  $1 (pid $pid): /"
  grep -qP "^Uid:\t$uid\t$uid\t$uid\t$uid$" <<<"$st" || fail "$1 does not run as $2 (uid $uid)"
  grep -qP "^Gid:\t$gid\t$gid\t$gid\t$gid$" <<<"$st" || fail "$1 does not run with group $2 (gid $gid)"
  for c in CapEff CapPrm CapBnd; do
    grep -qP "^$c:\t$3$" <<<"$st" || fail "$1: $c is not $3"
  done
}
# CAP_NET_ADMIN is bit 12.
runs_as fibnicd fibnic 0000000000001000
[ "$(in_boot stat -c '%U:%G %a' /var/lib/fibnic)" = "fibnic:fibnic 750" ] || fail "/var/lib/fibnic is not fibnic:fibnic 750"
in_boot stat -c '%U:%G %a %n' /var/lib/fibnic/bar0.img
[ "$(in_boot stat -c %U /var/lib/fibnic/bar0.img)" = fibnic ] || fail "the image a root-run fibnicd left is not fibnic's now"
cmp -s "$root/tmp/bar0.img" "$root/var/lib/fibnic/bar0.img" && fail "fibnicd did not write the adopted image"
in_boot fibnicctl status | tee "$tmp/status.txt" | head -5
grep -q 'generation' "$tmp/status.txt" || fail "fibnicctl status did not answer from the running fibnicd"
# ExecReload runs /bin/kill: the package must depend on what provides it.
in_boot systemctl reload fibnicd || { in_boot journalctl -u fibnicd --no-pager -n 20 | cat; fail "systemctl reload fibnicd"; }
active fibnicd || fail "fibnicd is not active after reload"
in_boot systemctl restart fibnicd
active fibnicd || { in_boot journalctl -u fibnicd --no-pager -n 30 | cat; fail "fibnicd did not come back after restart"; }
runs_as fibnicd fibnic 0000000000001000
in_boot fibnicctl status | grep -q generation || fail "fibnicctl status after restart"
if in_boot systemctl start ipnumad 2>/dev/null; then fail "ipnumad started with an API token only root may read"; fi
in_boot journalctl -u ipnumad --no-pager -n 30 -o cat | grep 'api.token' | tail -1 | tee "$tmp/token.txt"
grep -q 'chown ipnuma' "$tmp/token.txt" || fail "ipnumad's refusal of a root-owned token does not say whose it must be"
in_boot chown ipnuma:ipnuma /etc/ipnumad/api.token
in_boot systemctl reset-failed ipnumad
in_boot systemctl start ipnumad || true
active ipnumad || { in_boot journalctl -u ipnumad --no-pager -n 30 | cat; fail "ipnumad.service does not start with a file-backed NIC"; }
runs_as ipnumad ipnuma 0000000000000000
[ "$(in_boot stat -c '%U:%G %a' /var/lib/ipnumad)" = "ipnuma:ipnuma 700" ] || fail "/var/lib/ipnumad is not ipnuma:ipnuma 700"
[ "$(in_boot stat -c '%U:%G %a' /var/lib/ipnumad/nic.bar)" = "ipnuma:ipnuma 600" ] || fail "ipnumad's NIC image is not ipnuma's 0600"
in_boot systemctl restart ipnumad
active ipnumad || { in_boot journalctl -u ipnumad --no-pager -n 30 | cat; fail "ipnumad did not come back after restart"; }
runs_as ipnumad ipnuma 0000000000000000
in_boot ipnumactl --help >/dev/null
in_boot systemctl poweroff || true
wait "$nspawn_pid" || true
nspawn_pid=
rm -rf "$root/etc/systemd/system/ipnumad.service.d" "$root/etc/ipnumad/test.yaml" "$root/etc/ipnumad/api.token"

echo "== a changed conffile survives a reinstall"
echo "# site change" >>"$root/etc/fibnic/fibnicd.yaml"
in_root sh -c 'dpkg -i --force-confold /tmp/fibnic_*.deb' >/dev/null
grep -q '^# site change' "$root/etc/fibnic/fibnicd.yaml" || fail "reinstall replaced the changed conffile"

echo "== purge removes the packages' files"
mkdir -p "$root/var/lib/fibnic" && touch "$root/var/lib/fibnic/bar0.img"
in_root dpkg --purge fibnic ipnumad >/dev/null
for f in /usr/sbin/fibnicd /usr/sbin/ipnumad /etc/fibnic/fibnicd.yaml /etc/ipnumad/ipnumad.yaml \
         /lib/systemd/system/fibnicd.service /var/lib/fibnic /etc/systemd/system/multi-user.target.wants/fibnicd.service \
         /var/lib/ipnumad /etc/fibnic /etc/ipnumad /lib/udev/rules.d/60-fibnic.rules /usr/lib/sysusers.d/fibnic.conf; do
  [ ! -e "$root$f" ] || fail "$f left after purge"
done
for d in /etc/fibnic /etc/ipnumad; do
  if in_root dpkg-statoverride --list "$d" >/dev/null; then fail "statoverride on $d left after purge"; fi
done
# The users stay: files elsewhere may still carry their ids, and a reinstall
# reuses them (Debian does not remove system users on purge).
in_root getent passwd fibnic >/dev/null && in_root getent passwd ipnuma >/dev/null || fail "purge removed the system users"
echo "packages OK"
