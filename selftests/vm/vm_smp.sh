#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The VM harness (tools/vm/run.sh) runs a guest with more than one vCPU
# so that the vCPUs' code stays coherent when the kernel patches its own
# text. Multi-threaded TCG does not keep it so: after a static key flips,
# one vCPU may still run its translation of the int3 that the patching
# vCPU had put in and has taken out again, and the kernel dies ("Oops:
# int3"). Debian 12's QEMU 7.2 did within seconds (6.12, 7.3; a soft
# lockup on 6.1), which once failed zerocopy.sh (7.3, 2 vCPUs) in CI;
# bookworm-backports' 10.0.2 did once in this test's 400 flips on 7.3 in
# CI (2026-11-30). So such guests run single-threaded TCG.
#
# Guest (2 vCPUs, each kernel the suite boots with more than one: 6.12 for
# virtio_mq, trixie-backports' for zerocopy): kernel.sched_schedstats,
# a static key in the scheduler's hot paths, flipped ROUNDS times while
# two loops fork and exec /bin/true, so that both vCPUs run the patched
# code. Pass: every flip done, no Oops, BUG or WARNING in the kernel log.
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
ROUNDS=${VM_SMP_ROUNDS:-400}

# ============================ guest side ==================================
if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	say() { echo "vm_smp: $*"; }
	knob=/proc/sys/kernel/sched_schedstats
	[ -w $knob ] || { say "FAIL: no $knob"; exit 1; }
	say "guest $(uname -r), $(nproc) vCPUs, $VM_SMP_ROUNDS flips"
	[ "$(nproc)" -ge 2 ] || { say "FAIL: $(nproc) vCPU"; exit 1; }
	stop=/tmp/vm_smp.stop
	for _ in 1 2; do
		( while [ ! -e $stop ]; do /bin/true; done ) &
	done
	n=0
	while [ $n -lt "$VM_SMP_ROUNDS" ]; do
		echo 1 >$knob
		echo 0 >$knob
		n=$((n + 1))
	done
	touch $stop
	wait
	say "flips done: $n"
	if dmesg | grep -E 'Oops|BUG:|WARNING:'; then
		say "FAIL: the kernel log above"
		exit 1
	fi
	say "ok: $n flips of a hot static key on 2 vCPUs, the kernel log clean"
	exit 0
fi

# ============================ host side ===================================
host_missing() { echo "vm_smp: FAIL: missing: $*"; exit $KSFT_FAIL; }
. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"	# find_top, vm_run_guest
top=$(find_top) || host_missing "the roxe tree (tools/vm/run.sh)"
vm_host_ready
for k in 6.12 trixie-bpo; do
	echo "vm_smp: $k"
	KVER=$k vm_run_guest vm_smp "$top/build/vm/vm_smp-$k" 180 --smp 2 \
		--env VM_SMP_ROUNDS="$ROUNDS"
done
echo "vm_smp: PASS"
exit $KSFT_PASS
