#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The VM harness (tools/vm/run.sh) fails a run whose guest NIC stopped
# transmitting, and never runs it again: a rerun would turn a failure into
# a pass. Under TCG the guest's virtio-net transmit queue once stalled for
# good in the middle of interop_faults (the guest kernel's "NETDEV
# WATCHDOG ... transmit queue 0 timed out" every 5 s). The guest here
# prints that line into its kernel log:
#   - never: one boot, the script's exit code (0);
#   - once: one boot, exit 125, the stall said on stderr;
#   - once, with roxed in the image: the same, and said that roxe was in
#     the guest.
# A failed run ends with run.sh's verdict (stderr and OUT/vm-verdict.txt,
# which tests quote in their last line, often all a CI log keeps), naming
# the console's telling line:
#   - panic: the guest crashes its kernel (sysrq c), one boot, exit 125,
#     the verdict quotes the panic;
#   - oops: the guest logs an oops's first line and its script fails:
#     the script's exit code (1), the verdict quotes the oops;
#   - once: the verdict quotes the watchdog's line.
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4

# ============================ guest side ==================================
# VM_NIC_STALL: never or once; the line as the 6.1 guest's
# dev_watchdog prints it (netdev_crit).
if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	echo "vm_nic_stall: guest: stall=$VM_NIC_STALL"
	case "$VM_NIC_STALL" in
	once)
		echo "<2>virtio_net virtio0 eth0: NETDEV WATCHDOG: CPU: 0: transmit queue 0 timed out 5148 ms" >/dev/kmsg
		sleep 1 ;;	# on the console before the guest powers off
	panic)
		echo c >/proc/sysrq-trigger
		sleep 10 ;;	# not reached: panic=-1 and -no-reboot end QEMU
	oops)
		echo "<1>BUG: kernel NULL pointer dereference, address: 0000000000000008" >/dev/kmsg
		sleep 1
		exit 1 ;;
	esac
	exit 0
fi

# ============================ host side ===================================
fail=0
ok() { echo "vm_nic_stall: ok: $*"; }
bad() { echo "vm_nic_stall: FAIL: $*"; fail=1; }
host_missing() { echo "vm_nic_stall: FAIL: missing: $*"; exit $KSFT_FAIL; }

# case STALL WANT_RC [run.sh options]: one run.sh call, one boot
case_run() {
	local stall=$1 want_rc=$2 out=$top/build/vm/vm_nic_stall-$1${3:+-roxe} rc=0 boots
	shift 2
	rm -rf "$out"
	mkdir -p "${out%/*}"
	"$top/tools/vm/run.sh" --quiet --timeout 120 --out "$out" --env VM_NIC_STALL="$stall" \
		"$@" --script "$(readlink -f "$0")" 2>"$out.log" || rc=$?
	sed 's/^/    /' "$out.log"
	[ "$rc" = "$want_rc" ] && ok "$stall${1:+ $*}: run.sh exit $rc" ||
		bad "$stall${1:+ $*}: run.sh exit $rc, want $want_rc"
	boots=$(grep -ac '^vm_nic_stall: guest:' "$out/console.log" 2>/dev/null || true)
	[ "$boots" = 1 ] && ok "$stall: one boot, never a rerun" || bad "$stall: $boots boots, want 1"
	case $stall in
	once)
		grep -q "^vm: the guest's NIC stopped transmitting" "$out.log" &&
			ok "$stall: the stall said on stderr" || bad "$stall: the stall not said"
		grep -q "; console: .*NETDEV WATCHDOG: CPU: 0: transmit queue 0" "$out/vm-verdict.txt" &&
			ok "$stall: the verdict quotes the watchdog" ||
			bad "$stall: the verdict does not quote the watchdog: $(cat "$out/vm-verdict.txt")"
		if [ $# -gt 0 ]; then
			grep -q "roxe in the guest" "$out.log" && ok "$stall: said roxe was in the guest" ||
				bad "$stall: roxe in the guest not said"
		fi ;;
	panic)
		grep -q "^vm: no result from the guest, qemu exited with 0 .*; console: .*Kernel panic - not syncing" \
			"$out/vm-verdict.txt" && ok "$stall: the verdict quotes the panic" ||
			bad "$stall: the verdict does not quote the panic: $(cat "$out/vm-verdict.txt" 2>&1)" ;;
	oops)
		grep -q "^vm: guest script exited with 1 .*; console: .*BUG: kernel NULL pointer dereference" \
			"$out/vm-verdict.txt" && ok "$stall: the verdict quotes the oops" ||
			bad "$stall: the verdict does not quote the oops: $(cat "$out/vm-verdict.txt" 2>&1)" ;;
	never)
		[ ! -e "$out/vm-verdict.txt" ] && ok "$stall: no verdict" ||
			bad "$stall: a verdict on a run that passed: $(cat "$out/vm-verdict.txt")" ;;
	esac
	rm -f "$out.log"
}

. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"	# find_top, vm_host_ready
top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
vm_host_ready
case_run never 0
case_run once 125
case_run panic 125
case_run oops 1
[ -x "$top/build/bin/roxed" ] || bad "build/bin/roxed missing (make)"
case_run once 125 --add "$top/build/bin/roxed"
[ $fail = 0 ] && { echo "vm_nic_stall: PASS"; exit $KSFT_PASS; }
echo "vm_nic_stall: FAIL"
exit $KSFT_FAIL
