#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# roxe.ko and roxed in the guest: the ib_device's life cycle.
#
# Host side: builds build/kmod/$KVER/roxe.ko if it is missing, boots the VM
# harness with the module and roxed added and this file as the guest
# script, prints the guest's findings.
# Guest side (ROXE_VM_GUEST=1), each step a check:
#   - insmod roxe.ko makes /dev/roxe; `roxed --netdev eth0` registers roxe0;
#   - ibv_devinfo -d roxe0 (the stock rxe provider) shows PORT_ACTIVE,
#     link layer Ethernet; a RoCE v2 GID holds eth0's IPv4 address;
#     `rdma link` lists roxe0/1 on eth0;
#   - kmod_verbs.c through the stock provider: PD, pinned MR, CQ, SRQ,
#     RC/UC/UD QPs (with and without SRQ) to RTS, query, AH, receive posts
#     into the mapped queues, limits, and the send doorbell taken;
#   - roxed hears of every object (its -v log) and maps its queues; a
#     stopped roxed makes create_cq time out (ETIMEDOUT), not hang;
#   - the port follows the link: eth0 down -> DOWN, up -> ACTIVE;
#   - roxed in daemon mode (the default) serves too and stops on SIGTERM;
#   - SIGTERM to roxed: the device goes away, roxed logs a clean detach;
#   - SIGKILL to roxed while an application holds the device open
#     (ibv_asyncwatch): the device goes away, nothing hangs;
#   - the netdev is deleted under roxe0: the deletion does not wait, roxed
#     notices and exits 1, the device goes;
#   - with an application holding mapped queues: SIGKILL to roxed, then
#     rmmod roxe succeeds, then the application reads and writes its
#     mappings and tears down without harm;
#   - 50 rounds of insmod, attach, kill, rmmod;
#   - dmesg holds no WARNING, BUG, Oops or call trace from any of it.
# kmemleak is not checked: Debian's 6.1 kernel is built without
# CONFIG_DEBUG_KMEMLEAK.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
ROUNDS=${ROXE_KMOD_ROUNDS:-50}

# ============================ guest side ==================================
IP=/usr/sbin/ip
KO=${ROXE_TOP:-}/build/kmod/$(uname -r)/roxe.ko
ROXED=${ROXE_TOP:-}/build/bin/roxed
VERBS=${ROXE_TOP:-}/build/vm/kmod_verbs
SYS=/sys/class/infiniband
fail=0

log() { echo "kmod_basic: $*"; }
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }

port_is() { grep -q "$2" "$SYS/$1/ports/1/state"; }

start_roxed() {
	"$ROXED" --netdev eth0 --foreground "$@" 2>>/tmp/roxed.log &
	ROXED_PID=$!
	vm_wait_for 20 vm_have_dev roxe0
}

# stop_roxed SIGNAL: the device must be gone within 10 s and roxed reaped
stop_roxed() {
	kill "-$1" "$ROXED_PID" 2>/dev/null || true
	local rc=0
	wait "$ROXED_PID" || rc=$?
	vm_wait_for 10 vm_no_dev roxe0 || return 1
	return 0
}

step_load() {
	insmod "$KO" || { bad "insmod $KO"; return 1; }
	[ -c /dev/roxe ] && ok "insmod: /dev/roxe" || { bad "no /dev/roxe"; return 1; }
	if ! start_roxed -v; then
		bad "roxed --netdev eth0 registered no roxe0"
		cat /tmp/roxed.log
		return 1
	fi
	ok "roxed --netdev eth0: roxe0 registered"
	# eth0 was brought up just before the script: its operational state
	# may reach UP (link watch) only now
	vm_wait_for 10 port_is roxe0 ACTIVE || bad "port 1 stays $(cat $SYS/roxe0/ports/1/state)"
}

step_devinfo() {
	local out g
	out=$(ibv_devinfo -d roxe0 2>&1) || { bad "ibv_devinfo -d roxe0 failed: $out"; return; }
	echo "$out" | sed 's/^/    /'
	grep -q 'state:[[:space:]]*PORT_ACTIVE' <<<"$out" && ok "ibv_devinfo: PORT_ACTIVE" ||
		bad "ibv_devinfo: port not ACTIVE"
	grep -q 'link_layer:[[:space:]]*Ethernet' <<<"$out" && ok "ibv_devinfo: link layer Ethernet" ||
		bad "ibv_devinfo: link layer is not Ethernet"
	grep -q 'transport:[[:space:]]*InfiniBand' <<<"$out" && ok "ibv_devinfo: transport InfiniBand" ||
		bad "ibv_devinfo: transport is not InfiniBand"
	# the IPv4 GIDs appear asynchronously (the core's netdev scan)
	if vm_wait_for 10 vm_gid_index roxe0 "$ROXE_VM_GUEST_ADDR"; then
		g=$(vm_gid_index roxe0 "$ROXE_VM_GUEST_ADDR")
		ok "RoCE v2 GID $g = $(cat $SYS/roxe0/ports/1/gids/"$g") ($ROXE_VM_GUEST_ADDR)"
	else
		bad "no RoCE v2 GID for $ROXE_VM_GUEST_ADDR"
		sed -n 1,4p $SYS/roxe0/ports/1/gid_attrs/types/* 2>&1 | sed 's/^/    /'
	fi
	out=$(rdma link 2>&1) || true
	echo "$out" | sed 's/^/    /'
	grep -q 'roxe0/1 state ACTIVE.*netdev eth0' <<<"$out" && ok "rdma link: roxe0/1 ACTIVE on eth0" ||
		bad "rdma link does not list roxe0/1 ACTIVE on eth0"
	out=$(rdma dev 2>&1) || true
	grep -q 'roxe0: node_type ca' <<<"$out" && ok "rdma dev: node_type ca" || bad "rdma dev: $out"
}

# The verbs objects through the stock provider (kmod_verbs.c).
step_verbs() {
	local g out rc=0
	g=$(vm_gid_index roxe0 "$ROXE_VM_GUEST_ADDR") || { bad "verbs: no GID"; return; }
	out=$(timeout 60 "$VERBS" roxe0 "$g" 2>&1) || rc=$?
	echo "$out" | sed 's/^/    verbs: /'
	[ $rc = 0 ] && ok "verbs objects: $(grep -c '^ok:' <<<"$out") checks passed" ||
		bad "kmod_verbs exited $rc"
	# roxed heard of every object and mapped its queues
	for want in 'create cq [0-9]*: 127 entries' 'create srq [0-9]*: 63 x' \
		'modify srq [0-9]*: limit 5' \
		'create qp 16 (RC): sq 127 x' 'create qp 2[0-9] (UD): sq 127 x .*rq srq' \
		'modify qp 16: RTR -> RTS' 'reg mr 0x[0-9a-f]*: 1048576 bytes' \
		'destroy qp 16' 'destroy srq' 'destroy cq' 'dereg mr'; do
		grep -q "$want" /tmp/roxed.log && ok "roxed: $want" || bad "roxed never logged '$want'"
	done
	grep -q 'failed' /tmp/roxed.log && bad "roxed: a command failed: $(grep failed /tmp/roxed.log | sed -n 1,3p)" || true
}

# A daemon that does not answer: creation fails with ETIMEDOUT after the
# channel's timeout (2 s), nothing hangs; once it answers again, all is well.
step_timeout() {
	local g out rc=0 t0
	g=$(vm_gid_index roxe0 "$ROXE_VM_GUEST_ADDR") || { bad "timeout: no GID"; return; }
	kill -STOP "$ROXED_PID"
	t0=$(date +%s)
	out=$(timeout 30 "$VERBS" roxe0 "$g" --cq 2>&1) || rc=$?
	kill -CONT "$ROXED_PID"
	log "    roxed stopped: $out ($(($(date +%s) - t0)) s)"
	[ $rc = 1 ] && grep -q 'timed out' <<<"$out" && ok "stopped roxed: create_cq times out, no hang" ||
		bad "stopped roxed: kmod_verbs --cq exited $rc: $out"
	rc=0
	out=$(timeout 30 "$VERBS" roxe0 "$g" --cq 2>&1) || rc=$?
	[ $rc = 0 ] && ok "roxed continued: create_cq works again" || bad "after SIGCONT: $out"
}

step_link() {
	$IP link set eth0 down
	vm_wait_for 5 port_is roxe0 DOWN && ok "eth0 down: port DOWN" || bad "eth0 down: port $(cat $SYS/roxe0/ports/1/state)"
	$IP link set eth0 up
	vm_wait_for 10 port_is roxe0 ACTIVE && ok "eth0 up: port ACTIVE" || bad "eth0 up: port $(cat $SYS/roxe0/ports/1/state)"
}

step_sigterm() {
	if stop_roxed TERM; then ok "SIGTERM: roxe0 unregistered"; else bad "SIGTERM: roxe0 still there"; fi
	grep -q 'detached from eth0' /tmp/roxed.log && ok "roxed logged a clean detach" ||
		{ bad "roxed log:"; sed 's/^/    /' /tmp/roxed.log; }
}

step_daemon() {
	local pid
	"$ROXED" --netdev eth0 || { bad "roxed (daemon mode) failed"; return; }
	# roxed forks once the device exists
	vm_have_dev roxe0 && ok "daemon mode: roxe0 there when roxed returns" || bad "daemon mode: no roxe0"
	pid=$(pidof roxed) || { bad "daemon mode: no roxed process"; return; }
	kill -TERM "$pid"
	vm_wait_for 10 vm_no_dev roxe0 && ok "daemon mode: SIGTERM detaches" || bad "daemon mode: roxe0 stays"
}

step_sigkill_busy() {
	local w
	start_roxed || { bad "roxed did not come back"; return; }
	# an application with the device open: a uverbs context on roxe0
	ibv_asyncwatch -d roxe0 >/tmp/asyncwatch.log 2>&1 &
	w=$!
	# it prints its async event FD once roxe0's context is open
	vm_wait_for 10 grep -q 'async event FD' /tmp/asyncwatch.log || bad "ibv_asyncwatch did not open roxe0"
	if stop_roxed KILL; then
		ok "SIGKILL with an application attached: roxe0 unregistered"
	else
		bad "SIGKILL: roxe0 still there with an application attached"
	fi
	# ib_uverbs disassociates the context and sends it DEVICE_FATAL
	# (asyncwatch flushes each line it prints)
	if vm_wait_for 10 grep -q 'IBV_EVENT_DEVICE_FATAL' /tmp/asyncwatch.log; then
		ok "the application saw the device's fatal event"
	else
		bad "ibv_asyncwatch printed no IBV_EVENT_DEVICE_FATAL"
		sed 's/^/    asyncwatch: /' /tmp/asyncwatch.log
	fi
	kill -KILL "$w" 2>/dev/null || true
	wait "$w" 2>/dev/null || true
}

# The netdev goes away under roxed: the module lets go of it at once (the
# deletion must not wait for us), roxed notices and detaches.
step_netdev_gone() {
	local rc=0
	$IP link add rxa type veth peer name rxb
	$IP addr add 10.77.3.1/24 dev rxa	# roxed's engine needs an address
	$IP link set rxa up
	$IP link set rxb up
	"$ROXED" --netdev rxa --foreground 2>>/tmp/roxed.log &
	ROXED_PID=$!
	vm_wait_for 20 vm_have_dev roxe0 || { bad "roxed --netdev rxa: no roxe0"; return; }
	timeout 10 $IP link del rxa && ok "veth deleted under roxe0" || bad "ip link del rxa hangs or fails"
	vm_wait_for 10 vm_no_dev roxe0 && ok "netdev gone: roxe0 unregistered" || bad "netdev gone: roxe0 stays"
	wait "$ROXED_PID" || rc=$?
	[ $rc = 1 ] && ok "roxed exited 1 (interface gone)" || bad "roxed exited $rc after its netdev went"
}

# Unload under a live application: it holds a QP and CQ with their queues
# mapped; roxed is killed, the device goes, roxe.ko is unloaded, then the
# application reads and writes its mappings and tears down.
step_mapped_unload() {
	local g w rc=0 hold=/tmp/kmod_verbs.hold
	start_roxed || { bad "roxed did not come back"; return; }
	vm_wait_for 10 vm_gid_index roxe0 "$ROXE_VM_GUEST_ADDR" || { bad "no GID"; return; }
	g=$(vm_gid_index roxe0 "$ROXE_VM_GUEST_ADDR")
	rm -f $hold
	"$VERBS" roxe0 "$g" --hold $hold >/tmp/hold.log 2>&1 &
	w=$!
	vm_wait_for 20 test -e $hold || { bad "hold: the application did not get ready"; cat /tmp/hold.log; return; }
	stop_roxed KILL && ok "SIGKILL with mapped queues: roxe0 unregistered" ||
		bad "SIGKILL with mapped queues: roxe0 stays"
	rmmod roxe && ok "rmmod roxe while the application still maps queues" ||
		bad "rmmod roxe with a mapping application failed"
	[ ! -e /dev/roxe ] && ok "/dev/roxe gone" || bad "/dev/roxe left behind"
	rm -f $hold
	timeout 20 tail --pid=$w -f /dev/null || true
	wait $w || rc=$?
	sed 's/^/    hold: /' /tmp/hold.log
	[ $rc = 0 ] && ok "the application used its mappings and exited cleanly" ||
		bad "the application exited $rc"
}

step_rmmod() {
	rmmod roxe && ok "rmmod roxe" || bad "rmmod roxe failed"
	[ ! -e /dev/roxe ] && ok "/dev/roxe gone" || bad "/dev/roxe left behind"
}

step_rounds() {
	local i t0=$SECONDS
	for i in $(seq "$ROUNDS"); do
		insmod "$KO" || { bad "round $i: insmod"; return; }
		if ! start_roxed; then bad "round $i: no roxe0"; rmmod roxe; return; fi
		if ! stop_roxed KILL; then bad "round $i: roxe0 stays"; return; fi
		rmmod roxe || { bad "round $i: rmmod"; return; }
	done
	ok "$ROUNDS rounds of insmod, roxed attach, SIGKILL, rmmod in $((SECONDS - t0)) s"
	grep -q '^roxe ' /proc/modules && bad "roxe still loaded" || true
}

step_dmesg() {
	vm_check_dmesg " ($(dmesg | grep -c 'roxe') roxe lines)"
	dmesg | grep -E 'roxe' | tail -n 8 | sed 's/^/    dmesg: /'
}

guest_main() {
	local t0=$SECONDS
	: >/tmp/roxed.log
	if [ ! -f "$KO" ] || [ ! -x "$ROXED" ]; then
		log "FAIL: $KO or $ROXED missing in the guest"
		return 1
	fi
	dmesg -c >/dev/null
	if step_load; then
		step_devinfo
		step_verbs
		step_timeout
		step_link
		step_sigterm
		step_daemon
		step_sigkill_busy
		step_netdev_gone
		step_mapped_unload
	fi
	step_rounds
	step_dmesg
	log "roxed log (first lines):"
	sed -n 1,12p /tmp/roxed.log | sed 's/^/    /'
	log "guest part took $((SECONDS - t0)) s"
	return $fail
}

# ============================ host side ===================================
host_missing() { echo "kmod_basic: FAIL: missing: $*"; exit $KSFT_FAIL; }

host_main() {
	local top out
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"	# find_top, vm_host_ready, ...
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	out=$(vm_out kmod_basic)

	vm_host_ready
	vm_need_kmod "$top"
	[ -x "$top/build/bin/roxed" ] || host_missing "build/bin/roxed missing (make)"
	vm_build_prog kmod_basic "$top" kmod_verbs	# the guest's verbs client

	vm_run_guest kmod_basic "$out" 280 \
		--add "$top/build/kmod/$KVER/roxe.ko" --add "$top/build/bin/roxed" \
		--add "$top/build/vm/kmod_verbs" \
		--add "$top/selftests/vm/vm_lib.sh" --env "ROXE_KMOD_ROUNDS=$ROUNDS"
	echo "kmod_basic: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"	# added to the image
	guest_main
else
	host_main
fi
