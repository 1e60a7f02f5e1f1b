#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# /init of the VM harness's guest (busybox sh as PID 1). Mounts the pseudo
# file systems, loads the modules, configures eth0, mounts the host's results
# directory (9p tag "roxeout") on /out, runs /roxe/test.sh (from the per-run
# overlay that tools/vm/run.sh appends to the initramfs) and powers off.
# Busybox's shell prefers its applets over $PATH: real programs by path.
# With ROXE_VM_BOOT=systemd (run.sh --systemd) it boots systemd instead
# (boot_systemd below).
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
# LIST: /etc/roxe-vm/modules, or modules.boot for systemd's boot.
load_modules() {
	kver=$(cat /etc/roxe-vm/kver)
	while read -r rel; do
		insmod "/lib/modules/$kver/$rel" || log "insmod $rel failed"
	done <"${1:-/etc/roxe-vm/modules}"
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

# ROXE_VM_BOOT=systemd: systemd as PID 1 in the host's root, made
# writable: the root (9p tag "hostroot", read-only) under an overlayfs
# whose upper directory is a tmpfs, /run/roxe-vm/rw/upper once booted (the
# lower one /run/roxe-vm/ro): every file the guest writes, creates or
# deletes in its root is there, and the host sees none of it. Only the modules to get there are loaded here
# (modules.boot); the root's /lib/modules/<release> is a copy of
# $ROXE_VM_MODULES/<release> (the host's, a module tree with its
# modules.dep: vm_module_tree in selftests/vm/vm_lib.sh), so modprobe and
# udev load the rest. systemd starts roxe-vm.target: roxe-vm-test.service
# runs /roxe/test.sh (as /run/roxe-vm/test.sh, its output on the console,
# $ROXE_VM_OUT=/run/roxe-vm/out the 9p share), writes its exit code there
# and powers off. Units and files of the harness are all under /run,
# outside what the root keeps: the host's timers and NTP client are masked
# there, and so is what a first boot after an update does; /tmp is a
# tmpfs.
boot_systemd() {
	r=/sysroot rw=/sysroot.rw ro=/sysroot.ro
	load_modules /etc/roxe-vm/modules.boot
	mkdir -p $r $rw $ro
	mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=524288,cache=none hostroot $ro ||
		{ log "no hostroot 9p share"; return 1; }
	mount -t tmpfs -o mode=0755 tmpfs $rw
	mkdir -p $rw/upper $rw/work
	mount -t overlay -o lowerdir=$ro,upperdir=$rw/upper,workdir=$rw/work overlay $r ||
		{ log "cannot mount the overlay root"; return 1; }
	kver=$(cat /etc/roxe-vm/kver)
	if [ -n "${ROXE_VM_MODULES:-}" ]; then
		mkdir -p "$r/lib/modules/$kver"
		cp -a "$r$ROXE_VM_MODULES/$kver/." "$r/lib/modules/$kver/" ||
			{ log "cannot copy $ROXE_VM_MODULES/$kver"; return 1; }
	fi
	mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs $r/run
	# the host's /tmp stays the host's: systemd-tmpfiles --boot would
	# empty it (tmp.conf's D line), a whiteout each over 9p; but a tree
	# the test runs from there (ROXE_TOP: a CI clone) is kept in view
	case "${ROXE_TOP:-}" in
	/tmp/?*) mkdir -p /top && mount --bind "$r$ROXE_TOP" /top ||
			{ log "cannot keep $ROXE_TOP"; return 1; } ;;
	esac
	mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs $r/tmp
	case "${ROXE_TOP:-}" in
	/tmp/?*) mkdir -p "$r$ROXE_TOP" && mount --move /top "$r$ROXE_TOP" ||
			{ log "cannot keep $ROXE_TOP"; return 1; } ;;
	esac
	mkdir -p $r/run/roxe-vm/out $r/run/roxe-vm/rw $r/run/roxe-vm/ro $r/run/systemd/system
	mount --move $rw $r/run/roxe-vm/rw
	mount --move $ro $r/run/roxe-vm/ro
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288,cache=none \
		roxeout $r/run/roxe-vm/out || log "no 9p share: results only on the console"
	cp /roxe/env $r/run/roxe-vm/env
	[ ! -f /roxe/test.sh ] || cp /roxe/test.sh $r/run/roxe-vm/test.sh
	cat >$r/run/roxe-vm/run-test <<-'EOF'
	#!/bin/bash
	. /run/roxe-vm/env
	export ROXE_VM_GUEST=1 ROXE_VM_OUT=/run/roxe-vm/out HOME=/root
	echo "roxe-vm: running test script under $(readlink /proc/1/exe)"
	cd /tmp && /usr/bin/bash /run/roxe-vm/test.sh
	rc=$?
	echo "roxe-vm: test script exited with $rc"
	grep -q ' /run/roxe-vm/out 9p ' /proc/mounts && echo "$rc" >/run/roxe-vm/out/exit-code
	echo "ROXE-VM-EXIT=$rc"
	sync
	EOF
	chmod 755 $r/run/roxe-vm/run-test
	cat >$r/run/systemd/system/roxe-vm.target <<-'EOF'
	[Unit]
	Description=roxe VM harness: the test script
	Requires=roxe-vm-test.service
	After=roxe-vm-test.service
	AllowIsolate=yes
	EOF
	cat >$r/run/systemd/system/roxe-vm-test.service <<-'EOF'
	[Unit]
	Description=roxe VM harness: /roxe/test.sh, then power off
	After=basic.target
	SuccessAction=poweroff-force
	FailureAction=poweroff-force
	[Service]
	Type=oneshot
	ExecStart=/run/roxe-vm/run-test
	StandardOutput=tty
	StandardError=inherit
	TTYPath=/dev/console
	EOF
	# the host's root has no /etc/.updated: the first boot after an
	# update (ConditionNeedsUpdate) would rebuild hwdb.bin, ld.so.cache
	# and the journal's catalog, minutes over 9p under TCG
	for u in timers.target systemd-timesyncd.service systemd-hwdb-update.service ldconfig.service \
		systemd-journal-catalog-update.service systemd-update-done.service; do
		ln -s /dev/null "$r/run/systemd/system/$u"
	done
	for m in dev proc sys; do mount --move /$m $r/$m; done
	read -r up _ <$r/proc/uptime
	log "switching root to systemd at $up s"
	exec switch_root $r /lib/systemd/systemd --unit=roxe-vm.target
}

# Settings from the per-run overlay (ROXE_VM_MODE, addresses, ROXE_TOP).
ROXE_VM_MODE=shell
# shellcheck disable=SC1091 # written by run.sh
[ -f /roxe/env ] && . /roxe/env
export ROXE_VM_GUEST=1 ROXE_VM_OUT=/out

mount_all
if [ "${ROXE_VM_BOOT:-}" = systemd ]; then
	boot_systemd
	log "cannot boot systemd"
	echo "ROXE-VM-EXIT=125"
	poweroff -f
fi
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
