#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make bench: roxe side by side with what lies under it and beside it, in
# one run, on one veth pair between two network namespaces (MTU 9000; roxe
# runs path MTU 4096):
#   roxe RC over AF_XDP     roxe-perf -P (polled: one thread per end)
#   roxe RC over UDP        the same over roxe's UDP-socket backend
#   raw AF_XDP              roxe-rawperf: valid RoCE frames through roxe's
#                           XDP program and port layer, no transport (the
#                           limit under us); and raw UDP sockets
#   kernel TCP              sockperf ping-pong (both ends spinning), iperf3
#                           (one stream)
# Figures: RC WRITE/READ/SEND bandwidth over a size sweep, SEND latency
# (median, p99), the 64 B message rate, an idle engine's CPU, the per-frame
# hot paths; then the targets of the tools issue with the ratios measured,
# each met or missed; then the loss sweep (bench-loss.sh: RC WRITE and SEND
# 64 KiB goodput through faultwire at 0, 0.1, 1 and 3 % drop, against the
# loss goals); the many-QP table (bench-manyqp.sh: RC WRITE message rate,
# bandwidth and CPU per frame with 1..4096 QPs over 1 and 2 engines per
# end); two senders through a congested port (bench-cc.sh: faultwire's ECN
# marking queue, congestion control on and off, rate against time); then
# the per-frame budget (bench-budget.sh: perf profiles of both ends, CPU ns
# per frame by stage, roxe beside raw AF_XDP).
# Results: tables on stdout, build/bench/results.json, sweep.tsv (medians), rounds.tsv,
# loss.tsv, manyqp.tsv, cc.tsv, budget.tsv and bandwidth.png / msgrate.png /
# loss.png / manyqp.png / cc.png (gnuplot).
#
# ROXE_BENCH_SECONDS (default 1) per bandwidth point; ROXE_BENCH_LAT_ITERS
# (default 20000) per latency figure; ROXE_BENCH_ROUNDS (default 3): the
# bandwidth sweep and the latency table run that many times, interleaved
# (every point once a round), and print each point's median, with the range
# of the rounds beside it (issue #38: a figure quoted is the median of at
# least 3 interleaved runs, with its range).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
bin=$top/build/bin
out=$top/build/bench
name=roxebench
a=$name-a b=$name-b
secs=${ROXE_BENCH_SECONDS:-1}
lat_iters=${ROXE_BENCH_LAT_ITERS:-20000}
rounds=${ROXE_BENCH_ROUNDS:-3}
sizes="64 256 1024 4096 16384 65536"
raw_sizes="64 256 1024 4096"		# one frame each: payload up to the path MTU

[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (network namespaces, XDP)" >&2; exit 1; }
mkdir -p "$out"
rm -f "$out"/*.log "$out"/*.json "$out/sweep.tsv"
. "$top/tools/scripts/netns.sh"
. "$top/tools/scripts/bench-lib.sh"
. "$top/tools/scripts/bench-manyqp.sh"
export BENCH_NAME=$name BENCH_OUT=$out BENCH_BIN=$bin BENCH_RAW_SECONDS=$secs \
	BENCH_LAT_ITERS=$lat_iters BENCH_TCP_SECONDS=2
netns_down "$name"
netns_up "$name" --mtu 9000 >/dev/null

# roxe-perf once: TEST MODE BACKEND SIZE [ARGS]; its JSON on stdout
perf_json() {
	local test=$1 mode=$2 backend=$3 size=$4 server tag=$out/perf-$1-$2-$3-$4
	shift 4
	ip netns exec "$b" "$bin/roxe-perf" "$test" "$mode" --netdev "$b" -P -B "$backend" \
		> "$tag.server.log" 2>&1 &
	server=$!
	netns_wait_listen "$b" 18515 || { echo "bench: roxe-perf server did not start" >&2; return 1; }
	if ! ip netns exec "$a" "$bin/roxe-perf" "$test" "$mode" --netdev "$a" -P -B "$backend" \
		-s "$size" -m 4096 --json "$@" 10.99.0.2 > "$tag.json" 2> "$tag.client.log"; then
		echo "bench: roxe-perf $test $mode $backend $size failed (see $tag.*)" >&2
		kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true
		return 1
	fi
	wait "$server" || true
	cat "$tag.json"
}

# "gbps mpps" of roxe-perf TEST bw
perf_bw() {
	perf_json "$1" bw "$2" "$3" -D "$secs" | jq -r '.results[-1] | "\(.bw_avg_gbps) \(.mpps)"'
}

# "median_us p99_us" of the ROUND TRIP of roxe-perf send lat BACKEND SIZE
# [ARGS] (it reports one way, as perftest: half the round trip). By default
# as ib_send_lat: each send waits for its completion (the peer's ACK) too;
# -t 16: for the reply only, as the raw and TCP ping-pongs do.
perf_lat() {
	perf_json send lat "$@" -n "$lat_iters" |
		jq -r '.results[-1].usec | "\(.typical * 2) \(.p99 * 2)"'
}

# Percent of one core an idle engine used over 3 s (its process, in fact:
# a roxe-perf server waiting in accept() with its device open).
idle_cpu() {
	local pid ticks0 ticks1 hz
	hz=$(getconf CLK_TCK)
	ip netns exec "$b" "$bin/roxe-perf" send bw --netdev "$b" -p 18600 > /dev/null 2>&1 &
	pid=$!
	sleep 1		# past start-up
	ticks0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	sleep 3
	ticks1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	kill "$pid"; wait "$pid" 2>/dev/null || true
	awk -v d=$((ticks1 - ticks0)) -v hz="$hz" 'BEGIN { printf "%.2f", 100 * d / hz / 3 }'
}

ratio() { awk -v x="$1" -v y="$2" 'BEGIN { if (y > 0) printf "%.2f", x / y; else print "-" }'; }
half() { awk -v x="$1" 'BEGIN { printf "%.2f", x / 2 }'; }

busy=$(bench_busy)
echo "roxe bench: $(uname -r), $(nproc) cores, veth MTU 9000, roxe path MTU 4096," \
	"${secs}s per bandwidth point; machine ${busy}% busy before the run"
[ "$busy" -lt 10 ] || echo "bench: the machine is busy: figures will be low and noisy" >&2

# --- bandwidth sweep and latency, ROUNDS times interleaved -----------------
# Every round's figures of a point, ';'-separated ("gbps mpps" or "median
# p99"); then bw[] and lat[] hold the round whose first figure is the
# median (the lower middle of an even count), bwr[] and latr[] "min max"
# of that first figure over the rounds. Every round's figures go to
# rounds.tsv (round, series, bytes, gbps, mpps; round, lat-KEY, 8, median,
# p99), and at[] keeps them by KEY (lat-KEY for a latency) and round for
# the goals, which are taken within each round.
declare -A bw lat bwr latr bwall latall at
tsv=$out/sweep.tsv rtsv=$out/rounds.tsv
: > "$rtsv"
bw_add() {	# ROUND KEY "gbps mpps"
	bwall[$2]+="$3;"
	at[$2,$1]=$3
	printf '%s\t%s\t%s\t%s\n' "$1" "${2%,*}" "${2#*,}" "${3// /$'\t'}" >> "$rtsv"
}
lat_add() {	# ROUND KEY "median p99"
	latall[$2]+="$3;"
	at[lat-$2,$1]=$3
	printf '%s\tlat-%s\t8\t%s\n' "$1" "$2" "${3// /$'\t'}" >> "$rtsv"
}
lat_keys="roxe-afxdp roxe-afxdp-reply roxe-udp raw-afxdp raw-afxdp-2 raw-udp tcp"	# table order
median_of() {	# "x y;x y;..." -> "x y" of the median x, then "min max" of x
	tr ';' '\n' <<< "$1" | awk 'NF == 2' | sort -g -k1,1 |
		awk '{ r[NR] = $0 } END { if (!NR) exit 1; split(r[1], lo, " "); split(r[NR], hi, " ")
			print r[int((NR + 1) / 2)]; print lo[1], hi[1] }'
}
for round in $(seq "$rounds"); do
	for size in $sizes; do
		for s in write:afxdp write:udp read:afxdp send:afxdp; do
			t=${s%:*} be=${s#*:}
			r=$(perf_bw "$t" "$be" "$size") && bw_add "$round" "roxe-$t-$be,$size" "$r"
		done
	done
	for be in afxdp udp; do
		for size in $raw_sizes; do
			r=$(raw_bw "$be" "$size") && bw_add "$round" "raw-$be,$size" "$r"
		done
	done
	while IFS=$'\t' read -r _ size g m; do
		bw_add "$round" "tcp,$size" "$g $m"
	done < <(tcp_sweep "$b" "$a" 10.99.0.2 $sizes || true)
	r=$(perf_lat afxdp 8 -t 1) && lat_add "$round" roxe-afxdp "$r"
	r=$(perf_lat afxdp 8 -t 16) && lat_add "$round" roxe-afxdp-reply "$r"
	r=$(perf_lat udp 8 -t 1) && lat_add "$round" roxe-udp "$r"
	r=$(raw_lat afxdp 8) && lat_add "$round" raw-afxdp "$r"
	# the frames of ib_send_lat's exchange: each one way a message and an ACK
	r=$(raw_lat afxdp 8 "$lat_iters" -k 2) && lat_add "$round" raw-afxdp-2 "$r"
	r=$(raw_lat udp 8) && lat_add "$round" raw-udp "$r"
	r=$(tcp_latency_spin "$b" "$a" 10.99.0.2 14 2>/dev/null) && lat_add "$round" tcp "$r"
done
for k in "${!bwall[@]}"; do
	{ read -r "bw[$k]"; read -r "bwr[$k]"; } < <(median_of "${bwall[$k]}") || continue
	printf '%s\t%s\t%s\t%s\n' "${k%,*}" "${k#*,}" "${bw[$k]% *}" "${bw[$k]#* }" >> "$tsv"
done
for k in $lat_keys; do
	{ read -r "lat[$k]"; read -r "latr[$k]"; } < <(median_of "${latall[$k]:-}") ||
		{ lat[$k]="- -"; latr[$k]="- -"; }
done

cell() { local v=${bw[$1,$2]:-}; [ -n "$v" ] && printf '%.2f [%.3f]' ${v% *} ${v#* } || printf '-'; }
span() { local v=${bwr[$1,$2]:-}; [ -n "$v" ] && printf '%.2f-%.2f' ${v% *} ${v#* } || printf '-'; }
# bw_table CELL: a line per size, CELL SERIES SIZE printing each cell
bw_table() {
	local f='  %-8s %-16s %-16s %-16s %-16s %-16s %-16s %-16s\n'
	# shellcheck disable=SC2059 # the format, once for all lines
	printf "$f" bytes "roxe WRITE" "roxe WRITE udp" "roxe READ" "roxe SEND" "raw AF_XDP" \
		"raw UDP" "kernel TCP"
	for size in $sizes; do
		# shellcheck disable=SC2059
		printf "$f" "$size" \
			"$($1 roxe-write-afxdp "$size")" "$($1 roxe-write-udp "$size")" \
			"$($1 roxe-read-afxdp "$size")" "$($1 roxe-send-afxdp "$size")" \
			"$($1 raw-afxdp "$size")" "$($1 raw-udp "$size")" "$($1 tcp "$size")"
	done
}
printf '\nBandwidth, Gb/s of message bytes (Mpps in brackets); one QP, one stream;\n'
printf 'the median of %s interleaved rounds\n' "$rounds"
bw_table cell
printf '\nThe range of the %s rounds, Gb/s (min-max)\n' "$rounds"
bw_table span

printf '\nRound trip, 8 B messages, both ends spinning (us; one way is half); roxe as\n'
printf 'ib_send_lat: each send also waits for its completion (the ACK), but "reply only";\n'
printf 'the round with the median median of %s, and the range of the medians\n' "$rounds"
printf '  %-34s %10s %10s %12s %16s\n' path median p99 "one way" range
for k in $lat_keys; do
	v=${lat[$k]}
	printf '  %-34s %10s %10s %12s %16s\n' \
		"$(case $k in roxe-afxdp) echo "roxe RC SEND, AF_XDP";; roxe-udp) echo "roxe RC SEND, UDP";;
		roxe-afxdp-reply) echo "roxe RC SEND, AF_XDP, reply only";;
		raw-afxdp) echo "raw AF_XDP frames";; raw-udp) echo "raw UDP datagrams";;
		raw-afxdp-2) echo "raw AF_XDP, 2 frames each way";;
		tcp) echo "kernel TCP (sockperf spin, 14 B)";; esac)" "${v% *}" "${v#* }" "$(half "${v% *}")" \
		"${latr[$k]% *}-${latr[$k]#* }"
done

# against the recorded baseline (bench-baseline.tsv): the ratio, and the
# ratio over raw AF_XDP's (the machine's speed today against that day's)
base=$top/tools/scripts/bench-baseline.tsv
if [ -r "$base" ]; then
	raw_now=${lat[raw-afxdp]% *} raw_then=$(awk -F '\t' '$1 == "raw-afxdp" { print $2 }' "$base")
	printf '\nRound trip against the baseline (%s; > 1.15 over raw: A/B it with\n' \
		"$(sed -n 's/^# Recorded: //p' "$base")"
	printf 'tools/scripts/lat-ab.sh, the tx depth given)\n'
	printf '  %-34s %10s %10s %8s %10s\n' path now baseline ratio "over raw"
	while IFS=$'\t' read -r k was _; do
		case $k in '#'*|'') continue;; esac
		now=${lat[$k]:-- -}; now=${now% *}
		printf '  %-34s %10s %10s %8s %10s %s\n' "$k" "$now" "$was" \
			"$([ "$now" = - ] && echo - || ratio "$now" "$was")" \
			"$(awk -v n="$now" -v t="$was" -v rn="$raw_now" -v rt="$raw_then" 'BEGIN {
				if (n == "-" || rn == "-" || t <= 0 || rn <= 0) { print "-"; exit }
				printf "%.2f", (n / t) / (rn / rt) }')" \
			"$(awk -v n="$now" -v t="$was" -v rn="$raw_now" -v rt="$raw_then" 'BEGIN {
				if (n != "-" && rn != "-" && t > 0 && rn > 0 && (n / t) / (rn / rt) > 1.15)
					print "slower: A/B it against the baseline tree" }')"
	done < "$base"
fi

idle=$(idle_cpu)
"$bin/roxe-microbench" --json > "$out/microbench.json"
# one series after the other (gnuplot joins a series' consecutive rows)
sort -s -t "$(printf '\t')" -k1,1 -o "$tsv" "$tsv"
bench_plot "$tsv" "$out" 2>/dev/null || echo "bench: gnuplot failed" >&2

# --- many QPs (its own topologies, one per engine count) ---------------------
manyqp_bench "$name"

# --- the targets ---------------------------------------------------------------
# Each goal is taken within each round (the machine's speed moves between
# rounds; a round runs every path once), and the median round's verdict is
# printed, with the range of the rounds' margins.
m64x=${bw[roxe-write-afxdp,64]:-0 0} m64u=${bw[roxe-write-udp,64]:-0 0}
# per_round KEY_A KEY_B AWK: for each round with both figures, the line
# AWK prints from a and b (the "x y" figures: a[1], a[2], b[1], b[2]), its
# first field the margin (<= 0: met); then the median line and the range
# of the margins, or "not measured"
per_round() {
	local round x y
	for round in $(seq "$rounds"); do
		x=${at[$1,$round]:-} y=${at[$2,$round]:-}
		[ -n "$x" ] && [ -n "$y" ] || continue
		awk -v x="$x" -v y="$y" "BEGIN { split(x, a, \" \"); split(y, b, \" \"); $3 }"
	done | sort -g | awk '{ l[++n] = $0; m[n] = $1 }
		END { if (!n) { print "not measured"; exit }
		      print l[int((n + 1) / 2)]; printf "%+.2f to %+.2f\n", m[1], m[n] }'
}
# goal NAME: reads per_round's output (its median line, "margin what...",
# and the range of the margins) and prints the goal's line
goal() {
	local name=$1 l range
	read -r l || l="not measured"
	read -r range || range=
	if [ "$l" = "not measured" ]; then
		printf '  %-58s not measured\n' "$name"
		return
	fi
	set -- $l
	printf '  %-58s %s: %s (rounds %s)\n' "$name" "${*:2}" \
		"$(awk -v m="$1" 'BEGIN { if (m <= 0) printf "met (%.2f to spare)", -m; else printf "missed by %.2f", m }')" \
		"$range"
}
# one way (half the round trip) against another's + 0.5 us
ow='printf "%.2f %.2f vs %.2f + 0.5 us\n", a[1] / 2 - b[1] / 2 - 0.5, a[1] / 2, b[1] / 2'
# p99/median against another's
tl='printf "%.2f %.2f vs %.2f\n", a[2] / a[1] - b[2] / b[1], a[2] / a[1], b[2] / b[1]'
printf '\nTargets (tools issue; performance issue #19: WRITE >= 0.90, SEND <= raw + 0.5 us),\n'
printf 'each within a round; the median round, and the range of the margins\n'
per_round roxe-write-afxdp,65536 raw-afxdp,4096 \
	'printf "%.2f %.2f (%.2f vs %.2f Gb/s)\n", 0.9 - a[1] / b[1], a[1] / b[1], a[1], b[1]' |
	goal "RC WRITE 64 KiB vs raw AF_XDP, same frames (>= 0.90)"
per_round lat-roxe-afxdp lat-raw-afxdp "$ow" |
	goal "RC SEND 8 B one way <= raw one way + 0.5 us (as ib_send_lat)"
per_round lat-roxe-afxdp lat-raw-afxdp-2 "$ow" |
	goal "RC SEND 8 B as ib_send_lat <= raw, same frames, + 0.5 us"
per_round lat-roxe-afxdp-reply lat-raw-afxdp "$ow" |
	goal "RC SEND 8 B one way <= raw one way + 0.5 us (reply only)"
per_round lat-roxe-afxdp lat-raw-afxdp-2 "$tl" |
	goal "RC SEND 8 B p99/median <= raw's, same frames (as ib_send_lat)"
per_round lat-roxe-afxdp-reply lat-raw-afxdp "$tl" |
	goal "RC SEND 8 B p99/median <= raw AF_XDP's (reply only)"
per_round lat-roxe-afxdp-reply lat-tcp \
	'printf "%.2f %.2f vs %.2f us\n", a[1] / 2 - b[1] / 2, a[1] / 2, b[1] / 2' |
	goal "RC SEND 8 B one way below kernel TCP (reply only, as TCP)"
printf '  %-58s %s\n' \
	"64 B message rate, AF_XDP vs UDP backend (>= 1.30)" \
	"$(ratio "${m64x#* }" "${m64u#* }")  (${m64x#* } vs ${m64u#* } Mpps)" \
	"idle engine, % of a core (< 1)" "$idle" \
	"per-frame CPU at 4096 QPs within 1.5x of 1 QP (1 engine)" "${MANYQP_GOAL#*: }"

printf '\nper-frame hot paths: %s\nplots: %s/bandwidth.png, %s/msgrate.png, %s/manyqp.png\n' \
	"$out/microbench.json" "$out" "$out" "$out"

# --- goodput under loss -----------------------------------------------------------
"$top/tools/scripts/bench-loss.sh" "$out" || echo "bench: the loss sweep failed" >&2

# --- two senders through a congested port, congestion control on and off --------
"$top/tools/scripts/bench-cc.sh" "$out" || echo "bench: the congestion run failed" >&2
# --- where each frame's nanoseconds go (perf; ROXE_BENCH_BUDGET=0 skips) ----------
if [ "${ROXE_BENCH_BUDGET:-1}" != 0 ] && command -v perf > /dev/null; then
	echo
	BENCH_OUT=$out "$top/tools/scripts/bench-budget.sh" 2 ||
		echo "bench: bench-budget.sh failed" >&2
fi

{
	printf '{\n  "kernel": "%s", "cores": %s, "seconds_per_point": %s, "busy_before": %s, "rounds": %s,\n' \
		"$(uname -r)" "$(nproc)" "$secs" "$busy" "$rounds"
	printf '  "bandwidth": ['
	sep=''
	while IFS=$'\t' read -r series size g m; do
		printf '%s\n    {"series": "%s", "bytes": %s, "gbps": %s, "mpps": %s}' "$sep" \
			"$series" "$size" "$g" "$m"
		sep=,
	done < "$tsv"
	printf '\n  ],\n  "round_trip_usec": {'
	sep=''
	for k in $lat_keys; do
		v=${lat[$k]}
		printf '%s\n    "%s": {"median": "%s", "p99": "%s", "median_min": "%s", "median_max": "%s"}' \
			"$sep" "$k" "${v% *}" "${v#* }" "${latr[$k]% *}" "${latr[$k]#* }"
		sep=,
	done
	printf '\n  },\n  "loss": ['
	sep=''
	while IFS=$'\t' read -r op pct g lo hi fpm; do
		printf '%s\n    {"op": "%s", "drop_percent": %s, "gbps": %s, "gbps_min": %s, "gbps_max": %s, "frames_per_mib": %s}' \
			"$sep" "$op" "$pct" "$g" "$lo" "$hi" "$fpm"
		sep=,
	done < <(cat "$out/loss-summary.tsv" 2>/dev/null)
	printf '\n  ],\n  "idle_engine_cpu_percent": %s,\n' "$idle"
	printf '  "many_qp": %s,\n' "$(cat "$out/manyqp.json" 2>/dev/null || echo null)"
	printf '  "microbench": %s\n}\n' "$(cat "$out/microbench.json")"
} > "$out/results.json"
echo "results: $out/results.json"
