#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# On-demand paging MRs on roxe0 against kernel rxe (issue #39), in one
# guest on trixie-backports' kernel (rxe has ODP from 6.15), run as
# kmod_odp-trixie-bpo.sh (a link to this file):
#   rxa (10.77.9.1, rxe0)   <-- veth -->  rxb (10.77.9.2, roxe0)
#   rxc (10.77.10.1, rxe1)  <-- veth -->  rxd (10.77.10.2, rxe2)  (control)
# kmod_odp.c (every byte checked; its header lists the cases: untouched
# pages faulted on first use, READ, SEND/RECV both ways, the requester's
# WRITE and READ, atomics, madvise(MADV_DONTNEED) and munmap + mmap of
# used ranges rewritten, ibv_advise_mr's verb, a READ of an unmapped range
# an access error) runs three times:
#   - roxe0's ODP MRs, rxe0 the peer: every check must pass;
#   - rxe1's ODP MRs, rxe2 the peer: the control, in the same boot; its
#     failures are rxe's, printed as XFAIL (7.3.4's rxe moves wrong bytes
#     into and out of its ODP MRs: docs/kernel-ulps.md);
#   - rxe0's ODP MRs, roxe0 the peer: may fail only where the control does.
# roxe0's ODP caps and its answers to the cases that only print ("case")
# must be the control's. On a kernel without rxe ODP (kmod_odp.sh: 6.1,
# the default KVER; 6.12) roxe0 must offer none and refuse an ODP
# registration with the error rxe1 gives. dmesg without WARNING, BUG or
# Oops.
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
A=10.77.9.1 B=10.77.9.2 C=10.77.10.1 D=10.77.10.2

# ============================ guest side ==================================
KO=${ROXE_TOP:-}/build/kmod/$(uname -r)/roxe.ko
ROXED=${ROXE_TOP:-}/build/bin/roxed
ODP=${ROXE_TOP:-}/build/vm/kmod_odp
BLOCK=${ROXE_TOP:-}/build/vm/kmod_odp_block
fail=0

log() { echo "kmod_odp: $*"; }
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }

# odp NAME OWNER PEER: kmod_odp's run, its log in $ROXE_VM_OUT/NAME.log; its
# exit status
odp() {
	local rc=0
	timeout 120 "$ODP" "$2" "$3" >"$ROXE_VM_OUT/$1.log" 2>&1 || rc=$?
	sed 's/^/    /' "$ROXE_VM_OUT/$1.log"
	return $rc
}

# what must match the control's: the caps and the printed cases
facts() { grep -E '^(caps|case) ' "$ROXE_VM_OUT/$1.log" || true; }

guest_main() {
	local rc=0 crc=0 prc=0
	vm_veth_pair rxa $A rxb $B || { bad "veth pair rxa/rxb"; return 1; }
	vm_veth_pair rxc $C rxd $D || { bad "veth pair rxc/rxd"; return 1; }
	# ODP is offered by default where the kernel has it (roxe.ko's odp
	# parameter, Y; kmod_attrs checks the caps against rxe's); a kernel
	# without it has no such parameter
	insmod "$KO" || { bad "insmod $KO"; return 1; }
	if [ -e /sys/module/roxe/parameters/odp ]; then
		[ "$(cat /sys/module/roxe/parameters/odp)" = Y ] && ok "roxe.ko offers ODP by default (odp=Y)" ||
			bad "roxe.ko's odp parameter is $(cat /sys/module/roxe/parameters/odp), want Y by default"
	fi
	"$ROXED" --netdev rxb --foreground 2>>"$ROXE_VM_OUT/roxed.log" &
	vm_wait_for 20 vm_have_dev roxe0 && vm_wait_for 10 vm_verbs_dev roxe0 ||
		{ bad "roxed --netdev rxb registered no roxe0"; cat "$ROXE_VM_OUT/roxed.log"; return 1; }
	rdma link add rxe0 type rxe netdev rxa && rdma link add rxe1 type rxe netdev rxc &&
		rdma link add rxe2 type rxe netdev rxd || { bad "rdma link add"; return 1; }
	vm_wait_for 10 vm_gid_index rxe0 $A && vm_wait_for 10 vm_gid_index roxe0 $B &&
		vm_wait_for 10 vm_gid_index rxe1 $C && vm_wait_for 10 vm_gid_index rxe2 $D ||
		{ bad "no RoCE v2 GIDs"; return 1; }
	ok "roxe0 on rxb facing rxe0 on rxa; rxe1 facing rxe2 (the control)"

	log "rxe1's ODP MRs, rxe2 the peer (the control):"
	odp control rxe1 rxe2 || crc=$?
	if [ $crc = 4 ]; then
		# no rxe ODP on this kernel: roxe0 refuses as rxe does
		odp refuse roxe0 rxe0 || rc=$?
		[ $rc = 4 ] && [ "$(facts refuse)" = "$(facts control)" ] &&
			ok "no rxe ODP here: roxe0 offers none and refuses an ODP MR as rxe1 does" ||
			bad "without rxe ODP: roxe0 exited $rc: $(facts refuse) (rxe1: $(facts control))"
		vm_check_dmesg
		return $fail
	fi
	[ $crc = 0 ] && ok "control: rxe-to-rxe passes every check" ||
		log "XFAIL: the control (rxe1 with rxe2) exited $crc: its failures are rxe's (listed at the end)"

	log "roxe0's ODP MRs, rxe0 the peer:"
	odp roxe roxe0 rxe0 || rc=$?
	[ $rc = 0 ] && ok "roxe0's ODP MRs: $(grep -c '^ok:' "$ROXE_VM_OUT/roxe.log") checks passed" ||
		bad "kmod_odp roxe0 rxe0 exited $rc"
	if [ "$(facts roxe)" = "$(facts control)" ]; then
		ok "roxe0's ODP caps and printed cases are rxe1's:"
		facts roxe | sed 's/^/    /'
	else
		bad "roxe0 and rxe1 differ in ODP caps or cases:"
		facts control >"$ROXE_VM_OUT/facts-control"
		facts roxe >"$ROXE_VM_OUT/facts-roxe"
		diff "$ROXE_VM_OUT/facts-control" "$ROXE_VM_OUT/facts-roxe" | sed 's/^/    /' || true
	fi

	log "rxe0's ODP MRs, roxe0 the peer:"
	odp peer rxe0 roxe0 || prc=$?
	# rxe's failures with roxe0 as its peer must be the control's own
	grep '^FAIL' "$ROXE_VM_OUT/control.log" >"$ROXE_VM_OUT/fails-control" || true
	grep '^FAIL' "$ROXE_VM_OUT/peer.log" >"$ROXE_VM_OUT/fails-peer" || true
	if [ $prc = 0 ]; then
		ok "roxe0 as the peer of rxe0's ODP MRs: every check passes"
	elif [ $prc = 1 ] && ! grep -qvxF -f "$ROXE_VM_OUT/fails-control" "$ROXE_VM_OUT/fails-peer"; then
		log "XFAIL: rxe0's ODP MRs with roxe0 the peer fail $(grep -c . "$ROXE_VM_OUT/fails-peer") checks, each one the control (rxe1 with rxe2) fails too: rxe's"
	else
		bad "rxe0's ODP MRs with roxe0 exited $prc, failing where the control does not:"
		grep -vxF -f "$ROXE_VM_OUT/fails-control" "$ROXE_VM_OUT/fails-peer" | sed 's/^/    /' || true
	fi
	[ $crc = 0 ] || { log "the control's failures (rxe-to-rxe, rxe's ODP in this kernel):"
		sed 's/^/    /' "$ROXE_VM_OUT/fails-control"; }

	# a fault the application blocks: roxe0's ODP MR over a file of a FUSE
	# server that holds its READs; another tenant's traffic must go on
	log "a page fault the application blocks (kmod_odp_block), roxe0's ODP MR, rxe0 the peer:"
	modprobe fuse 2>/dev/null || true
	rc=0
	timeout 120 "$BLOCK" roxe0 rxe0 >"$ROXE_VM_OUT/block.log" 2>&1 || rc=$?
	sed 's/^/    /' "$ROXE_VM_OUT/block.log"
	[ $rc = 0 ] && ok "a blocked fault held up no other tenant of roxe0" ||
		bad "kmod_odp_block roxe0 rxe0 exited $rc"
	log "the same on rxe1's ODP MR, rxe2 the peer (the control, shown):"
	rc=0
	timeout 120 "$BLOCK" rxe1 rxe2 >"$ROXE_VM_OUT/block-control.log" 2>&1 || rc=$?
	sed 's/^/    /' "$ROXE_VM_OUT/block-control.log"
	log "the control exited $rc"
	dmesg | grep -i 'roxe' | tail -n 5 | sed 's/^/    dmesg: /'
	vm_check_dmesg
	return $fail
}

# ============================ host side ===================================
host_missing() { echo "kmod_odp: FAIL: missing: $*"; exit $KSFT_FAIL; }

host_main() {
	local top out
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	out=$(vm_out kmod-odp)	# not build/vm/kmod_odp: the program's
	vm_host_ready
	vm_need_kmod "$top"
	[ -x "$top/build/bin/roxed" ] || host_missing "build/bin/roxed missing (make)"
	vm_build_prog kmod_odp "$top" kmod_odp
	vm_build_prog kmod_odp "$top" kmod_odp_block
	vm_run_guest kmod_odp "$out" 480 \
		--add "$top/build/kmod/$KVER/roxe.ko" --add "$top/build/bin/roxed" \
		--add "$top/build/vm/kmod_odp" --add "$top/build/vm/kmod_odp_block" \
		--add "$top/selftests/vm/vm_lib.sh"
	echo "kmod_odp: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	guest_main
else
	host_main
fi
