#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# roxe.ko's data path (control ABI v3) in the guest, against a fake roxed.
#
# Host side: builds build/kmod/$KVER/roxe.ko if it is missing and
# build/vm/kmod_datapath from kmod_datapath.c, boots the VM harness with
# both and this file as the guest script, prints the guest's findings.
# Guest side (ROXE_VM_GUEST=1):
#   - insmod roxe.ko; kmod_datapath eth0: a fake daemon attaches eth0 and
#     SERVEs two engines, an application uses roxe0 through the stock rxe
#     provider; doorbells, MR mapping and revocation, CQ arming and events,
#     a daemon-written CQE, async events, and the daemon's death with work
#     outstanding (flush completions, the CQ event, no hang), see the
#     program's comment;
#   - roxe0 is gone afterwards; dmesg counts the flush completions that
#     did not fit an overfilled CQ; a second run on a fresh device passes
#     too; rmmod roxe succeeds;
#   - dmesg holds no WARNING, BUG, Oops or call trace.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4

# ============================ guest side ==================================
KO=${ROXE_TOP:-}/build/kmod/$(uname -r)/roxe.ko
PROG=${ROXE_TOP:-}/build/vm/kmod_datapath
fail=0

log() { echo "kmod_datapath: $*"; }
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }

guest_main() {
	local t0=$SECONDS t1 out rc=0 n
	dmesg -c >/dev/null
	insmod "$KO" || { bad "insmod $KO"; return 1; }
	t1=$SECONDS
	out=$(timeout 120 "$PROG" eth0 2>&1) || rc=$?
	echo "$out" | sed 's/^/    /'
	n=$(grep -c '^ok:' <<<"$out" || true)
	if [ $rc = 0 ] && ! grep -q '^FAIL' <<<"$out"; then
		ok "data path: $n checks passed in $((SECONDS - t1)) s"
	else
		bad "kmod_datapath exited $rc ($n checks passed)"
	fi
	vm_wait_for 5 vm_no_dev roxe0 && ok "roxe0 gone" || bad "roxe0 still registered"
	dmesg | grep 'roxe0: cq [0-9]* full: 2 flush completions not written' >/dev/null &&
		ok "dmesg: the overfilled CQ's 2 lost flush completions are counted" ||
		bad "dmesg does not count the overfilled CQ's lost completions"
	# again on a fresh device: nothing of the first one is left over
	rc=0
	out=$(timeout 120 "$PROG" eth0 2>&1) || rc=$?
	n=$(grep -c '^ok:' <<<"$out" || true)
	if [ $rc = 0 ] && ! grep -q '^FAIL' <<<"$out"; then
		ok "second run: $n checks passed"
	else
		echo "$out" | sed 's/^/    2nd: /'
		bad "second run: kmod_datapath exited $rc"
	fi
	rmmod roxe && ok "rmmod roxe" || bad "rmmod roxe failed"
	vm_check_dmesg
	dmesg | grep -E 'roxe' | tail -n 8 | sed 's/^/    dmesg: /'
	log "guest part took $((SECONDS - t0)) s"
	return $fail
}

# ============================ host side ===================================
host_missing() { echo "kmod_datapath: FAIL: missing: $*"; exit $KSFT_FAIL; }

host_main() {
	local top out
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"	# find_top, vm_host_ready, ...
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	out=$(vm_out kmod_datapath.out)

	vm_host_ready
	vm_need_kmod "$top"
	# the guest's fake daemon and application
	vm_build_prog kmod_datapath "$top" kmod_datapath -pthread

	vm_run_guest kmod_datapath "$out" 200 --add "$top/build/kmod/$KVER/roxe.ko" \
		--add "$top/build/vm/kmod_datapath" --add "$top/selftests/vm/vm_lib.sh"
	echo "kmod_datapath: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"	# added to the image
	guest_main
else
	host_main
fi
