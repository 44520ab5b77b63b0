#!/bin/sh
# The init of the user-mode Linux guest that run.sh boots (the host's root
# through hostfs, so every write to it reaches the host: the guest writes
# only to tmpfs and to run.sh's work directory). Mounts what kdiff needs,
# loads vrf/veth/ipv6/xfrm_user (the oracle's refresh) from the UML package's module tree, runs kdiff.py,
# leaves its output and status in the work directory and powers off.
# kdiff_uml_work (the work directory) comes from the kernel command line.
w=$kdiff_uml_work
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

kdiff_in_guest() {
  mount -t proc proc /proc && mount -t sysfs sysfs /sys && mount -t tmpfs tmpfs /run || return 2
  # /run hides the host's /run (ip netns keeps its names in /run/netns);
  # temporary files go to /run/tmp, never to the host's /tmp.
  mkdir -p /run/tmp /run/kmod/lib && ln -s /usr/lib/uml/modules /run/kmod/lib/modules || return 2
  for m in ipv6 veth vrf xfrm_user; do
    modprobe -d /run/kmod "$m" || echo "guest: modprobe $m failed"
  done
  . "$w/env"
  # Unbuffered: what kdiff printed survives a kill at KDIFF_UML_TIMEOUT.
  export TMPDIR=/run/tmp HOME=/run/tmp PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
  echo "guest: kernel $(uname -r), $(nproc) CPU"
  python3 "$kdiff" "$fibnicd" "$bar"
}

kdiff_in_guest > "$w/out" 2>&1
echo $? > "$w/rc"
sync
poweroff -f
