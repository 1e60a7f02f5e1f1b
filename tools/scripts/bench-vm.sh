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
set -euo pipefail

size=${ROXE_BENCH_VM_SIZE:-65536}
bw_iters=${ROXE_BENCH_VM_BW_ITERS:-2000}
lat_size=${ROXE_BENCH_VM_LAT_SIZE:-8}
lat_iters=${ROXE_BENCH_VM_LAT_ITERS:-2000}
smp=${ROXE_BENCH_VM_SMP:-2}
roxed_opts=${ROXE_BENCH_VM_ROXED--r 10}
A=10.96.0.1 B=10.96.0.2

# ============================ guest side ==================================
if [ -n "${ROXE_VM_GUEST:-}" ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	KO=$ROXE_TOP/build/kmod/$(uname -r)/roxe.ko
	ROXED=$ROXE_TOP/build/bin/roxed
	res=$ROXE_VM_OUT/vm.tsv
	fail=0
	PERFTEST_OPTS=${ROXE_BENCH_VM_PERFTEST:-}
	ok() { echo "bench-vm: ok: $*"; }
	bad() { echo "bench-vm: FAIL: $*"; fail=1; }

	# one KIND TEST SDEV SGID CDEV CGID SIZE ITERS: a perftest pair; its
	# result line (bw: MB/s average; lat: typical and 99 % in µs) into $res
	one() {
		local kind=$1 t=$2 sdev=$3 sg=$4 cdev=$5 cg=$6 sz=$7 n=$8 sp rc=0
		local logf=$ROXE_VM_OUT/$kind-$t
		$t -d "$sdev" -x "$sg" $PERFTEST_OPTS -F -s "$sz" -n "$n" >"$logf.srv" 2>&1 &
		sp=$!
		vm_wait_for 20 vm_listening 18515 || { bad "$kind $t: server did not listen"; return 1; }
		timeout 300 $t -d "$cdev" -x "$cg" $PERFTEST_OPTS -F -s "$sz" -n "$n" $B >"$logf.cli" 2>&1 || rc=$?
		wait $sp || rc=$((rc ? rc : 1))
		if [ $rc != 0 ]; then
			bad "$kind $t (exit $rc)"
			tail -n 5 "$logf.srv" "$logf.cli" | sed 's/^/    /'
			return 1
		fi
		case $t in
		*_bw) awk -v k="$kind" -v t="$t" -v s="$sz" \
			'$1 == s && NF >= 5 { print k "\t" t "\t" s "\t" $4; exit }' "$logf.cli" >>"$res" ;;
		*_lat) awk -v k="$kind" -v t="$t" -v s="$sz" \
			'$1 == s && NF >= 9 { print k "\t" t "\t" s "\t" $5 "\t" $8; exit }' "$logf.cli" >>"$res" ;;
		esac
		ok "$kind $t: $(tail -n 1 "$res" | cut -f4- | tr '\t' ' ')"
	}

	suite() {
		one "$1" ib_write_bw "$2" "$3" "$4" "$5" "$size" "$bw_iters" &&
		one "$1" ib_send_bw "$2" "$3" "$4" "$5" "$size" "$bw_iters" &&
		one "$1" ib_send_lat "$2" "$3" "$4" "$5" "$lat_size" "$lat_iters"
	}

	: >"$res"
	# shellcheck disable=SC2086 # options, split
	vm_roxe_roxe_pair $A $B "$(nproc)" $roxed_opts || exit 1
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
	"ib_send_lat $lat_size B x $lat_iters; roxed ${roxed_opts:-(no options)}"
rc=0
"$top/tools/vm/run.sh" --quiet --timeout 900 --out "$vmout" --smp "$smp" \
	--add "$top/build/kmod/$KVER/roxe.ko" --add "$top/build/bin/roxed" \
	--add "$top/selftests/vm/vm_lib.sh" \
	--env ROXE_BENCH_VM_SIZE="$size" --env ROXE_BENCH_VM_BW_ITERS="$bw_iters" \
	--env ROXE_BENCH_VM_PERFTEST="${ROXE_BENCH_VM_PERFTEST:-}" --env ROXE_BENCH_VM_ROXED="$roxed_opts" --env ROXE_BENCH_VM_LAT_SIZE="$lat_size" --env ROXE_BENCH_VM_LAT_ITERS="$lat_iters" \
	--script "$(readlink -f "$0")" || rc=$?
grep -a "^bench-vm:\|^    " "$vmout/console.log" 2>/dev/null || true
[ -s "$vmout/vm.tsv" ] || { echo "bench-vm: no results (guest exit $rc)" >&2; exit 1; }
cp "$vmout/vm.tsv" "$out/vm.tsv"

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
exit $rc
