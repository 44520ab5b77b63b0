#!/bin/bash
# The guest's first process once on the host's (read-only) root: mounts what
# a test needs, writable only in tmpfs and in the shared work folder, loads
# the job's modules from the unpacked guest kernel, runs the job and leaves
# its output (out) and status (rc) in the work folder, then powers off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
off() { sync; busybox poweroff -f; sleep 10; }

mount -t proc proc /proc && mount -t sysfs sysfs /sys || off
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm 2>/dev/null
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
# /run hides the host's (ip netns keeps its names in /run/netns); /tmp and
# HOME are the guest's own.
mount -t tmpfs tmpfs /run && mount -t tmpfs tmpfs /tmp || off
# The work folder, at a path of the guest's own (the host's may be under /tmp).
w=/run/vm
mkdir -p "$w" && mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 work "$w" || { echo "guest: cannot mount the work folder"; off; }

job() {
  . "$w/job.env"
  for m in $modules; do
    modprobe -d "$kmod_dir" "$m" || echo "guest: modprobe $m failed"
  done
  ip link set lo up
  export TMPDIR=/tmp HOME=/tmp PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 VM_WORK=$w
  echo "guest: kernel $(uname -r), $(nproc) CPU"
  bash "$w/job.cmd"
}
job >"$w/out" 2>&1
echo $? >"$w/rc"
off
