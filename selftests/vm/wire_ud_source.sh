#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# A hostile application cannot choose the source of its UD datagrams
# (issue #15, finding 3): roxe0 (roxe.ko + roxed) against kernel rxe in the
# guest, joined by a veth pair as in kmod_interop.sh:
#   rxa (10.77.2.1, rxe0)  <-- veth -->  rxb (10.77.2.2, roxe0: roxed --netdev rxb)
# wire_ud_source.c, one process with a UD QP on each device:
#   - an ordinary send through an AH carries the AH's number (ah_num, from
#     roxe.ko's create_ah) and arrives from roxe0's own address;
#   - WQEs the application writes into its own send ring by hand, with a
#     vector naming 10.77.2.66 as the source and no AH (ah_num 0) or
#     another PD's AH, fail with IBV_WC_LOC_QP_OP_ERR and nothing arrives
#     from 10.77.2.66;
#   - roxed is still up afterwards, the veth pair dropped nothing, and
#     dmesg has no WARNING/BUG/Oops.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
A=10.77.2.1 B=10.77.2.2

# ============================ guest side ==================================
KO=${ROXE_TOP:-}/build/kmod/$(uname -r)/roxe.ko
ROXED=${ROXE_TOP:-}/build/bin/roxed
PROG=${ROXE_TOP:-}/build/vm/wire_ud_source
fail=0

log() { echo "wire_ud_source: $*"; }
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }

guest_main() {
	local out rc=0
	dmesg -c >/dev/null
	vm_rxe_roxe_pair $A $B 1 || exit 1
	out=$(timeout 120 "$PROG" roxe0 "$GR" rxe0 "$GX" "$(cat /sys/class/net/rxa/address)" 2>&1) ||
		rc=$?
	echo "$out" | sed 's/^/    /'
	if [ $rc = 0 ] && ! grep -q '^FAIL' <<<"$out"; then
		ok "$(grep -c '^ok:' <<<"$out") checks passed"
	else
		bad "wire_ud_source exited $rc"
	fi
	kill -0 $ROXED_PID 2>/dev/null && ok "roxed still up" || bad "roxed died"
	vm_check_veth_drops wire_ud_source rxa rxb || fail=1
	kill -TERM $ROXED_PID 2>/dev/null || true
	wait $ROXED_PID 2>/dev/null || true
	vm_check_dmesg
	[ $fail = 0 ] && log "all passed" || log "FAILED"
	exit $fail
}

# ============================ host side ===================================
host_missing() { echo "wire_ud_source: FAIL: missing: $*"; exit $KSFT_FAIL; }

host_main() {
	local top out
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	out=$(vm_out wire-ud-source)
	vm_host_ready
	vm_need_kmod "$top"
	[ -x "$top/build/bin/roxed" ] || host_missing "build/bin/roxed missing (make)"
	vm_build_prog wire_ud_source "$top" wire_ud_source
	vm_run_guest wire_ud_source "$out" 200 --add "$top/build/kmod/$KVER/roxe.ko" \
		--add "$top/build/bin/roxed" --add "$top/build/vm/wire_ud_source" \
		--add "$top/selftests/vm/vm_lib.sh"
	echo "wire_ud_source: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	guest_main
else
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"
	host_main
fi
