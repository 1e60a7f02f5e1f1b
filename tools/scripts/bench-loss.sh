#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# bench-loss.sh: roxe RC goodput under random loss (issue #19's loss goals),
# part of make bench and runnable alone (as root):
#
#   tools/scripts/bench-loss.sh [OUTDIR]
#
# Two hosts (network namespaces) with a middle one where faultwire forwards
# every frame and drops RoCE v2 frames at 0, 0.1, 1 and 3 % each way (the
# same topology as selftests/xdp/faultwire_test.sh). roxe-perf RC WRITE and
# RC SEND, 64 KiB messages, AF_XDP, polled, path MTU 4096, for
# ROXE_BENCH_LOSS_SECONDS (default 2) per point, ROXE_BENCH_LOSS_RUNS
# (default 1) runs of each point: the median goodput, its spread (min-max)
# and its ratio to the clean (0 %) median; the frames faultwire forwarded
# per MiB of goodput, and that as a multiple of the clean figure (what
# go-back-N resends). Then the goals: at 1 % loss >= 80 % of clean goodput,
# at 3 % >= 50 %, met or missed. Timings only: nothing here passes or fails.
# Output: OUTDIR/loss.tsv (one line a run: op, drop %, run, Gb/s, frames),
# OUTDIR/loss.png (gnuplot: bench-plot.gp) and the table on stdout.
# ROXE_BENCH_BIN: the binaries to measure (default this tree's build/bin);
# ROXE_BENCH_LOSS_DROPS, ROXE_BENCH_LOSS_OPS: other points (the default,
# "0 0.1 1 3" and "write send"; the ratios need 0).
#
# faultwire runs at SCHED_FIFO priority ROXE_BENCH_LOSS_WIRE_RT (default 10;
# 0: the normal policy), clean runs as lossy ones. It stands for the wire
# and for the receiving NIC's interrupt work (on veth the receiving side's
# XDP runs in the sender's context: faultwire's), and neither waits for a
# time slice. At the normal policy, on a 2-core host where both polled
# ends spin, faultwire's wake-ups wait for the scheduler (a NAK can come
# milliseconds late on a path whose RTT is 50 us), and every recovery pays
# that, not the transport (docs/benchmark-loss.md).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${ROXE_BENCH_BIN:-$top/build/bin}
out=${1:-$top/build/bench}
secs=${ROXE_BENCH_LOSS_SECONDS:-2}
wire_rt=${ROXE_BENCH_LOSS_WIRE_RT:-10}
runs=${ROXE_BENCH_LOSS_RUNS:-1}
drops=${ROXE_BENCH_LOSS_DROPS:-0 0.1 1 3}
ops=${ROXE_BENCH_LOSS_OPS:-write send}
size=65536
name=roxeloss
a=$name-a b=$name-b m=$name-m

[ "$(id -u)" -eq 0 ] || { echo "bench-loss: needs root (network namespaces, XDP)" >&2; exit 1; }
for t in roxe-perf faultwire; do
	[ -x "$bin/$t" ] || { echo "bench-loss: $bin/$t not built (make)" >&2; exit 1; }
done
mkdir -p "$out"
tsv=$out/loss.tsv
rm -f "$tsv" "$out"/loss-*.log
. "$top/tools/scripts/netns.sh"
netns_down "$name"
netns_up "$name" --middle --mtu 9000 >/dev/null
# faultwire takes the bridge's place; frames cross it as plain bytes.
for h in "$a" "$b"; do
	ip netns exec "$h" ethtool -K "$h" tx off tso off gso off >/dev/null 2>&1 || true
done
ip -n "$m" link set "$name-ma" nomaster
ip -n "$m" link set "$name-mb" nomaster

wire_pre=(env)
[ "$wire_rt" = 0 ] || wire_pre=(chrt -f "$wire_rt")

# One run: OP DROP_PCT RUN -> "gbps frames" (1 on failure)
loss_run() {
	local op=$1 pct=$2 run=$3 ppm wire server rc=0 tag=$out/loss-$1-$2-$3 g f
	ppm=$(awk -v p="$pct" 'BEGIN { printf "%d", p * 10000 }')
	ip netns exec "$m" "${wire_pre[@]}" "$bin/faultwire" "$name-ma" "$name-mb" --drop "$ppm" \
		--seed $((run * 7919 + ppm + 1)) > "$tag.wire.log" 2>&1 &
	wire=$!
	ip netns exec "$b" "$bin/roxe-perf" "$op" bw --netdev "$b" -P -B afxdp > "$tag.server.log" 2>&1 &
	server=$!
	if ! netns_wait_listen "$b" 18515; then
		echo "bench-loss: roxe-perf server did not start (see $tag.*)" >&2
		kill "$server" "$wire" 2>/dev/null; wait "$server" "$wire" 2>/dev/null
		return 1
	fi
	ip netns exec "$a" timeout $((secs + 60)) "$bin/roxe-perf" "$op" bw --netdev "$a" -P -B afxdp \
		-s "$size" -m 4096 -D "$secs" --json 10.99.0.2 > "$tag.json" 2> "$tag.client.log" || rc=1
	if [ $rc -ne 0 ]; then
		kill "$server" 2>/dev/null
	fi
	wait "$server" 2>/dev/null || true
	kill "$wire" 2>/dev/null; wait "$wire" 2>/dev/null || true
	[ $rc -eq 0 ] || { echo "bench-loss: roxe-perf $op at $pct % failed (see $tag.*)" >&2; return 1; }
	g=$(jq -r '.results[-1].bw_avg_gbps' "$tag.json")
	f=$(sed -n 's/.*forwarded \([0-9]*\),.*/\1/p' "$tag.wire.log")
	echo "$g ${f:-0}"
}

for op in $ops; do
	for pct in $drops; do
		for ((r = 1; r <= runs; r++)); do
			v=$(loss_run "$op" "$pct" "$r") || continue
			printf '%s\t%s\t%s\t%s\t%s\n' "$op" "$pct" "$r" "${v% *}" "${v#* }" >> "$tsv"
		done
	done
done
[ -s "$tsv" ] || { echo "bench-loss: no run succeeded" >&2; exit 1; }

# Per op and drop: median Gb/s, min, max, median frames per MiB of goodput.
summary=$out/loss-summary.tsv
awk -F '\t' -v secs="$secs" '
function med(s,   n, v, i, j, t) {
	n = split(s, v, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
{
	k = $1 "\t" $2
	if (!(k in g)) { order[++nk] = k; lo[k] = $4; hi[k] = $4 }
	g[k] = g[k] " " $4
	if ($4 < lo[k]) lo[k] = $4
	if ($4 > hi[k]) hi[k] = $4
	mib = $4 * 1e9 / 8 * secs / 1048576
	fpm[k] = fpm[k] " " (mib > 0 ? $5 / mib : 0)
}
END { for (i = 1; i <= nk; i++) { k = order[i]; printf "%s\t%.3f\t%.3f\t%.3f\t%.1f\n", k, med(g[k]), lo[k], hi[k], med(fpm[k]) } }
' "$tsv" > "$summary"

printf '\nGoodput under loss: RC %s KiB, faultwire (%s) drops each way, %s s a point, %s run(s)' \
	$((size / 1024)) "$([ "$wire_rt" = 0 ] && echo "normal policy" || echo "SCHED_FIFO $wire_rt")" "$secs" "$runs"
printf ' (median, min-max)\n'
printf '  %-6s %-7s %-22s %-9s %-14s %s\n' op "loss %" "Gb/s" "of clean" "frames/MiB" "x clean"
declare -A ratio
while IFS=$'\t' read -r op pct med lo hi fpm; do
	clean=$(awk -F '\t' -v o="$op" '$1 == o && $2 == 0 { print $3 " " $6 }' "$summary")
	r=$(awk -v x="$med" -v c="${clean% *}" 'BEGIN { printf "%.2f", (c > 0 ? x / c : 0) }')
	fx=$(awk -v x="$fpm" -v c="${clean#* }" 'BEGIN { printf "%.1f", (c > 0 ? x / c : 0) }')
	ratio[$op,$pct]=$r
	printf '  %-6s %-7s %-22s %-9s %-14s %s\n' "$op" "$pct" "$med ($lo-$hi)" "$r" "$fpm" "$fx"
done < "$summary"

printf '\nLoss goals (issue #19), RC WRITE and SEND 64 KiB through faultwire\n'
for op in $ops; do
	for goal in "1 0.80" "3 0.50"; do
		pct=${goal% *} want=${goal#* } r=${ratio[$op,$pct]:-}
		if [ -z "$r" ]; then
			printf '  %-52s %s\n' "RC ${op^^} at $pct % loss >= $want of clean" "not measured"
			continue
		fi
		printf '  %-52s %s\n' "RC ${op^^} at $pct % loss >= $want of clean" \
			"$r: $(awk -v r="$r" -v w="$want" 'BEGIN { print (r >= w ? "met" : "missed") }')"
	done
done

# The plot: goodput ratio against loss, one line per op (bench-plot.gp).
gnuplot -e "losstsv='$summary'; outdir='$out'" "$top/tools/scripts/bench-plot.gp" 2>/dev/null &&
	echo "plot: $out/loss.png" || echo "bench-loss: gnuplot failed" >&2
