#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The VM harness (tools/vm/run.sh) voids a run whose guest NIC stopped
# transmitting and runs it once more. Under TCG the guest's virtio-net
# transmit queue once stalled for good in the middle of interop_faults
# (the guest kernel's "NETDEV WATCHDOG ... transmit queue 0 timed out"
# every 5 s): every frame rxe sent was lost and the test failed for the
# emulator's fault. The guest here prints that line into its kernel log:
#   - once: the harness keeps the void run in OUT.void, reruns with
#     ROXE_VM_RERUN=1, and exits with the rerun's result (0);
#   - on every run: the harness gives up after the rerun and exits 125;
#   - never: one run, no OUT.void;
#   - once, with roxed in the image (roxe may drive the NIC): no void, the
#     harness exits 125 at once.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4

# ============================ guest side ==================================
# VM_RERUN_STALL: never, once or always; the line as the 6.1 guest's
# dev_watchdog prints it (netdev_crit).
if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	echo "vm_rerun: guest: stall=$VM_RERUN_STALL rerun=${ROXE_VM_RERUN:-0}"
	case "$VM_RERUN_STALL/${ROXE_VM_RERUN:-}" in
	once/ | always/*)
		echo "<2>virtio_net virtio0 eth0: NETDEV WATCHDOG: CPU: 0: transmit queue 0 timed out 5148 ms" >/dev/kmsg
		sleep 1 ;;	# on the console before the guest powers off
	esac
	exit 0
fi

# ============================ host side ===================================
fail=0
ok() { echo "vm_rerun: ok: $*"; }
bad() { echo "vm_rerun: FAIL: $*"; fail=1; }
host_missing() { echo "vm_rerun: FAIL: missing: $*"; exit $KSFT_FAIL; }

# case STALL WANT_RC WANT_VOID [run.sh options]: one run.sh call
case_run() {
	local stall=$1 want_rc=$2 want_void=$3 out=$top/build/vm/vm_rerun-$1${4:+-roxe} rc=0 boots
	shift 3
	rm -rf "$out" "$out.void"
	"$top/tools/vm/run.sh" --quiet --timeout 120 --out "$out" --env VM_RERUN_STALL="$stall" \
		"$@" --script "$(readlink -f "$0")" 2>"$out.log" || rc=$?
	sed 's/^/    /' "$out.log"
	[ "$rc" = "$want_rc" ] && ok "$stall: run.sh exit $rc" || bad "$stall: run.sh exit $rc, want $want_rc"
	boots=$(cat "$out/console.log" "$out.void/console.log" 2>/dev/null | grep -ac '^vm_rerun: guest:' || true)
	if [ "$want_void" = 1 ]; then
		[ "$boots" = 2 ] && ok "$stall: two boots" || bad "$stall: $boots boots, want 2"
		grep -q '^vm: VOID: ' "$out.log" && ok "$stall: said VOID for the summary" ||
			bad "$stall: no \"vm: VOID:\" line"
		grep -aq 'NETDEV WATCHDOG' "$out.void/console.log" 2>/dev/null &&
			ok "$stall: the void run kept in $out.void" || bad "$stall: no void run kept"
		grep -aq '^vm_rerun: guest: stall=[a-z]* rerun=1' "$out/console.log" 2>/dev/null &&
			ok "$stall: the rerun's guest sees ROXE_VM_RERUN=1" || bad "$stall: the rerun's guest has no ROXE_VM_RERUN=1"
	else
		[ "$boots" = 1 ] && ok "$stall: one boot" || bad "$stall: $boots boots, want 1"
		[ ! -e "$out.void" ] && ok "$stall: no void run" || bad "$stall: $out.void exists"
	fi
	rm -f "$out.log"
}

. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"	# find_top, vm_host_ready
top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
vm_host_ready
case_run never 0 0
case_run once 0 1
case_run always 125 1
[ -x "$top/build/bin/roxed" ] || bad "build/bin/roxed missing (make)"
case_run once 125 0 --add "$top/build/bin/roxed"
[ $fail = 0 ] && { echo "vm_rerun: PASS"; exit $KSFT_PASS; }
echo "vm_rerun: FAIL"
exit $KSFT_FAIL
