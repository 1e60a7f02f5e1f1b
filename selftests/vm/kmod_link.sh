#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# roxe0 the rdma way (issue #36): `rdma link add NAME type roxe netdev
# IFACE` and `rdma link delete NAME`, served by `roxed --links`, and roxe
# beside kernel rxe on one host. In the guest, on a veth pair rxa/rxb:
#   - without roxed --links, `rdma link add` fails at once (ENXIO) and
#     the kernel log says what to start;
#   - with it, `rdma link add roxe5 type roxe netdev rxb` returns with
#     roxe5 registered, ACTIVE on rxb, a uverbs device; a second device
#     on rxb, a second roxe5, a loopback netdev are refused;
#   - rxe0 on rxa and roxe5 talk (ibv_rc_pingpong -c, data checked);
#   - a roxe device named as rxe's rxe0, on a free netdev, is refused
#     (EEXIST) at once;
#   - `rdma link delete rxe0` and `rmmod rdma_rxe` leave roxe5 serving:
#     rdma_rxe's exit would unregister every RDMA_DRIVER_RXE device, ours
#     too, so roxe.ko holds rdma_rxe while it has devices and the rmmod
#     is refused; a new rxe0 and roxe5 talk;
#   - `rdma link delete roxe5` takes roxe5 down, its roxed exits 0, and
#     then `rmmod rdma_rxe` goes through;
#   - a roxed that cannot serve (more engines than rxb has queues) fails
#     `rdma link add` in seconds, not after the 30 s wait;
#   - SIGTERM to roxed --links takes the devices it serves down;
#   - no WARNING/BUG in dmesg, and roxe.ko unloads.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
A=10.77.6.1 B=10.77.6.2

# ============================ guest side ==================================
KO=${ROXE_TOP:-}/build/kmod/$(uname -r)/roxe.ko
ROXED=${ROXE_TOP:-}/build/bin/roxed
fail=0

log() { echo "kmod_link: $*"; }
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }

listening() { grep -q 'listening for' "$1"; }

# start_links LOG [OPTION...]: roxed --links in the background (LINKS_PID)
start_links() {
	local logf=$1
	shift
	"$ROXED" --links "$@" 2>>"$logf" &
	LINKS_PID=$!
	vm_wait_for 10 listening "$logf" || { bad "roxed --links $*: not listening"; cat "$logf"; return 1; }
}

# stop_links: SIGTERM, and its exit status
stop_links() {
	local rc=0
	kill -TERM "$LINKS_PID"
	wait "$LINKS_PID" || rc=$?
	return $rc
}

# link_add NAME IFACE: rdma link add; its output in OUT, exit status in RC,
# seconds taken in SECS
link_add() {
	local t0=$SECONDS
	RC=0
	OUT=$(rdma link add "$1" type roxe netdev "$2" 2>&1) || RC=$?
	SECS=$((SECONDS - t0))
}

# pingpong LABEL: ibv_rc_pingpong -c, server roxe5, client rxe0
PORT=19100
pingpong() {
	local gr gx
	gr=$(vm_gid_index roxe5 $B) && gx=$(vm_gid_index rxe0 $A) || { bad "$1: no GIDs"; return; }
	PORT=$((PORT + 1))
	vm_run_pair "$1" vm_listening $PORT ibv_rc_pingpong roxe5 "$gr" rxe0 "$gx" $B -g -c -s 4096 -n 50 ||
		true
}

step_no_listener() {
	link_add roxe5 rxb
	if [ $RC = 0 ]; then
		bad "rdma link add without roxed --links: exit 0"
	elif ! dmesg | grep 'no roxed listens for links' >/dev/null; then
		bad "rdma link add without roxed --links: nothing in dmesg ($OUT)"
	else
		ok "without roxed --links: rdma link add fails ($OUT), dmesg: $(dmesg | grep 'no roxed listens' | tail -n1 | sed 's/^\[[^]]*\] //')"
	fi
}

step_add() {
	link_add roxe5 rxb
	if [ $RC != 0 ]; then
		bad "rdma link add roxe5 type roxe netdev rxb: exit $RC: $OUT"
		sed 's/^/    links: /' "$ROXE_VM_OUT/links.log"
		return 1
	fi
	# registered when the command returned: no waiting
	if ! vm_have_dev roxe5 || ! vm_verbs_dev roxe5; then
		bad "rdma link add returned before roxe5 and its uverbs device existed"
		return 1
	fi
	vm_wait_for 10 vm_gid_index roxe5 $B || { bad "roxe5: no RoCE v2 GID for $B"; return 1; }
	local show
	show=$(rdma link show roxe5/1 2>&1)
	if [[ $show == *"state ACTIVE"* && $show == *"netdev rxb"* ]]; then
		ok "rdma link add roxe5 type roxe netdev rxb: exit 0 in ${SECS} s, registered: $show"
	else
		bad "rdma link show roxe5/1: $show"
	fi
}

step_refusals() {
	link_add roxe6 rxb
	[ $RC != 0 ] && ok "a second device on rxb refused: $OUT" || bad "a second device on rxb: exit 0"
	link_add roxe5 rxa
	[ $RC != 0 ] && ok "a second roxe5 refused: $OUT" || bad "a second roxe5: exit 0"
	link_add roxe7 lo
	[ $RC != 0 ] && ok "roxe on lo refused: $OUT" || bad "roxe on lo: exit 0"
	vm_no_dev roxe6 && vm_no_dev roxe7 || bad "a refused device exists"
}

# rxe0's name on a free netdev (rxc): refused at once as taken (7.3 has
# no ib_device_get_by_name(); roxe looks among the infiniband class's
# devices), nothing attached
step_name_of_rxe() {
	/usr/sbin/ip link add rxc type veth peer name rxd && /usr/sbin/ip link set rxc up ||
		{ bad "veth rxc"; return; }
	link_add rxe0 rxc
	if [ $RC != 0 ] && [[ $OUT == *"File exists"* ]] && vm_have_dev rxe0 &&
	   [ "$(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/ndevs/0 2>/dev/null)" = rxa ]; then
		ok "rdma link add rxe0 type roxe netdev rxc, rxe0 being rxe's: refused: $OUT"
	else
		bad "rdma link add rxe0 type roxe netdev rxc, rxe0 being rxe's: exit $RC: $OUT"
	fi
	/usr/sbin/ip link del rxc
}

# rxe0 goes, rdma_rxe cannot: roxe5 serves throughout
step_beside_rxe() {
	local out rc=0
	rdma link delete rxe0 || bad "rdma link delete rxe0"
	vm_no_dev rxe0 || bad "rxe0 still there"
	out=$(rmmod rdma_rxe 2>&1) || rc=$?
	if [ $rc = 0 ]; then
		bad "rmmod rdma_rxe went through with roxe5 registered"
		return
	fi
	[ -n "$(awk '$1 == "rdma_rxe"' /proc/modules)" ] || { bad "rdma_rxe gone after a failed rmmod"; return; }
	vm_have_dev roxe5 && [[ $(rdma link show roxe5/1) == *"state ACTIVE"* ]] ||
		{ bad "roxe5 lost with rxe0/rmmod rdma_rxe"; return; }
	ok "rdma link delete rxe0 and rmmod rdma_rxe ($out): roxe5 stays registered and ACTIVE"
	vm_rxe_up rxa $A >/dev/null || { bad "rxe0 re-created"; return; }
	pingpong "rc_pingpong rxe0 -> roxe5 after rxe0's delete and the refused rmmod"
}

step_delete() {
	local rc=0 out
	out=$(rdma link delete roxe5 2>&1) || rc=$?
	if [ $rc != 0 ]; then
		bad "rdma link delete roxe5: exit $rc: $out"
		return
	fi
	vm_no_dev roxe5 || bad "roxe5 still there after rdma link delete"
	if vm_wait_for 10 grep -q 'roxe5: roxed (pid [0-9]*) exited with 0' "$ROXE_VM_OUT/links.log"; then
		ok "rdma link delete roxe5: gone, its roxed exited 0"
	else
		bad "rdma link delete roxe5: its roxed did not exit 0"
		sed 's/^/    links: /' "$ROXE_VM_OUT/links.log"
	fi
	# no roxe device left: rdma_rxe is free to go (rxe0 with it)
	out=$(rmmod rdma_rxe 2>&1) && ok "rmmod rdma_rxe once roxe5 is gone" ||
		bad "rmmod rdma_rxe with no roxe device: $out"
}

# a roxed that cannot serve: the request fails when it exits
step_failing_roxed() {
	start_links "$ROXE_VM_OUT/links-bad.log" --engines 16 || return
	link_add roxe8 rxb
	if [ $RC = 0 ]; then
		bad "rdma link add with roxed --engines 16 on a 1-queue veth: exit 0"
	elif [ $SECS -ge 20 ]; then
		bad "rdma link add with a failing roxed took $SECS s: $OUT"
	elif [[ $OUT != *"Invalid argument"* ]]; then
		# roxed's own errno (EINVAL: more engines than queues), not EIO
		bad "rdma link add with a failing roxed: '$OUT', not roxed's EINVAL"
	else
		ok "a roxed that cannot serve (--engines 16, 1 queue): rdma link add fails in $SECS s with its errno: $OUT"
	fi
	# and its sentence is in roxed --links' log
	if grep -q 'roxe8: .*--engines 16 asks for' "$ROXE_VM_OUT/links-bad.log"; then
		ok "roxed --links logged why: $(grep 'roxe8: .*--engines 16' "$ROXE_VM_OUT/links-bad.log" | sed -n 1p)"
	else
		bad "roxed --links did not log the roxed's sentence"
		sed 's/^/    links: /' "$ROXE_VM_OUT/links-bad.log"
	fi
	vm_no_dev roxe8 || bad "roxe8 exists"
	stop_links || bad "roxed --links --engines 16 exited $?"
}

step_sigterm() {
	link_add roxe5 rxb
	[ $RC = 0 ] || { bad "rdma link add roxe5, a second time: $OUT"; return; }
	local rc=0
	stop_links || rc=$?
	if [ $rc = 0 ] && vm_wait_for 10 vm_no_dev roxe5; then
		ok "SIGTERM to roxed --links: it exited 0 and roxe5 is gone"
	else
		bad "SIGTERM to roxed --links: exit $rc, roxe5 $(vm_have_dev roxe5 && echo stays || echo gone)"
	fi
}

guest_main() {
	local t0=$SECONDS
	vm_veth_pair rxa $A rxb $B || { bad "veth pair"; exit 1; }
	insmod "$KO" || { bad "insmod $KO"; exit 1; }
	step_no_listener
	start_links "$ROXE_VM_OUT/links.log" || exit 1
	if step_add; then
		step_refusals
		if vm_rxe_up rxa $A >/dev/null; then
			pingpong "rc_pingpong rxe0 -> roxe5"
			step_name_of_rxe
			step_beside_rxe
		else
			bad "rdma link add rxe0 type rxe netdev rxa"
		fi
		step_delete
	fi
	# rdma_rxe stays for what follows only if the delete failed
	step_sigterm
	step_failing_roxed
	rmmod roxe || bad "rmmod roxe"
	vm_check_dmesg
	log "guest part took $((SECONDS - t0)) s"
	[ $fail = 0 ] && log "all passed" || log "FAILED"
	exit $fail
}

# ============================ host side ===================================
host_missing() { echo "kmod_link: FAIL: missing: $*"; exit $KSFT_FAIL; }

host_main() {
	local top out
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	out=$(vm_out kmod-link)
	vm_host_ready
	vm_need_kmod "$top"
	[ -x "$top/build/bin/roxed" ] || host_missing "build/bin/roxed missing (make)"
	vm_run_guest kmod_link "$out" 280 \
		--add "$top/build/kmod/$KVER/roxe.ko" --add "$top/build/bin/roxed" \
		--add "$top/selftests/vm/vm_lib.sh"
	echo "kmod_link: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	guest_main
else
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"
	host_main
fi
