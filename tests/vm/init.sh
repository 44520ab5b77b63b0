#!/bin/busybox sh
# The initramfs's init (tests/vm/run.sh builds it): loads what a 9p root
# needs, mounts the host's root read-only and hands over to guest.sh there.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in virtio_pci 9pnet_virtio 9p; do modprobe "$m" || echo "vm init: modprobe $m failed"; done
if ! mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 hostroot /root; then
  echo "vm init: cannot mount the host's root"
  echo o >/proc/sysrq-trigger
fi
umount /sys /proc
mount --move /dev /root/dev 2>/dev/null || umount /dev
exec switch_root /root /bin/bash "$vm_guest"
