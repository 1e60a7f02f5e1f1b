#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make bench-vm: roxe0 side by side with kernel rxe, the soft-RoCE users
# would pick instead, in the QEMU guest (tools/vm/), where both run under
# the same emulated CPU: absolute figures mean little (TCG), the ratio is
# the result. In one boot, on the same kind of veth pair (vm_veth_pair):
#   rxe   rxe0 on rxa  <-> rxe1 on rxb     (kernel rxe, both ends)
#   roxe  roxe0 on rxa <-> roxe1 on rxb    (roxe.ko, one roxed per end)
# perftest with the same options on both: ib_write_bw and ib_send_bw
# (SIZE bytes, BW_ITERS messages), ib_send_lat (LAT_SIZE bytes, LAT_ITERS
# round trips; typical = median, and the 99th percentile).
# Goals (issue #19): roxe at least 2x rxe's bandwidth, at most half its
# latency. Prints a table and each goal met or missed; writes
# build/bench/vm.tsv. Every perftest run must exit 0 on both ends, else
# the run fails (exit 1).
#
# ROXE_BENCH_VM_SMP (2: the guest's vCPUs; roxed runs an engine per vCPU
# on a veth pair with a queue each), ROXE_BENCH_VM_PERFTEST (more perftest
# options for both), ROXE_BENCH_VM_ROXED (roxed's options; default "-r 10":
# engine threads at SCHED_FIFO, woken at once as rxe's softirq work is,
# where perftest spins on every vCPU), ROXE_BENCH_VM_SIZE (65536), ROXE_BENCH_VM_BW_ITERS (2000),
# ROXE_BENCH_VM_LAT_SIZE (8), ROXE_BENCH_VM_LAT_ITERS (2000), KVER (6.1).
# The guest's shape (issue #38: roxed given a vCPU of its own):
# ROXE_BENCH_VM_ROXED_CPUS, a CPU list (taskset -c) for every thread of
# both roxeds; ROXE_BENCH_VM_PERFTEST_CPUS, "SERVER CLIENT": a CPU list
# each for perftest's two ends (rxe's runs too). E.g. ROXE_BENCH_VM_SMP=3
# ROXE_BENCH_VM_ROXED_CPUS=2 ROXE_BENCH_VM_PERFTEST_CPUS="0 1"
# ROXE_BENCH_VM_ROXED="-r 10 -E 1". Default: none (the scheduler's).
set -euo pipefail

size=${ROXE_BENCH_VM_SIZE:-65536}
bw_iters=${ROXE_BENCH_VM_BW_ITERS:-2000}
lat_size=${ROXE_BENCH_VM_LAT_SIZE:-8}
lat_iters=${ROXE_BENCH_VM_LAT_ITERS:-2000}
smp=${ROXE_BENCH_VM_SMP:-2}
roxed_opts=${ROXE_BENCH_VM_ROXED--r 10}
roxed_cpus=${ROXE_BENCH_VM_ROXED_CPUS:-}
pt_cpus=${ROXE_BENCH_VM_PERFTEST_CPUS:-}
A=10.96.0.1 B=10.96.0.2

# ============================ guest side ==================================
if [ -n "${ROXE_VM_GUEST:-}" ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	KO=$ROXE_TOP/build/kmod/$(uname -r)/roxe.ko
	ROXED=$ROXE_TOP/build/bin/roxed
	res=$ROXE_VM_OUT/vm.tsv
	fail=0
	# -u 18: the local ACK timeout 1.07 s instead of perftest's 67 ms
	# (14), for both devices: a TCG guest on a loaded host stalls longer
	# than 67 ms x 8 tries, and roxe0's RC QPs, whose ACKs come from
	# roxed, a process, ended in RETRY_EXC_ERR (status 12) that way.
	PERFTEST_OPTS="-u 18 ${ROXE_BENCH_VM_PERFTEST:-}"
	ok() { echo "bench-vm: ok: $*"; }
	bad() { echo "bench-vm: FAIL: $*"; fail=1; }

	# one KIND TEST SDEV SGID CDEV CGID SIZE ITERS [OPTION...]: a perftest
	# pair, the OPTIONs given to both ends. Without OPTIONs its result line
	# (bw: MB/s average; lat: typical and 99 % in us) goes into $res. Its
	# cost goes into $cost either way: the guest's CPU over the run (user
	# + nice + system + irq + softirq of all vCPUs, /proc/stat; clock
	# ticks are USER_HZ, 100 on x86), and per process name (and call)
	# the system calls entered and per name the wake-ups received
	# (tracefs hist triggers).
	one() {
		local kind=$1 t=$2 sdev=$3 sg=$4 cdev=$5 cg=$6 sz=$7 n=$8 sp rc=0 c0 c1 msgs
		shift 8
		local label=$t${*:+ $*}
		local logf=$ROXE_VM_OUT/$kind-$t$(printf '%s' "$*" | tr -c 'A-Za-z0-9' _)
		local on_s=() on_c=()
		# shellcheck disable=SC2206 # "SERVER CLIENT"
		[ -z "$pt_cpus" ] || { local l=($pt_cpus); on_s=(taskset -c "${l[0]}"); on_c=(taskset -c "${l[1]}"); }
		"${on_s[@]}" $t -d "$sdev" -x "$sg" $PERFTEST_OPTS "$@" -F -s "$sz" -n "$n" >"$logf.srv" 2>&1 &
		sp=$!
		vm_wait_for 20 vm_listening 18515 || { bad "$kind $t: server did not listen"; return 1; }
		cost_on
		c0=$(cpu_busy)
		timeout 300 "${on_c[@]}" $t -d "$cdev" -x "$cg" $PERFTEST_OPTS "$@" -F -s "$sz" -n "$n" $B \
			>"$logf.cli" 2>&1 || rc=$?
		# a server whose client failed may wait for it for ever
		[ $rc = 0 ] || { sleep 5; kill "$sp" 2>/dev/null; pkill -x "$t"; }
		wait $sp || rc=$((rc ? rc : 1))
		c1=$(cpu_busy)
		if [ $rc != 0 ]; then
			cost_off >/dev/null
			bad "$kind $label (exit $rc)"
			tail -n 5 "$logf.srv" "$logf.cli" | sed 's/^/    /'
			dmesg | tail -n 10 | sed 's/^/    dmesg: /'
			[ "$kind" = rxe ] || tail -n 5 "$ROXE_VM_OUT"/roxed*.log | sed 's/^/    /'
			return 1
		fi
		[ $# != 0 ] || case $t in
		*_bw) awk -v k="$kind" -v t="$t" -v s="$sz" \
			'$1 == s && NF >= 5 { print k "\t" t "\t" s "\t" $4; exit }' "$logf.cli" >>"$res" ;;
		*_lat) awk -v k="$kind" -v t="$t" -v s="$sz" \
			'$1 == s && NF >= 9 { print k "\t" t "\t" s "\t" $5 "\t" $8; exit }' "$logf.cli" >>"$res" ;;
		esac
		# messages: a bw test's N, a latency test's N each way
		case $t in *_lat) msgs=$((2 * n)) ;; *) msgs=$n ;; esac
		cp "$TR/events/raw_syscalls/sys_enter/hist" "$logf.syscalls"
		{ cat "$TR/events/syscalls/sys_exit_sendto/hist"; ip -s link show rxa; ip -s link show rxb; } >"$logf.kicks" 2>&1
		cost_off | awk -v k="$kind" -v t="$label" -v m="$msgs" -v b="$sz" -v j=$((c1 - c0)) \
			-v hz=100 'BEGIN { OFS = "\t" }
			{ sc[$2] += $1 * ($3 == "sys"); wk[$2] += $1 * ($3 == "wake"); ca[$2] += $1 * ($3 == "call") }
			END {
				printf "%s\t%s\t%d\t%d\t%.3f", k, t, m, b, j / hz
				for (p in sc) if (sc[p]) printf "\tsys:%s=%d", p, sc[p]
				for (p in wk) if (wk[p]) printf "\twake:%s=%d", p, wk[p]
				for (p in ca) if (ca[p]) printf "\tcall:%s=%d", p, ca[p]
				print ""
			}' >>"$cost"
		if [ $# = 0 ]; then
			ok "$kind $t: $(tail -n 1 "$res" | cut -f4- | tr '\t' ' ')"
		else
			ok "$kind $label: guest CPU $(tail -n 1 "$cost" | cut -f5) s for $msgs messages"
		fi
	}

	# The guest's busy CPU so far, in clock ticks.
	cpu_busy() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }
	# Count system calls by the caller's name and wake-ups by the woken
	# task's name from now on; cost_off prints "COUNT NAME sys|wake" lines
	# and stops counting.
	TR=/sys/kernel/debug/tracing
	SYS_HIST='hist:keys=common_pid.execname,id.syscall:vals=hitcount:size=8192'
	WAKE_HIST='hist:keys=comm:vals=hitcount:size=4096'
	# (and sendto()'s results: AF_XDP transmit kicks, by return value)
	KICK_HIST='hist:keys=ret:vals=hitcount'
	cost_on() {
		echo "$SYS_HIST" >"$TR/events/raw_syscalls/sys_enter/trigger"
		echo "$WAKE_HIST" >"$TR/events/sched/sched_wakeup/trigger"
		echo "$KICK_HIST" >"$TR/events/syscalls/sys_exit_sendto/trigger"
	}
	cost_off() {
		# "{ common_pid: roxed [ 222], id: sys_ppoll [ 271] } hitcount:
		# 5": by name, and by name and call ("sys" and "call")
		awk '/^\{ common_pid:/ { sub(/^\{ common_pid: */, ""); name = $1
			call = $0; sub(/.*id: */, "", call); sub(/ .*/, "", call)
			sub(/.*hitcount: */, ""); print $1, name, "sys"; print $1, name "/" call, "call" }' \
			"$TR/events/raw_syscalls/sys_enter/hist"
		awk '/^\{ comm:/ { sub(/^\{ comm: */, ""); name = $1; sub(/ *\}.*/, "", name)
			sub(/.*hitcount: */, ""); print $1, name, "wake" }' \
			"$TR/events/sched/sched_wakeup/hist"
		echo "!$SYS_HIST" >"$TR/events/raw_syscalls/sys_enter/trigger"
		echo "!$WAKE_HIST" >"$TR/events/sched/sched_wakeup/trigger"
		echo "!$KICK_HIST" >"$TR/events/syscalls/sys_exit_sendto/trigger"
	}

	# the figures (perftest polling its CQ, as by default), then the
	# cost: the same with -e, perftest sleeping on completion events, so
	# that the CPU counted is work, not a poller's spin (under TCG the
	# guest has no vDSO clock: perftest's loop makes ~100 gettimeofday
	# calls a message). perftest (4.5-0.17) has no -e for WRITE, nor
	# --write_with_imm: SEND 64 KiB, the same frames and copies plus a
	# receive WQE, stands for the bulk transfer.
	# Each cost case runs twice, with N messages and with N/10: the
	# difference is the cost of 0.9 N messages alone, without what every
	# run pays once (perftest calibrating its clock: 200 ms of
	# gettimeofday() calls a process, QP set-up).
	suite() {
		one "$1" ib_write_bw "$2" "$3" "$4" "$5" "$size" "$bw_iters" &&
		one "$1" ib_send_bw "$2" "$3" "$4" "$5" "$size" "$bw_iters" &&
		one "$1" ib_send_lat "$2" "$3" "$4" "$5" "$lat_size" "$lat_iters" &&
		one "$1" ib_send_bw "$2" "$3" "$4" "$5" "$size" "$bw_iters" -e &&
		one "$1" ib_send_bw "$2" "$3" "$4" "$5" "$size" $((bw_iters / 10)) -e &&
		one "$1" ib_send_lat "$2" "$3" "$4" "$5" "$lat_size" "$lat_iters" -e &&
		one "$1" ib_send_lat "$2" "$3" "$4" "$5" "$lat_size" $((lat_iters / 10)) -e
	}

	cost=$ROXE_VM_OUT/cost.tsv
	# under TCG the guest has no TSC clocksource, so no vDSO clock: each
	# clock_gettime() is a system call, which the counts below show
	ok "guest clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
	: >"$res"
	: >"$cost"
	# shellcheck disable=SC2086 # options, split
	vm_roxe_roxe_pair $A $B "$(nproc)" $roxed_opts || exit 1
	if [ -n "$roxed_cpus" ]; then
		taskset -a -p -c "$roxed_cpus" "$ROXED_PID" >/dev/null &&
			taskset -a -p -c "$roxed_cpus" "$ROXED1_PID" >/dev/null ||
			{ bad "taskset -a -p -c $roxed_cpus (roxed)"; exit 1; }
		ok "roxed's threads on CPUs $roxed_cpus: $(ls /proc/$ROXED_PID/task | wc -l) + $(ls /proc/$ROXED1_PID/task | wc -l)"
	fi
	[ -z "$pt_cpus" ] || ok "perftest's server on CPUs ${pt_cpus% *}, client on ${pt_cpus#* }"
	suite roxe roxe1 "$GB" roxe0 "$GA" || true
	kill "$ROXED_PID" "$ROXED1_PID"
	wait "$ROXED_PID" "$ROXED1_PID" || true
	rdma link add rxe0 type rxe netdev rxa
	rdma link add rxe1 type rxe netdev rxb
	vm_wait_for 10 vm_gid_index rxe0 $A && vm_wait_for 10 vm_gid_index rxe1 $B ||
		{ bad "rxe: no RoCE v2 GIDs"; exit 1; }
	suite rxe rxe1 "$(vm_gid_index rxe1 $B)" rxe0 "$(vm_gid_index rxe0 $A)" || true
	exit $fail
fi

# ============================ host side ===================================
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/bench
[ "$(id -u)" -eq 0 ] || { echo "bench-vm: needs root (QEMU's tap, network namespace)" >&2; exit 1; }
# the guest kernel from build/vm/kernels/, fetched when missing
"$top/tools/vm/fetch-kernels.sh" "${KVER:-6.1}" && KVER=$("$top/tools/vm/kver.sh" "${KVER:-6.1}") ||
	{ echo "bench-vm: no Debian ${KVER:-6.1} guest kernel (make kernels)" >&2; exit 1; }
export KVER
[ -f "$top/build/kmod/$KVER/roxe.ko" ] || make -s -C "$top" kmod VM_KERNELS="$KVER"
mkdir -p "$out"
vmout=$out/vm
echo "bench-vm: guest $KVER (TCG, $smp vCPUs); ib_write_bw/ib_send_bw $size B x $bw_iters," \
	"ib_send_lat $lat_size B x $lat_iters; roxed ${roxed_opts:-(no options)}" \
	"${roxed_cpus:+on CPUs $roxed_cpus}${pt_cpus:+; perftest on CPUs $pt_cpus}"
rc=0
"$top/tools/vm/run.sh" --quiet --timeout 900 --out "$vmout" --smp "$smp" \
	--add "$top/build/kmod/$KVER/roxe.ko" --add "$top/build/bin/roxed" \
	--add "$top/selftests/vm/vm_lib.sh" \
	--env ROXE_BENCH_VM_SIZE="$size" --env ROXE_BENCH_VM_BW_ITERS="$bw_iters" \
	--env ROXE_BENCH_VM_PERFTEST="${ROXE_BENCH_VM_PERFTEST:-}" --env ROXE_BENCH_VM_ROXED="$roxed_opts" --env ROXE_BENCH_VM_ROXED_CPUS="$roxed_cpus" --env ROXE_BENCH_VM_PERFTEST_CPUS="$pt_cpus" --env ROXE_BENCH_VM_LAT_SIZE="$lat_size" --env ROXE_BENCH_VM_LAT_ITERS="$lat_iters" \
	--script "$(readlink -f "$0")" || rc=$?
grep -a "^bench-vm:\|^    " "$vmout/console.log" 2>/dev/null || true
[ -s "$vmout/vm.tsv" ] || { echo "bench-vm: no results (guest exit $rc)" >&2; exit 1; }
cp "$vmout/vm.tsv" "$out/vm.tsv"
cp "$vmout/cost.tsv" "$out/vm-cost.tsv" 2>/dev/null || : >"$out/vm-cost.tsv"

# The table and the goals: bandwidth ratio roxe/rxe (goal >= 2), latency
# ratio roxe/rxe (goal <= 0.5), on the typical (median) round trip.
awk -F'\t' '
	{ v[$1, $2] = $4; p99[$1, $2] = $5 }
	function ratio(t) { return (v["rxe", t] > 0 && v["roxe", t] != "") ? v["roxe", t] / v["rxe", t] : -1 }
	function goal(t, r, want, cmp) {
		if (r < 0) { printf "goal %-12s missing figures\n", t; miss++; return }
		met = cmp == ">=" ? r >= want : r <= want
		printf "goal %-12s roxe/rxe = %.2f (want %s %.1f): %s\n", t, r, cmp, want, met ? "met" : "MISSED"
	}
	END {
		printf "\n%-12s %14s %14s %8s\n", "test", "rxe", "roxe", "roxe/rxe"
		n = split("ib_write_bw ib_send_bw", bw, " ")
		for (i = 1; i <= n; i++)
			printf "%-12s %9.2f MB/s %9.2f MB/s %8.2f\n", bw[i], v["rxe", bw[i]], v["roxe", bw[i]], ratio(bw[i])
		printf "%-12s %11.2f us %11.2f us %8.2f   (typical; p99 %.2f / %.2f us)\n", "ib_send_lat",
			v["rxe", "ib_send_lat"], v["roxe", "ib_send_lat"], ratio("ib_send_lat"),
			p99["rxe", "ib_send_lat"], p99["roxe", "ib_send_lat"]
		print ""
		goal("ib_write_bw", ratio("ib_write_bw"), 2, ">=")
		goal("ib_send_bw", ratio("ib_send_bw"), 2, ">=")
		goal("ib_send_lat", ratio("ib_send_lat"), 0.5, "<=")
	}' "$out/vm.tsv"

# The cost (issue #38), from the runs with perftest sleeping on events:
# guest CPU per message and per GB, and per message the system calls made
# and the wake-ups received, by perftest (ib_*), by roxed, and by the rest
# (kernel threads: kworker, ksoftirqd, ...). A latency test's messages are
# its round trips times two. Goal: roxe0 at or below rxe's CPU per message
# (and so per byte: the same sizes).
awk -F'\t' '
	# per (device, test): the run with the most messages less the one with
	# the fewest
	$2 ~ / -e$/ {
		k = $1; t = $2; sub(/ .*/, "", t); tests[t] = 1; seen++
		if (!((k, t) in hi) || $3 > hi[k, t]) hi[k, t] = $3
		if (!((k, t) in lo) || $3 < lo[k, t]) lo[k, t] = $3
		cpuv[k, t, $3] = $5; bytes[k, t] = $4
		for (i = 6; i <= NF; i++) {
			split($i, kv, "="); split(kv[1], wn, ":")
			if (wn[1] == "call") {
				# roxed/sys_ppoll: by process and call, for the list below
				if (wn[2] ~ /^(roxed|ib_)/) { calls[k, t, $3, wn[2]] += kv[2]; names[wn[2]] = 1 }
				continue
			}
			who = wn[2] ~ /^ib_/ ? "perftest" : wn[2] == "roxed" ? "roxed" : "other"
			cnt[k, t, $3, wn[1], who] += kv[2]
		}
	}
	function msgs(k, t) { return ((k, t) in hi) ? hi[k, t] - lo[k, t] : 0 }
	function cpu(k, t) { return cpuv[k, t, hi[k, t]] - cpuv[k, t, lo[k, t]] }
	function per(k, t, what, who) {
		return msgs(k, t) ? (cnt[k, t, hi[k, t], what, who] - cnt[k, t, lo[k, t], what, who]) / msgs(k, t) : 0
	}
	END {
		if (!seen) { print "\ncost: no figures"; exit }
		print "\ncost, perftest -e (no -e for WRITE: see bench-vm.sh), all of the guest'"'"'s CPU; per message,"
		print "from the difference of a run of N messages and one of N/10:"
		printf "%-12s %-5s %11s %9s %27s %27s\n", "test", "", "CPU us/msg", "CPU s/GB",
			"syscalls pt+roxed+rest", "wake-ups pt+roxed+rest"
		nt = split("ib_send_bw ib_send_lat", order, " ")
		split("rxe roxe", kinds, " ")
		for (i = 1; i <= nt; i++) {
			t = order[i]
			for (j = 1; j <= 2; j++) {
				k = kinds[j]
				if (!msgs(k, t)) { printf "%-12s %-5s missing\n", t, k; continue }
				printf "%-12s %-5s %11.1f %9.1f %9.2f+%5.2f+%5.2f %9.2f+%5.2f+%5.2f\n", t, k,
					cpu(k, t) * 1e6 / msgs(k, t), cpu(k, t) / (msgs(k, t) * bytes[k, t] / 1e9),
					per(k, t, "sys", "perftest"), per(k, t, "sys", "roxed"), per(k, t, "sys", "other"),
					per(k, t, "wake", "perftest"), per(k, t, "wake", "roxed"), per(k, t, "wake", "other")
			}
		}
		print "\nsystem calls per message by process and call (at least 0.05):"
		for (i = 1; i <= nt; i++) {
			t = order[i]
			for (j = 1; j <= 2; j++) {
				k = kinds[j]
				if (!msgs(k, t)) continue
				line = ""
				for (c in names) {
					v = (calls[k, t, hi[k, t], c] - calls[k, t, lo[k, t], c]) / msgs(k, t)
					if (v >= 0.05) line = line sprintf(" %s %.2f", c, v)
				}
				if (line != "") printf "%-12s %-5s%s\n", t, k, line
			}
		}
		print ""
		for (i = 1; i <= nt; i++) {
			t = order[i]
			if (!msgs("rxe", t) || !msgs("roxe", t) || cpu("rxe", t) <= 0) {
				printf "goal %-12s CPU per message: missing figures\n", t
				continue
			}
			r = (cpu("roxe", t) / msgs("roxe", t)) / (cpu("rxe", t) / msgs("rxe", t))
			printf "goal %-12s CPU per message roxe/rxe = %.2f (want <= 1.0): %s\n", t, r,
				r <= 1 ? "met" : "MISSED"
		}
	}' "$out/vm-cost.tsv"
exit $rc
