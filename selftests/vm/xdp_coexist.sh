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
# Then with xdp-tools' own programs, from separate processes (roxectl's
# attachment outlives it): xdp-filter loaded on a veth first; `roxectl
# attach` joins its dispatcher; `xdp-loader status` lists xdp-filter at its
# priority and roxe_xdp at 100, both chaining XDP_PASS; `roxectl status`
# finds roxe there; `bpftool map lookup name roxe_qp_stats` reads roxe's
# counters (BTF: field names); `roxectl detach` under a bpffs of its own
# (unshare --mount, as `ip netns exec` gives) refuses, changing nothing; `roxectl detach` leaves xdp-filter alone in the
# dispatcher; `roxectl attach` again after `xdp-filter unload` attaches roxe
# alone (no dispatcher), as before issue #36.
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
	step_xdp_tools
}

bad() { echo "xdp_coexist: FAIL: $*"; fail=1; }
ok() { echo "xdp_coexist: ok: $*"; }

# The guest's root namespace, veth cxa <-> cxb: xdp-filter, then roxe, on cxb.
step_xdp_tools() {
	local ip=/usr/sbin/ip ctl=$ROXE_TOP/build/bin/roxectl st fail=0
	grep -q ' /sys/fs/bpf bpf ' /proc/mounts || mount -t bpf bpf /sys/fs/bpf
	$ip link add cxa type veth peer name cxb
	$ip link set cxa up
	$ip link set cxb up
	xdp-filter load -m native cxb || bad "xdp-filter load"
	$ctl attach cxb -E 1 >"$ROXE_VM_OUT/attach.txt" 2>&1 || bad "roxectl attach: $(cat "$ROXE_VM_OUT/attach.txt")"
	st=$(xdp-loader status cxb 2>&1)
	echo "$st" | sed 's/^/    /'
	grep -q 'xdp_dispatcher' <<<"$st" || bad "no dispatcher on cxb"
	grep -Eq '=> +[0-9]+ +xdpfilt_' <<<"$st" || bad "xdp-filter not in the dispatcher"
	grep -Eq '=> +100 +roxe_xdp .*XDP_PASS' <<<"$st" || bad "roxe_xdp not at priority 100 chaining XDP_PASS"
	[ "$(echo "$st" | grep -c '=>')" = 2 ] || bad "not two programs in the dispatcher"
	st=$($ctl status 2>&1) || bad "roxectl status"
	echo "$st" | sed 's/^/    /'
	grep -q '^cxb ' <<<"$st" || bad "roxectl status does not find roxe on cxb"
	st=$(bpftool map lookup name roxe_qp_stats key 0 0 0 0 2>&1) || true
	grep -q '"rx_packets"' <<<"$st" ||
		bad "bpftool map lookup name roxe_qp_stats: no BTF-described entry: $st"
	# a bpffs of its own (what `ip netns exec` gives): libxdp cannot see the
	# dispatcher's pins there, so roxectl detach refuses and says why
	if st=$(unshare --mount bash -c "mount -t bpf bpf /sys/fs/bpf && $ctl detach cxb" 2>&1); then
		bad "roxectl detach from another bpffs succeeded: $st"
	elif grep -q 'not in this mount namespace' <<<"$st" &&
	     [ "$(xdp-loader status cxb 2>&1 | grep -c '=>')" = 2 ]; then
		ok "roxectl detach from another bpffs refused, nothing changed: $st"
	else
		bad "roxectl detach from another bpffs: $st"
	fi
	$ctl detach cxb || bad "roxectl detach"
	st=$(xdp-loader status cxb 2>&1)
	echo "$st" | sed 's/^/    /'
	if [ "$(echo "$st" | grep -c '=>')" = 1 ] && grep -Eq '=> +[0-9]+ +xdpfilt_' <<<"$st"; then
		ok "roxectl detach left xdp-filter running alone in the dispatcher"
	else
		bad "after roxectl detach: want xdp-filter alone"
	fi
	xdp-filter unload cxb || bad "xdp-filter unload"
	$ctl attach cxb -E 1 >/dev/null 2>&1 || bad "roxectl attach on a free cxb"
	st=$($ip -d link show cxb)
	if grep -Eq 'prog/xdp id [0-9]+ name roxe_xdp ' <<<"$st"; then
		ok "alone, roxe's program is attached directly: $(echo "$st" | grep -o 'prog/xdp id [0-9]* name [a-z_]*')"
	else
		bad "alone: the program on cxb is not roxe_xdp: $st"
	fi
	$ctl detach cxb >/dev/null || bad "roxectl detach (alone)"
	$ip link del cxa
	[ $fail = 0 ] && ok "xdp-filter and roxe share cxb through the dispatcher"
	return $fail
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
	command -v xdp-filter >/dev/null && command -v xdp-loader >/dev/null ||
		host_missing "xdp-filter, xdp-loader (apt install xdp-tools)"
	command -v bpftool >/dev/null || host_missing "bpftool (apt install bpftool)"
	vm_run_guest xdp_coexist "$out" 240 \
		--add "$top/$t" --add "$top/build/bin/roxectl" \
		--add "$top/tools/scripts/netns.sh" --add "$top/selftests/vm/vm_lib.sh" \
		--add /usr/lib/x86_64-linux-gnu/bpf/xdp-dispatcher.o \
		--add /usr/sbin/xdp-loader --add /usr/sbin/xdp-filter --add /usr/sbin/bpftool \
		--add /usr/bin/unshare \
		--add /usr/lib/x86_64-linux-gnu/bpf
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
