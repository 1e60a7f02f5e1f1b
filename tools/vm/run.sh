#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Boot a Debian kernel under QEMU (TCG) with the harness initramfs, run a
# test script inside the guest and exit with its exit code. KVER picks the
# kernel by name (tools/vm/kver.sh: 6.1, the default, 6.12 or a release),
# fetched under build/vm/kernels/ when missing (tools/vm/fetch-kernels.sh).
#
#   tools/vm/run.sh --script FILE [options]     run FILE (bash) in the guest
#   tools/vm/run.sh --shell [options]           interactive guest shell
#
# Options:
#   --script FILE   guest-side script, run as root with bash after boot
#   --shell         interactive shell on the console (after --script, if any);
#                   Ctrl-A X kills QEMU
#   --timeout SEC   hard limit for the whole VM run (default 240; none with
#                   --shell unless given); a timeout exits 124
#   --host-cmd CMD  run CMD with bash on the host, inside the VM's network
#                   namespace, while the guest runs (output: OUT/host-cmd.log)
#   --out DIR       results directory, shared with the guest as /out over 9p
#                   (default build/vm/out, emptied first)
#   --add PATH      also put PATH (file or directory, ELF files with their
#                   libraries) into the image at the same path; repeatable
#   --env NAME=VAL  export NAME to the guest script; repeatable
#   --queues N      the guest NIC (virtio-net) with N queue pairs (mq=on, a
#                   multi-queue tap); the guest still starts with one in
#                   use: `ethtool -L eth0 combined N` turns the rest on
#   --systemd       boot systemd as PID 1 from the host's root (shared
#                   read-only over 9p, writable through a tmpfs overlay in
#                   the guest) and run the script as a unit
#                   (tools/vm/guest-init.sh's boot_systemd; --env
#                   ROXE_VM_MODULES=DIR for the root's /lib/modules)
#   --pair          a second guest NIC: eth1 on tap1, joined to eth0's tap0 by
#                   a bridge (br0) in the VM's namespace, so that the
#                   guest's two NICs face each other back to back (each
#                   with --queues N pairs; MTU 9000 on taps and bridge); no
#                   host address then, nothing on the host side talks
#   --dma-api       the guest NICs with iommu_platform=on and
#                   disable-legacy=on (modern virtio only,
#                   VIRTIO_F_ACCESS_PLATFORM): the guest's virtio rings use
#                   the DMA API, which virtio_net's AF_XDP zero-copy needs
#                   (its pool enable refuses a ring without it, EPERM)
#   --nic igb       the guest NICs are QEMU's emulated 82576 (igb; AF_XDP
#                   zero-copy from Linux 6.14) instead of virtio-net: run by
#                   bookworm-backports' QEMU (tools/vm/fetch-qemu.sh, fetched
#                   when missing), as Debian 12's QEMU 7.2 has no igb; the
#                   guest's queues: `ethtool -L`, as many as it has vCPUs
#                   (--queues is virtio-net's, --dma-api too). --nic virtio,
#                   the default, runs the host's QEMU (one vCPU)
#   --smp N         N vCPUs (default 1, 1..4): under TCG one is faster for
#                   the tests; the benchmarks compare with more. More than
#                   one: run by bookworm-backports' QEMU (as --nic igb):
#                   Debian 12's QEMU 7.2 runs stale kernel text on one vCPU
#                   after another patched it (multi-threaded TCG)
#   --pcap FILE     record every frame between the guest's eth0 and tap0 in
#                   FILE (QEMU's filter-dump: AF_XDP traffic on tap0 bypasses
#                   the host's packet sockets, so tcpdump there misses it)
#   --middle        a hop between the guest and the host engine: the host
#                   address moves to host0, a veth whose peer mid0 a bridge
#                   joins to tap0 (ROXE_VM_TAP=host0 for --host-cmd)
#   --faults SPEC   --middle with faultwire instead of the bridge: RoCE v2
#                   frames are dropped, reordered, duplicated, corrupted each
#                   way. SPEC: drop=P,reorder=P,dup=P,corrupt=P,seed=N with P
#                   in percent ("2", "0.5%") or "<n>ppm"; counts in
#                   OUT/faultwire.log
#   -q, --quiet     console only to OUT/console.log, not to stdout
#
# Network: a namespace roxevm-<pid> holds tap0 (10.77.0.1/24); the guest's
# eth0 (virtio-net) is 10.77.0.2/24. Nothing else is configured anywhere.
# --middle: tap0 has no address; 10.77.0.1/24 is on host0, its veth peer mid0
# and tap0 are joined by a bridge (br0) or faultwire, MTU 9000 on the hop.
# Exit: the guest script's code; 124 timeout; 125 harness or boot failure.
# A run whose guest NIC stopped transmitting (the guest kernel's NETDEV
# WATCHDOG on its console) fails (125) and says so; it is never run again:
# a rerun would turn a failure into a pass. A failed run's last word, with
# the console's first line that says why (a panic, an oops, ...), goes to
# stderr and OUT/vm-verdict.txt, for the test to quote.
# Namespace, tap, QEMU and the host command are torn down on every exit.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$top/build/vm

host_addr=10.77.0.1
guest_addr=10.77.0.2
prefix=24
guest_mac=52:54:00:77:00:02

img='' script='' shell=0 timeout='' host_cmd='' out='' quiet=0 pcap=''
middle='' fw_args=() fw_spec='' queues=1 smp=1 systemd=0 pair=0 dma_api=0 nic=virtio
adds=() envs=()
# --middle: the host engine's interface, the hop's end towards it, and the
# hop's MTU (faultwire forwards frames of up to 9216 bytes)
host_if=tap0
mid_if=mid0
mid_mtu=9000

usage() { sed -n '/^# Boot/,/^set -e/{/^set -e/d;s/^# \{0,1\}//;p}' "$0"; exit "${1:-0}"; }
die() { echo "vm: $*" >&2; exit 125; }

parse_args() {
	while [ $# -gt 0 ]; do
		case "$1" in
		--script) script=${2:?--script needs a file}; shift ;;
		--shell) shell=1 ;;
		--timeout) timeout=${2:?--timeout needs seconds}; shift ;;
		--host-cmd) host_cmd=${2:?--host-cmd needs a command}; shift ;;
		--out) out=${2:?--out needs a directory}; shift ;;
		--add) adds+=("${2:?--add needs a path}"); shift ;;
		--env) envs+=("${2:?--env needs NAME=VALUE}"); shift ;;
		--pcap) pcap=${2:?--pcap needs a file}; shift ;;
		--queues) queues=${2:?--queues needs a count}; shift ;;
		--smp) smp=${2:?--smp needs a count}; shift ;;
		--systemd) systemd=1 ;;
		--pair) pair=1 ;;
		--dma-api) dma_api=1 ;;
		--nic) nic=${2:?--nic needs virtio or igb}; shift ;;
		--middle) middle=${middle:-bridge} ;;
		--faults) middle=faultwire fw_spec=${2?--faults needs a SPEC}; shift ;;
		-q | --quiet) quiet=1 ;;
		-h | --help) usage 0 ;;
		*) echo "vm: unknown option $1" >&2; usage 125 >&2 ;;
		esac
		shift
	done
	[ -n "$script" ] || [ "$shell" = 1 ] || die "need --script FILE or --shell"
	[ -z "$script" ] || [ -r "$script" ] || die "cannot read $script"
	[[ "${timeout:-0}" =~ ^[0-9]+$ ]] || die "--timeout wants whole seconds"
	[[ "$queues" =~ ^[1-8]$ ]] || die "--queues wants 1..8"
	[[ "$smp" =~ ^[1-4]$ ]] || die "--smp wants 1..4"
	if [ -z "$timeout" ]; then
		if [ "$shell" = 1 ]; then timeout=0; else timeout=240; fi
	fi
	[ "$pair" = 0 ] || [ -z "$middle$pcap" ] || die "--pair goes with neither --middle, --faults nor --pcap"
	case "$nic" in
	virtio) ;;
	igb) [ "$queues" = 1 ] && [ "$dma_api" = 0 ] || die "--queues and --dma-api are virtio-net's, not igb's" ;;
	*) die "--nic wants virtio or igb" ;;
	esac
	[ "$middle" != faultwire ] || parse_faults "$fw_spec"
	[ -z "$middle" ] || host_if=host0
}

# "2", "2%", "0.5%" (percent) or "20000ppm" -> parts per million
to_ppm() {
	case "$1" in
	*ppm) [[ "${1%ppm}" =~ ^[0-9]+$ ]] && echo "${1%ppm}" ;;
	*) [[ "${1%\%}" =~ ^[0-9]+(\.[0-9]+)?$ ]] &&
		awk -v p="${1%\%}" 'BEGIN { v = int(p * 10000 + 0.5); if (v > 1000000) exit 1; print v }' ;;
	esac
}

# --faults SPEC -> faultwire's options
parse_faults() {
	local kv k v p
	local IFS=,
	for kv in $1; do
		[ -n "$kv" ] || continue
		k=${kv%%=*} v=${kv#*=}
		[ "$k" != "$kv" ] || die "--faults: want NAME=VALUE, got $kv"
		case "$k" in
		drop | dup | reorder | corrupt)
			p=$(to_ppm "$v") || die "--faults: $k=$v is not a rate (2, 0.5%, 20000ppm)"
			fw_args+=("--$k" "$p") ;;
		seed)
			[[ "$v" =~ ^[0-9]+$ ]] || die "--faults: seed=$v is not a number"
			fw_args+=(--seed "$v") ;;
		*) die "--faults: unknown fault $k (drop, reorder, dup, corrupt, seed)" ;;
		esac
	done
}

check_host() {
	[ "$(id -u)" = 0 ] || die "needs root (network namespace, tap)"
	command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing: run tools/scripts/install-deps.sh"
	if [ "$nic" = igb ] || [ "$smp" -gt 1 ]; then
		qroot=$("$here/fetch-qemu.sh") || die "no bookworm-backports QEMU (tools/vm/fetch-qemu.sh)"
	fi
	[ -c /dev/net/tun ] || die "/dev/net/tun missing"
	if [ "$middle" = faultwire ]; then
		[ -x "$top/build/bin/faultwire" ] || die "build/bin/faultwire missing: run make"
	fi
	[ -z "$middle" ] || command -v ethtool >/dev/null || die "ethtool missing: run tools/scripts/install-deps.sh"
}

# --- teardown ---------------------------------------------------------------
ns='' qemu_pid='' host_pid='' fw_pid='' tmp='' qroot=''

# shellcheck disable=SC2317 # reached through the EXIT trap
# stop_pid PID|-PGID: TERM, then KILL after 3 s
stop_pid() {
	local target=$1 pid=${1#-} _
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM -- "$target" 2>/dev/null || true
	for _ in $(seq 30); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL -- "$target" 2>/dev/null || true
}

# shellcheck disable=SC2317 # reached through the EXIT trap
cleanup() {
	local pid
	trap - EXIT INT TERM
	set +e
	[ -n "$qemu_pid" ] && stop_pid "$qemu_pid"
	[ -n "$host_pid" ] && stop_pid "-$host_pid"
	# faultwire prints its counts when stopped with TERM
	[ -n "$fw_pid" ] && stop_pid "$fw_pid"
	if [ -n "$ns" ]; then
		# whatever we started that is still inside the namespace
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$pid" 2>/dev/null
		done
		ip netns del "$ns" 2>/dev/null
	fi
	[ -n "$tmp" ] && rm -rf "$tmp"
	wait 2>/dev/null
}

# --- setup ------------------------------------------------------------------
prepare_out() {
	if [ -z "$out" ]; then
		out=$build/out
		rm -rf "$out"
	fi
	mkdir -p "$out"
	out=$(cd "$out" && pwd)
	rm -f "$out/exit-code" "$out/console.log" "$out/host-cmd.log" "$out/faultwire.log" \
		"$out/vm-verdict.txt"
}

# The per-run overlay (/roxe/env, /roxe/test.sh) is a second gzip'd cpio
# appended to the base initramfs: the kernel unpacks both, in order.
make_initrd() {
	local o=$tmp/overlay e
	mkdir -p "$o/roxe"
	{
		if [ "$shell" = 1 ]; then echo "ROXE_VM_MODE=shell"; else echo "ROXE_VM_MODE=test"; fi
		printf 'export ROXE_TOP=%q ROXE_VM_GUEST_ADDR=%q ROXE_VM_HOST_ADDR=%q ROXE_VM_PREFIX=%q\n' \
			"$top" "$guest_addr" "$host_addr" "$prefix"
		printf 'export ROXE_VM_MIDDLE=%q\n' "$middle"
		[ "$systemd" = 0 ] || echo "ROXE_VM_BOOT=systemd"
		for e in ${envs[@]+"${envs[@]}"}; do
			[[ "$e" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "--env wants NAME=VALUE, got $e"
			printf 'export %s=%q\n' "${e%%=*}" "${e#*=}"
		done
	} >"$o/roxe/env"
	[ -z "$script" ] || install -m 0755 "$script" "$o/roxe/test.sh"
	(cd "$o" && find . | cpio -o -H newc --owner=0:0 --quiet) | gzip -1 >"$tmp/overlay.cpio.gz"
	cat "$img/initramfs.cpio.gz" "$tmp/overlay.cpio.gz" >"$tmp/initrd"
}

# Namespaces of runs that were killed too hard to clean up (SIGKILL): no
# process left inside and no process with that pid.
sweep_stale() {
	local n
	for n in $(ip netns list | awk '$1 ~ /^roxevm-[0-9]+$/ { print $1 }'); do
		kill -0 "${n#roxevm-}" 2>/dev/null && continue
		[ -z "$(ip netns pids "$n" 2>/dev/null)" ] && ip netns del "$n"
	done
	return 0
}

setup_netns() {
	local t
	sweep_stale
	ns=roxevm-$$
	ip netns add "$ns"
	ip -n "$ns" link set lo up
	for t in tap0 $([ "$pair" = 0 ] || echo tap1); do
		if [ "$queues" -gt 1 ]; then
			ip -n "$ns" tuntap add dev "$t" mode tap multi_queue
		else
			ip -n "$ns" tuntap add dev "$t" mode tap
		fi
	done
	[ -n "$middle" ] || [ "$pair" = 1 ] || ip -n "$ns" addr add "$host_addr/$prefix" dev tap0
	ip -n "$ns" link set tap0 up
	[ -z "$middle" ] || setup_middle
	[ "$pair" = 0 ] || setup_pair
}

# --pair: tap0 (eth0) = br0 = tap1 (eth1), nothing of the host's on it
setup_pair() {
	local t
	{ ip -n "$ns" link add br0 type bridge &&
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.br0.disable_ipv6=1 \
			net.ipv6.conf.tap0.disable_ipv6=1 net.ipv6.conf.tap1.disable_ipv6=1; } ||
		die "cannot create the bridge for --pair"
	for t in tap0 tap1; do
		{ ip -n "$ns" link set "$t" mtu "$mid_mtu" && ip -n "$ns" link set "$t" master br0 &&
			ip -n "$ns" link set "$t" up; } || die "cannot put $t on br0"
	done
	ip -n "$ns" link set br0 mtu "$mid_mtu" up || die "cannot bring br0 up"
}

# --middle: tap0 (guest) = br0 or faultwire = mid0 <-veth-> host0 (engine).
# The hop's own interfaces have no address and must not answer ARP for the
# namespace's (Linux answers for any local address on any interface by
# default: the guest would learn tap0's MAC instead of host0's). Frames cross
# faultwire as plain bytes, so nothing may be left to offloads: no checksum
# offload or segmentation on the veths, and no virtio-net header on the tap
# (qemu_cmd), which keeps the guest from sending partial checksums or TSO.
setup_middle() {
	local i
	{ ip -n "$ns" link add "$host_if" type veth peer "$mid_if" &&
		ip -n "$ns" addr add "$host_addr/$prefix" dev "$host_if" &&
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.tap0.disable_ipv6=1 \
			"net.ipv6.conf.$mid_if.disable_ipv6=1" net.ipv4.conf.tap0.arp_ignore=1 \
			"net.ipv4.conf.$mid_if.arp_ignore=1"; } || die "cannot create the middle hop"
	for i in "$host_if" "$mid_if"; do
		ip netns exec "$ns" ethtool -K "$i" tx off tso off gso off gro off >/dev/null ||
			die "cannot turn offloads off on $i"
	done
	{ ip -n "$ns" link set tap0 mtu "$mid_mtu" &&
		ip -n "$ns" link set "$mid_if" mtu "$mid_mtu" up &&
		ip -n "$ns" link set "$host_if" up; } || die "cannot bring the middle hop up"
	if [ "$middle" = bridge ]; then
		{ ip -n "$ns" link add br0 type bridge &&
			ip netns exec "$ns" sysctl -qw net.ipv6.conf.br0.disable_ipv6=1 \
				net.ipv4.conf.br0.arp_ignore=1 &&
			ip -n "$ns" link set tap0 master br0 &&
			ip -n "$ns" link set "$mid_if" master br0 &&
			ip -n "$ns" link set br0 mtu "$mid_mtu" up; } || die "cannot set up the bridge"
	else
		echo "faultwire tap0 $mid_if ${fw_args[*]}" >"$out/faultwire.log"
		ip netns exec "$ns" "$top/build/bin/faultwire" tap0 "$mid_if" ${fw_args[@]+"${fw_args[@]}"} \
			>>"$out/faultwire.log" 2>&1 </dev/null &
		fw_pid=$!
		sleep 0.2
		kill -0 "$fw_pid" 2>/dev/null || die "faultwire did not start: $(tail -n1 "$out/faultwire.log")"
	fi
}

start_host_cmd() {
	[ -n "$host_cmd" ] || return 0
	ROXE_VM_NS=$ns ROXE_VM_TAP=$host_if ROXE_VM_HOST_IF=$host_if ROXE_VM_MIDDLE=$middle \
		ROXE_VM_OUT=$out ROXE_TOP=$top \
		ROXE_VM_HOST_ADDR=$host_addr ROXE_VM_GUEST_ADDR=$guest_addr \
		setsid ip netns exec "$ns" bash -c "$host_cmd" >"$out/host-cmd.log" 2>&1 </dev/null &
	host_pid=$!
}

qemu_cmd() {
	local con=stdio
	local o=${out//,/,,} # QEMU option values escape commas by doubling
	local net=tap,id=net0,ifname=tap0,script=no,downscript=no
	# QEMU 7.2's filter-dump would write the virtio-net header in front of
	# every frame: no header on the tap when recording. --middle: none
	# either, so the guest sends whole frames with their checksums done.
	[ -z "$pcap$middle" ] || net+=,vnet_hdr=off
	local dev=virtio-net-pci nicopt='' bin=qemu-system-x86_64 fw=()
	# igb, and any guest with more than one vCPU: bookworm-backports' QEMU
	# with its own firmware (pvh.bin, SeaBIOS); it loads no module here
	# (no display, no audio). QEMU 7.2's multi-threaded TCG lets a vCPU
	# run its stale translation of kernel text that another vCPU has just
	# patched: the int3 of a static key's flip, after the patching CPU has
	# put the instruction back, oopses 6.12 and 7.3 ("Oops: int3") and
	# locks 6.1 up (selftests/vm/vm_smp.sh); 10.0 rarely (below)
	if [ -n "$qroot" ]; then
		bin=$qroot/usr/bin/qemu-system-x86_64
		fw=(-L "$qroot/usr/share/qemu" -L "$qroot/usr/share/seabios")
	fi
	[ "$nic" != igb ] || dev=igb
	local nic=$dev,netdev=net0,mac=$guest_mac,romfile= addr1=''
	# the 82576 is an SR-IOV PF: its VFs take the slots 16 and 17 above
	# its own (no ARI on the i440FX's bus), where QEMU would put the
	# second NIC: the PFs in slots 8 and 10, their VFs in 24 to 27
	[ "$nic" = virtio ] || { nic+=,addr=0x8; addr1=,addr=0xa; }
	# one MSI-X vector per queue, plus config and control
	[ "$queues" = 1 ] || { net+=,queues=$queues; nicopt+=,mq=on,vectors=$((2 * queues + 2)); }
	[ "$dma_api" = 0 ] || nicopt+=,iommu_platform=on,disable-legacy=on
	nic+=$nicopt
	# --pair: eth1 like eth0 on tap1, its MAC one up
	local pair1=() net1=${net//tap0/tap1}
	[ "$pair" = 0 ] || pair1=(-netdev "${net1//id=net0/id=net1}"
		-device "$dev,netdev=net1,mac=${guest_mac%:*}:03,romfile=$nicopt$addr1")
	[ "$quiet" = 1 ] && [ "$shell" = 0 ] && con=null
	# TCG: KVM cannot run the stock kernel here; -smp 1 is faster than 2
	# for the tests (--smp);
	# -cpu max has PCLMULQDQ for crc32-pclmul. PVH entry: -kernel vmlinux.
	# More than one vCPU: single-threaded TCG. QEMU 10.0's multi-threaded
	# TCG still ran a stale int3 after a static key's flip (7.3 guest,
	# "Oops: int3" in set_next_task_fair, vm_smp.sh in CI, 2026-11-30);
	# one thread running every vCPU in turn sees each write to kernel
	# text before its next instruction (zerocopy-igb.sh: 116 s, not 108).
	local accel=tcg
	[ "$smp" = 1 ] || accel=tcg,thread=single
	# shellcheck disable=SC2054 # commas belong to QEMU's option syntax
	qemu=("$bin" ${fw[@]+"${fw[@]}"} -accel "$accel" -smp "$smp" -m 1G -cpu max
		-nographic -nodefaults -no-user-config -no-reboot
		-kernel "$img/vmlinux" -initrd "$tmp/initrd"
		-append "console=ttyS0 panic=-1 quiet"
		-chardev "$con,id=con0,mux=on,signal=off,logfile=$o/console.log"
		-serial chardev:con0 -mon chardev=con0,mode=readline
		-netdev "$net"
		-device "$nic"
		${pair1[@]+"${pair1[@]}"}
		-fsdev "local,id=fs0,path=$o,security_model=none"
		-device virtio-9p-pci,fsdev=fs0,mount_tag=roxeout)
	# --systemd: the host's root, read-only; its mounts are other devices
	# (remapped inode numbers keep them apart)
	# shellcheck disable=SC2054 # commas belong to QEMU's option syntax
	[ "$systemd" = 0 ] || qemu+=(-fsdev local,id=fs1,path=/,security_model=none,readonly=on,multidevs=remap
		-device virtio-9p-pci,fsdev=fs1,mount_tag=hostroot)
	# both directions, whole frames (jumbo ones too)
	[ -z "$pcap" ] || qemu+=(-object "filter-dump,id=dump0,netdev=net0,maxlen=65536,file=${pcap//,/,,}")
	return 0
}

# Guest result: /out/exit-code over 9p, else the console marker.
guest_rc() {
	local rc
	if [ -s "$out/exit-code" ]; then
		cat "$out/exit-code"
	elif rc=$(grep -ao 'ROXE-VM-EXIT=[0-9]*' "$out/console.log" 2>/dev/null | tail -n1) && [ -n "$rc" ]; then
		echo "${rc#*=}"
	fi
}

# The guest's virtio-net transmit queue stalled for good (its kernel's
# NETDEV WATCHDOG every 5 s): every frame it sends from then on is lost, so
# the test fails for the emulator's fault, not for what it tests. TCG on a
# loaded host can do this in the middle of a run. True when this run must
# be repeated.
nic_stalled() {
	[ "$shell" = 0 ] && grep -aq 'NETDEV WATCHDOG' "$out/console.log" 2>/dev/null
}

# The console's first line that says why a guest died or stopped: a panic,
# an oops, a kernel BUG or WARN, the OOM killer, a lockup or a stalled NIC.
# A run's last line is often all a CI log keeps, so the verdict quotes it.
console_cause() {
	local pat='Kernel panic|BUG:|Oops|general protection fault|kernel BUG at|WARNING: CPU'
	pat+='|Out of memory|soft lockup|hard LOCKUP|blocked for more than|NETDEV WATCHDOG'
	grep -a -m1 -E "$pat" "$out/console.log" 2>/dev/null | tr -d '\r' | cut -c1-200
}

# verdict TEXT: run.sh's last word on a run that failed, on stderr and in
# OUT/vm-verdict.txt for the test to quote in its own last line
verdict() {
	local cause
	cause=$(console_cause)
	echo "vm: $*${cause:+; console: $cause}" | tee "$out/vm-verdict.txt" >&2
}

# roxed or roxe.ko is in the image: roxe may drive the guest's NIC
roxe_in_guest() {
	local a
	for a in ${adds[@]+"${adds[@]}"}; do
		case "${a##*/}" in roxed | roxe.ko) return 0 ;; esac
	done
	return 1
}

main() {
	parse_args "$@"
	check_host
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	# the LD_PRELOAD linger for stock verbs programs (tools/vm/linger.c),
	# in every image so that tests with and without it share one
	[ ! -f "$top/build/lib/roxe-linger.so" ] || adds+=("$top/build/lib/roxe-linger.so")
	"$here/fetch-kernels.sh" "${KVER:-6.1}" || die "no guest kernel ${KVER:-6.1}"
	KVER=$("$here/kver.sh" "${KVER:-6.1}") || die "no guest kernel ${KVER:-6.1}"
	export KVER
	img=$build/$KVER
	"$here/build-initramfs.sh" ${adds[@]+"${adds[@]}"} || die "image build failed"
	prepare_out
	tmp=$(mktemp -d /tmp/roxevm.XXXXXX)
	make_initrd
	setup_netns
	start_host_cmd
	qemu_cmd

	local t0=$SECONDS qrc=0 rc
	local limit=(timeout -k 5 "$timeout")
	[ "$timeout" = 0 ] && limit=()
	if [ "$shell" = 1 ]; then
		# foreground: QEMU needs the terminal
		[ "$timeout" = 0 ] || limit=(timeout --foreground -k 5 "$timeout")
		ip netns exec "$ns" ${limit[@]+"${limit[@]}"} "${qemu[@]}" || qrc=$?
	else
		ip netns exec "$ns" ${limit[@]+"${limit[@]}"} "${qemu[@]}" </dev/null &
		qemu_pid=$!
		wait "$qemu_pid" || qrc=$?
		qemu_pid=
	fi
	rc=$(guest_rc)
	if [ -n "$rc" ]; then
		echo "vm: guest script exited with $rc after $((SECONDS - t0)) s (results in $out)" >&2
		# a failure with an oops on the console: say so (the guest may
		# live on after one)
		[ "$rc" = 0 ] || [ -z "$(console_cause)" ] ||
			verdict "guest script exited with $rc (console: $out/console.log)"
	elif [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
		verdict "timed out after $timeout s (console: $out/console.log)"
		rc=124
	elif [ "$shell" = 1 ] && [ -z "$script" ]; then
		rc=$qrc
	else
		verdict "no result from the guest, qemu exited with $qrc after $((SECONDS - t0)) s" \
			"(console: $out/console.log)"
		rc=125
	fi
	if nic_stalled; then
		# roxe on either side may be what stopped it: never void
		verdict "the guest's NIC stopped transmitting (NETDEV WATCHDOG on its console):" \
			"failing$(roxe_in_guest && echo ', roxe in the guest') (console: $out/console.log)"
		rc=125
	fi
	exit "$rc"
}

main "$@"
