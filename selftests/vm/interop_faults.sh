#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Interop with the real peer through a faulty hop: ibv_rc_pingpong on kernel
# rxe in the guest against roxe-pingpong on the host, and perftest's
# ib_{write,read,send}_bw against roxe-perf --perftest, either end as the
# server, with RoCE v2 frames dropped, reordered and duplicated in both
# directions between them (run.sh --faults: faultwire between the guest's
# tap0 and the veth whose other end, host0, roxe runs on; this kernel has no
# sch_netem, and netem on roxe's own interface would not see AF_XDP frames).
#
# One VM boot; the guest half (the VM's script) and the host half (run.sh
# --host-cmd, in the VM's namespace) walk the case list in lockstep through
# files in the shared results directory, as interop_perftest.sh does:
# "<case>.<side>-ready" once that side's server listens, "<case>.<side>-rc"
# with its exit status.
#
# Data: ibv_rc_pingpong sends back what it receives (its --chk only looks
# at the first byte of every page, on the server, at the end, and does not
# fail), so roxe-pingpong -C checks every byte of every exchange against the
# echo: as the client it sends pattern i and wants it back; as the server it
# answers exchange i with pattern i and wants it in exchange i + 1. Both
# directions of rxe's data path are covered either way.
#
# The last ACK: a ping-pong program whose counts are complete destroys its
# QP, and if the ACK of the peer's last message was lost, the peer retries
# into nothing until it gives up. roxe-pingpong -L keeps roxe's QP
# answering; ibv_rc_pingpong gets the same through tools/vm/linger.c
# (LD_PRELOAD, ROXE_LINGER_MS).
#
# Kernel rxe 6.12 (interop_faults-6.12.sh) hangs a requester that takes an
# ACK of a message's last PSN while it is still resending that message and
# then loses the next ACK of that PSN (docs/kernels.md): roxe's responder
# sends no ACK ahead of a go-back resend that it can avoid, and repeats one
# that may have been for every duplicate (user/transport/responder.c:
# rc_duplicate_ack). A hang fails its case.
#
# perftest checks no data: its cases show that both ends complete every
# WRITE, READ and SEND without an error completion; the READ cases make the
# requester re-read (lost read responses) and the responder answer
# duplicate READ requests. perftest's closing handshake over TCP keeps both
# QPs alive until both ends are done, so no linger is needed there.
#
# A case passes when both programs exit 0 (roxe-pingpong: no data mismatch)
# and the faults hit: the requester retransmitted during it (roxe's per-QP
# retransmits from roxectl stats, rxe's completer_retry_err: retries after a
# timeout or a sequence NAK); in a ping-pong both ends are requesters and
# both must have retransmitted. The boot passes when, in addition,
# faultwire dropped and reordered frames, every RoCE v2 frame of the capture
# of the guest's side of the link is valid (roxe-pcap verify: no corruption
# is injected, so a bad ICRC is a bug) and rxe never gave up
# (retry_exceeded_err and the RNR counters stay 0).
#
# ROXE_FAULTS="drop=2,reorder=2,dup=1" sets the faults (run.sh --faults;
# each run boots once per seed: FAULT_SEEDS, then one drawn anew and
# printed; with seed=N faultwire makes the same choices for the same
# sequence of frames, though timing still varies, and ROXE_FAULTS with a
# seed runs that boot alone);
# ROXE_INTEROP_CASES="name ..." runs only those cases; ROXE_INTEROP_TRACE=1
# puts roxe's per-frame trace in <case>.host.log.
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4

# name, program in the guest, the side that is the server, then the options
# both ends get. The guest runs ibv_rc_pingpong (-e, with the linger) or
# perftest (-d rxe0 -x GID -F --report_gbits, -e where it has it), the host
# roxe-pingpong -C -L or roxe-perf --perftest -e. Link MTU 9000 on eth0 and
# host0 (the hop carries 9000 too), so the path MTU is what -m says: 1024
# (4 frames per 4 KiB message) or 4096 (frames of 4 KiB and more:
# multi-buffer for roxe). A ping-pong exchange takes 5-9 ms under TCG at 2 %
# loss (a loss that only a timeout repairs costs 67 ms: timeout 14); the
# whole boot about 25 s.
cases='
pp_guest_srv      ibv_rc_pingpong guest -s 4096  -m 1024 -n 300
pp_host_srv       ibv_rc_pingpong host  -s 4096  -m 1024 -n 300
pp_jumbo_gsrv     ibv_rc_pingpong guest -s 10000 -m 4096 -n 100
pp_jumbo_hsrv     ibv_rc_pingpong host  -s 8192  -m 4096 -n 100
write_bw_gsrv     ib_write_bw     guest -s 4096  -m 1024 -n 200
read_bw_gsrv      ib_read_bw      guest -s 4096  -m 1024 -n 200
read_bw_hsrv      ib_read_bw      host  -s 8192  -m 4096 -n 100
send_bw_hsrv      ib_send_bw      host  -s 4096  -m 1024 -n 200
'
LINK_MTU=9000
FAULTS_DEFAULT=drop=2,reorder=2,dup=1

PORT=18515
PP_TIMEOUT=20		# per program; a case takes 3 s at most
LINGER_MS=1000		# both ends keep answering retries this long at the end
# rxe's counters that mean it gave up, or saw RNR (every receive is posted
# long before it is needed); the sequence and duplicate counters are the
# faults at work here
err_counters='retry_exceeded_err retry_rnr_exceeded_err rcvd_rnr_err send_rnr_err link_downed'

log() { echo "interop-faults: $*"; }

# the cases to run: lines "name program server options..."
run_cases() {
	local name prog server args only=${ROXE_INTEROP_CASES:-}
	while read -r name prog server args; do
		[ -n "$name" ] || continue
		[ -z "$only" ] || [[ " $only " == *" $name "* ]] || continue
		echo "$name $prog $server $args"
	done <<<"$cases"
}

# "ib_read_bw" -> "read bw"
perf_test() { local t=${1#ib_}; echo "${t%_*} ${t##*_}"; }

# ============================ guest side ==================================
IP=/usr/sbin/ip
# counters_delta BEFORE AFTER: "name after-before" for every counter
counters_delta() {
	awk 'NR == FNR { b[$1] = $2; next } { print $1, $2 - b[$1] }' "$1" "$2"
}

guest_case() {
	local name=$1 prog=$2 server=$3 o=$ROXE_VM_OUT rc=0 pid i pp
	shift 3
	if [ "$prog" = ibv_rc_pingpong ]; then
		pp=(env LD_PRELOAD="$ROXE_TOP/build/lib/roxe-linger.so" ROXE_LINGER_MS="$LINGER_MS"
			timeout "$PP_TIMEOUT" "$prog" -d rxe0 -g "$GID" -e -p "$PORT" "$@")
	else
		pp=(timeout "$PP_TIMEOUT" "$prog" -d rxe0 -x "$GID" -F --report_gbits -p "$PORT" "$@")
		[ "$prog" = ib_write_bw ] || pp+=(-e)
	fi

	vm_rxe_counters rxe0 >/tmp/before
	if [ "$server" = guest ]; then
		"${pp[@]}" >"$o/$name.guest.log" 2>&1 &
		pid=$!
		vm_wait_for 10 vm_listening "$PORT" || true
		touch "$o/$name.guest-ready"
		wait $pid || rc=$?
	elif vm_wait_file $PP_TIMEOUT "$o/$name.host-ready"; then
		"${pp[@]}" "$ROXE_VM_HOST_ADDR" >"$o/$name.guest.log" 2>&1 || rc=$?
	else
		rc=125
	fi
	vm_rxe_counters rxe0 >/tmp/after
	counters_delta /tmp/before /tmp/after >"$o/$name.rxe.txt"
	echo $rc >"$o/$name.guest-rc"
	log "$name: $prog exit $rc"
	vm_wait_file $((PP_TIMEOUT + 10)) "$o/$name.host-rc" || log "$name: no word from the host"
}

guest_main() {
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	local i line

	$IP link set eth0 mtu $LINK_MTU
	if ! GID=$(vm_rxe_up eth0 "$ROXE_VM_GUEST_ADDR"); then
		log "no RoCE v2 GID for $ROXE_VM_GUEST_ADDR on rxe0"
		return 1
	fi
	[ -r "$ROXE_TOP/build/lib/roxe-linger.so" ] || log "warning: no roxe-linger.so in the image"
	while read -r line; do
		[ -n "$line" ] || continue
		# shellcheck disable=SC2086 # the case's fields, split on purpose
		guest_case $line
	done <<<"$(run_cases)"
	vm_rxe_counters rxe0 >"$ROXE_VM_OUT/rxe-counters.txt"
	return 0
}

# ============================ host side: peer =============================
# roxe_counters LOG: the counters of the QP the program that wrote LOG used
# ("local address: ... QPN 0x..."), one "name value" per line; roxe clears
# a QP's counters when it creates it and leaves them after it is destroyed
roxe_counters() {
	local qpn
	qpn=$(grep -m1 -o 'local address:.*QPN 0x[0-9a-f]*' "$1" | grep -o '0x[0-9a-f]*$') ||
		return 1
	"$ROXE_TOP/build/bin/roxectl" stats "$ROXE_VM_TAP" --qpn $((qpn)) |
		awk '$1 == "QP" { qp = 1; next } qp && NF == 2 { print $1, $2 }'
}

peer_case() {
	local name=$1 prog=$2 server=$3 o=$ROXE_VM_OUT rc=0 pid i pp
	shift 3
	if [ "$prog" = ibv_rc_pingpong ]; then
		pp=(timeout "$PP_TIMEOUT" "$ROXE_TOP/build/bin/roxe-pingpong" --netdev "$ROXE_VM_TAP" -e
			-C -L "$LINGER_MS" -p "$PORT" "$@")
	else
		# shellcheck disable=SC2207 # "write bw": two words
		pp=(timeout "$PP_TIMEOUT" "$ROXE_TOP/build/bin/roxe-perf" $(perf_test "$prog")
			--netdev "$ROXE_VM_TAP" --perftest -e -p "$PORT" "$@")
	fi
	[ "${ROXE_INTEROP_TRACE:-0}" != 1 ] || pp=(env ROXE_TRACE=1 "${pp[@]}")

	if [ "$server" = host ]; then
		"${pp[@]}" >"$o/$name.host.log" 2>&1 &
		pid=$!
		vm_wait_for 10 vm_host_listening "$PORT" || true
		touch "$o/$name.host-ready"
		wait $pid || rc=$?
	elif vm_wait_file 120 "$o/$name.guest-ready"; then	# the first: after the boot
		"${pp[@]}" "$ROXE_VM_GUEST_ADDR" >"$o/$name.host.log" 2>&1 || rc=$?
	else
		rc=125
	fi
	roxe_counters "$o/$name.host.log" >"$o/$name.roxe.txt" || true
	echo $rc >"$o/$name.host-rc"
	vm_wait_file $((PP_TIMEOUT + 10)) "$o/$name.guest-rc" || true
}

peer_main() {
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	local line
	ip link set "$ROXE_VM_TAP" mtu $LINK_MTU
	# attached for the whole boot, so the per-QP counters outlive each run
	"$ROXE_TOP/build/bin/roxectl" attach "$ROXE_VM_TAP" --engines 1
	"$ROXE_TOP/build/bin/roxectl" status
	while read -r line; do
		[ -n "$line" ] || continue
		# shellcheck disable=SC2086
		peer_case $line
	done <<<"$(run_cases)"
	"$ROXE_TOP/build/bin/roxectl" stats "$ROXE_VM_TAP"
	"$ROXE_TOP/build/bin/roxectl" detach "$ROXE_VM_TAP"
}

# ============================ host side: judge ============================
host_missing() { echo "interop-faults: FAIL: missing: $*"; exit $KSFT_FAIL; }

counter() { awk -v n="$1" '$1 == n { print $2 }' "$2" 2>/dev/null; }

# nonzero counters of FILE as "name value, ..."
nonzero() { awk '$2 != 0 { printf "%s%s %s", n++ ? ", " : "", $1, $2 }' "$1" 2>/dev/null; }

# check_case DIR NAME PROGRAM SERVER OPTIONS...: 0 = pass; WHY: the
# failures in a few words, for the boot's last line (all a CI log may show)
check_case() {
	local d=$1 name=$2 prog=$3 server=$4 bad=0 grc hrc rr xr f c n res need
	shift 4
	WHY=
	grc=$(cat "$d/$name.guest-rc" 2>/dev/null || echo none)
	hrc=$(cat "$d/$name.host-rc" 2>/dev/null || echo none)
	rr=$(counter retransmits "$d/$name.roxe.txt")
	xr=$(counter completer_retry_err "$d/$name.rxe.txt")
	if [ "$prog" = ibv_rc_pingpong ]; then
		res=$(grep -h 'iters in' "$d/$name.guest.log" 2>/dev/null | sed -n 1p)
		need='roxe rxe'
	else
		res=$(grep -E '^ [0-9]+ +[0-9]+ ' "$d/$name.host.log" 2>/dev/null | tail -n1 | tr -s ' \t' ' ')
		# the requester: the client
		if [ "$server" = host ]; then need=rxe; else need=roxe; fi
	fi
	log "$name: $prog $*, $server is the server: ${res:-no result}"
	log "$name: roxe QP: $(nonzero "$d/$name.roxe.txt")"
	log "$name: rxe0: $(nonzero "$d/$name.rxe.txt")"
	if [ "$grc" != 0 ] || [ "$hrc" != 0 ] || [ -z "$res" ]; then
		log "$name: FAIL: $prog (guest) exit $grc, roxe (host) exit $hrc"
		WHY+="${WHY:+, }exit $grc/$hrc"
		bad=1
	fi
	if [[ " $need " == *" roxe "* ]] && [ "${rr:-0}" -le 0 ]; then
		log "$name: FAIL: roxe never retransmitted: the faults did not hit"
		WHY+="${WHY:+, }roxe never retransmitted"
		bad=1
	fi
	if [[ " $need " == *" rxe "* ]] && [ "${xr:-0}" -le 0 ]; then
		log "$name: FAIL: rxe never retried: the faults did not hit"
		WHY+="${WHY:+, }rxe never retried"
		bad=1
	fi
	for c in $err_counters; do
		n=$(counter "$c" "$d/$name.rxe.txt")
		if [ -n "$n" ] && [ "$n" != 0 ]; then
			log "$name: FAIL: rxe counter $c = $n"
			WHY+="${WHY:+, }$c $n"
			bad=1
		fi
	done
	if [ $bad != 0 ]; then
		for f in "$name.guest.log" "$name.host.log"; do
			[ -s "$d/$f" ] || continue
			echo "    --- $f"
			grep -v '^roxe\[' "$d/$f" | tail -n 12 | sed 's/^/    /'
		done
		return 1
	fi
	log "$name: ok"
}

# check_boot DIR: faultwire's counts and the capture
check_boot() {
	local d=$1 bad=0 v sum from_host from_guest fw
	fw=$(grep '^faultwire: forwarded' "$d/faultwire.log" 2>/dev/null || true)
	log "${fw:-FAIL: no counts from faultwire}"
	if ! [[ "$fw" =~ dropped\ ([0-9]+),\ duplicated\ ([0-9]+),\ reordered\ ([0-9]+) ]] ||
		[ "${BASH_REMATCH[1]}" = 0 ] || [ "${BASH_REMATCH[3]}" = 0 ]; then
		log "FAIL: faultwire dropped or reordered nothing"
		bad=1
	fi
	v=$("$TOPDIR/build/bin/roxe-pcap" verify "$d/wire.pcap" 2>&1) || true
	printf '%s\n' "$v" >"$d/verify.txt"
	sum=$(printf '%s\n' "$v" | tail -n1)
	from_host=$(printf '%s\n' "$v" | awk '$2 ~ /^10\.77\.0\.1:/ && $3 == "->" { n++ } END { print n + 0 }')
	from_guest=$(printf '%s\n' "$v" | awk '$2 ~ /^10\.77\.0\.2:/ && $3 == "->" { n++ } END { print n + 0 }')
	log "capture (guest side of the hop): ${sum#*: }; from roxe $from_host, from rxe $from_guest"
	if ! [[ "$sum" =~ \ ([0-9]+)\ roce,\ ([0-9]+)\ icrc\ ok,\ 0\ icrc\ bad,\ 0\ malformed ]] ||
		[ "${BASH_REMATCH[1]}" != "${BASH_REMATCH[2]}" ] || [ "$from_host" = 0 ] ||
		[ "$from_guest" = 0 ]; then
		log "FAIL: frames missing, with a bad ICRC or malformed:"
		printf '%s\n' "$v" | grep -v 'icrc ok$' | sed -n 1,20p | sed 's/^/    /'
		bad=1
	fi
	if [ -s "$d/rxe-counters.txt" ]; then
		log "rxe0 counters: $(grep -v ' 0$' "$d/rxe-counters.txt" | tr '\n' ' ')(others 0)"
	fi
	return $bad
}

# faults_boot FAULTS DIR: one boot, every case, through faultwire with
# FAULTS (a seed=N in it); 0 = pass
faults_boot() {
	local faults=$1 d=$2 fail=0 rc=0 t0=$SECONDS line what= v
	local -a f
	rm -rf "$d"
	mkdir -p "$d"
	log "$n cases, link mtu $LINK_MTU, faults $faults (each way, RoCE v2 frames only)"
	"$TOPDIR/tools/vm/run.sh" --quiet --timeout $((n * (PP_TIMEOUT + 5) + 40)) --out "$d" \
		--add "$TOPDIR/selftests/vm/vm_lib.sh" \
		--pcap "$d/wire.pcap" --faults "$faults" \
		--env ROXE_INTEROP_CASES="${ROXE_INTEROP_CASES:-}" --script "$SELF" \
		--host-cmd "exec $(printf '%q ' env ROXE_INTEROP_PEER=1 \
			ROXE_INTEROP_CASES="${ROXE_INTEROP_CASES:-}" \
			ROXE_INTEROP_TRACE="${ROXE_INTEROP_TRACE:-0}" "$SELF")" &
	RUN_PID=$!
	wait $RUN_PID || rc=$?
	RUN_PID=
	grep -a '^interop-faults:' "$d/console.log" 2>/dev/null | sed 's/^/    guest: /' || true
	if [ $rc != 0 ]; then
		v=$(vm_verdict "$d")
		log "FAIL: VM run exited with $rc$v; console tail:"
		tail -n 20 "$d/console.log" 2>/dev/null | sed 's/^/    /'
		fail=1
		what="the VM exited $rc$v"
	fi
	while read -r line; do
		# shellcheck disable=SC2086 # the case's fields
		check_case "$d" $line && continue
		fail=1
		read -ra f <<<"$line"
		what+="${what:+; }${f[0]} (the ${f[2]} the server: $WHY)"
	done <<<"$(run_cases)"
	check_boot "$d" || { fail=1; what+="${what:+; }the boot's own checks"; }
	log "$((SECONDS - t0)) s"
	if [ $fail != 0 ]; then
		log "FAIL: $what; results in $d/ (ROXE_FAULTS=$faults repeats faultwire's choices)"
		return 1
	fi
	log "PASS: $n cases with $faults; capture in $d/wire.pcap"
}

# Fixed seeds, the same in every run, and one drawn anew each run (printed,
# so that a failure can be replayed): each a boot of its own.
FAULT_SEEDS="1 2"

host_main() {
	local fail=0 p faults seed seeds

	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"	# find_top, vm_host_ready, ...
	TOPDIR=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	SELF=$(readlink -f "$0")
	vm_host_ready
	command -v ethtool >/dev/null || host_missing "ethtool missing"
	for p in bin/roxe-pingpong bin/roxe-perf bin/roxe-pcap bin/roxectl bin/faultwire \
		lib/roxe-linger.so; do
		[ -e "$TOPDIR/build/$p" ] || host_missing "build/$p missing: run make"
	done
	n=$(run_cases | wc -l)
	[ "$n" -gt 0 ] || host_missing "no case matches ROXE_INTEROP_CASES=${ROXE_INTEROP_CASES:-}"
	faults=${ROXE_FAULTS:-$FAULTS_DEFAULT}
	# ROXE_FAULTS with a seed: that boot alone
	if [[ "$faults" =~ (^|,)seed=([0-9]+) ]]; then
		seeds=${BASH_REMATCH[2]}
		faults=$(sed -E 's/(^|,)seed=[0-9]+//; s/^,//' <<<"$faults")
	else
		seeds="$FAULT_SEEDS $(( (RANDOM << 15 | RANDOM) + 1 ))"
	fi
	RUN_PID=
	trap '[ -z "$RUN_PID" ] || kill -TERM $RUN_PID 2>/dev/null; wait; exit $KSFT_FAIL' TERM INT
	for seed in $seeds; do
		faults_boot "$faults,seed=$seed" "$(vm_out interop-faults)/seed-$seed" || fail=1
	done
	[ $fail = 0 ] || exit $KSFT_FAIL
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	guest_main
elif [ "${ROXE_INTEROP_PEER:-}" = 1 ]; then
	peer_main
else
	host_main
fi
