#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# roxe0 (roxe.ko + roxed) on AF_XDP zero-copy against kernel rxe (issue
# #37), on trixie-backports' kernel (virtio_net has AF_XDP zero-copy from
# 6.13): the guest's two virtio-net NICs face each other (run.sh --pair
# --dma-api, as in zerocopy.sh), in its one namespace (vm_face_pair):
#   eth0 (10.77.8.1, rxe0)  <-- tap0 = br0 = tap1 -->  eth1 (10.77.8.2,
#                                  roxe0: roxed --netdev eth1, native XDP)
# Checks:
#   - roxectl status before and after the traffic: eth1 in native mode,
#     one engine, its AF_XDP socket "zerocopy" as the kernel reports it
#     (sock_diag's XDP_DU_F_ZEROCOPY);
#   - ibv_rc_pingpong -c (data checked) and perftest ib_write_bw,
#     ib_read_bw, ib_send_bw and ib_atomic_bw, each with roxe0 as the
#     server and as the client;
#   - rxe0's error counters stay 0; dmesg without WARNING, BUG or Oops.
#
# Run as kmod_zerocopy-igb.sh (a link to this file; or ZC_NIC=igb) the
# same on two of QEMU's 82576 (run.sh --nic igb: bookworm-backports'
# QEMU; igb has AF_XDP zero-copy from 6.14). igb resets itself when an XDP
# program or a socket's pool comes: the test waits for carrier on both
# NICs before it pings and once roxed has attached.
#
#   KVER (default trixie-bpo), ZC_NIC (virtio, the default, or igb).
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
A=10.77.8.1 B=10.77.8.2
NIC=${ZC_NIC:-virtio}
[ "${0##*/}" != kmod_zerocopy-igb.sh ] || NIC=igb
NAME=kmod_zerocopy
[ "$NIC" = virtio ] || NAME=kmod_zerocopy-$NIC

# ============================ guest side ==================================
KO=${ROXE_TOP:-}/build/kmod/$(uname -r)/roxe.ko
ROXED=${ROXE_TOP:-}/build/bin/roxed
fail=0

log() { echo "$NAME: $*"; }
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }

# check_zc LABEL: roxectl status shows eth1 native, one engine, one socket,
# zero-copy
check_zc() {
	local f=$ROXE_VM_OUT/status-${1// /_} mode socks
	"$ROXE_TOP/build/bin/roxectl" status >"$f" 2>&1 || bad "$1: roxectl status failed"
	sed 's/^/    /' "$f"
	mode=$(awk '$1 == "eth1" && NF == 5 && $2 !~ /^[0-9]+$/ { print $2 "/" $4; exit }' "$f")
	[ "$mode" = native/1 ] || bad "$1: eth1 mode/engines '${mode:-none}', want native/1"
	socks=$(awk '$1 == "eth1" && NF == 5 && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/' "$f")
	if [ "$(grep -c . <<<"$socks")" = 1 ] && grep -q ' zerocopy$' <<<"$socks"; then
		ok "$1: eth1's AF_XDP socket is zerocopy"
	else
		bad "$1: eth1's AF_XDP sockets: ${socks:-none} (want one, zerocopy)"
	fi
}

PORT=19500
# run NAME PROG ARGS...: both ways round, as kmod_interop.sh
run() {
	local name=$1 prog=$2 gopt=-x
	shift 2
	case "$prog" in ibv_*) gopt=-g ;; esac
	PORT=$((PORT + 1))
	vm_run_pair "$name roxe0 server" vm_listening $PORT "$prog" roxe0 "$GR" rxe0 "$GX" $B "$gopt" "$@" || true
	PORT=$((PORT + 1))
	vm_run_pair "$name rxe0 server" vm_listening $PORT "$prog" rxe0 "$GX" roxe0 "$GR" $A "$gopt" "$@" || true
}

guest_main() {
	local after=$ROXE_VM_OUT/rxe-after
	# QPs with a local ACK timeout of 1 s at least (kmod_interop.sh)
	VM_PAIR_ENV=(LD_PRELOAD="$ROXE_TOP/build/lib/roxe-linger.so" ROXE_MIN_TIMEOUT=18)
	log "NIC $NIC: $(ethtool -i eth1 | awk '/^driver:/ { print $2 }')"
	/usr/sbin/ip addr flush dev eth0
	/usr/sbin/ip link set eth0 up && /usr/sbin/ip link set eth1 up
	vm_carriers eth0 eth1 || { bad "no carrier on eth0 or eth1 within 20 s"; return 1; }
	vm_face_pair eth0 $A eth1 $B || { bad "eth0 and eth1 do not face each other"; return 1; }
	insmod "$KO" || { bad "insmod $KO"; return 1; }
	rdma link add rxe0 type rxe netdev eth0 || { bad "rdma link add rxe0"; return 1; }
	"$ROXED" --netdev eth1 --foreground 2>>"$ROXE_VM_OUT/roxed.log" &
	vm_wait_for 20 vm_have_dev roxe0 && vm_wait_for 10 vm_verbs_dev roxe0 ||
		{ bad "roxed --netdev eth1 registered no roxe0"; cat "$ROXE_VM_OUT/roxed.log"; return 1; }
	vm_wait_for 10 vm_gid_index rxe0 $A && vm_wait_for 10 vm_gid_index roxe0 $B ||
		{ bad "no RoCE v2 GIDs"; return 1; }
	# roxed's program and pool reset igb
	vm_carriers eth0 eth1 || { bad "no carrier on eth0 or eth1 within 20 s after roxed"; return 1; }
	vm_wait_for 10 ping -c 1 -W 1 $B >/dev/null || { bad "no IP path $A -> $B after roxed"; return 1; }
	GX=$(vm_gid_index rxe0 $A)
	GR=$(vm_gid_index roxe0 $B)
	ok "rxe0 on eth0 ($A, gid $GX), roxe0 on eth1 ($B, gid $GR)"
	sed 's/^/    roxed: /' "$ROXE_VM_OUT/roxed.log"
	check_zc "before"
	run "rc_pingpong 4 KiB" ibv_rc_pingpong -c -s 4096 -n 200
	run "ib_write_bw" ib_write_bw -s 65536 -n 200
	run "ib_read_bw" ib_read_bw -s 65536 -n 200 -o 2
	run "ib_send_bw" ib_send_bw -s 65536 -n 200
	run "ib_atomic_bw" ib_atomic_bw -n 200
	vm_rxe_counters rxe0 >"$after"
	vm_check_rxe_counters "$after" "$NAME: rxe0 after the runs" || bad "rxe counted errors"
	check_zc "after"
	vm_check_dmesg
	dmesg >"$ROXE_VM_OUT/dmesg.txt"
	return $fail
}

# ============================ host side ===================================
host_missing() { echo "$NAME: FAIL: missing: $*"; exit $KSFT_FAIL; }

host_main() {
	local top out p nicargs=(--dma-api)
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	# virtio_net's AF_XDP zero-copy came in 6.13
	: "${KVER:=trixie-bpo}"
	out=$(vm_out "$NAME")
	[ "$NIC" = virtio ] || nicargs=(--nic igb)
	vm_host_ready
	vm_need_kmod "$top"
	for p in roxed roxectl; do
		[ -x "$top/build/bin/$p" ] || host_missing "build/bin/$p missing (make)"
	done
	vm_run_guest "$NAME" "$out" 300 --pair "${nicargs[@]}" --env "ZC_NIC=$NIC" \
		--add "$top/build/kmod/$KVER/roxe.ko" --add "$top/build/bin/roxed" \
		--add "$top/build/bin/roxectl" --add "$top/selftests/vm/vm_lib.sh"
	echo "$NAME: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	guest_main
else
	host_main
fi
