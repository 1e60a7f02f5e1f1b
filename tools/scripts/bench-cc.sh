#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# bench-cc.sh: two senders through a congested port, congestion control on
# and off (issue #21), part of make bench and runnable alone (as root):
#
#   tools/scripts/bench-cc.sh [OUTDIR]
#
# Two hosts (network namespaces) with a middle one where faultwire is a
# switch port of ROXE_BENCH_CC_RATE (default 200mbit) that marks
# ECN-capable RoCE frames above 32 KiB of backlog and drops above 256 KiB
# (faultwire --rate/--mark/--limit). Host a runs roxe-perf RC WRITE bw with
# two QPs (the two senders: 64 KiB messages, path MTU 1024) for
# ROXE_BENCH_CC_SECONDS (default 8) to host b, once with --cc on (line_rate
# ROXE_BENCH_CC_LINE Mbit/s, default 200: the port's) and once with --cc off
# (ROXE_BENCH_CC_MODES, default "on off"). Every 200 ms it
# reads each QP's tx_bytes, cc_rate_mbps and cnp_received (roxectl stats
# --json), for the plot; once the sender is gone, each QP's final counters
# (roxectl attaches host a's roxe before each run and detaches it after, so
# the counters outlive roxe-perf's QPs): cnp_received and cc_rate_cuts, the
# CNPs that lowered its rate, which no sampling can miss.
# Output: OUTDIR/cc.tsv (mode, seconds, qpn, Mbit/s sent in the interval,
# the DCQCN rate, CNPs so far), OUTDIR/cc-qps.tsv (mode, qpn, and the QP's
# final tx_bytes, cnp_received and cc_rate_cuts), OUTDIR/cc-summary.tsv
# (mode, each QP's mean Mbit/s over the second half, Jain's fairness index
# of the two, faultwire's marks and tail drops, the QPs' final CNPs and
# rate cuts), OUTDIR/cc.png (gnuplot: bench-plot.gp with
# cctsv: rate against time, a panel per mode, a line per sender) and the
# table on stdout. What the plot shows with CC on: each sender's rate cut
# on CNPs and recovering, both around half the port, few drops; with CC
# off: both at whatever the port's tail drops and go-back-N leave them.
# Timings only: nothing here passes or fails (selftests/xdp/congestion_test.sh
# checks).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${ROXE_BENCH_BIN:-$top/build/bin}
out=${1:-$top/build/bench}
secs=${ROXE_BENCH_CC_SECONDS:-8}
rate=${ROXE_BENCH_CC_RATE:-200mbit}
# DCQCN's line rate for the senders (a veth tells no speed: roxe would
# assume 100 Gbit/s and need dozens of cuts to come down): the port's, as
# for hosts whose links run at the switch port's speed, two of them into one
line=${ROXE_BENCH_CC_LINE:-200}
modes=${ROXE_BENCH_CC_MODES:-on off}
name=roxecc
a=$name-a b=$name-b m=$name-m

[ "$(id -u)" -eq 0 ] || { echo "bench-cc: needs root (network namespaces, XDP)" >&2; exit 1; }
for t in roxe-perf faultwire roxectl; do
	[ -x "$bin/$t" ] || { echo "bench-cc: $bin/$t not built (make)" >&2; exit 1; }
done
command -v jq >/dev/null || { echo "bench-cc: jq is missing" >&2; exit 1; }
mkdir -p "$out"
. "$top/tools/scripts/netns.sh"
netns_down "$name"
netns_up "$name" --middle >/dev/null
for h in "$a" "$b"; do
	ip netns exec "$h" ethtool -K "$h" tx off tso off gso off >/dev/null 2>&1 || true
done
ip -n "$m" link set "$name-ma" nomaster
ip -n "$m" link set "$name-mb" nomaster

tsv=$out/cc.tsv summary=$out/cc-summary.tsv qps=$out/cc-qps.tsv
printf '# mode\tseconds\tqpn\tmbps\tcc_rate_mbps\tcnp_received\n' > "$tsv"
printf '# mode\tqpn\ttx_bytes\tcnp_received\tcc_rate_cuts\n' > "$qps"
printf '# mode\tqp_a_mbps\tqp_b_mbps\tjain\tmarked\tqueue_drops\tcnps\tcuts\n' > "$summary"

# One run: MODE (on|off)
run() {
	local mode=$1 wire server client t0 samples=$out/cc-$1.samples log=$out/cc-$1 cnps cuts
	# attached here, not by roxe-perf: the QPs' counters stay after it exits
	ip netns exec "$a" "$bin/roxectl" attach "$a" --engines 1 >/dev/null
	ip netns exec "$m" "$bin/faultwire" "$name-ma" "$name-mb" --rate "$rate" --mark 32k \
		--limit 256k > "$log.wire.log" 2>&1 &
	wire=$!
	ip netns exec "$b" "$bin/roxe-perf" write bw --netdev "$b" > "$log.server.log" 2>&1 &
	server=$!
	netns_wait_listen "$b" 18515 || { echo "bench-cc: no roxe-perf server" >&2; kill $wire; return 1; }
	# bounded: with tail drops go-back-N may take long over the last messages
	ip netns exec "$a" timeout $((secs * 3 + 20)) "$bin/roxe-perf" write bw --netdev "$a" -q 2 \
		-D "$secs" -s 65536 -m 1024 \
		--cc "$([ "$mode" = off ] && echo off || echo "$mode,line_rate=$line")" --json 10.99.0.2 \
		> "$log.json" 2> "$log.client.log" &
	client=$!
	t0=$(date +%s%N)
	: > "$samples"
	# every 200 ms: seconds qpn tx_bytes cc_rate_mbps cnp_received
	while kill -0 $client 2>/dev/null; do
		ip netns exec "$a" "$bin/roxectl" stats "$a" --json 2>/dev/null |
			jq -r --argjson ms $(( ($(date +%s%N) - t0) / 1000000 )) \
			'.qps[] | select(.tx_bytes > 0) |
			 "\($ms / 1000) \(.qpn) \(.tx_bytes) \(.cc_rate_mbps // 0) \(.cnp_received // 0)"' \
			>> "$samples" 2>/dev/null || true
		sleep 0.2
	done
	wait $client || echo "bench-cc: roxe-perf --cc $mode failed (see $log.client.log)" >&2
	kill $server 2>/dev/null || true
	wait $server || true
	kill $wire && wait $wire || true
	# the QPs' final counts (the sender's QPs: those that sent)
	ip netns exec "$a" "$bin/roxectl" stats "$a" --json |
		jq -r --arg mode "$mode" '.qps[] | select(.tx_bytes > 0) |
		   [$mode, .qpn, .tx_bytes, .cnp_received, .cc_rate_cuts] | @tsv' > "$log.qps"
	ip netns exec "$a" "$bin/roxectl" detach "$a" >/dev/null
	cat "$log.qps" >> "$qps"
	read -r cnps cuts < <(awk -F '\t' '{ n += $4; c += $5 } END { print n + 0, c + 0 }' \
		"$log.qps")
	awk -v mode="$mode" -v secs="$secs" -v tsv="$tsv" -v wirelog="$log.wire.log" \
		-v cnps="$cnps" -v cuts="$cuts" '
		BEGIN {
			while ((getline l < wirelog) > 0)
				if (l ~ /queue at/) {
					match(l, /marked [0-9]+/); marked = substr(l, RSTART + 7, RLENGTH - 7)
					match(l, /dropped [0-9]+/); qdrop = substr(l, RSTART + 8, RLENGTH - 8)
				}
		}
		{
			t = $1; q = $2
			if (q in last_t && t > last_t[q]) {
				mbps = ($3 - last_b[q]) * 8 / (t - last_t[q]) / 1e6
				printf "%s\t%.2f\t%d\t%.1f\t%d\t%d\n", mode, t, q, mbps, $4, $5 >> tsv
				if (t > secs / 2) { sum[q] += mbps; n[q]++ }
			}
			last_t[q] = t; last_b[q] = $3
		}
		END {
			k = 0
			for (q in sum) mean[k++] = sum[q] / n[q]
			s = mean[0] + mean[1]; s2 = mean[0] ^ 2 + mean[1] ^ 2
			printf "%s\t%.1f\t%.1f\t%.3f\t%d\t%d\t%d\t%d\n", mode, mean[0], mean[1],
			       s2 ? s * s / (2 * s2) : 0, marked, qdrop, cnps, cuts
		}' "$samples" >> "$summary"
}

for mode in $modes; do
	run "$mode"
	sleep 1
done
netns_down "$name"

printf '\ntwo senders through a %s port (marks above 32 KiB, drops above 256 KiB), %s s each:\n' \
	"$rate" "$secs"
printf '  %-4s %10s %10s %7s %8s %8s %8s %8s\n' cc "QP Mbit/s" "QP Mbit/s" jain marked drops cnps \
	cuts
grep -v '^#' "$summary" | while IFS=$'\t' read -r mode qa qb jain marked drops cnps cuts; do
	printf '  %-4s %10s %10s %7s %8s %8s %8s %8s\n' "$mode" "$qa" "$qb" "$jain" "$marked" \
		"$drops" "$cnps" "$cuts"
done
if command -v gnuplot >/dev/null; then
	gnuplot -e "cctsv='$tsv'; outdir='$out'" "$top/tools/scripts/bench-plot.gp" 2>/dev/null &&
		printf 'plot: %s/cc.png\n' "$out" || echo "bench-cc: gnuplot failed" >&2
fi
