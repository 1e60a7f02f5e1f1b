#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The RDMA software people run, unmodified, on roxe0 (roxe.ko served by
# roxed, through the stock rxe verbs provider) against two peers (issue
# #17), one boot each:
#   rxe:  rxe0 (kernel rxe) on rxa facing roxe0 (roxed --netdev rxb)
#         (vm_rxe_roxe_pair);
#   roxe: roxe0 (roxed --netdev rxa) facing roxe1 (a second roxed --netdev rxb)
#         (vm_roxe_roxe_pair).
# On each:
#   - rdmacm-utils: rping -V (data verified) with roxe0 as server and as
#     client; ucmatose -c 4; udaddy -c 4; rstream and riostream with
#     -T v (data verified); cmtime -c 128 three times against one server
#     (roxe0 the server, and against rxe0 the client too): both devices'
#     QP/CQ/MR/cm_id counts (rdma resource show; roxed's, roxectl devices)
#     show no leak;
#   - qperf -cm1: rc_bw, rc_lat, rc_rdma_write_bw; ud_lat must fail on
#     both ends with ib_core's refusal of its GRH-less address handle;
#   - fio's rdma engine: verb=write and verb=read; the buffers are shared
#     file mappings, so what the client RDMA-wrote (crc32c verify headers)
#     and what it RDMA-read back are checked by fio's own verify;
#   - rxe0's and roxe's error counters 0, dmesg clean.
# Options (environment): ROXE_APPS_PEERS ("rxe roxe"), ROXE_APPS_STEPS
# (rping ucmatose udaddy rstream riostream cmtime qperf fio).
# Every program's exit code is checked, on both ends.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
A=10.77.6.1 B=10.77.6.2

# ============================ guest side ==================================
KO=${ROXE_TOP:-}/build/kmod/$(uname -r)/roxe.ko
ROXED=${ROXE_TOP:-}/build/bin/roxed
ROXECTL=${ROXE_TOP:-}/build/bin/roxectl
PEER=${ROXE_APPS_PEER:-rxe}
fail=0

log() { echo "kmod_rdma_apps: [$PEER] $*"; }
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }

tcp_listening() { vm_listening "$1"; }

# Every RDMA program runs with the ACK timeout the emulator needs (1 s;
# rdma_cm's default is shorter): rxe's retries (completer_retry_err) must
# stay 0 (vm_check_rxe_counters).
APP_ENV=(env LD_PRELOAD="${ROXE_TOP:-}/build/lib/roxe-linger.so" ROXE_MIN_TIMEOUT=18)

# app_pair LABEL READY PORT SERVER-CMD CLIENT-CMD: the server (in the
# background) and then its client, each through bash -c; READY PORT says
# the server listens. Both must exit 0 (the server within 30 s of its
# client). Logs in $ROXE_VM_OUT/LABEL.{srv,cli}; APP_CLI is the client's
# log. 0 when both passed.
app_pair() {
	local label=$1 ready=$2 port=$3 srv=$4 cli=$5 spid rc=0 src=0 n
	local logf=$ROXE_VM_OUT/$PEER-${label//[^A-Za-z0-9_.-]/_}
	APP_CLI=$logf.cli
	stdbuf -oL "${APP_ENV[@]}" bash -c "$srv" >"$logf.srv" 2>&1 &
	spid=$!
	if ! vm_wait_for 20 "$ready" "$port"; then
		bad "$label: server did not listen ($srv)"
		kill -KILL $spid 2>/dev/null || true
		wait $spid 2>/dev/null || true
		sed 's/^/    srv: /' "$logf.srv" | tail -8
		return 1
	fi
	timeout 60 stdbuf -oL "${APP_ENV[@]}" bash -c "$cli" >"$logf.cli" 2>&1 || rc=$?
	n=300
	while kill -0 $spid 2>/dev/null && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
	kill -KILL $spid 2>/dev/null || true
	wait $spid || src=$?
	if [ $rc != 0 ] || [ $src != 0 ]; then
		bad "$label: client exit $rc, server exit $src"
		log "    server: $srv"
		log "    client: $cli"
		sed 's/^/    srv: /' "$logf.srv" | tail -10
		sed 's/^/    cli: /' "$logf.cli" | tail -10
		vm_cm_trace_tail 30 | sed 's/^/    cm trace: /'
		return 1
	fi
	return 0
}

# --- rdmacm-utils -----------------------------------------------------------

# rping SADDR WHO: server bound to SADDR (WHO's address), the client from
# the other end; 20 pings of 64 bytes, verified (-V) on both ends.
step_rping() {
	local s=$1 who=$2 n
	app_pair "rping-$who-server" vm_cm_listening 7174 \
		"rping -s -a $s -p 7174 -C 20 -S 64 -V" \
		"rping -c -a $s -p 7174 -C 20 -S 64 -V -v" || return 0
	n=$(grep -c 'ping data' "$APP_CLI" || true)
	[ "$n" = 20 ] && ok "rping -V -C 20, $who the server: 20 pings verified" ||
		bad "rping, $who the server: $n pings of 20"
}

# ucmatose: 4 RC connections, 10 messages of 1000 bytes each way on each.
step_ucmatose() {
	local s=$1 who=$2
	app_pair "ucmatose-$who-server" vm_cm_listening 7471 \
		"ucmatose -b $s -c 4 -C 10 -S 1000" \
		"ucmatose -s $s -c 4 -C 10 -S 1000" || return 0
	grep -q 'data transfers complete' "$APP_CLI" &&
		grep -q 'data transfers complete' "${APP_CLI%.cli}.srv" &&
		! grep -qi 'error\|fail' "$APP_CLI" "${APP_CLI%.cli}.srv" &&
		ok "ucmatose -c 4 -C 10 -S 1000, $who the server: 40 messages each way, both exit 0" ||
		{ bad "ucmatose, $who the server: output"; sed 's/^/    cli: /' "$APP_CLI" | tail; }
}

# udaddy: 4 UD paths, 10 datagrams of 100 bytes each way.
step_udaddy() {
	local s=$1 who=$2
	app_pair "udaddy-$who-server" vm_cm_listening 7174 \
		"udaddy -b $s -c 4 -C 10 -S 100" \
		"udaddy -s $s -c 4 -C 10 -S 100" || return 0
	grep -q 'return status 0' "$APP_CLI" &&
		! grep -qi 'error\|fail' "$APP_CLI" "${APP_CLI%.cli}.srv" &&
		ok "udaddy -c 4 -C 10, $who the server: both exit 0" ||
		{ bad "udaddy, $who the server: output"; sed 's/^/    cli: /' "$APP_CLI" | tail; }
}

# rstream / riostream (rsockets): TRANSFERS messages of SIZE bytes each
# way, ITERS times, every byte verified (-T v); the client's summary line
# says how many bytes went.
step_rsocket() {
	local prog=$1 s=$2 who=$3 size=$4 count=$5 iters=$6 want line
	app_pair "$prog-$who-server" vm_cm_listening 7481 \
		"$prog -b $s -p 7481 -S $size -C $count -I $iters -T v" \
		"$prog -s $s -p 7481 -S $size -C $count -I $iters -T v" || return 0
	# name bytes xfers iters total time Gb/sec usec/xfer: total counts both
	# directions
	# (rstream's size_str: one decimal below 10 units)
	want=$(awk -v n=$((2 * size * count * iters)) 'BEGIN {
		b = 1; u = ""; if (n >= 1073741824) { b = 1073741824; u = "g" } else if (n >= 1048576) { b = 1048576; u = "m" }
		else if (n >= 1024) { b = 1024; u = "k" }
		if (n / b < 10) printf "%.1f%s", n / b, u; else printf "%d%s", n / b, u }')
	line=$(grep -E "^custom " "$APP_CLI" | tr -s ' ' || true)
	if [ "$(echo "$line" | cut -d' ' -f5)" = "$want" ]; then
		ok "$prog -S $size -C $count -I $iters -T v, $who the server: $want verified; $line"
	else
		bad "$prog, $who the server: result '$line', expected a total of $want"
		sed 's/^/    cli: /' "$APP_CLI" | tail
	fi
}

# DEV's resources, "pd N cq N qp N cm_id N mr N ctx N srq N" from
# rdma(8), with roxed's own count for roxe0 (roxectl devices: contexts,
# QPs, CQs, MRs).
res_dev_lines() {
	rdma resource show 2>/dev/null | awk -v d="$1:" '$2 == d { $1 = ""; $2 = ""; print }' |
		tr -s ' ' | sed 's/^ //'
	[ "$1" != roxe0 ] || "$ROXECTL" devices "$ROXE_IF" 2>/dev/null |
		awk 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		     { print "roxed: contexts " $c["CONTEXTS"] " qps " $c["QPS"] " cqs " $c["CQS"] " mrs " $c["MRS"] }'
}
res_dev() { res_dev_lines "$1" | tr '\n' ' ' | sed 's/ $//'; }
res_same() { [ "$(res_dev "$1")" = "$2" ]; }
# res_count DEV|SNAPSHOT NAME: NAME's count (qp, cm_id, ...) in rdma
# resource's line for DEV, or in a res_dev snapshot (a string with spaces)
res_count() {
	local line=$1
	case $line in *" "*) ;; *) line=$(res_dev "$1") ;; esac
	awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' <<<"$line"
}
# the server's connections of a run are gone: as many QPs and CM ids on
# its device as before the run (its listener is among them)
res_conns_gone() {
	[ "$(res_count "$1" qp)" = "$(res_count "$2" qp)" ] &&
		[ "$(res_count "$1" cm_id)" = "$(res_count "$2" cm_id)" ]
}

# cmtime (rdmacm-utils 44: the server runs until killed): its server on
# SADDR's end (device SDEV), the client (device CDEV) -c 128 three times:
# 128 connections set up and torn down each time. No leak: the client's
# device back to where it was after each run (its process is gone); the
# server's device, the server still listening, the same after runs 2 and
# 3 as after run 1. (After the first run the server process keeps two
# CQs of one entry, no QP: librdmacm/cmtime's, on rxe0 as on roxe0.)
step_cmtime() {
	local s=$1 who=$2 sdev=$3 cdev=$4 c0 s0 s1 i spid logf=$ROXE_VM_OUT/$PEER-cmtime-$2-server
	stdbuf -oL "${APP_ENV[@]}" cmtime -b "$s" -p 7491 >"$logf.srv" 2>&1 &
	spid=$!
	vm_wait_for 20 vm_cm_listening 7491 || { bad "cmtime: server did not listen"; kill $spid; return 0; }
	c0=$(res_dev $cdev) s0=$(res_dev $sdev)
	for i in 1 2 3; do
		if ! timeout 60 stdbuf -oL "${APP_ENV[@]}" cmtime -s "$s" -p 7491 -c 128 >"$logf.cli$i" 2>&1; then
			bad "cmtime -c 128 run $i, $who the server: client failed"
			sed 's/^/    cli: /' "$logf.cli$i" | tail
			break
		fi
		log "    cmtime run $i: $(grep -E '^(connect|disconnect) ' "$logf.cli$i" | tr -s ' ' | tr '\n' ';')"
		if ! vm_wait_for 20 res_same $cdev "$c0"; then
			bad "cmtime run $i: client's $cdev before [$c0], after [$(res_dev $cdev)]"
			break
		fi
		if [ $i = 1 ]; then
			vm_wait_for 20 res_conns_gone $sdev "$s0" ||
				bad "cmtime run 1: server's $sdev before [$s0], after [$(res_dev $sdev)]"
			s1=$(res_dev $sdev)
			log "    server's $sdev before the runs [$s0], after run 1 [$s1]"
		elif ! vm_wait_for 20 res_same $sdev "$s1"; then
			bad "cmtime run $i: server's $sdev after run 1 [$s1], after run $i [$(res_dev $sdev)]"
			rdma resource show cq 2>&1 | sed 's/^/    /' || true
			break
		fi
		[ $i = 3 ] && ok "cmtime -c 128 three times, $who the server: clients exit 0; $cdev (client) back to [$c0] each time; $sdev (server) [$s1] after each run"
	done
	kill -TERM $spid 2>/dev/null
	wait $spid 2>/dev/null || true
	grep -i 'fail\|error' "$logf.srv" | sed -n 1,3p | sed 's/^/    srv: /' || true
}

# --- qperf --------------------------------------------------------------------

# qperf: the server on SADDR's end (listens on TCP 19765 for the
# client's requests), the client -cm1 (rdma_cm addressing, which RoCE
# needs: without it qperf has no GID) towards it. Debian 12's qperf
# (0.4.11) tells the client the server's rdma_cm port before it listens
# there (upstream's 118a571, "Fix rdmacm race", came after): a REQ that
# comes first is rejected, no listener (REJ 8), whatever the devices (the
# ib_cm trace of a failed run: REQ at 22.164, REJ at 22.165, the server's
# listen at 22.166). So the client connects once the listener is there
# (roxe-linger.so's ROXE_CONNECT_WAIT, as kmod_interop's perftest -R).
step_qperf() {
	local s=$1 who=$2 t
	local wait="ROXE_CONNECT_WAIT='bash $ROXE_TOP/selftests/vm/vm_lib.sh cm_wait'"
	for t in rc_bw rc_lat rc_rdma_write_bw; do
		app_pair "qperf-$t-$who-server" tcp_listening 19765 \
			"timeout 60 qperf -lp 19765" \
			"$wait qperf -lp 19765 -cm1 -t 1 $s $t quit" || continue
		ok "qperf -cm1 $t, $who the server: $(grep -E '^ *(bw|latency) *=' "$APP_CLI" | tr -s ' ' | tr '\n' ' ')"
	done
}

# qperf's UD tests do not use the CM (-cm1 is ignored: "set but not
# used") and address the peer by LID alone: an address handle without a
# GRH, which ib_core refuses on every RoCE port (EINVAL) before a driver
# sees it. So ud_lat fails on rxe0 and roxe0 alike; both are shown, and
# each must fail that way (anything else is news).
step_qperf_ud() {
	local s=$1 who=$2 cdev=$3 logf=$ROXE_VM_OUT/$PEER-qperf-ud_lat-$2-server spid rc=0 why
	timeout 30 "${APP_ENV[@]}" qperf -lp 19766 >"$logf.srv" 2>&1 &
	spid=$!
	vm_wait_for 20 tcp_listening 19766 || { bad "qperf: server did not listen"; return 0; }
	timeout 30 "${APP_ENV[@]}" qperf -lp 19766 -t 2 "$s" ud_lat >"$logf.cli" 2>&1 || rc=$?
	kill $spid 2>/dev/null; wait $spid 2>/dev/null || true
	# whichever end creates its address handle first reports the refusal
	why=$(grep -h 'failed to create address handle: Invalid argument' "$logf.cli" "$logf.srv" | sed -n 1p)
	if [ $rc != 0 ] && [ -n "$why" ]; then
		log "known: qperf ud_lat, $who the server, client on $cdev: exit $rc, '$why' (qperf's UD tests have no GRH: no RoCE device takes them)"
	else
		bad "qperf ud_lat, client on $cdev: exit $rc, not the known refusal"
		sed 's/^/    cli: /' "$logf.cli" | tail -5
		sed 's/^/    srv: /' "$logf.srv" | tail -5
	fi
}

# --- fio ----------------------------------------------------------------------

# fio's rdma engine: the server is the rw=read job, the client the
# rw=write one with verb=write (RDMA WRITE) or verb=read (RDMA READ).
# fio skips its verify pass on the rdma engine (a one-way engine,
# FIO_UNIDIR), so the data is checked where it lands, by fio itself: the
# buffers live in shared mappings of files (--mem=mmapshared:FILE, which
# fio maps as they are: sized first), and a local fio verify_only job
# (psync) checks the crc32c verify headers in them:
#   write: the client's 1 MiB block, with crc32c headers, RDMA-written
#          into the server's buffer file F;
#   read:  a second client with zeroed buffers in its own file G
#          RDMA-reads F's block back into G.
# A verify of G before the read must fail (the check checks).
# Throughput: 8 MiB each way, 64 KiB blocks, depth 8.
FIO_SRV="fio --ioengine=rdma --port=7500 --rw=read"
fio_cli() {
	echo "fio --ioengine=rdma --hostname=$1 --port=7500 --rw=write --name=$2 $3"
}
FIO_BLK="--bs=1m --size=1m --iodepth=1"
# fio_check FILE: fio's own crc32c verify of the block in FILE
fio_check() {
	fio --name=chk --filename="$1" --ioengine=psync --rw=write $FIO_BLK --verify=crc32c \
		--verify_only=1 --verify_fatal=1 >"$ROXE_VM_OUT/$PEER-fio-check.log" 2>&1 &&
		grep -q 'err= 0' "$ROXE_VM_OUT/$PEER-fio-check.log"
}

# fio exits 0 even when a job failed: each job's summary must say err= 0
# on both ends, and no fio line may report a failure.
fio_ok() {
	local f srv=${APP_CLI%.cli}.srv
	for f in "$APP_CLI" "$srv"; do
		if ! grep -q 'err= 0' "$f" || grep -q '^fio: .*\(fail\|REJECTED\|bad\)' "$f"; then
			bad "$1: ${f##*.}: $(grep -m3 '^fio: \|err=' "$f" | tr '\n' ' ')"
			return 1
		fi
	done
}

step_fio() {
	local s=$1 who=$2 f=/tmp/fio-srv.buf g=/tmp/fio-cli.buf v
	rm -f $f $g
	truncate -s 1M $f
	truncate -s 1M $g
	if fio_check $g; then
		bad "fio: the verify of a zeroed buffer passed"
		return 0
	fi
	app_pair "fio-write-check-$who-server" vm_cm_listening 7500 \
		"$FIO_SRV --name=srv $FIO_BLK --mem=mmapshared:$f" \
		"$(fio_cli "$s" chk "--verb=write $FIO_BLK --verify=crc32c --do_verify=0")" || return 0
	fio_ok "fio verb=write check, $who the server" || return 0
	if ! fio_check $f; then
		bad "fio verb=write: the server's buffer fails fio's crc32c verify"
		sed 's/^/    chk: /' "$ROXE_VM_OUT/$PEER-fio-check.log" | grep -i 'verify\|err' | sed -n 1,5p
		return 0
	fi
	app_pair "fio-read-check-$who-server" vm_cm_listening 7500 \
		"$FIO_SRV --name=srv $FIO_BLK --mem=mmapshared:$f" \
		"$(fio_cli "$s" rd "--verb=read $FIO_BLK --zero_buffers --mem=mmapshared:$g")" || return 0
	fio_ok "fio verb=read check, $who the server" || return 0
	if ! fio_check $g; then
		bad "fio verb=read: the block read back fails fio's crc32c verify"
		sed 's/^/    chk: /' "$ROXE_VM_OUT/$PEER-fio-check.log" | grep -i 'verify\|err' | sed -n 1,5p
		return 0
	fi
	ok "fio rdma, $who the server: 1 MiB with crc32c headers RDMA-written (verb=write) into the server's buffer and RDMA-read (verb=read) back, both verified by fio (a zeroed buffer fails it)"
	rm -f $f $g
	for v in write read; do
		app_pair "fio-$v-$who-server" vm_cm_listening 7500 \
			"$FIO_SRV --name=srv --bs=64k --size=8m --iodepth=8" \
			"$(fio_cli "$s" bw "--verb=$v --bs=64k --size=8m --iodepth=8")" || continue
		fio_ok "fio verb=$v, $who the server" || continue
		ok "fio rdma verb=$v 8 MiB, 64 KiB x 8, $who the server: $(grep -oE 'bw=[^ ]+ \([^)]*\)' "$APP_CLI" | sed -n 1p)"
	done
}

# --- the run ------------------------------------------------------------------

# DEV's counters (rdma statistic: roxed's totals) shown; those that mean a
# broken exchange on a clean veth must be 0.
ROXE_ERR_COUNTERS='icrc_err rx_drop_malformed rcvd_seq_err send_seq_err out_of_seq_request
duplicate_request rcvd_rnr_err send_rnr_err'
check_roxe_counters() {
	local st c n
	vm_roxe_stats_fresh "$1" || bad "$1: roxed stored no counters"
	st=$(rdma statistic show link "$1/1" 2>/dev/null | tr -s ' ')
	log "$1 counters: ${st#link }"
	[ -n "$st" ] || { bad "$1: no counters (rdma statistic)"; return; }
	for c in $ROXE_ERR_COUNTERS; do
		n=$(echo "$st" | awk -v c="$c" '{ for (i = 1; i < NF; i++) if ($i == c) print $(i + 1) }')
		[ "${n:-0}" = 0 ] || bad "$1: counter $c = $n"
	done
}

guest_main() {
	local t0=$SECONDS R P RWHO PWHO
	# fio and rping's threads: glibc loads libgcc_s at pthread_exit
	ulimit -l unlimited
	vm_cm_trace_on		# a failed connection's log says why
	if [ "$PEER" = rxe ]; then
		vm_rxe_roxe_pair $A $B 1 || exit 1
		R=$B P=$A RWHO=roxe0 PWHO=rxe0 ROXE_IF=rxb
	else
		vm_roxe_roxe_pair $A $B 1 || exit 1
		R=$A P=$B RWHO=roxe0 PWHO=roxe1 ROXE_IF=rxa
	fi
	for st in ${ROXE_APPS_STEPS:-rping ucmatose udaddy rstream riostream cmtime qperf fio}; do
		case $st in
		rping) step_rping $R $RWHO; step_rping $P $PWHO ;;
		ucmatose) step_ucmatose $R $RWHO ;;
		udaddy) step_udaddy $P $PWHO ;;
		rstream) step_rsocket rstream $R $RWHO 4096 100 4 ;;
		riostream) step_rsocket riostream $P $PWHO 4096 100 4 ;;
		# roxe0 as the server and (against rxe0) as the client
		cmtime) step_cmtime $R $RWHO $RWHO $PWHO
			[ "$PEER" != rxe ] || step_cmtime $P $PWHO $PWHO $RWHO ;;
		qperf) step_qperf $R $RWHO; step_qperf_ud $R $RWHO $PWHO; step_qperf_ud $P $PWHO $RWHO ;;
		fio) step_fio $R $RWHO ;;
		esac
	done
	if [ "$PEER" = rxe ]; then
		vm_rxe_counters rxe0 >"$ROXE_VM_OUT/rxe0.counters"
		vm_check_rxe_counters "$ROXE_VM_OUT/rxe0.counters" "kmod_rdma_apps: [$PEER]" || fail=1
	fi
	check_roxe_counters roxe0
	[ "$PEER" = rxe ] || check_roxe_counters roxe1
	vm_check_veth_drops "kmod_rdma_apps: [$PEER]" rxa rxb || fail=1
	kill -TERM $ROXED_PID ${ROXED1_PID:-}
	wait $ROXED_PID ${ROXED1_PID:-} || true
	vm_wait_for 10 vm_no_dev roxe0 || bad "roxe0 stays after roxed's SIGTERM"
	rmmod roxe || bad "rmmod roxe"
	vm_check_dmesg
	log "guest part took $((SECONDS - t0)) s"
	[ $fail = 0 ] && log "all passed" || log "FAILED"
	exit $fail
}

# ============================ host side ===================================
host_missing() { echo "kmod_rdma_apps: FAIL: missing: $*"; exit $KSFT_FAIL; }

host_main() {
	local top p peers=${ROXE_APPS_PEERS:-rxe roxe} extra=() missing=()
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	vm_host_ready
	vm_need_kmod "$top"
	[ -x "$top/build/bin/roxed" ] || host_missing "build/bin/roxed missing (make)"
	# the programs (rdmacm-utils, qperf, fio: tools/scripts/install-deps.sh)
	# are not in the harness's image; libgcc_s: glibc dlopen()s it when a
	# thread exits
	for p in rping ucmatose udaddy rstream riostream cmtime qperf fio; do
		command -v $p >/dev/null || missing+=("$p")
		extra+=(--add "$(command -v $p || true)")
	done
	[ ${#missing[@]} = 0 ] || host_missing "missing ${missing[*]} (tools/scripts/install-deps.sh)"
	extra+=(--add /lib/x86_64-linux-gnu/libgcc_s.so.1)
	# stdbuf: line-buffered logs, so a program that hangs and is killed
	# still shows how far it got
	extra+=(--add /usr/bin/stdbuf --add /usr/libexec/coreutils/libstdbuf.so)
	for p in $peers; do
		vm_run_guest kmod_rdma_apps "$top/build/vm/kmod-rdma-apps-$p" 280 \
			--env ROXE_APPS_PEER=$p --env ROXE_APPS_STEPS="${ROXE_APPS_STEPS:-}" \
			--add "$top/build/kmod/$KVER/roxe.ko" --add "$top/build/bin/roxed" \
			--add "$top/build/bin/roxectl" --add "$top/selftests/vm/vm_lib.sh" "${extra[@]}"
	done
	echo "kmod_rdma_apps: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	guest_main
else
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"
	host_main
fi
