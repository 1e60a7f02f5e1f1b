#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Capture kernel rxe's RoCE v2 traffic as reference pcaps.
#
# Host side: boots the VM harness with this same file as the guest script,
# then checks that every capture holds enough UDP/4791 frames and copies it
# to build/vm/rxe-<test>.pcap (input for roxe-pcap's ICRC check).
# Guest side (ROXE_VM_GUEST=1): two rxe devices on the two ends of a veth
# pair, both in the guest's root namespace (6.1's rxe only works there);
# policy routing sends traffic between their local addresses over the veth
# instead of through lo, so tcpdump on rxa sees every frame. Then the
# verbs pingpongs and perftest run over them, one pcap per program.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4

# One capture per line: name, the minimum number of RoCE v2 frames it must
# hold, the program and arguments used on both ends (-d, -p, the GID index
# and the server's address are added). Event mode (-e) where the program has
# it: a polling process starves rxe under TCG. 4 KiB messages are 4 packets
# at MTU 1024; 64 B messages are *_ONLY packets.
cases='
rc_pingpong   40 ibv_rc_pingpong -e -n 5 -s 4096 -m 1024
uc_pingpong   40 ibv_uc_pingpong -e -n 5 -s 4096 -m 1024
ud_pingpong   10 ibv_ud_pingpong -e -n 5 -s 512
send_bw       20 ib_send_bw -F -n 5 -m 1024 -e -s 4096
write_bw      20 ib_write_bw -F -n 5 -m 1024 -s 4096
read_bw       20 ib_read_bw -F -n 5 -m 1024 -e -s 4096
atomic_bw     10 ib_atomic_bw -F -n 5 -m 1024 -e
cmp_swap_bw   10 ib_atomic_bw -F -n 5 -m 1024 -e -A CMP_AND_SWAP
send_small     5 ib_send_bw -F -n 5 -m 1024 -e -s 64
write_small    5 ib_write_bw -F -n 5 -m 1024 -s 64
read_small    10 ib_read_bw -F -n 5 -m 1024 -e -s 64
uc_write_bw   20 ib_write_bw -F -n 5 -m 1024 -c UC -s 4096
'

# ============================ guest side ==================================
A=10.77.1.1 B=10.77.1.2

log() { echo "rxe_capture: $*"; }

setup_rxe() {
	local i
	rdma link add rxe0 type rxe netdev rxa
	rdma link add rxe1 type rxe netdev rxb
	# the IPv4 GIDs appear asynchronously (netdev events)
	for i in $(seq 50); do
		G0=$(vm_gid_index rxe0 $A) && G1=$(vm_gid_index rxe1 $B) && break
		sleep 0.1
	done
	if [ -z "${G0:-}" ] || [ -z "${G1:-}" ]; then
		log "FAIL: no RoCE v2 GIDs"
		rdma link
		return 1
	fi
	log "rxe0 gid $G0 ($A), rxe1 gid $G1 ($B)"
	ibv_devinfo -d rxe0 | grep -E 'state|active_mtu' || true
}

# run_pair NAME PORT PROG ARGS...: the server on rxe0, the client on rxe1
# connecting to $A, tcpdump on rxa around both.
run_pair() {
	local name=$1 port=$2 rc=0 spid dpid early gid=-x
	shift 2
	case "$1" in ibv_*) gid=-g ;; esac
	local srv=("$@" "$gid" "$G0") cli=("$@" "$gid" "$G1")
	local pcap=/tmp/rxe-$name.pcap logf=$ROXE_VM_OUT/rxe-$name.log
	: >"$logf"
	# -s/-B: immediate mode gives each frame a slot of the snap length;
	# tcpdump's default (256 KiB) in its 2 MiB would leave room for 7
	tcpdump -i rxa -nn -U --immediate-mode -s 9216 -B 16384 -Z root -w "$pcap" udp port 4791 2>/tmp/tcpdump.err &
	dpid=$!
	tcpdump_listening $dpid /tmp/tcpdump.err || { log "FAIL: $name: tcpdump did not start"; cat /tmp/tcpdump.err; return 1; }

	"${srv[@]}" -d rxe0 -p "$port" >>"$logf" 2>&1 &
	spid=$!
	if ! vm_wait_for 20 vm_listening "$port"; then
		log "FAIL: $name: server did not listen on $port"
		rc=1
	else
		timeout 60 "${cli[@]}" -d rxe1 -p "$port" $A >>"$logf" 2>&1 ||
			{ log "FAIL: $name: client exited $?"; rc=1; }
	fi
	# the server finishes on its own once the client is done
	local n=100
	while kill -0 $spid 2>/dev/null && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
	if kill -0 $spid 2>/dev/null; then
		log "FAIL: $name: server hung"
		kill -KILL $spid
		rc=1
	fi
	wait $spid || { log "FAIL: $name: server exited $?"; rc=1; }
	# tcpdump runs on the guest's one vCPU after the programs
	early=${TCPDUMP_EARLY[$dpid]:-0}
	tcpdump_stop $dpid /tmp/tcpdump.err 2>/tmp/tcpdump.why ||
		{ log "FAIL: $name: capture incomplete: $(cat /tmp/tcpdump.why)"; rc=1; }
	cp "$pcap" "$ROXE_VM_OUT/"
	log "$name: $([ $rc = 0 ] && echo ok || echo FAILED), $(stat -c %s "$pcap") bytes captured$(
		[ "$early" = 0 ] || echo " ($early other frames reached tcpdump before its filter)")"
	[ $rc = 0 ] || sed 's/^/    /' "$logf"
	return $rc
}

guest_main() {
	local fail=0 t0=$SECONDS
	vm_veth_pair rxa $A rxb $B
	setup_rxe
	local name min cmd port=18515
	while read -r name min cmd; do
		[ -n "$name" ] || continue
		# shellcheck disable=SC2086 # cmd is a word list
		run_pair "$name" $port $cmd || fail=1
		port=$((port + 1))
	done <<<"$cases"
	rdma statistic show link rxe0/1 >"$ROXE_VM_OUT/rxe0-counters.txt" 2>&1 || true
	log "guest part took $((SECONDS - t0)) s"
	return $fail
}

# ============================ host side ===================================
host_missing() { echo "rxe_capture: FAIL: missing: $*"; exit $KSFT_FAIL; }


host_main() {
	local top out name min n bad=0
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"	# find_top, vm_host_ready, ...
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	out=$(vm_out rxe_capture)

	vm_host_ready
	command -v tcpdump >/dev/null || host_missing "tcpdump missing"

	vm_run_guest rxe_capture "$out" 240 --add "$top/selftests/vm/vm_lib.sh"

	while read -r name min _; do
		[ -n "$name" ] || continue
		if [ ! -s "$out/rxe-$name.pcap" ]; then
			echo "rxe_capture: FAIL: no capture for $name"
			bad=1
			continue
		fi
		n=$(tcpdump -nn -r "$out/rxe-$name.pcap" udp port 4791 2>/dev/null | wc -l)
		if [ "$n" -lt "$min" ]; then
			echo "rxe_capture: FAIL: $name: $n RoCE v2 frames, want >= $min"
			bad=1
		else
			echo "rxe_capture: $name: $n RoCE v2 frames"
		fi
		cp "$out/rxe-$name.pcap" "$top/build/vm/rxe-$name.pcap"
	done <<<"$cases"
	[ $bad = 0 ] || exit $KSFT_FAIL
	echo "rxe_capture: PASS: captures in $top/build/vm/rxe-*.pcap"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"	# added to the image
	guest_main
else
	host_main
fi
