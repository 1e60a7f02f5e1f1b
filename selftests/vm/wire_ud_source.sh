#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# A hostile application cannot choose the source of its UD datagrams
# (issue #15, finding 3): roxe0 (roxe.ko + roxed) against kernel rxe in the
# guest, joined by a veth pair as in kmod_interop.sh:
#   rxa (10.77.2.1, rxe0)  <-- veth -->  rxb (10.77.2.2, roxe0: roxed -d rxb)
# wire_ud_source.c, one process with a UD QP on each device:
#   - an ordinary send through an AH carries the AH's number (ah_num, from
#     roxe.ko's create_ah) and arrives from roxe0's own address;
#   - WQEs the application writes into its own send ring by hand, with a
#     vector naming 10.77.2.66 as the source and no AH (ah_num 0) or
#     another PD's AH, fail with IBV_WC_LOC_QP_OP_ERR and nothing arrives
#     from 10.77.2.66;
#   - roxed is still up afterwards and dmesg has no WARNING/BUG/Oops.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
A=10.77.2.1 B=10.77.2.2

# ============================ guest side ==================================
KO=${ROXE_TOP:-}/build/kmod/roxe.ko
ROXED=${ROXE_TOP:-}/build/bin/roxed
PROG=${ROXE_TOP:-}/build/vm/wire_ud_source
fail=0

log() { echo "wire_ud_source: $*"; }
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }

have_dev() { [ -e "/sys/class/infiniband/$1" ]; }
verbs_dev() { grep -qx "$1" /sys/class/infiniband_verbs/uverbs*/ibdev 2>/dev/null; }

guest_main() {
	local out rc=0 gx gr pid
	dmesg -c >/dev/null
	vm_veth_pair rxa $A rxb $B || { bad "veth pair"; exit 1; }
	insmod "$KO" || { bad "insmod $KO"; exit 1; }
	rdma link add rxe0 type rxe netdev rxa
	"$ROXED" -d rxb --foreground 2>>"$ROXE_VM_OUT/roxed.log" &
	pid=$!
	vm_wait_for 20 have_dev roxe0 && vm_wait_for 10 verbs_dev roxe0 &&
		vm_wait_for 10 vm_gid_index rxe0 $A && vm_wait_for 10 vm_gid_index roxe0 $B ||
		{ bad "roxe0 and rxe0 with RoCE v2 GIDs"; cat "$ROXE_VM_OUT/roxed.log"; exit 1; }
	gx=$(vm_gid_index rxe0 $A)
	gr=$(vm_gid_index roxe0 $B)
	out=$(timeout 120 "$PROG" roxe0 "$gr" rxe0 "$gx" "$(cat /sys/class/net/rxa/address)" 2>&1) ||
		rc=$?
	echo "$out" | sed 's/^/    /'
	if [ $rc = 0 ] && ! grep -q '^FAIL' <<<"$out"; then
		ok "$(grep -c '^ok:' <<<"$out") checks passed"
	else
		bad "wire_ud_source exited $rc"
	fi
	kill -0 $pid 2>/dev/null && ok "roxed still up" || bad "roxed died"
	kill -TERM $pid 2>/dev/null || true
	wait $pid 2>/dev/null || true
	if dmesg | grep -E 'WARNING|BUG|Oops|Call Trace' >/dev/null; then
		bad "dmesg has warnings"
		dmesg | grep -E -A5 'WARNING|BUG|Oops|Call Trace' | head -30 | sed 's/^/    /'
	fi
	[ $fail = 0 ] && log "all passed" || log "FAILED"
	exit $fail
}

# ============================ host side ===================================
host_skip() { echo "wire_ud_source: SKIP: $*"; exit $KSFT_SKIP; }

host_main() {
	local top out src bin
	top=$(find_top) || host_skip "cannot find the roxe tree (tools/vm/run.sh)"
	out=$top/build/vm/wire-ud-source
	[ "$(id -u)" = 0 ] || host_skip "needs root"
	command -v qemu-system-x86_64 >/dev/null || host_skip "qemu-system-x86_64 missing"
	compgen -G '/boot/vmlinuz-6.1*-amd64' >/dev/null || host_skip "no Debian 6.1 kernel image"
	[ -c /dev/net/tun ] || host_skip "/dev/net/tun missing"
	if [ ! -f "$top/build/kmod/roxe.ko" ]; then
		make -s -C "$top" kmod >/dev/null || host_skip "cannot build roxe.ko (make kmod)"
	fi
	[ -x "$top/build/bin/roxed" ] || host_skip "build/bin/roxed missing (make)"
	src=$top/selftests/vm/wire_ud_source.c bin=$top/build/vm/wire_ud_source
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
		mkdir -p "$top/build/vm"
		cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -o "$bin" "$src" -libverbs ||
			{ echo "wire_ud_source: FAIL: cannot build wire_ud_source"; exit $KSFT_FAIL; }
	fi
	vm_run_guest wire_ud_source "$out" 200 --add "$top/build/kmod/roxe.ko" \
		--add "$top/build/bin/roxed" --add "$bin" --add "$top/selftests/vm/vm_lib.sh"
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
