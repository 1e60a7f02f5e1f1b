#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Interop with the real peer: roxe-pingpong on the host side of the VM's tap
# against ibv_rc_pingpong on kernel rxe in the guest, both directions; and in
# UD mode (roxe-pingpong -U) against ibv_ud_pingpong.
#
# One VM boot per case (fresh rxe counters, one capture each). The host half
# of this script runs through run.sh's --host-cmd inside the VM's namespace;
# the guest half is the VM's test script. They meet through files in the
# shared results directory: "<side>-ready" once a server listens (or a
# client may start), "<side>-rc" with the pingpong's exit status.
#
# Every case passes only if both ends exit 0; the capture of the link
# (QEMU's filter-dump between tap0 and the guest's eth0: AF_XDP traffic
# bypasses the host's packet sockets, so tcpdump on tap0 sees none of it)
# holds at least one message's worth of RoCE v2 frames per exchange from
# each side (UD: exactly one datagram per exchange, as nothing is resent),
# every one with a valid ICRC (roxe-pcap verify); and rxe's error counters
# stayed at 0.
#
# ROXE_INTEROP_BACKEND=udp runs roxe on its UDP socket backend instead of
# AF_XDP; ROXE_INTEROP_TRACE=1 puts roxe's per-frame trace in host.log;
# ROXE_INTEROP_CASES="name ..." runs only those cases.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4

# name, transport (rc, ud), link MTU (tap0 and eth0), the side that is the
# server, message size, path MTU, iterations. At link MTU 1500 the path MTU
# is 1024; 9000 carries 4096 (frames of 4154 bytes and more: multi-buffer
# for roxe). A UD message is one datagram, so at most the path MTU (UD
# takes the port's MTU: no -m).
cases='
guest_srv_4096   rc 1500 guest 4096  1024 50
host_srv_4096    rc 1500 host  4096  1024 50
guest_srv_1      rc 1500 guest 1     1024 50
host_srv_3000    rc 1500 host  3000  1024 50
jumbo_guest_srv  rc 9000 guest 10000 4096 20
jumbo_host_srv   rc 9000 host  4096  4096 20
ud_guest_srv     ud 1500 guest 1024  1024 50
ud_host_srv      ud 1500 host  1024  1024 50
'

PORT=18515
PP_TIMEOUT=30	# per pingpong; a healthy case takes well under a second

log() { echo "interop: $*"; }

# ============================ guest side ==================================
IP=/usr/sbin/ip

guest_main() {
	local o=$ROXE_VM_OUT gid='' i rc=0 pid f pp=ibv_${CASE_MODE}_pingpong
	local args=(-d rxe0 -e -n "$CASE_ITERS" -s "$CASE_SIZE" -p "$PORT")

	[ "$CASE_MODE" = ud ] || args+=(-m "$CASE_PMTU")
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"

	[ "$CASE_MTU" = 1500 ] || $IP link set eth0 mtu "$CASE_MTU"
	if ! gid=$(vm_rxe_up eth0 "$ROXE_VM_GUEST_ADDR"); then
		log "no RoCE v2 GID for $ROXE_VM_GUEST_ADDR on rxe0"
		echo 1 >"$o/guest-rc"
		return 1
	fi
	log "rxe0 gid $gid, eth0 mtu $(cat /sys/class/net/eth0/mtu)," \
		"$(ibv_devinfo -d rxe0 | grep -o 'active_mtu:.*' | tr -s '\t ' ' ')"
	args+=(-g "$gid")

	# the ACK timeout the emulator needs (1 s, not ibv_rc_pingpong's 67
	# ms): rxe's retries (completer_retry_err) must stay 0
	pp=(env LD_PRELOAD="$ROXE_TOP/build/lib/roxe-linger.so" ROXE_MIN_TIMEOUT=18 "$pp")
	if [ "$CASE_SERVER" = guest ]; then
		timeout $PP_TIMEOUT "${pp[@]}" "${args[@]}" >"$o/guest.log" 2>&1 &
		pid=$!
		vm_wait_for 10 vm_listening "$PORT" || true
		touch "$o/guest-ready"
		wait $pid || rc=$?
	elif vm_wait_file 60 "$o/host-ready"; then
		timeout $PP_TIMEOUT "${pp[@]}" "${args[@]}" "$ROXE_VM_HOST_ADDR" \
			>"$o/guest.log" 2>&1 || rc=$?
	else
		log "the host side never got ready"
		rc=1
	fi
	echo $rc >"$o/guest-rc"

	vm_rxe_counters rxe0 >"$o/rxe-counters.txt"
	rdma statistic show link rxe0/1 >"$o/rdma-statistic.txt" 2>&1 || true
	dmesg | grep -i -E 'rxe|rdma|icrc' >"$o/dmesg-rxe.txt" || true
	# QEMU (and the host side with it) stops when we return
	vm_wait_file 20 "$o/host-rc" || log "no exit status from the host side"
	return $rc
}

# ============================ host side: peer =============================
# Runs in the VM's namespace (run.sh --host-cmd), next to QEMU, from before
# the guest boots until it powers off.
peer_main() {
	local o=$ROXE_VM_OUT tap=$ROXE_VM_TAP rc=0 pid i
	local pp=("$ROXE_TOP/build/bin/roxe-pingpong" --netdev "$tap" -e -n "$CASE_ITERS"
		-s "$CASE_SIZE" -p "$PORT" -B "${ROXE_INTEROP_BACKEND:-afxdp}")
	local envs=()

	if [ "$CASE_MODE" = ud ]; then
		pp+=(-U)
	else
		pp+=(-m "$CASE_PMTU")
	fi

	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	[ "${ROXE_INTEROP_TRACE:-0}" = 1 ] && envs=(ROXE_TRACE=1)
	ip link set "$tap" mtu "$CASE_MTU"
	ip link show "$tap" | sed -n 1p
	if [ "$CASE_SERVER" = host ]; then
		env ${envs[@]+"${envs[@]}"} timeout $PP_TIMEOUT "${pp[@]}" >"$o/host.log" 2>&1 &
		pid=$!
		vm_wait_for 10 vm_host_listening "$PORT" || true
		touch "$o/host-ready"
	elif vm_wait_file 120 "$o/guest-ready"; then
		env ${envs[@]+"${envs[@]}"} timeout $PP_TIMEOUT "${pp[@]}" "$ROXE_VM_GUEST_ADDR" \
			>"$o/host.log" 2>&1 &
		pid=$!
	else
		echo "the guest never got ready"
		echo 1 >"$o/host-rc"
		return 1
	fi
	# how roxe attached (native or generic XDP), while it runs
	for i in $(seq 250); do
		ip -d link show "$tap" | grep -o -E 'prog/xdp[a-z]* id [0-9]+' >"$o/xdp-mode.txt" && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.02
	done
	wait $pid || rc=$?
	echo $rc >"$o/host-rc"
	echo "roxe-pingpong exited with $rc"
}

# ============================ host side: judge ============================
host_missing() { echo "interop: FAIL: missing: $*"; exit $KSFT_FAIL; }

# check_case NAME DIR MODE SIZE PMTU ITERS: judge one finished run; 0 = pass
check_case() {
	local name=$1 d=$2 mode=$3 size=$4 pmtu=$5 iters=$6 bad=0 grc hrc f
	local per_msg=$(((size + pmtu - 1) / pmtu))
	local want=$((per_msg * iters)) from_host from_guest

	grc=$(cat "$d/guest-rc" 2>/dev/null || echo none)
	hrc=$(cat "$d/host-rc" 2>/dev/null || echo none)
	if [ "$grc" != 0 ] || [ "$hrc" != 0 ]; then
		log "$name: FAIL: ibv_${mode}_pingpong (guest) exit $grc, roxe-pingpong (host) exit $hrc"
		bad=1
	fi

	if ! vm_verify_capture "$d/wire.pcap" "$d/verify.txt"; then
		log "$name: FAIL: capture: $VM_CAPTURE; frames with a bad ICRC or malformed:"
		grep -v 'icrc ok$' "$d/verify.txt" 2>/dev/null | sed -n 1,20p | sed 's/^/    /'
		bad=1
	fi
	from_host=$VM_FROM_HOST from_guest=$VM_FROM_GUEST
	log "$name: capture: $VM_CAPTURE; roxe sent $from_host, rxe sent $from_guest" \
		"(want $([ "$mode" = ud ] || echo '>= ')$want each)"
	if [ "$from_host" -lt "$want" ] || [ "$from_guest" -lt "$want" ]; then
		log "$name: FAIL: too few RoCE v2 frames from one side"
		bad=1
	elif [ "$mode" = ud ] && { [ "$from_host" != "$want" ] || [ "$from_guest" != "$want" ]; }; then
		log "$name: FAIL: UD sends one datagram per exchange, no more"
		bad=1
	fi
	vm_check_rxe_counters "$d/rxe-counters.txt" "interop: $name" || bad=1
	# rxe complains in the kernel log about frames it refuses (a bad ICRC,
	# a malformed header): any such line is roxe's frame
	if [ -s "$d/dmesg-rxe.txt" ] && grep -i -E 'icrc|bad|drop|err' "$d/dmesg-rxe.txt" >/dev/null; then
		log "$name: FAIL: rxe complained in the guest's kernel log:"
		sed 's/^/    /' "$d/dmesg-rxe.txt" | tail -n 10
		bad=1
	fi

	if [ $bad != 0 ]; then
		for f in guest.log host.log host-cmd.log; do
			[ -s "$d/$f" ] || continue
			echo "    --- $f"
			grep -v '^roxe\[' "$d/$f" | tail -n 15 | sed 's/^/    /'
		done
		return 1
	fi
	log "$name: ok ($(grep -h 'iters in' "$d/guest.log" 2>/dev/null | sed -n 1p))"
	return 0
}

# run_case NAME MODE MTU SERVER SIZE PMTU ITERS: one VM boot; 0 = pass
run_case() {
	local name=$1 mode=$2 mtu=$3 server=$4 size=$5 pmtu=$6 iters=$7
	local d=$OUTDIR/$name rc=0 t0=$SECONDS
	local vars=(CASE_MODE="$mode" CASE_MTU="$mtu" CASE_SERVER="$server"
		CASE_SIZE="$size" CASE_PMTU="$pmtu" CASE_ITERS="$iters")
	local envs=() v peer

	rm -rf "$d"
	mkdir -p "$d"
	for v in "${vars[@]}"; do envs+=(--env "$v"); done
	peer=$(printf '%q ' env "${vars[@]}" ROXE_INTEROP_PEER=1 \
		ROXE_INTEROP_BACKEND="${ROXE_INTEROP_BACKEND:-afxdp}" \
		ROXE_INTEROP_TRACE="${ROXE_INTEROP_TRACE:-0}" "$SELF")
	log "$name: ${mode^^}, link mtu $mtu, $server is the server, -s $size" \
		"$([ "$mode" = ud ] || echo "-m $pmtu ")-n $iters," \
		"roxe backend ${ROXE_INTEROP_BACKEND:-afxdp}"
	"$TOPDIR/tools/vm/run.sh" --quiet --timeout 120 --out "$d" --pcap "$d/wire.pcap" \
		--add "$TOPDIR/selftests/vm/vm_lib.sh" \
		"${envs[@]}" --script "$SELF" --host-cmd "exec $peer" &
	RUN_PID=$!
	wait $RUN_PID || rc=$?
	RUN_PID=
	grep -a '^interop:' "$d/console.log" 2>/dev/null | sed 's/^/    guest: /' || true
	[ -s "$d/xdp-mode.txt" ] && log "$name: roxe on tap0: $(cat "$d/xdp-mode.txt")"
	if [ $rc != 0 ] && [ $rc != 1 ]; then
		# 124/125: timeout or harness failure, not the guest script's verdict
		log "$name: FAIL: VM run exited with $rc$(vm_verdict "$d"); console tail:"
		tail -n 20 "$d/console.log" 2>/dev/null | sed 's/^/    /'
	fi
	check_case "$name" "$d" "$mode" "$size" "$pmtu" "$iters" || rc=1
	log "$name: $((SECONDS - t0)) s"
	[ $rc = 0 ]
}

host_main() {
	local fail=0 name mode mtu server size pmtu iters only=${ROXE_INTEROP_CASES:-} n=0

	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"	# find_top, vm_host_ready, ...
	TOPDIR=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	SELF=$(readlink -f "$0")
	OUTDIR=$TOPDIR/build/vm/interop
	vm_host_ready
	for p in roxe-pingpong roxe-pcap; do
		[ -x "$TOPDIR/build/bin/$p" ] || host_missing "build/bin/$p missing: run make"
	done

	# kselftest's runner times out with SIGTERM: pass it on so the harness
	# tears its namespace and QEMU down
	RUN_PID=
	trap '[ -z "$RUN_PID" ] || kill -TERM $RUN_PID 2>/dev/null; wait; exit $KSFT_FAIL' TERM INT
	while read -r name mode mtu server size pmtu iters; do
		[ -n "$name" ] || continue
		[ -z "$only" ] || [[ " $only " == *" $name "* ]] || continue
		n=$((n + 1))
		run_case "$name" "$mode" "$mtu" "$server" "$size" "$pmtu" "$iters" || fail=1
	done <<<"$cases"
	[ $n -gt 0 ] || host_missing "no case matches ROXE_INTEROP_CASES=$only"
	if [ $fail != 0 ]; then
		log "FAIL: results in $OUTDIR/<case>/"
		exit $KSFT_FAIL
	fi
	log "PASS: $n cases; captures in $OUTDIR/<case>/wire.pcap"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	guest_main
elif [ "${ROXE_INTEROP_PEER:-}" = 1 ]; then
	peer_main
else
	host_main
fi
