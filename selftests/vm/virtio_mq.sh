#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# roxe on a real NIC driver: virtio-net in the guest with one queue pair per
# engine, against roxe on the host side of the tap; then roxed on that NIC
# with fewer queues than cores and with more (issue #36).
#
#   guest: eth0 = virtio-net, mq=on, MQ_NIC_QUEUES queue pairs (default 4),
#          MQ_QUEUES of them in use (default 2, ethtool -L), MQ_SMP vCPUs
#          (default 3: virtio_net's XDP then adds no queue pairs for
#          XDP_TX, as it needs one per vCPU beyond those in use);
#          roxe-pingpong --netdev eth0 -E MQ_QUEUES: native (driver) XDP and one
#          AF_XDP socket per engine and queue
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
#   - the guest's per-queue virtio-net counters are printed;
#   - roxed (roxe.ko loaded), started as by hand (it goes to the
#     background and returns once roxe0 is registered), on eth0 with
#     MQ_SMP-1 queue pairs in use (fewer than the vCPUs): without --engines
#     it runs one engine per queue and says so on the terminal ("2
#     engines, one per queue (2 combined channels, 3 cores)"), roxectl
#     status shows a socket for each on every queue, -v the buffers;
#     --engines MQ_SMP is refused at once: exit 78, the terminal says what
#     to do ("ethtool -L eth0 combined 3"), no roxe0 and no roxed left;
#   - the same with all MQ_NIC_QUEUES pairs in use (more than the vCPUs):
#     one engine per vCPU ("one per core"), an AF_XDP socket for each on
#     every queue, and an RC ping-pong between roxe0 (ibv_rc_pingpong, the
#     rxe provider) and roxe-pingpong on the host; --engines
#     MQ_NIC_QUEUES+1 refused ("takes at most 4 combined channels").
#   Before issue #36 roxed ran an engine per vCPU whatever the queues: on
#   MQ_SMP-1 queues it printed "the device did not come up in 30 s (see
#   syslog)" and exited 1.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
PORT=18600
SIZE=${MQ_SIZE:-8192}
ITERS=${MQ_ITERS:-200}
Q=${MQ_QUEUES:-2}
NICQ=${MQ_NIC_QUEUES:-4}
SMP=${MQ_SMP:-3}
PP_TIMEOUT=60
ROXED_PORT=18620

log() { echo "virtio_mq: $*"; }

# ============================ guest side ==================================
fail=0
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }

# live_queues: the queue pairs eth0 uses now; with an XDP program on it
# virtio_net adds a pair per vCPU for XDP_TX where it has them, and frames
# arrive there too: roxe puts sockets on them
live_queues() { ethtool -l eth0 | awk '/^Current/ { c = 1 } c && /^Combined:/ { print $2 }'; }

# check_status FILE ENGINES QUEUES: roxectl status's two tables for eth0
check_status() {
	local f=$1 ne=$2 nq=$3 mode engines socks zc copy rxtx q
	sed 's/^/    /' "$f"
	# (no /dev/fd in the guest: no process substitution)
	mode=$(awk '$1 == "eth0" && NF == 5 { print $2; exit }' "$f")
	engines=$(awk '$1 == "eth0" && NF == 5 { print $4; exit }' "$f")
	[ "${mode:-}" = native ] && ok "roxectl status: eth0 in native (driver) mode" ||
		bad "roxectl status: eth0 mode '${mode:-none}', want native"
	[ "${engines:-}" = "$ne" ] || bad "roxectl status: $engines engines, want $ne"
	# the socket table: interface queue socket rings af_xdp
	socks=$(awk '$1 == "eth0" && NF == 5 && $3 ~ /^[0-9]+$/ && $5 ~ /copy|unknown/' "$f")
	zc=$(grep -c ' zerocopy$' <<<"$socks" || true)
	copy=$(grep -c ' copy$' <<<"$socks" || true)
	rxtx=$(grep -c ' rx+tx ' <<<"$socks" || true)
	if [ "$(grep -c . <<<"$socks")" != $((ne * nq)) ]; then
		bad "AF_XDP: $(grep -c . <<<"$socks") sockets on eth0, want $((ne * nq)) (engines x queues)"
	fi
	for q in $(seq 0 $((nq - 1))); do
		[ "$(awk -v q="$q" '$2 == q' <<<"$socks" | grep -c .)" = "$ne" ] ||
			bad "AF_XDP: queue $q has not one socket per engine"
	done
	[ "$rxtx" = "$ne" ] || bad "AF_XDP: $rxtx sockets with a TX ring, want $ne (one per engine)"
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

# ---- roxed on the NIC (issue #36) ----
KO=${ROXE_TOP:-}/build/kmod/$(uname -r)/roxe.ko
ROXED=${ROXE_TOP:-}/build/bin/roxed

# roxed_run LABEL ARGS...: roxed --netdev eth0 ARGS as run by hand (it goes to
# the background, returning once roxe0 is registered or with why not);
# what the terminal got in $ROXE_VM_OUT/roxed-LABEL.log, its status in RC.
roxed_run() {
	local label=$1
	shift
	RC=0
	timeout 60 "$ROXED" --netdev eth0 "$@" >"$ROXE_VM_OUT/roxed-$label.log" 2>&1 || RC=$?
	sed "s/^/    $label: /" "$ROXE_VM_OUT/roxed-$label.log"
}

# roxed_stop: SIGTERM to the roxed in the background; roxe0 goes
roxed_stop() {
	local pid n=100
	pid=$(pidof roxed) || { bad "no roxed to stop"; return 0; }
	kill -TERM $pid
	while kill -0 $pid 2>/dev/null && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
	kill -0 $pid 2>/dev/null && { bad "roxed ignored SIGTERM"; kill -KILL $pid; }
	vm_wait_for 10 vm_no_dev roxe0 || bad "roxe0 stays after roxed's SIGTERM"
}

# roxed_refused LABEL WANT ARGS...: roxed ARGS exits 78 at once, the
# terminal shows the sentence with WANT in it, and nothing is left behind
roxed_refused() {
	local label=$1 want=$2 log
	shift 2
	roxed_run "$label" "$@"
	log=$ROXE_VM_OUT/roxed-$label.log
	if [ "$RC" != 78 ]; then
		bad "roxed $*: exit $RC, want 78 (the settings do not fit the host)"
	elif ! grep -F -- "$want" "$log" >/dev/null; then
		bad "roxed $*: the terminal does not say '$want'"
	elif grep -i syslog "$log" >/dev/null; then
		bad "roxed $*: the terminal sends the user to syslog"
	else
		ok "roxed $* refused, exit 78: $(grep '^roxed: ' "$log" | tail -1)"
	fi
	if vm_have_dev roxe0 || pidof roxed >/dev/null; then
		bad "roxed $*: refused but left roxe0 or a roxed"
		pidof roxed >/dev/null && roxed_stop
	fi
}

# roxed_default NQ WANT_ENGINES WHY: with NQ queue pairs in use, roxed
# without --engines runs WANT_ENGINES, says WHY, has a socket per engine on
# every queue
roxed_default() {
	local nq=$1 ne=$2 why=$3 log want
	roxed_run "default-$nq" -v
	log=$ROXE_VM_OUT/roxed-default-$nq.log
	want="eth0: $ne engine$([ "$ne" = 1 ] || echo s), $why ($nq combined channel$([ "$nq" = 1 ] || echo s), $SMP cores)"
	if [ "$RC" != 0 ] || ! vm_have_dev roxe0; then
		bad "roxed on $nq queue pairs, $SMP vCPUs: exit $RC, $(vm_have_dev roxe0 && echo roxe0 || echo 'no roxe0')"
		return 1
	fi
	grep -F -- "$want" "$log" >/dev/null && ok "roxed on $nq queue pairs: '$want'" ||
		bad "roxed on $nq queue pairs: the terminal does not say '$want'"
	grep -E "^roxed: eth0: [0-9]+ MiB of AF_XDP buffers: [0-9]+ queues? x" "$log" >/dev/null &&
		ok "roxed -v: $(grep -o "[0-9]* MiB of AF_XDP buffers.*" "$log")" ||
		bad "roxed -v does not size its buffers"
	"$ROXE_TOP/build/bin/roxectl" status >"$ROXE_VM_OUT/roxed-status-$nq.txt" 2>&1 ||
		bad "roxectl status failed"
	check_status "$ROXE_VM_OUT/roxed-status-$nq.txt" "$ne" "$(live_queues)"
}

# roxed_pingpong: ibv_rc_pingpong on roxe0 serves roxe-pingpong on the host
roxed_pingpong() {
	local o=$ROXE_VM_OUT gid rc=0 pid
	if ! vm_wait_for 10 vm_gid_index roxe0 "$ROXE_VM_GUEST_ADDR"; then
		bad "roxe0: no RoCE v2 GID for $ROXE_VM_GUEST_ADDR"
		touch "$o/roxed-ready"
		return 0
	fi
	gid=$(vm_gid_index roxe0 "$ROXE_VM_GUEST_ADDR")
	vm_wait_for 10 vm_verbs_dev roxe0 || bad "no uverbs device for roxe0"
	timeout $PP_TIMEOUT ibv_rc_pingpong -d roxe0 -g "$gid" -e -s 4096 -n 50 -p $ROXED_PORT \
		>"$o/roxed-pp.log" 2>&1 &
	pid=$!
	vm_wait_for 20 vm_listening $ROXED_PORT || bad "ibv_rc_pingpong on roxe0 did not listen"
	touch "$o/roxed-ready"
	wait $pid || rc=$?
	[ $rc = 0 ] && ok "roxe0 ($SMP engines, $NICQ queues) served ibv_rc_pingpong: $(grep -h 'bytes in' "$o/roxed-pp.log" | tail -1)" ||
		{ bad "ibv_rc_pingpong on roxe0: exit $rc"; tail -n 5 "$o/roxed-pp.log" | sed 's/^/    /'; }
	vm_wait_file 30 "$o/host-rc3" || bad "no result from the host's roxe-pingpong"
	[ "$(cat "$o/host-rc3" 2>/dev/null)" = 0 ] && ok "host side 3: roxe-pingpong exit 0" ||
		bad "host side 3: roxe-pingpong exit $(cat "$o/host-rc3" 2>/dev/null || echo none)"
}

roxed_checks() {
	local n
	insmod "$KO" && [ -c /dev/roxe ] || { bad "insmod $KO"; touch "$ROXE_VM_OUT/roxed-ready"; return 0; }
	n=$(grep -c '^processor' /proc/cpuinfo)
	[ "$n" = "$SMP" ] || bad "the guest has $n vCPUs, want $SMP"
	n=$((SMP - 1))
	ethtool -L eth0 combined $n || bad "ethtool -L eth0 combined $n"
	roxed_refused refuse-$n "ethtool -L eth0 combined $SMP" --engines $SMP
	roxed_default $n $n "one per queue" && roxed_stop
	ethtool -L eth0 combined "$NICQ" || bad "ethtool -L eth0 combined $NICQ"
	roxed_refused refuse-$NICQ "eth0 takes at most $NICQ combined channels" --engines $((NICQ + 1))
	if roxed_default "$NICQ" "$SMP" "one per core"; then
		roxed_pingpong
		roxed_stop
	else
		touch "$ROXE_VM_OUT/roxed-ready"
	fi
	rmmod roxe || bad "rmmod roxe"
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
	n=$(live_queues)
	log "with XDP attached eth0 uses $n queue pairs"
	check_status "$o/status.txt" "$Q" "$n"
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
	roxed_checks
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

	# 3: roxed's roxe0 in the guest serves (ibv_rc_pingpong, no -c there)
	rc=0
	if vm_wait_file 240 "$o/roxed-ready"; then
		timeout $PP_TIMEOUT "$ROXE_TOP/build/bin/roxe-pingpong" --netdev "$ROXE_VM_TAP" -e -s 4096 \
			-n 50 -p $ROXED_PORT "$ROXE_VM_GUEST_ADDR" >"$o/host3.log" 2>&1 || rc=$?
	else
		rc=none
	fi
	echo $rc >"$o/host-rc3"
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
	for p in roxe-pingpong roxectl roxed; do
		[ -x "$top/build/bin/$p" ] || host_missing "build/bin/$p missing (make)"
	done
	vm_need_kmod "$top"
	log "guest kernel $KVER, $SMP vCPUs, virtio-net with $NICQ queue pairs, $Q in use"
	peer=$(printf '%q ' env ROXE_MQ_PEER=1 MQ_QUEUES="$Q" MQ_SIZE="$SIZE" MQ_ITERS="$ITERS" "$self")
	vm_run_guest virtio_mq "$out" 400 --queues "$NICQ" --smp "$SMP" \
		--add "$top/build/bin/roxe-pingpong" --add "$top/build/bin/roxectl" \
		--add "$top/build/bin/roxed" --add "$top/build/kmod/$KVER/roxe.ko" \
		--add "$top/selftests/vm/vm_lib.sh" \
		--env "MQ_QUEUES=$Q" --env "MQ_NIC_QUEUES=$NICQ" --env "MQ_SMP=$SMP" \
		--env "MQ_SIZE=$SIZE" --env "MQ_ITERS=$ITERS" \
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
