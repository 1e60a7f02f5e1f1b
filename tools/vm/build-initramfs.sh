#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Build the VM harness's guest image from the host's own programs, for the
# Debian kernel KVER names (tools/vm/kver.sh: a release or a series such as
# 6.1 or 6.12; default 6.1), unpacked under build/vm/kernels/root/ (image and
# modules: tools/vm/fetch-kernels.sh, never the host's /boot), in
# build/vm/<release>/:
#   vmlinux             the uncompressed kernel (booted via PVH)
#   initramfs.cpio.gz   busybox, bash, that kernel's modules (virtio, 9p, veth,
#                                ib_core/ib_uverbs/rdma_rxe, the CM modules,
#                                nvme-rdma/nvmet-rdma, tc's clsact,
#                                u32, pedit and csum),
#                                iproute2 (ip, tc), rdma-core,
#                                perftest, tcpdump and every library they need
#
#   tools/vm/build-initramfs.sh [-f] [FILE|DIR ...]
#
# Extra FILEs/DIRs (e.g. build/bin/roxe-pcap, kmod/roxe.ko) are copied to the
# same absolute path in the guest, ELF files with their shared libraries.
# Nothing is rebuilt when no input changed (-f forces a rebuild): the inputs'
# names, sizes and mtimes are hashed into build/vm/initramfs.stamp.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)

# Kernel modules the guest loads, in this order (dependencies first are added
# automatically from modules.dep). rxe asks the crypto API for "crc32", which
# would need modprobe inside the guest: load the providers up front. A "?"
# in front: where the kernel has the module (from 6.15 rxe and libcrc32c's
# users call the crc32 library, and the crypto modules crc32_generic,
# crc32-pclmul and crc32c_generic are gone: 7.3 has none of them).
modules=(
	virtio_pci virtio_net 9pnet_virtio 9p veth
	# QEMU's 82576 (run.sh --nic igb)
	igb
	?crc32_generic ?crc32-pclmul
	ib_core ib_uverbs rdma_rxe
	# connection management over QP1 MADs: rdma_cm for perftest -R
	ib_cm iw_cm rdma_cm rdma_ucm
	# NVMe over RDMA, host and target: the kernel's storage ULPs
	nvme-rdma nvmet-rdma
	# tc marking frames CE on a veth (kmod_interop's CNP case); act_csum
	# needs libcrc32c, which needs a crc32c provider first
	?crc32c_generic sch_ingress cls_u32 act_pedit act_csum
)

# Loaded when the kernel has them: xsk_diag lists AF_XDP sockets for
# roxectl status (6.12; 6.1's config leaves it out).
optional_modules=(xsk_diag)

# What a guest that boots systemd from the host's root (run.sh --systemd)
# loads before it switches root, and nothing else (the booted root's
# modprobe loads the rest): the NIC, the 9p shares and overlayfs (a tmpfs
# over the read-only root). overlay is in the image for that alone
# (/etc/roxe-vm/modules.boot lists this set, /etc/roxe-vm/modules the
# others' load order).
boot_modules=(virtio_pci virtio_net 9pnet_virtio 9p overlay)
# In the image but not loaded at boot (a test modprobes them): the SCSI
# RDMA ULPs and LIO, NFS over RDMA (client, server and rpcrdma) and RDS
# over RDMA for kmod_ulp.sh, which would otherwise attach to every test's
# devices.
ondemand_modules=(
	sd_mod ib_srp ib_srpt target_core_file ib_iser ib_isert
	nfsd nfsv3 nfsv4 rpcrdma ?rds_rdma
)

# Host programs copied with their libraries. bash runs the test scripts (the
# busybox shell prefers its own applets, e.g. a limited `ip`).
programs=(
	/usr/bin/busybox /usr/bin/bash
	# kmod's insmod: busybox's loads a module whose init failed a second
	# time (finit_module, then init_module on any error), a rerun no test
	# may get
	/usr/sbin/insmod
	/usr/sbin/ip /usr/sbin/tc /usr/bin/rdma /usr/bin/tcpdump /usr/sbin/ethtool
	/usr/bin/ibv_devices /usr/bin/ibv_devinfo /usr/bin/ibv_asyncwatch
	/usr/bin/ibv_rc_pingpong /usr/bin/ibv_uc_pingpong /usr/bin/ibv_ud_pingpong
	/usr/bin/ibv_srq_pingpong /usr/bin/ibv_xsrq_pingpong
	/usr/bin/ib_send_bw /usr/bin/ib_write_bw /usr/bin/ib_read_bw
	/usr/bin/ib_atomic_bw /usr/bin/ib_send_lat /usr/bin/ib_write_lat
	/usr/bin/ib_read_lat /usr/bin/ib_atomic_lat
	# the rxe verbs provider is dlopen()ed: ldd of the tools cannot find it
	/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so
	/etc/libibverbs.d/rxe.driver
)

die() { echo "build-initramfs: $*" >&2; exit 1; }

force=0
if [ "${1:-}" = "-f" ]; then force=1; shift; fi
extras=()
for f in "$@"; do
	[ -e "$f" ] || die "no such file: $f"
	extras+=("$(realpath -s "$f")")
done

# The guest's kernel: KVER by name (a series picks its newest release),
# from the tree fetch-kernels.sh unpacked. moddir is where its modules are
# on the host, gmoddir where the guest finds them (its own /lib/modules).
pick_kernel() {
	local kroot
	KVER=$("$here/kver.sh" "${KVER:-6.1}") || die "no kernel ${KVER:-6.1}"
	kroot=$("$here/kver.sh" --root)
	vmlinuz=$kroot/boot/vmlinuz-$KVER
	moddir=$kroot/lib/modules/$KVER
	gmoddir=/lib/modules/$KVER
	out=${ROXE_VM_BUILD:-$top/build/vm/$KVER}
	[ -r "$vmlinuz" ] || die "$vmlinuz is not readable"
}

# bzImage = setup code + decompressor + a compressed vmlinux: xz (6.1) or
# zstd (6.12). Try every xz and zstd magic until one decompresses to an ELF
# file.
# vmlinux.src names the image it came from (path, size, mtime): another
# image of the same release (a refetch) is extracted again.
extract_vmlinux() {
	local dst=$out/vmlinux off offs fmt src
	src=$(stat -c '%n %s %Y' "$vmlinuz")
	if [ -s "$dst" ] && [ "$(cat "$dst.src" 2>/dev/null)" = "$src" ] && [ "$force" = 0 ]; then
		return
	fi
	echo "  VMLINUX $vmlinuz"
	for fmt in xz zstd; do
		if [ $fmt = xz ]; then
			mapfile -t offs < <(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$vmlinuz" | cut -d: -f1)
		else
			command -v zstd >/dev/null || continue
			mapfile -t offs < <(LC_ALL=C grep -obUaP '\x28\xb5\x2f\xfd' "$vmlinuz" | cut -d: -f1)
		fi
		for off in "${offs[@]}"; do
			# the decompressor stops after the frame (zstd: warns of
			# the trailing bytes): tail's SIGPIPE is expected, so
			# judge by the result, not the pipeline's status
			if [ $fmt = xz ]; then
				tail -c +$((off + 1)) "$vmlinuz" |
					xz -dc --single-stream >"$dst.tmp" 2>/dev/null || true
			else
				tail -c +$((off + 1)) "$vmlinuz" |
					zstd -dcq >"$dst.tmp" 2>/dev/null || true
			fi
			if is_elf "$dst.tmp"; then
				mv "$dst.tmp" "$dst"
				echo "$src" >"$dst.src"
				return
			fi
		done
	done
	rm -f "$dst.tmp"
	die "no xz- or zstd-compressed vmlinux found in $vmlinuz"
}

# --- collecting inputs ------------------------------------------------------
declare -A seen=()
files=()          # host paths (files or symlinks) to copy, first-seen order
declare -A moddep=()
modorder=()       # module paths relative to $moddir, load order
nloaded=0         # the first nloaded of modorder: what a harness boot loads
declare -A bootset=()  # boot_modules and their dependencies (paths)

is_elf() {
	local magic=
	[ -f "$1" ] && LC_ALL=C read -r -N 4 magic <"$1" 2>/dev/null
	[ "$magic" = $'\x7fELF' ]
}

# add_path PATH: copy PATH; a symlink brings its target, an ELF its libraries.
add_path() {
	local p=$1 t lib
	[ -n "${seen[$p]:-}" ] && return
	seen[$p]=1
	files+=("$p")
	if [ -L "$p" ]; then
		t=$(readlink "$p")
		[ "${t#/}" = "$t" ] && t=$(dirname "$p")/$t
		add_path "$(realpath -ms "$t")"
	elif [ -d "$p" ]; then
		while IFS= read -r -d '' t; do add_path "$t"; done \
			< <(find "$p" -mindepth 1 -maxdepth 1 -print0 | sort -z)
	elif is_elf "$p" && [ "${p%.ko}" = "$p" ]; then
		# "libfoo.so => /path (addr)" and the loader's "/path (addr)" lines
		while read -r lib; do add_path "$lib"; done < <(ldd "$p" 2>/dev/null |
			awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
	fi
}

# add_module [?]NAME|RELPATH: the module after its modules.dep dependencies
# (?NAME: nothing when the kernel has no NAME at all).
add_module() {
	local m=$1 rel d
	if [ "${m#\?}" != "$m" ]; then
		m=${m#\?}
		[ -n "${modpath[${m//-/_}]:-}" ] || return 0
	fi
	if [ -n "${moddep[$m]+x}" ]; then
		rel=$m
	else
		rel=${modpath[${m//-/_}]:-}
		# built in on this kernel (6.12: virtio_pci): nothing to load
		[ -n "$rel" ] || [ -z "${builtin[${m//-/_}]:-}" ] || return 0
		[ -n "$rel" ] || die "module $m not found in $moddir/modules.dep"
	fi
	[ -n "${seen[mod:$rel]:-}" ] && return
	seen[mod:$rel]=1
	for d in ${moddep[$rel]}; do add_module "$d"; done
	modorder+=("$rel")
}

# boot_closure RELPATH: RELPATH (none: built in) and its dependencies into
# bootset
boot_closure() {
	local d
	[ -n "$1" ] || return 0
	bootset[$1]=1
	for d in ${moddep[$1]}; do boot_closure "$d"; done
}

collect() {
	local line rel name p
	declare -gA modpath=()
	while IFS= read -r line; do
		rel=${line%%:*}
		moddep[$rel]=${line#*:}
		name=${rel##*/}
		name=${name%.xz} name=${name%.zst} name=${name%.gz}
		name=${name%.ko}
		modpath[${name//-/_}]=$rel
	done <"$moddir/modules.dep"
	declare -gA builtin=()
	if [ -r "$moddir/modules.builtin" ]; then
		while IFS= read -r line; do
			name=${line##*/}
			name=${name%.ko}
			builtin[${name//-/_}]=1
		done <"$moddir/modules.builtin"
	fi
	for p in "${modules[@]}"; do add_module "$p"; done
	for p in "${optional_modules[@]}"; do
		[ -z "${modpath[${p//-/_}]:-}" ] || add_module "$p"
	done
	nloaded=${#modorder[@]}
	for p in "${boot_modules[@]}"; do
		add_module "$p"
		boot_closure "${modpath[${p//-/_}]:-}"
	done
	for p in "${ondemand_modules[@]}"; do add_module "$p"; done
	for p in "${programs[@]}"; do
		case "$p" in \#*) continue ;; esac
		[ -e "$p" ] || die "$p is missing: run tools/scripts/install-deps.sh"
		add_path "$p"
	done
	for p in "${extras[@]}"; do add_path "$p"; done
}

# Everything the image depends on, one line per input, for the stamp.
manifest() {
	local p
	echo "kver $KVER"
	stat -c '%n %s %Y' "$0" "$here/guest-init.sh" "$moddir/modules.dep"
	for p in "${modorder[@]}"; do stat -c '%n %s %Y' "$moddir/$p"; done
	for p in "${files[@]}"; do stat -c '%n %s %Y' "$p"; done
}

# --- staging ----------------------------------------------------------------
# plain_ko REL: REL without its compression suffix (.ko.xz -> .ko)
plain_ko() {
	local p=$1
	p=${p%.xz} p=${p%.zst} p=${p%.gz}
	echo "$p"
}

# stage_path PATH: recreate PATH (symlink or file) under $root.
stage_path() {
	local p=$1 d=$root$1
	mkdir -p "$(dirname "$d")"
	if [ -L "$p" ]; then
		ln -sfn "$(readlink "$p")" "$d"
	elif [ -d "$p" ]; then
		mkdir -p "$d"
	else
		cp --preserve=mode,timestamps "$p" "$d"
	fi
}

stage() {
	local d p a
	rm -rf "$root"
	mkdir -p "$root"/{usr/bin,usr/sbin,usr/lib,usr/lib64,dev,proc,sys,tmp,run,root,out,etc/roxe-vm}
	# usr-merged layout like the host, so ldd's /lib/... paths resolve
	for d in bin sbin lib lib64; do
		if [ -L "/$d" ]; then ln -s "$(readlink "/$d")" "$root/$d"; fi
	done
	for p in "${files[@]}"; do stage_path "$p"; done

	# busybox applets for every name no real program took
	for a in $(busybox --list-full); do
		case "$a" in linuxrc) continue ;; esac
		[ -e "$root/$a" ] || [ -L "$root/$a" ] || ln -s /usr/bin/busybox "$root/$a"
	done
	ln -sfn busybox "$root/usr/bin/sh"

	# modules, their load order and a matching modules.dep for modprobe
	# (decompressed: busybox's insmod reads plain .ko files only)
	local ko deps i=0
	: >"$root/etc/roxe-vm/modules.boot"
	for p in "${modorder[@]}"; do
		ko=$(plain_ko "$p")
		mkdir -p "$(dirname "$root$gmoddir/$ko")"
		case "$p" in
		*.ko.xz) xz -dc "$moddir/$p" >"$root$gmoddir/$ko" ;;
		*.ko.zst) zstd -dcq "$moddir/$p" >"$root$gmoddir/$ko" ;;
		*.ko.gz) gzip -dc "$moddir/$p" >"$root$gmoddir/$ko" ;;
		*) cp "$moddir/$p" "$root$gmoddir/$ko" ;;
		esac || die "cannot unpack $moddir/$p"
		deps=
		for d in ${moddep[$p]}; do deps+=" $(plain_ko "$d")"; done
		echo "$ko:$deps" >>"$root$gmoddir/modules.dep"
		[ $i -ge $nloaded ] || echo "$ko" >>"$root/etc/roxe-vm/modules"
		[ -z "${bootset[$p]:-}" ] || echo "$ko" >>"$root/etc/roxe-vm/modules.boot"
		i=$((i + 1))
	done
	echo "$KVER" >"$root/etc/roxe-vm/kver"

	# tcpdump drops privileges to its own user unless told -Z root
	printf 'root:x:0:0:root:/root:/bin/bash\ntcpdump:x:100:100::/:/bin/false\n' >"$root/etc/passwd"
	printf 'root:x:0:\ntcpdump:x:100:\n' >"$root/etc/group"
	printf '127.0.0.1 localhost\n::1 localhost\n' >"$root/etc/hosts"
	printf 'hosts: files\n' >"$root/etc/nsswitch.conf"
	install -m 0755 "$here/guest-init.sh" "$root/init"
}

pack() {
	(cd "$root" && find . -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc --owner=0:0 --quiet) | gzip -1 >"$out/initramfs.cpio.gz.tmp"
	mv "$out/initramfs.cpio.gz.tmp" "$out/initramfs.cpio.gz"
}

main() {
	pick_kernel
	mkdir -p "$out"
	root=$out/initramfs.d
	extract_vmlinux
	collect
	local sum
	sum=$(manifest | sha256sum | cut -d' ' -f1)
	if [ "$force" = 0 ] && [ -s "$out/initramfs.cpio.gz" ] &&
		[ "$(cat "$out/initramfs.stamp" 2>/dev/null)" = "$sum" ]; then
		return
	fi
	echo "  INITRAMFS $out/initramfs.cpio.gz (${#files[@]} files, ${#modorder[@]} modules)"
	stage
	pack
	echo "$sum" >"$out/initramfs.stamp"
}

main
