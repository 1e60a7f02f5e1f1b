#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# roxe on a real NIC driver: virtio-net in the guest with one queue pair per
# engine, against roxe on the host side of the tap.
#
#   guest: eth0 = virtio-net, mq=on, MQ_QUEUES queue pairs (default 2), all
#          in use (ethtool -L); roxe-pingpong --netdev eth0 -E MQ_QUEUES: native
#          (driver) XDP and one AF_XDP socket per engine and queue
#   host:  roxe-pingpong --netdev tap0 (a multi-queue tap), run.sh --host-cmd
#
# Checks:
#   - roxectl status in the guest: eth0 in native mode, engines =
#     MQ_QUEUES, and the kernel's (sock_diag) list of roxe's AF_XDP sockets:
#     one per engine and queue, each queue covered, a TX ring on each
#     engine's home queue only, every socket in the same mode; zero-copy or
#     copy is printed per socket and summed up (roxe binds XDP_ZEROCOPY
#     first and falls back to copy when the driver refuses it; with
#     MQ_WANT_ZC=1 copy fails the test);
#   - RC ping-pong both ways (the guest as the server, then the host), both
#     ends roxe-pingpong -c: every byte of every message checked on both
#     sides; exit codes 0;
#   - the guest's per-queue virtio-net counters are printed.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
PORT=18600
SIZE=${MQ_SIZE:-8192}
ITERS=${MQ_ITERS:-200}
Q=${MQ_QUEUES:-2}
PP_TIMEOUT=60

log() { echo "virtio_mq: $*"; }

# ============================ guest side ==================================
fail=0
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }

# check_status FILE: roxectl status's two tables for eth0
check_status() {
	local f=$1 mode engines socks zc copy rxtx q
	sed 's/^/    /' "$f"
	# (no /dev/fd in the guest: no process substitution)
	mode=$(awk '$1 == "eth0" && NF == 5 { print $2; exit }' "$f")
	engines=$(awk '$1 == "eth0" && NF == 5 { print $4; exit }' "$f")
	[ "${mode:-}" = native ] && ok "roxectl status: eth0 in native (driver) mode" ||
		bad "roxectl status: eth0 mode '${mode:-none}', want native"
	[ "${engines:-}" = "$Q" ] || bad "roxectl status: $engines engines, want $Q"
	# the socket table: interface queue socket rings af_xdp
	socks=$(awk '$1 == "eth0" && NF == 5 && $3 ~ /^[0-9]+$/ && $5 ~ /copy|unknown/' "$f")
	zc=$(grep -c ' zerocopy$' <<<"$socks" || true)
	copy=$(grep -c ' copy$' <<<"$socks" || true)
	rxtx=$(grep -c ' rx+tx ' <<<"$socks" || true)
	if [ "$(grep -c . <<<"$socks")" != $((Q * Q)) ]; then
		bad "AF_XDP: $(grep -c . <<<"$socks") sockets on eth0, want $((Q * Q)) (engines x queues)"
	fi
	for q in $(seq 0 $((Q - 1))); do
		[ "$(awk -v q="$q" '$2 == q' <<<"$socks" | grep -c .)" = "$Q" ] ||
			bad "AF_XDP: queue $q has not one socket per engine"
	done
	[ "$rxtx" = "$Q" ] || bad "AF_XDP: $rxtx sockets with a TX ring, want $Q (one per engine)"
	log "AF_XDP on eth0 ($(ethtool -i eth0 | awk '/^driver:/ { print $2 }')): $((zc + copy)) sockets," \
		"$zc zero-copy, $copy copy"
	if [ "$zc" != 0 ] && [ "$copy" != 0 ]; then
		bad "AF_XDP: zero-copy and copy sockets on one UMEM"
	elif [ "$copy" != 0 ]; then
		log "zero-copy: no (the driver refused XDP_ZEROCOPY, roxe bound in copy mode)"
		[ "${MQ_WANT_ZC:-0}" != 1 ] || bad "zero-copy wanted (MQ_WANT_ZC=1)"
	elif [ "$zc" != 0 ]; then
		ok "zero-copy: every socket"
	else
		bad "AF_XDP: the kernel did not tell the sockets' mode"
	fi
}

guest_main() {
	local o=$ROXE_VM_OUT rc=0 pid n
	local pp=("$ROXE_TOP/build/bin/roxe-pingpong" --netdev eth0 -E "$Q" -c -e -s "$SIZE" -n "$ITERS"
		-p "$PORT")
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"

	ethtool -L eth0 combined "$Q" || bad "ethtool -L eth0 combined $Q"
	n=$(ethtool -l eth0 | awk '/^Current/ { c = 1 } c && /^Combined:/ { print $2 }')
	[ "$n" = "$Q" ] && ok "eth0 (virtio-net): $n queue pairs in use" ||
		bad "eth0 uses $n queue pairs, want $Q"

	# 1: the guest serves
	timeout $PP_TIMEOUT "${pp[@]}" >"$o/guest1.log" 2>&1 &
	pid=$!
	vm_wait_for 30 vm_listening "$PORT" || bad "roxe-pingpong did not listen"
	"$ROXE_TOP/build/bin/roxectl" status >"$o/status.txt" 2>&1 || bad "roxectl status failed"
	check_status "$o/status.txt"
	touch "$o/guest-ready"
	wait $pid || rc=$?
	[ $rc = 0 ] && ok "guest server: $(grep -h 'iters in' "$o/guest1.log" | sed -n 1p)" ||
		{ bad "guest server: roxe-pingpong exit $rc"; tail -n 5 "$o/guest1.log" | sed 's/^/    /'; }

	# 2: the host serves
	rc=0
	if vm_wait_file 60 "$o/host-ready"; then
		timeout $PP_TIMEOUT "${pp[@]}" "$ROXE_VM_HOST_ADDR" >"$o/guest2.log" 2>&1 || rc=$?
		[ $rc = 0 ] && ok "guest client: $(grep -h 'iters in' "$o/guest2.log" | sed -n 1p)" ||
			{ bad "guest client: roxe-pingpong exit $rc"; tail -n 5 "$o/guest2.log" | sed 's/^/    /'; }
	else
		bad "the host never served"
	fi
	log "eth0 per-queue packets: $(ethtool -S eth0 | awk '$1 ~ /^(rx|tx)(_queue_)?[0-9]+_packets:$/ { printf "%s %s ", $1, $2 }')"
	vm_wait_file 60 "$o/host-done" || bad "no result from the host side"
	for n in 1 2; do
		[ "$(cat "$o/host-rc$n" 2>/dev/null)" = 0 ] && ok "host side $n: roxe-pingpong -c exit 0" ||
			bad "host side $n: roxe-pingpong exit $(cat "$o/host-rc$n" 2>/dev/null || echo none)"
	done
	return $fail
}

# ============================ host side: peer =============================
peer_main() {
	local o=$ROXE_VM_OUT rc=0
	local pp=("$ROXE_TOP/build/bin/roxe-pingpong" --netdev "$ROXE_VM_TAP" -c -e -s "$SIZE"
		-n "$ITERS" -p "$PORT")
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"

	if vm_wait_file 150 "$o/guest-ready"; then
		timeout $PP_TIMEOUT "${pp[@]}" "$ROXE_VM_GUEST_ADDR" >"$o/host1.log" 2>&1 || rc=$?
	else
		rc=none
	fi
	echo $rc >"$o/host-rc1"
	rc=0
	timeout $PP_TIMEOUT "${pp[@]}" >"$o/host2.log" 2>&1 &
	local pid=$!
	vm_wait_for 10 vm_host_listening "$PORT" || true
	touch "$o/host-ready"
	wait $pid || rc=$?
	echo $rc >"$o/host-rc2"
	touch "$o/host-done"
}

# ============================ host side: judge ============================
host_missing() { echo "virtio_mq: FAIL: missing: $*"; exit $KSFT_FAIL; }

host_main() {
	local top out self peer p
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"	# find_top, vm_host_ready, ...
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	self=$(readlink -f "$0")
	out=$(vm_out virtio_mq)
	# virtio-net's AF_XDP zero-copy is the point: the 6.12 guest by default
	: "${KVER:=6.12}"
	vm_host_ready
	for p in roxe-pingpong roxectl; do
		[ -x "$top/build/bin/$p" ] || host_missing "build/bin/$p missing (make)"
	done
	log "guest kernel $KVER, virtio-net with $Q queue pairs"
	peer=$(printf '%q ' env ROXE_MQ_PEER=1 MQ_QUEUES="$Q" MQ_SIZE="$SIZE" MQ_ITERS="$ITERS" "$self")
	vm_run_guest virtio_mq "$out" 240 --queues "$Q" \
		--add "$top/build/bin/roxe-pingpong" --add "$top/build/bin/roxectl" \
		--add "$top/selftests/vm/vm_lib.sh" \
		--env "MQ_QUEUES=$Q" --env "MQ_SIZE=$SIZE" --env "MQ_ITERS=$ITERS" \
		--env "MQ_WANT_ZC=${MQ_WANT_ZC:-0}" --host-cmd "exec $peer"
	echo "virtio_mq: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	guest_main
elif [ "${ROXE_MQ_PEER:-}" = 1 ]; then
	peer_main
else
	host_main
fi
