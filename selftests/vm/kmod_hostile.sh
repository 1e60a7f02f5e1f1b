#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# A hostile application on roxe0 (roxe.ko + roxed) must not hurt roxed or
# anyone else it serves (issue #15).
#
# Host side: builds build/san/roxed-san (roxed with ASan and UBSan, `make
# roxed-san`), build/vm/hostile_verbs from hostile_verbs.c and roxe.ko if
# missing, boots the VM with them and this file as the guest script.
# Guest side (ROXE_VM_GUEST=1), set up as kmod_interop.sh:
#   rxa (10.77.2.1, rxe0)  <-- veth -->  rxb (10.77.2.2, roxe0: roxed-san)
#   - other applications' verified traffic all along: ibv_rc_pingpong -c -e
#     between roxe0 and rxe0, one connection after another, both ways round;
#   - meanwhile hostile_verbs, as user nobody, through the stock rxe provider
#     (it finds its rings in /proc/self/maps, see hostile_verbs.c), runs
#     its phases: first a flood of the command channel from 32 threads
#     while another user's verbs must all be answered, the channel serving
#     the tenants in turn (the port's cmd_turn_max; first, as it counts
#     since roxe0 came), every fourth flooding thread attaching and
#     detaching a multicast group, every fourth other raising SQ_DRAINED
#     events it never reads while the other user's own events must all
#     come; its multicast attachments up to its
#     share (ROXE_MAX_MCAST_TENANT_ATTACH), after which another user's
#     attaches must still succeed; one QP's doorbell rung 2048 times while roxed is
#     stopped (SIGSTOP for the doorbells only: every ring falls between
#     two turns of its engine), which must take one slot of the module's
#     ring (the port's db_overflows stays put); posts to QPs in RESET and
#     ERR; WQEs and SGEs rewritten
#     under the doorbell; producer-index games while its QP flushes (roxed
#     must take at most a ring per look, and other verbs must still be
#     answered); ring headers rewritten (index_mask, element size) before
#     RESET and ERR; a send queue of unbinds kept full by its producer
#     index, a timer-less READ past the engine's PSN credit from a silent
#     peer (both while another tenant's verified WRITEs must arrive), and
#     a bind of another context's type 1 window by its keys (refused);
#   - after every phase roxed must be alive; at the end every pingpong run
#     passed, a new connection still works, roxed stops cleanly on SIGTERM,
#     ASan/UBSan reported nothing (their log files are grepped), and dmesg
#     holds no WARNING, BUG, Oops or call trace.
# Every wait is bounded. If roxed died in a phase, it is restarted so that
# the later phases are still tried (the test fails either way).
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
A=10.77.2.1 B=10.77.2.2
WQE_SECS=${ROXE_HOSTILE_WQE_SECS:-8}
PI_SECS=${ROXE_HOSTILE_PI_SECS:-5}
FLOOD_SECS=10	# at most: the flood ends with its victim's verbs
PHASES=${ROXE_HOSTILE_PHASES:-flood mcast dbflood state wqe pi header bindwrap credit mwpd}

# ============================ guest side ==================================
KO=${ROXE_TOP:-}/build/kmod/$(uname -r)/roxe.ko
ROXED=${ROXE_TOP:-}/build/san/roxed-san
PROG=${ROXE_TOP:-}/build/vm/hostile_verbs
OUT=${ROXE_VM_OUT:-/tmp}
STOP=/tmp/hostile.stop
fail=0

log() { echo "kmod_hostile: $*"; }
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }

# roxed-san's reports land in $OUT/san.<pid>; it would die on the first.
# Leaks at exit are not this test's business; stacks of fatal signals are
# unwound by frame pointers (SAN_FLAGS keeps them). One engine, as on the
# guest's one CPU.
start_roxed() {
	ASAN_OPTIONS="log_path=$OUT/san:detect_leaks=0:handle_segv=1:handle_abort=1:fast_unwind_on_fatal=1" \
	UBSAN_OPTIONS="log_path=$OUT/san:print_stacktrace=1:halt_on_error=1" \
		"$ROXED" --netdev rxb -E 1 --foreground 2>>"$OUT/roxed.log" &
	ROXED_PID=$!
	vm_wait_for 30 vm_have_dev roxe0 && vm_wait_for 10 vm_verbs_dev roxe0 &&
		vm_wait_for 10 vm_gid_index roxe0 $B
}

setup() {
	vm_veth_pair rxa $A rxb $B || return 1
	insmod "$KO" || { bad "insmod $KO"; return 1; }
	rdma link add rxe0 type rxe netdev rxa
	start_roxed || { bad "roxed-san --netdev rxb registered no roxe0"; cat "$OUT/roxed.log"; return 1; }
	vm_wait_for 10 vm_gid_index rxe0 $A || { bad "no RoCE v2 GID on rxe0"; return 1; }
	GX=$(vm_gid_index rxe0 $A)
	GR=$(vm_gid_index roxe0 $B)
	ok "rxe0 on rxa ($A, gid $GX), roxe0 on rxb ($B, gid $GR), roxed-san pid $ROXED_PID"
}

# pingpong N: one verified ibv_rc_pingpong connection, roxe0 the client on
# odd N, the server on even N. Prints "pass N" or "FAIL N ...".
pingpong() {
	local n=$1 port=$((19000 + $1)) sdev=rxe0 sg=$GX cdev=roxe0 cg=$GR saddr=$A spid rc=0 k
	local args=(-c -e -s 4096 -n 50)
	# the emulator's ACK timeout (1 s, not 67 ms): dbflood stops roxed
	# and a TCG guest stalls, neither of which is the peer's loss
	local pp=(env LD_PRELOAD="$ROXE_TOP/build/lib/roxe-linger.so" ROXE_MIN_TIMEOUT=18 ibv_rc_pingpong)
	if [ $((n % 2)) = 0 ]; then sdev=roxe0 sg=$GR cdev=rxe0 cg=$GX saddr=$B; fi
	timeout 60 "${pp[@]}" -d $sdev -g "$sg" -p $port "${args[@]}" >/tmp/pp.srv 2>&1 &
	spid=$!
	if ! vm_wait_for 20 vm_listening $port; then
		rc=1
	elif ! timeout 60 "${pp[@]}" -d $cdev -g "$cg" -p $port "${args[@]}" $saddr \
		>/tmp/pp.cli 2>&1; then
		rc=1
	fi
	for k in $(seq 100); do kill -0 $spid 2>/dev/null || break; sleep 0.1; done
	kill -KILL $spid 2>/dev/null || true
	wait $spid || rc=1
	if [ $rc = 0 ]; then
		echo "pass $n ($sdev server): $(grep -h 'bytes in' /tmp/pp.cli | tail -1)"
	else
		echo "FAIL $n ($sdev server):"
		sed 's/^/    srv: /' /tmp/pp.srv | tail -5
		sed 's/^/    cli: /' /tmp/pp.cli | tail -5
	fi
	return $rc
}

# Other applications' traffic, until $STOP appears (at most 300 runs).
traffic() {
	local n=0
	while [ ! -e $STOP ] && [ $n -lt 300 ]; do
		n=$((n + 1))
		pingpong $n || true
	done
}

# run_phase NAME ARGS...: hostile_verbs (it drops to nobody), bounded; roxed
# must live.
run_phase() {
	local name=$1 rc=0 out t0=$SECONDS
	shift
	out=$(timeout 120 "$PROG" "$name" roxe0 "$GR" rxe0 "$GX" "$@" 2>&1) || rc=$?
	echo "$out" | sed 's/^/    /'
	if [ $rc = 0 ]; then
		ok "$name: hostile_verbs done in $((SECONDS - t0)) s"
	elif [ $rc = 124 ] || [ $rc = 2 ]; then
		bad "$name: hostile_verbs hung (exit $rc)"
	else
		bad "$name: hostile_verbs exited $rc"
	fi
	if kill -0 "$ROXED_PID" 2>/dev/null; then
		ok "$name: roxed alive"
		return
	fi
	rc=0
	wait "$ROXED_PID" || rc=$?
	bad "$name: roxed died (exit $rc)"
	san_reports | sed -n 1,40p
	tail -n 5 "$OUT/roxed.log" | sed 's/^/    roxed: /'
	# the later phases still get a roxed
	vm_wait_for 10 vm_no_dev roxe0 || { bad "roxe0 stays after roxed died"; return; }
	start_roxed || bad "roxed-san did not come back"
	GR=$(vm_gid_index roxe0 $B) || true
}

san_reports() {
	local f
	for f in "$OUT"/san.*; do
		[ -s "$f" ] || continue
		echo "    --- $f"
		sed 's/^/    /' "$f"
	done
}

guest_main() {
	local t0=$SECONDS tpid passed failed rc k hits out p
	dmesg -c >/dev/null
	rm -f "$OUT"/san.* $STOP
	setup || { log "setup failed"; exit 1; }

	traffic >"$OUT/traffic.log" 2>&1 &
	tpid=$!
	# the phases start once the other applications' traffic flows
	vm_wait_for 60 grep -q "^pass 1 " "$OUT/traffic.log" ||
		bad "the traffic's first pingpong did not pass: $(head -3 "$OUT/traffic.log")"
	for p in $PHASES; do
		case $p in
		wqe) run_phase wqe "$WQE_SECS" ;;
		flood) run_phase flood "$FLOOD_SECS" ;;
		dbflood) run_phase dbflood "$ROXED_PID" ;;
		pi | pidb | bindwrap) run_phase "$p" "$PI_SECS" ;;
		*) run_phase "$p" ;;
		esac
	done
	touch $STOP
	for k in $(seq 150); do kill -0 $tpid 2>/dev/null || break; sleep 0.2; done
	if kill -0 $tpid 2>/dev/null; then
		bad "the pingpong traffic hangs"
		kill -KILL $tpid
	fi
	wait $tpid || true
	passed=$(grep -c '^pass' "$OUT/traffic.log" || true)
	failed=$(grep -c '^FAIL' "$OUT/traffic.log" || true)
	if [ "$failed" = 0 ] && [ "$passed" -gt 0 ]; then
		ok "other applications: $passed verified rc_pingpong runs alongside, all passed"
	else
		bad "other applications: $failed of $((passed + failed)) rc_pingpong runs failed"
		grep -A10 '^FAIL' "$OUT/traffic.log" | sed -n 1,40p | sed 's/^/    /'
	fi
	if out=$(pingpong 1001); then
		ok "a new connection after the attacks: $out"
	else
		bad "a new connection after the attacks failed"
		echo "$out" | sed 's/^/    /'
	fi

	if kill -0 "$ROXED_PID" 2>/dev/null; then
		ok "roxed-san (pid $ROXED_PID) alive at the end"
		kill -TERM "$ROXED_PID"
		for k in $(seq 100); do kill -0 "$ROXED_PID" 2>/dev/null || break; sleep 0.1; done
		if kill -0 "$ROXED_PID" 2>/dev/null; then
			bad "roxed-san does not stop on SIGTERM"
			kill -KILL "$ROXED_PID"
		fi
		rc=0
		wait "$ROXED_PID" || rc=$?
		[ $rc = 0 ] && ok "roxed-san stopped cleanly" || bad "roxed-san exited $rc on SIGTERM"
	else
		bad "roxed-san is gone at the end"
	fi
	if compgen -G "$OUT/san.*" >/dev/null; then
		# each one was shown in full where roxed died
		bad "ASan/UBSan reports from roxed: $(grep -h SUMMARY "$OUT"/san.* | tr '\n' ' ')"
	else
		ok "ASan/UBSan: no report from roxed"
	fi
	vm_wait_for 10 vm_no_dev roxe0 || bad "roxe0 still registered"
	rmmod roxe || bad "rmmod roxe failed"
	hits=$(dmesg | grep -E 'WARNING|BUG|Oops|Call Trace|refcount_t|general protection|segfault' || true)
	if [ -n "$hits" ]; then
		bad "dmesg:"
		dmesg | grep -E -B2 -A12 'WARNING|BUG|Oops|Call Trace|refcount_t|general protection|segfault' |
			sed -n 1,60p | sed 's/^/    /'
	else
		ok "dmesg: no WARNING/BUG/Oops"
	fi
	log "guest part took $((SECONDS - t0)) s"
	[ $fail = 0 ] && log "all passed" || log "FAILED"
	exit $fail
}

# ============================ host side ===================================
host_missing() { echo "kmod_hostile: FAIL: missing: $*"; exit $KSFT_FAIL; }

host_main() {
	local top out
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	out=$(vm_out kmod-hostile)
	vm_host_ready
	vm_need_kmod "$top"
	# always asked: make rebuilds it when the engine changed
	make -s -C "$top" -j2 roxed-san >/dev/null ||
		{ echo "kmod_hostile: FAIL: cannot build roxed-san"; exit $KSFT_FAIL; }
	vm_build_prog kmod_hostile "$top" hostile_verbs -pthread
	vm_run_guest kmod_hostile "$out" 240 \
		--add "$top/build/kmod/$KVER/roxe.ko" --add "$top/build/san/roxed-san" \
		--add "$top/build/vm/hostile_verbs" \
		--add "$top/selftests/vm/vm_lib.sh" \
		--env "ROXE_HOSTILE_WQE_SECS=$WQE_SECS" --env "ROXE_HOSTILE_PI_SECS=$PI_SECS" \
		--env "ROXE_HOSTILE_PHASES=$PHASES"
	echo "kmod_hostile: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	guest_main
else
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"
	host_main
fi
