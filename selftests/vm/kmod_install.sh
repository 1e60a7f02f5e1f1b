#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The installed roxe, as a package would install it, in the guest.
#
# Host side: `make install DESTDIR=build/vm/install-root PREFIX=/usr`, then
# roxe.ko built from the installed /usr/src/roxe-VERSION the way dkms does
# (dkms.conf's MAKE[0] in a copy of that tree, against the guest kernel's
# headers: KVER's, 6.1 by default, unpacked in build/vm/kernels/)
# and put in the root's /lib/modules/KVER/updates/dkms/; boots the VM with
# that root and this file as the guest script.
# Guest side (ROXE_VM_GUEST=1), each step a check:
#   - the dkms-built roxe.ko loads: /dev/roxe;
#   - roxed@rxb.service's ExecStart (from the installed unit, %i = rxb) run
#     with the unit's CapabilityBoundingSet as the bounding set (setpriv,
#     no new privileges) and a notify socket as systemd gives a
#     Type=notify service ($NOTIFY_SOCKET, notify_listen.c) says READY=1
#     from its own pid once roxe0 is registered, and STATUS= what it
#     serves; roxed holds exactly those capabilities but CAP_SYS_NICE,
#     which it gives up without --rt-priority;
#   - roxe0 against kernel rxe0 over a veth pair: ibv_rc_pingpong -c both
#     ways round; the installed roxectl (installed libroxe.so.0) shows
#     roxe0;
#   - each capability of the set is needed (CAP_SYS_NICE for --rt-priority
#     alone): without it roxed fails, registers no device, and tells the
#     notify socket why (STATUS=, ERRNO=) in the line it prints;
#   - SIGTERM (systemctl stop) unregisters roxe0, roxed says STOPPING=1 and
#     exits 0; dmesg stays clean;
#   - (host, when strace and systemd-analyze are there) every system call
#     and socket family roxed used (traced from its start through the
#     pingpongs to its exit) is one the unit's SystemCallFilter and
#     RestrictAddressFamilies allow.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
A=10.77.3.1 B=10.77.3.2

# ============================ guest side ==================================
fail=0
log() { echo "kmod_install: $*"; }
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }

# unit_caps: the installed unit's bounding set as setpriv's list
unit_caps() {
	sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr ' ' '\n' | grep . |
		sed 's/^CAP_//' | tr 'A-Z' 'a-z'
}

# bset CAPS...: setpriv's --bounding-set for only CAPS
bset() { local s=-all c; for c in "$@"; do s+=",+$c"; done; echo "$s"; }

# start_unit CAPS...: the unit's ExecStart for rxb with only CAPS in the
# bounding set (util-linux's setpriv: busybox has one without
# --bounding-set), no new privileges, as systemd runs it
SETPRIV=${ROXE_TOP:-}/build/vm/bin/setpriv
start_unit() {
	"$SETPRIV" --bounding-set="$(bset "$@")" --inh-caps=-all --no-new-privs "${EXEC[@]}"
}

roxed_pid() { pidof roxed; }

# the notify socket, as systemd's for a Type=notify service
NOTIFY=/tmp/roxed-notify.sock
notified() { grep -F -- "$1" "$ROXE_VM_OUT/notify.log" >/dev/null; }

PORT=19100
pingpong() {
	local label=$1 sdev=$2 sg=$3 cdev=$4 cg=$5 saddr=$6 spid rc=0 n
	PORT=$((PORT + 1))
	ibv_rc_pingpong -c -d "$sdev" -g "$sg" -p $PORT -s 4096 -n 100 >"$ROXE_VM_OUT/$label.srv" 2>&1 &
	spid=$!
	if ! vm_wait_for 20 vm_listening $PORT; then
		bad "$label: server did not listen"; rc=1
	elif ! timeout 120 ibv_rc_pingpong -c -d "$cdev" -g "$cg" -p $PORT -s 4096 -n 100 \
			"$saddr" >"$ROXE_VM_OUT/$label.cli" 2>&1; then
		bad "$label: client failed"; rc=1
	fi
	n=200
	while kill -0 $spid 2>/dev/null && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
	kill -0 $spid 2>/dev/null && { bad "$label: server hung"; kill -KILL $spid; rc=1; }
	wait $spid || { [ $rc != 0 ] || bad "$label: server failed"; rc=1; }
	if [ $rc = 0 ]; then
		ok "ibv_rc_pingpong -c, $label: $(grep -h 'bytes in' "$ROXE_VM_OUT/$label.cli" | tail -1)"
	else
		tail -5 "$ROXE_VM_OUT/$label.srv" "$ROXE_VM_OUT/$label.cli" | sed 's/^/    /'
	fi
}

guest_main() {
	local ko caps pid want have c others n
	ROOT=$ROXE_TOP/build/vm/install-root
	UNIT=$ROOT/usr/lib/systemd/system/roxed@.service
	export LD_LIBRARY_PATH=$ROOT/usr/lib	# /usr/lib/libroxe.so.0 of the package
	# ExecStart with %i = rxb, the options file absent, at the root's path
	read -r -a EXEC <<<"$(sed -n 's/^ExecStart=//p' "$UNIT" | sed "s|%i|rxb|g; s|\$ROXED_OPTS||; s|^/|$ROOT/|")"
	[ -x "${EXEC[0]}" ] && ok "ExecStart: ${EXEC[*]#$ROOT}" || { bad "ExecStart ${EXEC[*]}"; exit 1; }
	mapfile -t caps <<<"$(unit_caps)"
	[ ${#caps[@]} -gt 0 ] || { bad "no CapabilityBoundingSet in the unit"; exit 1; }

	"$ROXE_TOP/build/vm/notify_listen" $NOTIFY >"$ROXE_VM_OUT/notify.log" 2>&1 &
	vm_wait_for 10 test -S $NOTIFY || { bad "notify_listen"; exit 1; }
	export NOTIFY_SOCKET=$NOTIFY

	vm_veth_pair rxa $A rxb $B 1 || { bad "veth pair"; exit 1; }
	ko=$(ls "$ROOT"/lib/modules/*/updates/dkms/roxe.ko)
	insmod "$ko" && [ -c /dev/roxe ] && ok "insmod ${ko#$ROOT}: /dev/roxe" ||
		{ bad "insmod $ko"; exit 1; }
	rdma link add rxe0 type rxe netdev rxa

	# each capability is needed (before the real start: no device left
	# over); CAP_SYS_NICE for --rt-priority alone
	for c in "${caps[@]}"; do
		local lf=$ROXE_VM_OUT/nocap-$c.log rc=0 p why rt=()
		[ "$c" != sys_nice ] || rt=(--rt-priority 1)
		mapfile -t others <<<"$(printf "%s\n" "${caps[@]}" | grep -vx "$c")"
		timeout 20 "$SETPRIV" --bounding-set="$(bset "${others[@]}")" --inh-caps=-all \
			--no-new-privs "${EXEC[@]}" ${rt[@]+"${rt[@]}"} >"$lf" 2>&1 || rc=$?
		why=$(grep '^roxed: ' "$lf" | grep -v detached | tail -1 | sed 's/^roxed: //')
		if [ $rc = 0 ] || [ $rc = 124 ]; then
			bad "$(echo roxed ${rt[*]}) runs without cap_$c (status $rc)"
		elif [ -z "$why" ]; then
			bad "without cap_$c: roxed did not run: $(tail -3 "$lf")"
		elif vm_have_dev roxe0; then
			bad "without cap_$c roxed failed but left roxe0"
		elif ! notified "STATUS=$why | ERRNO="; then
			bad "without cap_$c: the notify socket did not get '$why'"
		else
			ok "without cap_$c $(echo roxed ${rt[*]}) exits $rc, says it to systemd too: $why"
		fi
		p=$(roxed_pid) && kill -KILL $p 2>/dev/null || true
		vm_wait_for 10 vm_no_dev roxe0 || true
	done

	# traced (strace -D: roxed stays the caller's child, its pid $!): the
	# host checks its system calls and socket families against the unit's
	# filters. In the foreground, as Type=notify runs it: ready when it
	# says READY=1.
	local trace=() unit_pid rc=0
	[ -x /usr/bin/strace ] && trace=(/usr/bin/strace -D -f -qq -o "$ROXE_VM_OUT/roxed.strace")
	${trace[@]+"${trace[@]}"} "$SETPRIV" --bounding-set="$(bset "${caps[@]}")" --inh-caps=-all \
		--no-new-privs "${EXEC[@]}" >"$ROXE_VM_OUT/roxed.log" 2>&1 &
	unit_pid=$!
	if vm_wait_for 60 notified "pid $unit_pid: READY=1 | STATUS=" && vm_have_dev roxe0; then
		ok "ExecStart with the bounding set {${caps[*]}}: READY=1 from its pid with roxe0 registered"
		ok "notify: $(grep -F "pid $unit_pid: READY=1" "$ROXE_VM_OUT/notify.log" | tail -1)"
	else
		bad "ExecStart with {${caps[*]}}: no READY=1 from pid $unit_pid: $(cat "$ROXE_VM_OUT/roxed.log" "$ROXE_VM_OUT/notify.log")"
		exit 1
	fi
	pid=$(roxed_pid)
	[ "$pid" = "$unit_pid" ] || bad "roxed runs as pid $pid, not as ExecStart's $unit_pid"
	mapfile -t others <<<"$(printf "%s\n" "${caps[@]}" | grep -vx sys_nice)"
	want=$("$SETPRIV" --bounding-set="$(bset "${others[@]}")" grep CapBnd /proc/self/status | awk '{print $2}')
	have=$(awk '/^CapEff/ {print $2}' "/proc/$pid/status")
	[ "$have" = "$want" ] && ok "roxed (pid $pid) runs with CapEff $have = the unit's set but cap_sys_nice" ||
		bad "roxed's CapEff $have, the unit's set but cap_sys_nice $want"

	vm_wait_for 10 vm_verbs_dev roxe0 || bad "no uverbs device for roxe0"
	vm_wait_for 10 vm_gid_index rxe0 $A && vm_wait_for 10 vm_gid_index roxe0 $B ||
		{ bad "no RoCE v2 GIDs"; exit 1; }
	GX=$(vm_gid_index rxe0 $A) GR=$(vm_gid_index roxe0 $B)
	pingpong "roxe0-server" roxe0 "$GR" rxe0 "$GX" $B
	pingpong "rxe0-server" rxe0 "$GX" roxe0 "$GR" $A

	out=$("$ROOT/usr/sbin/roxectl" devices 2>&1) || true
	grep -q '^roxe0' <<<"$out" && ok "installed roxectl devices: $(grep '^roxe0' <<<"$out" | tr -s ' ')" ||
		bad "installed roxectl devices: $out"

	kill -TERM "$pid"
	vm_wait_for 10 vm_no_dev roxe0 && ok "SIGTERM: roxe0 unregistered" || bad "roxe0 stays after SIGTERM"
	wait "$unit_pid" || rc=$?
	[ $rc = 0 ] && notified "pid $unit_pid: STOPPING=1" && ok "SIGTERM: STOPPING=1, exit 0" ||
		bad "SIGTERM: exit $rc, $(grep -c STOPPING "$ROXE_VM_OUT/notify.log") STOPPING=1"
	unset NOTIFY_SOCKET
	rmmod roxe && ok "rmmod roxe" || bad "rmmod roxe"
	vm_check_dmesg
	[ $fail = 0 ] && log "all passed" || log "FAILED"
	exit $fail
}

# ============================ host side ===================================
host_missing() { echo "kmod_install: FAIL: missing: $*"; exit $KSFT_FAIL; }

# filter_set ITEM...: SystemCallFilter's items, groups expanded
filter_set() {
	local x
	for x in "$@"; do
		case $x in
		@*) filter_set $(systemd-analyze syscall-filter "$x" | sed 1d | grep -v '#') ;;
		*) echo "$x" ;;
		esac
	done
}

# host_check_filters UNIT TRACE: the system calls and socket families in
# roxed's trace (start, a pingpong each way, roxectl, SIGTERM) are all
# allowed by UNIT's SystemCallFilter and RestrictAddressFamilies
host_check_filters() {
	local unit=$1 trace=$2 used extra fam
	if [ ! -s "$trace" ] || ! command -v systemd-analyze >/dev/null; then
		echo "kmod_install: no strace in the guest or no systemd-analyze: the unit's filters not checked"
		return 0
	fi
	used=$(sed -E 's/^[0-9]+ +//; s/^<\.\.\. //' "$trace" | grep -oE '^[a-z_0-9]+\(' | tr -d '(' | sort -u)
	extra=$(comm -23 <(echo "$used") \
		<(filter_set $(sed -n 's/^SystemCallFilter=//p' "$unit") | sort -u))
	if [ -n "$extra" ]; then
		echo "kmod_install: FAIL: roxed made system calls SystemCallFilter denies: $extra"
		exit $KSFT_FAIL
	fi
	echo "kmod_install: ok: roxed's $(wc -w <<<"$used") system calls are all in SystemCallFilter"
	fam=$(grep -oE 'socket\(AF_[A-Z0-9]+' "$trace" | sed 's/socket(//' | sort -u)
	for extra in $fam; do
		grep -q "^RestrictAddressFamilies=.*\b$extra\b" "$unit" || {
			echo "kmod_install: FAIL: roxed opens $extra sockets, RestrictAddressFamilies denies them"
			exit $KSFT_FAIL
		}
	done
	echo "kmod_install: ok: roxed's socket families ($(echo $fam)) are all in RestrictAddressFamilies"
}

# host_dkms_build SRC KDIR OUTKO TREE: what `dkms build` does with SRC's
# dkms.conf, in a scratch dkms tree: copy SRC to TREE/NAME/VERSION/build,
# run MAKE[0] there, take BUILT_MODULE_LOCATION/BUILT_MODULE_NAME.ko
host_dkms_build() {
	local src=$1 kdir=$2 outko=$3 tree=$4
	rm -rf "$tree"
	(
		set -e
		kernel_source_dir=$kdir dkms_tree=$tree
		. "$src/dkms.conf"
		b=$tree/$PACKAGE_NAME/$PACKAGE_VERSION/build
		mkdir -p "$b"
		cp -a "$src/." "$b/"
		cd "$b"
		eval "${MAKE[0]}" >"$tree/make.log" 2>&1 || { tail -20 "$tree/make.log"; exit 1; }
		install -D -m 644 "$b/${BUILT_MODULE_LOCATION[0]}/${BUILT_MODULE_NAME[0]}.ko" "$outko"
	)
}

host_main() {
	local top root kdir kver ver
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	vm_host_ready
	[ -x /usr/bin/setpriv ] || host_missing "setpriv (util-linux) missing"
	# the guest's own release (vm_host_ready's KVER), its headers in the tree
	kver=$KVER
	kdir=$("$top/tools/vm/kver.sh" --root)/usr/src/linux-headers-$kver
	[ -f "$kdir/Makefile" ] || host_missing "no headers for $kver in $kdir (make kernels)"
	root=$top/build/vm/install-root
	rm -rf "$root"
	make -s -C "$top" install DESTDIR="$root" PREFIX=/usr >/dev/null ||
		{ echo "kmod_install: FAIL: make install DESTDIR=$root PREFIX=/usr"; exit $KSFT_FAIL; }
	ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$root"/usr/src/roxe-*/dkms.conf)
	host_dkms_build "$root/usr/src/roxe-$ver" "$kdir" \
		"$root/lib/modules/$kver/updates/dkms/roxe.ko" "$top/build/vm/dkms-tree" ||
		{ echo "kmod_install: FAIL: roxe.ko from /usr/src/roxe-$ver (dkms.conf's MAKE)"; exit $KSFT_FAIL; }
	echo "kmod_install: roxe.ko built from the installed /usr/src/roxe-$ver against $kver"
	install -D -m 755 /usr/bin/setpriv "$top/build/vm/bin/setpriv"
	vm_build_prog kmod_install "$top" notify_listen	# systemd's notify socket
	vm_run_guest kmod_install "$top/build/vm/kmod-install" 280 \
		--add "$root" --add "$top/build/vm/bin/setpriv" --add "$top/selftests/vm/vm_lib.sh" \
		--add "$top/build/vm/notify_listen" \
		$([ -x /usr/bin/strace ] && echo --add /usr/bin/strace)
	host_check_filters "$root/usr/lib/systemd/system/roxed@.service" "$top/build/vm/kmod-install/roxed.strace"
	echo "kmod_install: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	guest_main
else
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"
	host_main
fi
