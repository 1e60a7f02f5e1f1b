#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# /init of the VM harness's guest (busybox sh as PID 1). Mounts the pseudo
# file systems, loads the modules, configures eth0, mounts the host's results
# directory (9p tag "roxeout") on /out, runs /roxe/test.sh (from the per-run
# overlay that tools/vm/run.sh appends to the initramfs) and powers off.
# Busybox's shell prefers its applets over $PATH: real programs by path.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM="${TERM:-linux}"
IP=/usr/sbin/ip

log() { echo "roxe-vm: $*"; }

mount_all() {
	mount -t proc proc /proc
	mount -t sysfs sysfs /sys
	mount -t devtmpfs devtmpfs /dev
	mkdir -p /dev/pts /dev/shm
	mount -t devpts devpts /dev/pts
	mount -t tmpfs tmpfs /dev/shm
	# /tmp stays the initramfs's own (writable) directory: files the
	# harness added from a tree under /tmp (a CI clone) live there.
	mkdir -p /tmp && chmod 1777 /tmp
	mount -t tmpfs tmpfs /run
	# tcpdump and libbpf users expect these
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	mount -t bpf bpf /sys/fs/bpf 2>/dev/null
	hostname roxevm
}

# One insmod per line of /etc/roxe-vm/modules (dependencies come first),
# from the image's own /lib/modules/<release> (build-initramfs.sh put them
# there from build/vm/kernels/; the host's are never used).
# A failure is reported, not fatal: e.g. crc32-pclmul needs a CPU with
# PCLMULQDQ and rxe works with crc32_generic alone.
load_modules() {
	kver=$(cat /etc/roxe-vm/kver)
	while read -r rel; do
		insmod "/lib/modules/$kver/$rel" || log "insmod $rel failed"
	done </etc/roxe-vm/modules
}

setup_net() {
	$IP link set lo up
	[ -n "$ROXE_VM_GUEST_ADDR" ] || return 0
	if ! $IP link show eth0 >/dev/null 2>&1; then
		log "no eth0"
		return 0
	fi
	$IP addr add "$ROXE_VM_GUEST_ADDR/${ROXE_VM_PREFIX:-24}" dev eth0
	$IP link set eth0 up
}

mount_out() {
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288,cache=none \
		roxeout /out 2>/dev/null || log "no 9p share: results only on the console"
}

# Settings from the per-run overlay (ROXE_VM_MODE, addresses, ROXE_TOP).
ROXE_VM_MODE=shell
# shellcheck disable=SC1091 # written by run.sh
[ -f /roxe/env ] && . /roxe/env
export ROXE_VM_GUEST=1 ROXE_VM_OUT=/out

mount_all
load_modules
setup_net
mount_out

rc=0
if [ -f /roxe/test.sh ]; then
	log "running test script"
	cd /tmp && /usr/bin/bash /roxe/test.sh
	rc=$?
	log "test script exited with $rc"
	if grep -q ' /out 9p ' /proc/mounts; then echo "$rc" >/out/exit-code; fi
	# the host falls back to this marker when /out is not shared
	echo "ROXE-VM-EXIT=$rc"
fi

if [ "$ROXE_VM_MODE" = shell ]; then
	log "interactive shell; exit it (or press Ctrl-D) to power off"
	PS1='roxevm:\w# ' setsid cttyhack /usr/bin/bash
fi

sync
umount /out 2>/dev/null
poweroff -f
