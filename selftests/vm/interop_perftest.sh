#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Interop with the real peer, perftest edition: perftest 4.5's ib_write_bw,
# ib_read_bw, ib_send_bw, ib_atomic_bw and ib_send_lat on kernel rxe in the
# guest against roxe-perf --perftest on the host side of the VM's tap, each
# with the guest as the server and with the host as the server.
#
# One VM boot per link MTU (1500: path MTU 1024; 9000: path MTU 4096), its
# cases run one after the other. The guest half (the VM's script) and the
# host half (run.sh --host-cmd, in the VM's namespace) walk the same case
# list in lockstep through files in the shared results directory:
# "<case>.<side>-ready" once that side's server listens, "<case>.<side>-rc"
# with its exit status; neither side starts a case before both finished the
# one before.
#
# A case passes when both programs exit 0 and roxe-perf printed a result
# row; each runs once. The boot passes when, in addition, the capture of
# the link (QEMU's filter-dump) holds RoCE v2 frames from both sides, every
# one with a valid ICRC (roxe-pcap verify), and rxe's error counters
# stayed at 0.
#
# ROXE_INTEROP_CASES="name ..." runs only those cases.
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4

# name, link MTU, the side that is the server, the perftest program, then
# the options both ends get (roxe-perf takes perftest's). perftest in the
# guest also gets -d rxe0 -x GID -F --report_gbits, and -e in the bw tests
# that have it (see guest_case); roxe-perf gets --netdev tap0 --perftest -e.
# Multi-packet messages everywhere but the small ones.
cases='
write_bw_gsrv    1500 guest ib_write_bw  -s 4096  -n 100 -m 1024
write_bw_hsrv    1500 host  ib_write_bw  -s 4096  -n 100 -m 1024
read_bw_gsrv     1500 guest ib_read_bw   -s 8192  -n 100 -m 1024
read_bw_hsrv     1500 host  ib_read_bw   -s 3000  -n 100 -m 1024
send_bw_gsrv     1500 guest ib_send_bw   -s 3000  -n 100 -m 1024
send_bw_hsrv     1500 host  ib_send_bw   -s 4096  -n 100 -m 1024
atomic_bw_gsrv   1500 guest ib_atomic_bw -n 100 -m 1024
atomic_bw_hsrv   1500 host  ib_atomic_bw -n 100 -m 1024 -A CMP_AND_SWAP
send_lat_gsrv    1500 guest ib_send_lat  -s 2     -n 20  -m 1024
send_lat_hsrv    1500 host  ib_send_lat  -s 3000  -n 20  -m 1024
write_bw_jumbo   9000 guest ib_write_bw  -s 16384 -n 50  -m 4096
read_bw_jumbo    9000 host  ib_read_bw   -s 16384 -n 50  -m 4096
send_bw_jumbo    9000 host  ib_send_bw   -s 10000 -n 50  -m 4096
send_lat_jumbo   9000 guest ib_send_lat  -s 5000  -n 20  -m 4096
'

PORT=18515
CASE_TIMEOUT=60		# per program; a healthy case takes a few seconds
LAT_TIMEOUT=20		# per latency program; a healthy one takes 1-3 s

log() { echo "interop-perftest: $*"; }

# the cases of this boot: lines "name server program args..."
boot_cases() {
	local name mtu server prog args only=${ROXE_INTEROP_CASES:-}
	while read -r name mtu server prog args; do
		[ -n "$name" ] && [ "$mtu" = "$1" ] || continue
		[ -z "$only" ] || [[ " $only " == *" $name "* ]] || continue
		echo "$name $server $prog $args"
	done <<<"$cases"
}

# Latency cases are short (20 iterations; their figures under TCG mean
# nothing) and get LAT_TIMEOUT, so a stalled one costs little.
case_timeout() { case "$1" in *_lat) echo $LAT_TIMEOUT ;; *) echo $CASE_TIMEOUT ;; esac; }

# "ib_read_bw" -> "read bw"
perf_test() { local t=${1#ib_}; echo "${t%_*} ${t##*_}"; }

# ============================ guest side ==================================
IP=/usr/sbin/ip

guest_case() {
	local name=$1 server=$2 prog=$3 o=$ROXE_VM_OUT rc=0 pid
	shift 3
	# -u 18: the ACK timeout the emulator needs (1 s, not 67 ms): rxe's
	# retries (completer_retry_err) must stay 0
	local args=(-d rxe0 -x "$GID" -F --report_gbits -p "$PORT" -u 18 "$@")

	local t; t=$(case_timeout "$prog")

	# -e (completion events) in the bw tests, not in the latency ones:
	# Debian 12's perftest (4.5-0.17) waits for send and receive
	# completions on one channel, and ib_send_lat then sleeps for good when
	# the peer's reply comes before its ACK of the request (perftest's
	# commit e2eac0f, "Use separate completion channels for send and
	# receive", 23.07). The embedded engine (roxe-perf, the host side here)
	# sends in that order on purpose (sched.c: a ping-pong's held ACK
	# leaves right after the reply); rxe and roxe0 ACK first, so rxe to rxe
	# never shows it (kmod_interop runs ib_send_lat -e on roxe0). Seen
	# here: about 1 run in 3 of send_lat_hsrv stopped after rxe ACKed
	# roxe's reply.
	case "$prog" in ib_write_bw | *_lat) ;; *) args+=(-e) ;; esac
	if [ "$server" = guest ]; then
		timeout "$t" "$prog" "${args[@]}" >"$o/$name.guest.log" 2>&1 &
		pid=$!
		vm_wait_for 10 vm_listening "$PORT" || true
		touch "$o/$name.guest-ready"
		wait $pid || rc=$?
	elif vm_wait_file "$t" "$o/$name.host-ready"; then
		timeout "$t" "$prog" "${args[@]}" "$ROXE_VM_HOST_ADDR" \
			>"$o/$name.guest.log" 2>&1 || rc=$?
	else
		rc=125
	fi
	echo $rc >"$o/$name.guest-rc"
	log "$name: $prog exit $rc"
	vm_wait_file $((t + 10)) "$o/$name.host-rc" || log "$name: no word from the host"
}

guest_main() {
	local o=$ROXE_VM_OUT line

	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	[ "$CASE_MTU" = 1500 ] || $IP link set eth0 mtu "$CASE_MTU"
	if ! GID=$(vm_rxe_up eth0 "$ROXE_VM_GUEST_ADDR"); then
		log "no RoCE v2 GID for $ROXE_VM_GUEST_ADDR on rxe0"
		return 1
	fi
	while read -r line; do
		[ -n "$line" ] || continue
		# shellcheck disable=SC2086 # the case's options, split on purpose
		set -- $line
		guest_case "$@"
	done <<<"$(boot_cases "$CASE_MTU")"
	vm_rxe_counters rxe0 >"$o/rxe-counters.txt"
	return 0
}

# ============================ host side: peer =============================
peer_case() {
	local name=$1 server=$2 prog=$3 o=$ROXE_VM_OUT rc=0 pid
	shift 3
	# shellcheck disable=SC2046 # "write bw": two words
	local cmd=("$ROXE_TOP/build/bin/roxe-perf" $(perf_test "$prog") --netdev "$ROXE_VM_TAP"
		--perftest -e -p "$PORT" "$@")

	local t; t=$(case_timeout "$prog")

	if [ "$server" = host ]; then
		timeout "$t" "${cmd[@]}" >"$o/$name.host.log" 2>&1 &
		pid=$!
		vm_wait_for 10 vm_host_listening "$PORT" || true
		touch "$o/$name.host-ready"
		wait $pid || rc=$?
	elif vm_wait_file "$t" "$o/$name.guest-ready"; then
		timeout "$t" "${cmd[@]}" "$ROXE_VM_GUEST_ADDR" >"$o/$name.host.log" 2>&1 ||
			rc=$?
	else
		rc=125
	fi
	echo $rc >"$o/$name.host-rc"
	vm_wait_file $((t + 10)) "$o/$name.guest-rc" || true
}

peer_main() {
	local line
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	ip link set "$ROXE_VM_TAP" mtu "$CASE_MTU"
	while read -r line; do
		[ -n "$line" ] || continue
		# shellcheck disable=SC2086
		set -- $line
		peer_case "$@"
	done <<<"$(boot_cases "$CASE_MTU")"
}

# ============================ host side: judge ============================
host_missing() { echo "interop-perftest: FAIL: missing: $*"; exit $KSFT_FAIL; }

# check_boot DIR MTU: every case of the boot, then capture and counters
check_boot() {
	local d=$1 mtu=$2 bad=0 name server prog args grc hrc rows f
	while read -r name server prog args; do
		grc=$(cat "$d/$name.guest-rc" 2>/dev/null || echo none)
		hrc=$(cat "$d/$name.host-rc" 2>/dev/null || echo none)
		rows=$(grep -c -E '^ [0-9]+ +[0-9]+ ' "$d/$name.host.log" 2>/dev/null || true)
		if [ "$grc" = 0 ] && [ "$hrc" = 0 ] && [ "${rows:-0}" -gt 0 ]; then
			log "$name: ok: $prog $args ($server is the server):" \
				"$(grep -E '^ [0-9]+ +[0-9]+ ' "$d/$name.host.log" | tail -n1 | tr -s ' \t' ' ')"
			continue
		fi
		log "$name: FAIL: $prog (guest) exit $grc, roxe-perf (host) exit $hrc, $rows result rows"
		for f in "$name.guest.log" "$name.host.log"; do
			[ -s "$d/$f" ] || continue
			echo "    --- $f"
			tail -n 12 "$d/$f" | sed 's/^/    /'
		done
		bad=1
	done <<<"$(boot_cases "$mtu")"

	if vm_verify_capture "$d/wire.pcap" "$d/verify.txt" && [ "$VM_FROM_HOST" != 0 ] &&
		[ "$VM_FROM_GUEST" != 0 ]; then
		log "mtu $mtu: capture: $VM_CAPTURE; roxe sent $VM_FROM_HOST, rxe sent $VM_FROM_GUEST"
	else
		log "mtu $mtu: FAIL: capture: $VM_CAPTURE; roxe sent $VM_FROM_HOST," \
			"rxe sent $VM_FROM_GUEST; frames missing, with a bad ICRC or malformed:"
		grep -v 'icrc ok$' "$d/verify.txt" 2>/dev/null | sed -n 1,20p | sed 's/^/    /'
		bad=1
	fi
	# send_rnr_err is no error here: send_bw's client may outrun the
	# receives of its server, which RNR NAKs it (as perftest to perftest)
	vm_check_rxe_counters "$d/rxe-counters.txt" "interop-perftest: mtu $mtu" \
		rcvd_seq_err rcvd_rnr_err out_of_seq_request duplicate_request \
		completer_retry_err retry_exceeded_err retry_rnr_exceeded_err send_err link_downed || bad=1
	return $bad
}

run_boot() {
	local mtu=$1 d=$OUTDIR/mtu$1 rc=0 t0=$SECONDS n peer
	n=$(boot_cases "$mtu" | wc -l)
	[ "$n" -gt 0 ] || return 0
	rm -rf "$d"
	mkdir -p "$d"
	peer=$(printf '%q ' env CASE_MTU="$mtu" ROXE_INTEROP_PEER=1 \
		ROXE_INTEROP_CASES="${ROXE_INTEROP_CASES:-}" "$SELF")
	log "link mtu $mtu: $n cases"
	"$TOPDIR/tools/vm/run.sh" --quiet --timeout $((n * (CASE_TIMEOUT + 20) + 60)) --out "$d" \
		--pcap "$d/wire.pcap" --env CASE_MTU="$mtu" --add "$TOPDIR/selftests/vm/vm_lib.sh" \
		--env ROXE_INTEROP_CASES="${ROXE_INTEROP_CASES:-}" \
		--script "$SELF" --host-cmd "exec $peer" &
	RUN_PID=$!
	wait $RUN_PID || rc=$?
	RUN_PID=
	if [ $rc != 0 ]; then
		log "mtu $mtu: FAIL: VM run exited with $rc$(vm_verdict "$d"); console tail:"
		tail -n 20 "$d/console.log" 2>/dev/null | sed 's/^/    /'
	fi
	check_boot "$d" "$mtu" || rc=1
	log "link mtu $mtu: $((SECONDS - t0)) s"
	[ $rc = 0 ]
}

host_main() {
	local fail=0 p

	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"	# find_top, vm_host_ready, ...
	TOPDIR=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	SELF=$(readlink -f "$0")
	OUTDIR=$(vm_out interop-perftest)
	vm_host_ready
	for p in roxe-perf roxe-pcap; do
		[ -x "$TOPDIR/build/bin/$p" ] || host_missing "build/bin/$p missing: run make"
	done
	RUN_PID=
	trap '[ -z "$RUN_PID" ] || kill -TERM $RUN_PID 2>/dev/null; wait; exit $KSFT_FAIL' TERM INT
	[ -n "$(boot_cases 1500)$(boot_cases 9000)" ] ||
		host_missing "no case matches ROXE_INTEROP_CASES=${ROXE_INTEROP_CASES:-}"
	run_boot 1500 || fail=1
	run_boot 9000 || fail=1
	if [ $fail != 0 ]; then
		log "FAIL: results in $OUTDIR/"
		exit $KSFT_FAIL
	fi
	log "PASS: captures in $OUTDIR/mtu*/wire.pcap"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	guest_main
elif [ "${ROXE_INTEROP_PEER:-}" = 1 ]; then
	peer_main
else
	host_main
fi
