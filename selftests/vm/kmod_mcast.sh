#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# UD multicast on roxe0 (roxe.ko + roxed) with rdma_cm's multicast joins,
# against kernel rxe, both in the guest, joined by a veth pair:
#   rxa (10.77.6.1, rxe0)  <-- veth -->  rxb (10.77.6.2, roxe0: roxed --netdev rxb)
# One boot:
#   - ibv_devinfo -v: roxe0 reports max_mcast_grp, max_mcast_qp_attach and
#     max_total_mcast_qp_attach as rxe0 does;
#   - mckey (rdmacm-utils): receiver on roxe0, sender on rxe0; then the
#     other way round; then sender and receiver both on roxe0 (the
#     sender's host delivers to its own attached QPs: loopback). Each
#     receiver must get every message;
#   - mcast_verbs.c: ibv_attach_mcast/ibv_detach_mcast with what uverbs
#     passes to the driver unchecked (an RC QP, a unicast GID, a 57th QP on
#     a group) gets rxe's errors from roxed, and every attach is undone
#     (detaches, then the process's exit for QPs left attached).
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
A=10.77.6.1 B=10.77.6.2

# ============================ guest side ==================================
KO=${ROXE_TOP:-}/build/kmod/$(uname -r)/roxe.ko
ROXED=${ROXE_TOP:-}/build/bin/roxed
MCAST_VERBS=${ROXE_TOP:-}/build/vm/mcast_verbs
fail=0

log() { echo "kmod_mcast: $*"; }
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }

# frames rxe0 sent so far (its hw counter)
rxe_sent() { cat /sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts; }

# roxed attached a QP to GROUP (its -v log)
attached() { grep -q "attach qp [0-9]* to $1\$" "$ROXE_VM_OUT/roxed.log"; }
# rxe0's side joined GROUP: rdma_cm joins the IP group on the netdev
joined_rxa() { /usr/sbin/ip maddr show dev rxa | grep -E "inet +$1\$" >/dev/null; }

# mckey_case LABEL GROUP RECV_ADDR SEND_ADDR JOINED_FN [SENDER_OPTION...]: a receiver bound to
# RECV_ADDR (its device), then, once it says it joined (librdmacm attaches
# its QP before it hands mckey the join event), a sender bound to
# SEND_ADDR; JOINED_FN GROUP must agree on the receiver's side; the
# receiver must get all 10 messages. mckey posts its sends unsignaled
# and destroys its QP without waiting for them; a provider that sends from
# another thread (6.12's rxe, roxe's engine) flushes what it had not sent
# (1 of 10 sent in CI runs, rxe0 and roxe0 as the sender): roxe-linger.so
# fences the sender's send queue before its destruction (ROXE_DRAIN_SENDS)
# and says so, which the case requires. mckey also destroys its AH before
# its QP, sends still queued, and 6.12's rxe then fails them and flushes
# its QP (1 of 10 sent, in 2 CI runs): the library holds the AH back until
# the QP is gone (tools/vm/linger.c).
mckey_case() {
	local label=$1 grp=$2 raddr=$3 saddr=$4 ready=$5 rpid rc=0 sent0 sent
	shift 5		# the rest: the sender's own options
	local logf=$ROXE_VM_OUT/mckey_${label// /_}
	sent0=$(rxe_sent)
	# line-buffered: a receiver killed by the timeout still shows how far it got
	timeout 90 stdbuf -oL mckey -m "$grp" -b "$raddr" -C 10 -S 200 >"$logf.recv" 2>&1 &
	rpid=$!
	if ! vm_wait_for 30 grep -q "^mckey: joined dgid" "$logf.recv"; then
		bad "$label: the receiver did not join $grp"
		rc=1
	elif ! $ready "$grp"; then
		bad "$label: the receiver joined $grp, but not on its device"
		rc=1
	elif ! timeout 60 env LD_PRELOAD="$ROXE_TOP/build/lib/roxe-linger.so" ROXE_DRAIN_SENDS=1 \
		stdbuf -oL mckey -m "$grp" -b "$saddr" -s -C 10 -S 200 "$@" >"$logf.send" 2>&1; then
		bad "$label: the sender failed"
		rc=1
	elif ! grep -q "^roxe-linger: QP 0x[0-9a-f]* sent what was posted to it" "$logf.send"; then
		rc=2	# the sender's QP was flushed (or destroyed) before its sends completed
	fi
	sent=$(( $(rxe_sent) - sent0 ))	# final: the sender's QP is gone
	if [ $rc = 2 ]; then
		bad "$label: the sender's QP was destroyed before its sends completed: $(grep '^roxe-linger' "$logf.send" | sed -n 1p)"
		rc=1
	fi
	# rxe0 sent the 10 messages (its sent_pkts, which count the fence,
	# a SEND to itself, as well)
	if [ $rc = 0 ] && [ "$saddr" = $A ] && [ "$sent" -lt 10 ]; then
		bad "$label: rxe0 completed mckey's sends, but its sent_pkts rose by $sent"
		rc=1
	fi
	if [ $rc = 0 ]; then
		wait $rpid || { bad "$label: the receiver failed or timed out"; rc=1; }
	else
		kill $rpid 2>/dev/null || true
		wait $rpid 2>/dev/null || true
	fi
	if [ $rc = 0 ] && grep -q "data transfers complete" "$logf.recv"; then
		ok "$label: 10 messages received"
	else
		[ $rc != 0 ] || bad "$label: the receiver did not complete"
		sed 's/^/    recv: /' "$logf.recv" 2>/dev/null | tail -15 || true
		sed 's/^/    send: /' "$logf.send" 2>/dev/null | tail -15 || true
		vm_rxe_counters rxe0 | grep -v ' 0$' | sed 's/^/    rxe0: /'
		vm_roxe_stats_fresh roxe0 || true
		vm_rxe_counters roxe0 | grep -v ' 0$' | sed 's/^/    roxe0: /'
	fi
}

guest_main() {
	local v x
	vm_rxe_roxe_pair $A $B 1 -v || { log "setup failed"; exit 1; }
	for x in max_mcast_grp max_mcast_qp_attach max_total_mcast_qp_attach; do
		v=$(ibv_devinfo -v -d roxe0 | awk -v k="$x:" '$1 == k { print $2 }')
		if [ -n "$v" ] && [ "$v" != 0 ] &&
		   [ "$v" = "$(ibv_devinfo -v -d rxe0 | awk -v k="$x:" '$1 == k { print $2 }')" ]; then
			ok "ibv_devinfo -v -d roxe0: $x $v (as rxe0)"
		else
			bad "ibv_devinfo -v -d roxe0: $x '${v}'"
		fi
	done
	# -o: rxe0's sender joins send-only, so its QP is not attached to the
	# group it sends to. Attached (a full join), 6.12's rxe (6.12.117) gets
	# its own first message back on the sending QP and flushes that QP: 1
	# packet sent, 1 SEND received (sent_pkts, rcvd_pkts, rdma_sends 1 on
	# rxe0), the fence flushed (status 5), nothing for roxe0, in 2 boots
	# of 8. (-l, no loopback, rxe refuses: it has no
	# IBV_QP_CREATE_BLOCK_SELF_MCAST_LB.) What roxe0 receives does not
	# depend on the sender hearing itself.
	mckey_case "roxe0 receives from rxe0" 239.1.2.3 $B $A attached -o
	mckey_case "rxe0 receives from roxe0" 239.1.2.4 $A $B joined_rxa
	mckey_case "roxe0 loopback" 239.1.2.5 $B $B attached
	grep -E "(at|de)tach qp" "$ROXE_VM_OUT/roxed.log" | sed 's/^/    roxed: /' | sed -n 1,12p || true
	"$MCAST_VERBS" roxe0 >"$ROXE_VM_OUT/mcast_verbs.log" 2>&1 || bad "mcast_verbs roxe0 failed"
	sed 's/^/    /' "$ROXE_VM_OUT/mcast_verbs.log"
	v=$(grep -c "attach qp [0-9]* to 239.9.9.9\$" "$ROXE_VM_OUT/roxed.log" || true)
	x=$(grep -c "detach qp [0-9]* from 239.9.9.9\$" "$ROXE_VM_OUT/roxed.log" || true)
	[ "$v" -gt 0 ] && [ "$v" = "$x" ] && kill -0 "$ROXED_PID" &&
		ok "roxed: $v attaches to 239.9.9.9, as many detaches, still serving" ||
		bad "roxed: $v attaches to 239.9.9.9, $x detaches"
	vm_check_veth_drops kmod_mcast rxa rxb || fail=1
	vm_check_dmesg
	[ $fail = 0 ] && log "all passed" || log "FAILED"
	exit $fail
}

# ============================ host side ===================================
host_missing() { echo "kmod_mcast: FAIL: missing: $*"; exit $KSFT_FAIL; }

host_main() {
	local top out
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	out=$(vm_out kmod-mcast)
	vm_host_ready
	command -v mckey >/dev/null || host_missing "mckey missing (rdmacm-utils)"
	vm_need_kmod "$top"
	vm_build_prog kmod_mcast "$top" mcast_verbs
	[ -x "$top/build/bin/roxed" ] || host_missing "build/bin/roxed missing (make)"
	vm_run_guest kmod_mcast "$out" 240 \
		--add "$top/build/kmod/$KVER/roxe.ko" --add "$top/build/bin/roxed" \
		--add "$(command -v mckey)" --add "$top/build/vm/mcast_verbs" \
		--add "$top/selftests/vm/vm_lib.sh" \
		--add /usr/bin/stdbuf --add /usr/libexec/coreutils/libstdbuf.so
	echo "kmod_mcast: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	guest_main
else
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"
	host_main
fi
