#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# roxe0's port counters and resources through rdma(8) (issue #17), one
# roxe0 (roxe.ko served by `roxed --netdev rxb`, XDP + AF_XDP) in loopback:
#   - while ibv_rc_pingpong's server waits for its client, `rdma resource
#     show qp link roxe0/1` lists its RC QP (ib_core's restrack);
#   - after ibv_rc_pingpong -c -n 500 from roxe0 to itself, `rdma statistic
#     show link roxe0/1` shows sent_pkts and rcvd_pkts grown by at least
#     the 1000 SENDs the two sides made, and its loopback_pkts equals what
#     `roxectl stats` counts as loopback (roxed's totals, pushed each
#     second into the area roxe.ko reads them from);
#   - the same numbers in sysfs (ports/1/hw_counters);
#   - ibv_resize_cq through the stock rxe provider (kmod_resize_cq.c):
#     below the CQEs outstanding EINVAL, up and down keeping them in
#     order, then RC SEND round trips over the resized CQ;
#   - memory windows (kmod_mw.c) against kernel rxe (rxe0 on rxa): type 1
#     (ibv_bind_mw) and type 2 (IBV_WR_BIND_MW) windows of roxe0, rxe0's
#     READs and WRITEs through their rkeys (data checked), outside them,
#     after unbinding, LOCAL_INV and SEND_WITH_INV, a refused bind; then
#     the roles swapped (rxe0's windows, roxe0 the peer), and both runs'
#     outcomes printed side by side.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
A=10.77.4.1 B=10.77.4.2
N=500

# ============================ guest side ==================================
KO=${ROXE_TOP:-}/build/kmod/$(uname -r)/roxe.ko
ROXED=${ROXE_TOP:-}/build/bin/roxed
ROXECTL=${ROXE_TOP:-}/build/bin/roxectl
RESIZE=${ROXE_TOP:-}/build/vm/kmod_resize_cq
MW=${ROXE_TOP:-}/build/vm/kmod_mw
fail=0

log() { echo "kmod_counters: $*"; }
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }

# counter NAME: NAME's value in `rdma statistic show link roxe0/1` ("" if absent)
counter() {
	{ rdma statistic show link roxe0/1 2>/dev/null || true; } | tr -s ' \n' '\n' |
		awk -v n="$1" 'p { print; exit } $0 == n { p = 1 }'
}

roxectl_loopback() { { "$ROXECTL" stats rxb 2>/dev/null || true; } | awk '$1 == "loopback" { print $2 }'; }

rc_qp_listed() { rdma resource show qp link roxe0/1 2>/dev/null | grep 'type RC.*ibv_rc_pingpong' >/dev/null; }

# Memory windows, roxe0's then rxe0's (rxe0 on rxa): the same program, the
# roles swapped; the cases' outcomes side by side.
roxed_mrs() { "$ROXECTL" devices rxb --json 2>/dev/null | grep -o '"mrs": [0-9]*' | grep -o '[0-9]*$'; }
mrs_are() { [ "$(roxed_mrs)" = "$1" ]; }

step_mw() {
	local rc=0 m0
	rdma link add rxe0 type rxe netdev rxa
	vm_wait_for 10 vm_gid_index rxe0 $A || { bad "no RoCE v2 GID on rxe0"; return; }
	m0=$(roxed_mrs)
	timeout 120 "$MW" roxe0 rxe0 >"$ROXE_VM_OUT/mw-roxe.log" 2>&1 || rc=$?
	grep -v '^case ' "$ROXE_VM_OUT/mw-roxe.log" | sed 's/^/    /'
	[ $rc = 0 ] && ok "kmod_mw roxe0 rxe0: roxe0's memory windows" ||
		bad "kmod_mw roxe0 rxe0 (exit $rc)"
	# it exited with a window bound: its MRs went all the same
	vm_wait_for 5 mrs_are "$m0" && ok "roxed's MRs back to $m0 after kmod_mw's exit" ||
		bad "roxed holds $(roxed_mrs) MRs after kmod_mw's exit, $m0 before"
	rc=0
	timeout 120 "$MW" rxe0 roxe0 >"$ROXE_VM_OUT/mw-rxe.log" 2>&1 || rc=$?
	grep -v '^case \|^ok: ' "$ROXE_VM_OUT/mw-rxe.log" | sed 's/^/    /'
	[ $rc = 0 ] && ok "kmod_mw rxe0 roxe0: roxe0 through rxe0's memory windows" ||
		bad "kmod_mw rxe0 roxe0 (exit $rc)"
	log "memory windows, owner roxe0 | owner rxe0:"
	awk -F': ' 'FNR == NR && /^case / { r[$1] = $2; o[++n] = $1; next }
		/^case / { x[$1] = $2; if (!($1 in r)) o[++n] = $1 }
		END { for (i = 1; i <= n; i++) { k = o[i]; sub(/^case /, "", k)
			printf "    %-26s %-34s %s\n", k, r[o[i]], x[o[i]] } }' \
		"$ROXE_VM_OUT/mw-roxe.log" "$ROXE_VM_OUT/mw-rxe.log"
	rdma link delete rxe0
}

guest_main() {
	local t0=$SECONDS spid s0 r0 s1 r1 lb lbc f v n rc=0
	# a pair whose ends talk over the veth (rxe0 joins rxa for step_mw)
	vm_veth_pair rxa $A rxb $B || { bad "veth pair"; exit 1; }
	insmod "$KO" || { bad "insmod $KO"; exit 1; }
	"$ROXED" --netdev rxb --foreground 2>>"$ROXE_VM_OUT/roxed.log" &
	ROXED_PID=$!
	vm_wait_for 20 vm_have_dev roxe0 || { bad "roxed --netdev rxb: no roxe0"; cat "$ROXE_VM_OUT/roxed.log"; exit 1; }
	vm_wait_for 10 vm_verbs_dev roxe0 || { bad "no uverbs device for roxe0"; exit 1; }
	vm_wait_for 10 vm_gid_index roxe0 $B || { bad "no RoCE v2 GID for $B"; exit 1; }
	GR=$(vm_gid_index roxe0 $B)
	ok "roxe0 on rxb ($B, gid $GR)"
	{ rdma statistic show link roxe0/1 2>&1 || true; } | sed 's/^/    /'

	s0=$(counter sent_pkts) r0=$(counter rcvd_pkts)
	if [ -z "$s0" ] || [ -z "$r0" ]; then
		bad "rdma statistic show link roxe0/1: no sent_pkts/rcvd_pkts counters"
		s0=0 r0=0
	fi

	ibv_rc_pingpong -d roxe0 -g "$GR" -p 19001 -c -n $N >"$ROXE_VM_OUT/pp.srv" 2>&1 &
	spid=$!
	if vm_wait_for 20 vm_listening 19001 && vm_wait_for 5 rc_qp_listed; then
		ok "rdma resource show qp lists the server's QP:"
		rdma resource show qp link roxe0/1 | sed 's/^/    /'
	else
		bad "rdma resource show qp link roxe0/1 does not list ibv_rc_pingpong's RC QP"
		rdma resource show qp link roxe0/1 2>&1 | sed 's/^/    /'
	fi
	timeout 120 ibv_rc_pingpong -d roxe0 -g "$GR" -p 19001 -c -n $N $B >"$ROXE_VM_OUT/pp.cli" 2>&1 || rc=$?
	n=200	# the server exits right after the client
	while kill -0 $spid 2>/dev/null && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
	kill -KILL $spid 2>/dev/null || true
	wait $spid || rc=$((rc ? rc : 1))
	if [ $rc != 0 ]; then
		bad "ibv_rc_pingpong -c -n $N on roxe0 (exit $rc)"
		sed 's/^/    srv: /' "$ROXE_VM_OUT/pp.srv" | tail -8
		sed 's/^/    cli: /' "$ROXE_VM_OUT/pp.cli" | tail -8
	else
		ok "ibv_rc_pingpong -c -n $N: $(grep -h 'iters in' "$ROXE_VM_OUT/pp.cli")"
	fi

	vm_roxe_stats_fresh roxe0 || bad "roxed stored no counters"
	{ rdma statistic show link roxe0/1 2>&1 || true; } | sed 's/^/    /'
	s1=$(counter sent_pkts) r1=$(counter rcvd_pkts)
	lb=$(counter loopback_pkts) lbc=$(roxectl_loopback)
	log "sent_pkts $s0 -> ${s1:-none}, rcvd_pkts $r0 -> ${r1:-none}," \
	    "loopback_pkts ${lb:-none}, roxectl stats loopback ${lbc:-none}"
	[ -n "$s1" ] && [ $((s1 - s0)) -ge $((2 * N)) ] &&
		ok "sent_pkts grew by $((s1 - s0)) >= $((2 * N))" ||
		bad "sent_pkts did not grow by $((2 * N))"
	[ -n "$r1" ] && [ $((r1 - r0)) -ge $((2 * N)) ] &&
		ok "rcvd_pkts grew by $((r1 - r0)) >= $((2 * N))" ||
		bad "rcvd_pkts did not grow by $((2 * N))"
	[ -n "$lb" ] && [ "$lb" = "$lbc" ] && [ "$lb" -ge $((2 * N)) ] &&
		ok "loopback_pkts $lb = roxectl stats' loopback" ||
		bad "loopback_pkts ${lb:-none} != roxectl stats' loopback ${lbc:-none}"
	f=/sys/class/infiniband/roxe0/ports/1/hw_counters/sent_pkts
	v=$(cat $f 2>/dev/null) || v=
	[ -n "$v" ] && [ "$v" -ge "${s1:-1}" ] && ok "$f: $v" || bad "$f: ${v:-missing}"

	if "$RESIZE" roxe0 >"$ROXE_VM_OUT/resize.log" 2>&1; then
		ok "kmod_resize_cq roxe0:"
	else
		bad "kmod_resize_cq roxe0:"
	fi
	sed 's/^/    /' "$ROXE_VM_OUT/resize.log"

	step_mw

	kill -TERM $ROXED_PID
	wait $ROXED_PID || true
	vm_wait_for 10 vm_no_dev roxe0 || bad "roxe0 stays after roxed's SIGTERM"
	rmmod roxe || bad "rmmod roxe"
	vm_check_dmesg
	log "guest part took $((SECONDS - t0)) s"
	[ $fail = 0 ] && log "all passed" || log "FAILED"
	exit $fail
}

# ============================ host side ===================================
host_missing() { echo "kmod_counters: FAIL: missing: $*"; exit $KSFT_FAIL; }

host_main() {
	local top out
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	out=$(vm_out kmod-counters)
	vm_host_ready
	vm_need_kmod "$top"
	[ -x "$top/build/bin/roxed" ] || host_missing "build/bin/roxed missing (make)"
	vm_build_prog kmod_counters "$top" kmod_resize_cq
	vm_build_prog kmod_counters "$top" kmod_mw
	vm_run_guest kmod_counters "$out" 300 \
		--add "$top/build/kmod/$KVER/roxe.ko" --add "$top/build/bin/roxed" \
		--add "$top/build/vm/kmod_resize_cq" --add "$top/build/vm/kmod_mw" \
		--add "$top/build/bin/roxectl" --add "$top/selftests/vm/vm_lib.sh"
	echo "kmod_counters: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	guest_main
else
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"
	host_main
fi
