#!/usr/bin/env bash
# Runs a command inside a virtual machine booted from Debian 12's own kernel
# (scripts/setup/guest-kernel.sh), with this host's root shared read-only
# over 9p: the guest sees the same programs and build trees, on a kernel
# whose modules the test chooses (vrf.ko, for one). Works on any x86 host,
# AMX or not (user-mode Linux 6.1 panics at init where the CPU has AMX state:
# "ptrace set fp regs failed").
#   tests/vm/run.sh COMMAND [ARG...]
# Environment:
#   VM_MODULES   modules the guest loads before COMMAND (e.g. "veth vrf")
#   VM_PASS      extended regex of environment variable names passed to COMMAND
#   VM_TIMEOUT   seconds before the guest is killed (default 600; exit 124)
#   VM_MEM       guest memory (default 1G); VM_CPUS (default 2)
#   VM_ACCEL     tcg (default): software emulation, on any x86 host; or kvm,
#                several times faster where /dev/kvm runs stock kernels. On
#                these machines /dev/kvm is PVM (kvm-pvm in the host's log),
#                which boots only kernels built as PVM guests: Debian's hangs
#                after "Probing EDD", so kvm is not the default.
#   FIBNIC_GUEST_KERNEL  the unpacked kernel (default /var/cache/fibnic/guest-kernel)
# COMMAND's output is streamed here; its exit status is this script's.
# Fails with a reason (exit 2) when there is no kernel, no qemu or no KVM asked
# for — never a silent skip. The guest writes only to its tmpfs and to a
# fresh work folder under $TMPDIR (its /run/vm, removed at the end; VM_KEEP=1
# keeps it), whose guest path COMMAND finds in $VM_WORK.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: $0 COMMAND [ARG...]" >&2; exit 2; }
no() { echo "tests/vm: cannot run the guest: $*" >&2; exit 2; }
kdir=${FIBNIC_GUEST_KERNEL:-/var/cache/fibnic/guest-kernel}
[ -f "$kdir/ready" ] || no "no guest kernel in $kdir (scripts/setup/guest-kernel.sh unpacks Debian's; scripts/test.sh runs it)"
read -r _ kver <"$kdir/ready"
qemu=$(command -v qemu-system-x86_64) || no "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
busybox=$(command -v busybox) || no "busybox missing (apt-get install busybox-static)"
# The initramfs has no libraries: busybox must be the static build.
! ldd "$busybox" >/dev/null 2>&1 || no "$busybox is not static (apt-get install busybox-static)"
accel=${VM_ACCEL:-tcg}
cpu=(-cpu max)
if [ "$accel" = kvm ]; then
  [ -c /dev/kvm ] || no "VM_ACCEL=kvm and no /dev/kvm on this host (VM_ACCEL=tcg emulates)"
  [ -r /dev/kvm ] && [ -w /dev/kvm ] || no "/dev/kvm is not readable and writable by $(id -un)"
  cpu=(-cpu host)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/fibnic-vm.XXXXXX")
qpid= tailpid=
cleanup() {
  [ -z "$qpid" ] || { kill -KILL "$qpid" 2>/dev/null || true; wait "$qpid" 2>/dev/null || true; }
  [ -z "$tailpid" ] || kill "$tailpid" 2>/dev/null || true
  [ -n "${VM_KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# The job: the environment COMMAND gets, then COMMAND itself.
{
  if [ -n "${VM_PASS:-}" ]; then
    for v in $(compgen -e | grep -E "^(${VM_PASS})\$" || true); do printf 'export %s=%q\n' "$v" "${!v}"; done
  fi
  printf 'modules=%q\n' "${VM_MODULES:-}"
  printf 'kmod_dir=%q\n' "$kdir"
} >"$work/job.env"
{ printf 'cd %q || exit 2\n' "$PWD"; printf '%q ' "$@"; } >"$work/job.cmd"
: >"$work/out"

# The initramfs: a static busybox, the modules a 9p root needs, and init.sh.
ird=$work/initramfs
mkdir -p "$ird/bin" "$ird/lib/modules/$kver" "$ird/proc" "$ird/sys" "$ird/dev" "$ird/root"
cp "$busybox" "$ird/bin/busybox"
cp "$here/init.sh" "$ird/init"
mods=$kdir/lib/modules/$kver
cp "$mods/modules.dep" "$ird/lib/modules/$kver/"
for m in kernel/fs/9p/9p.ko kernel/net/9p/9pnet_virtio.ko kernel/drivers/virtio/virtio_pci.ko; do
  for f in $m $(awk -v m="$m:" '$1 == m { $1 = ""; print }' "$mods/modules.dep"); do
    mkdir -p "$ird/lib/modules/$kver/$(dirname "$f")"
    cp "$mods/$f" "$ird/lib/modules/$kver/$f"
  done
done
(cd "$ird" && find . | "$busybox" cpio -o -H newc 2>/dev/null) >"$work/initrd"
rm -rf "$ird"

mem=${VM_MEM:-1G}
"$qemu" -machine q35,accel="$accel" "${cpu[@]}" -smp "${VM_CPUS:-2}" -m "$mem" \
  -kernel "$kdir/boot/vmlinuz-$kver" -initrd "$work/initrd" \
  -append "console=ttyS0 panic=-1 loglevel=${VM_LOGLEVEL:-4} vm_guest=$here/guest.sh" \
  -virtfs local,path=/,mount_tag=hostroot,security_model=passthrough,readonly=on,multidevs=remap \
  -virtfs local,path="$work",mount_tag=work,security_model=passthrough \
  -display none -monitor none -serial file:"$work/console" -no-reboot \
  -nodefaults -device virtio-rng-pci </dev/null >"$work/qemu.log" 2>&1 &
qpid=$!
tail -n +1 -f --pid="$qpid" "$work/out" &
tailpid=$!
deadline=$((SECONDS + ${VM_TIMEOUT:-600}))
while kill -0 "$qpid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.5; done
status=0
if kill -0 "$qpid" 2>/dev/null; then
  status=124
  kill -KILL "$qpid" 2>/dev/null || true
fi
wait "$qpid" 2>/dev/null || [ "$status" = 124 ] || status=$?
qpid=
wait "$tailpid" 2>/dev/null || true
tailpid=
if [ "$status" != 124 ] && [ -s "$work/rc" ]; then
  exit "$(cat "$work/rc")"
fi
echo "tests/vm: the guest ended without COMMAND's status (qemu status $status$([ "$status" = 124 ] && echo ": VM_TIMEOUT ran out"))"
echo "--- qemu:"; tail -n 5 "$work/qemu.log"
echo "--- the guest's console:"; tail -n 25 "$work/console"
exit $((status == 124 ? 124 : 1))
