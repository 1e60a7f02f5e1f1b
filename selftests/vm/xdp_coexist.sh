#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# roxe beside another XDP program through libxdp's dispatcher, on a kernel
# that runs it (issue #36). The development machine's kernel refuses
# freplace programs, so there selftests/xdp/coexist_netns_test only sees
# roxe refuse; Debian's guest kernel runs the dispatcher, so the same test
# binary, run in the guest (two network namespaces and a veth there), takes
# its other branch:
#   - through_libxdp: a counting program (bpf/roxe_count.bpf.c) attached
#     through libxdp first; roxe joins the dispatcher behind it (libxdp run
#     priority 100 after the counter's 50, XDP_PASS chained on), RC SEND,
#     WRITE and READ between two roxe devices checked byte for byte, the
#     counter counted every test datagram and exactly the RoCE frames
#     roxe's program judged; roxe's device closed, only roxe's program left
#     the dispatcher: the counter runs on, alone, still counting;
#   - plain_program: the counter attached directly: roxe refuses (-EBUSY),
#     roxectl attach says so in one sentence, the counter stays.
# The guest must report "libxdp's dispatcher runs": a kernel that cannot
# run it would not test what this test is for, and fails it.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4

# ============================ guest side ==================================
guest_main() {
	local t0=$SECONDS rc=0 logf=$ROXE_VM_OUT/coexist_netns_test.log
	"$ROXE_TOP/build/selftests/xdp/coexist_netns_test" >"$logf" 2>&1 || rc=$?
	grep -a '^# \|^ok\|^not ok' "$logf" | sed 's/^/    /'
	if [ $rc != 0 ]; then
		echo "xdp_coexist: FAIL: coexist_netns_test exited with $rc"
		return 1
	fi
	if ! grep -q "libxdp's dispatcher runs" "$logf"; then
		echo "xdp_coexist: FAIL: the guest kernel did not run libxdp's dispatcher"
		return 1
	fi
	echo "xdp_coexist: ok: roxe joined libxdp's dispatcher and left it, in $((SECONDS - t0)) s"
	return 0
}

# ============================ host side ===================================
host_missing() { echo "xdp_coexist: FAIL: missing: $*"; exit $KSFT_FAIL; }

host_main() {
	local top out t=build/selftests/xdp/coexist_netns_test
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	out=$(vm_out xdp_coexist)
	vm_host_ready
	[ -x "$top/$t" ] || host_missing "$t (make kselftest-build TARGETS=xdp)"
	[ -x "$top/build/bin/roxectl" ] || host_missing "build/bin/roxectl (make)"
	[ -r /usr/lib/x86_64-linux-gnu/bpf/xdp-dispatcher.o ] ||
		host_missing "libxdp's dispatcher object (apt install libxdp1)"
	vm_run_guest xdp_coexist "$out" 240 \
		--add "$top/$t" --add "$top/build/bin/roxectl" \
		--add "$top/tools/scripts/netns.sh" --add "$top/selftests/vm/vm_lib.sh" \
		--add /usr/lib/x86_64-linux-gnu/bpf/xdp-dispatcher.o
	echo "xdp_coexist: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	guest_main
else
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"
	host_main
fi
