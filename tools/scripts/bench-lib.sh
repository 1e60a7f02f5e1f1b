#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# bench-lib.sh: the baselines of make bench, as shell functions that print
# one machine-readable line each (numbers separated by spaces, nothing else
# on stdout; messages go to stderr, tool logs to $BENCH_OUT/*.log).
#
#   raw_bw BACKEND SIZE [SECONDS]     -> "gbps mpps"        roxe-rawperf bw
#   raw_lat BACKEND SIZE [ITERS [ARGS]] -> "median_us p99_us" roxe-rawperf lat
#                                        (ARGS: more of its options, e.g. -k 2)
#   tcp_latency NS_SERVER NS_CLIENT ADDR SIZE [SECONDS]
#                                     -> "median_us p99_us" sockperf ping-pong --tcp
#   tcp_latency_spin (same arguments) -> the same, both ends spinning on
#                                        nonblocking sockets (as roxe-rawperf lat)
#   tcp_bandwidth NS_SERVER NS_CLIENT ADDR [SIZE] [SECONDS]
#                                     -> "gbps"             iperf3, one TCP stream
#   raw_sweep BACKEND SIZE...         -> TSV rows: raw-BACKEND bytes gbps mpps
#   tcp_sweep NS_SERVER NS_CLIENT ADDR SIZE...
#                                     -> TSV rows: tcp bytes gbps mpps
#   bench_plot TSV [OUTDIR]           -> OUTDIR/bandwidth.png and msgrate.png
#   bench_busy                        -> percent of all CPUs busy over 1 s
#
# Latencies are ROUND TRIPS in microseconds, everywhere (sockperf runs with
# --full-rtt; halve them for perftest's t_typical or sockperf's default
# "latency"). gbps counts payload (message) bytes, as perftest and iperf3
# do; mpps is messages (frames, or iperf3 writes) per second, in millions.
# BACKEND is afxdp or udp; SIZE is payload bytes.
#
# The raw_* functions run roxe-rawperf between the two hosts of a
# tools/scripts/netns.sh topology that must be up: server on $BENCH_NAME-b,
# client on $BENCH_NAME-a (interfaces of the same names, 10.99.0.1 -> .2).
# The tcp_* functions take the namespaces and the server's address.
#
# Settings (environment, with defaults):
#   BENCH_NAME      the netns.sh topology name (required by raw_*)
#   BENCH_BIN       build/bin          BENCH_OUT   build/bench (logs)
#   BENCH_RAW_PORT  18520 (roxe-rawperf control)
#   BENCH_TCP_PORT  18530 (sockperf; iperf3 uses BENCH_TCP_PORT + 1)
#   BENCH_RAW_SECONDS 2   BENCH_LAT_ITERS 100000   BENCH_TCP_SECONDS 3
#   BENCH_REPEAT    1: run each figure N times, report the median run
#                   (by its first number); sweeps use it too
#
# Example (as root):
#   . tools/scripts/netns.sh; . tools/scripts/bench-lib.sh
#   BENCH_NAME=rawb; netns_up rawb --mtu 4200
#   raw_bw afxdp 1024          # 4.512 0.551
#   raw_lat udp 8              # 9.85 13.20
#   tcp_latency rawb-b rawb-a 10.99.0.2 14
#
# Run directly, `tools/scripts/bench-lib.sh sweep [NAME]` builds its own topology
# (default name rawb, MTU 4200), writes $BENCH_OUT/sweep.tsv from raw afxdp,
# raw udp and tcp runs over 64 B .. 4 KiB and plots it.

_bench_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${BENCH_BIN:=$_bench_top/build/bin}"
: "${BENCH_OUT:=$_bench_top/build/bench}"
: "${BENCH_RAW_PORT:=18520}"
: "${BENCH_TCP_PORT:=18530}"
: "${BENCH_RAW_SECONDS:=2}"
: "${BENCH_LAT_ITERS:=100000}"
: "${BENCH_TCP_SECONDS:=3}"

_bench_err() { echo "bench: $*" >&2; }

# Kill a background job started here (by its pid) and reap it.
_bench_stop() {
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

# Waits for a TCP listener like netns_wait_listen (tools/scripts/netns.sh), which
# it uses when sourced; 1 if none came.
_bench_wait_listen() {
	if declare -F netns_wait_listen >/dev/null; then
		netns_wait_listen "$1" "$2"
		return
	fi
	local _
	for _ in $(seq 100); do
		ip netns exec "$1" ss -Hltn "sport = :$2" | grep -q . && return 0
		sleep 0.1
	done
	return 1
}

# One roxe-rawperf run: MODE BACKEND SIZE ARGS...; the client's JSON on stdout.
_raw_run() {
	local mode=$1 backend=$2 size=$3 server rc tag
	shift 3
	: "${BENCH_NAME:?bench: BENCH_NAME (the netns.sh topology) is not set}"
	# _raw_tag (the caller's local): its own logs, e.g. -k 2's beside -k 1's
	tag=$BENCH_OUT/rawperf-$mode-$backend-$size${_raw_tag:+-$_raw_tag}
	mkdir -p "$BENCH_OUT"
	ip netns exec "$BENCH_NAME-b" "$BENCH_BIN/roxe-rawperf" --netdev "$BENCH_NAME-b" \
		-B "$backend" -p "$BENCH_RAW_PORT" --json "$mode" > "$tag.server.log" 2>&1 &
	server=$!
	if ! _bench_wait_listen "$BENCH_NAME-b" "$BENCH_RAW_PORT"; then
		_bench_err "roxe-rawperf server did not start (see $tag.server.log)"
		_bench_stop "$server"
		return 1
	fi
	ip netns exec "$BENCH_NAME-a" "$BENCH_BIN/roxe-rawperf" --netdev "$BENCH_NAME-a" \
		-B "$backend" -p "$BENCH_RAW_PORT" -s "$size" --json "$@" "$mode" 10.99.0.2 \
		> "$tag.client.log" 2>&1
	rc=$?
	# A client that failed before it met the server leaves it waiting.
	if [ "$rc" -ne 0 ]; then
		_bench_stop "$server"
	else
		wait "$server" || rc=1
	fi
	if [ "$rc" -ne 0 ]; then
		_bench_err "roxe-rawperf $mode $backend $size failed (see $tag.*.log)"
		return 1
	fi
	grep '^{' "$tag.client.log"
}

# Run a measurement BENCH_REPEAT times (default 1) and print the run whose
# first number is the median (the upper one of an even count); failed runs
# are left out, 1 if all failed.
_bench_repeat() {
	local n=${BENCH_REPEAT:-1} i out lines=()
	for ((i = 0; i < n; i++)); do
		out=$("$@") && lines+=("$out")
	done
	[ ${#lines[@]} -gt 0 ] || return 1
	printf '%s\n' "${lines[@]}" | sort -g -k1,1 | sed -n "$(( ${#lines[@]} / 2 + 1 ))p"
}

_raw_bw_once() {
	local json
	json=$(_raw_run bw "$1" "$2" -D "${3:-$BENCH_RAW_SECONDS}") || return 1
	jq -r '"\(.gbps) \(.mpps)"' <<< "$json"
}

_raw_lat_once() {
	local backend=$1 size=$2 iters=${3:-$BENCH_LAT_ITERS} json _raw_tag
	shift $(($# < 3 ? $# : 3))
	_raw_tag=$(printf '%s' "$*" | tr -dc 'A-Za-z0-9')	# -k 2: k2
	json=$(_raw_run lat "$backend" "$size" -n "$iters" "$@") || return 1
	jq -r '"\(.rtt_us.median) \(.rtt_us.p99)"' <<< "$json"
}

# raw_bw BACKEND SIZE [SECONDS] -> "gbps mpps" as received by the server.
raw_bw() { _bench_repeat _raw_bw_once "$@"; }

# raw_lat BACKEND SIZE [ITERS [ARGS]] -> "median_us p99_us" of the round trip.
raw_lat() { _bench_repeat _raw_lat_once "$@"; }

# tcp_latency NS_SERVER NS_CLIENT ADDR SIZE [SECONDS] -> "median_us p99_us"
# of the round trip: sockperf ping-pong over TCP, both ends blocking in
# recv() (sockperf's default). sockperf's messages carry a 14-byte header:
# smaller sizes are raised to 14 (said on stderr). In a VM every blocking
# round trip pays two wake-ups from idle: on this project's 2-core VM that
# is 15-70 us against 8 us spinning, depending on what else runs.
tcp_latency() { _bench_repeat _tcp_latency_once "" "$@"; }

# tcp_latency_spin: the same with nonblocking sockets at both ends, so both
# spin in recv() like roxe-rawperf lat (sockperf --nonblocked).
tcp_latency_spin() { _bench_repeat _tcp_latency_once --nonblocked "$@"; }

_tcp_latency_once() {
	local spin=$1 ns_s=$2 ns_c=$3 addr=$4 size=$5 secs=${6:-$BENCH_TCP_SECONDS} server log
	log=$BENCH_OUT/sockperf-$size${spin:+-spin}.log
	mkdir -p "$BENCH_OUT"
	if [ "$size" -lt 14 ]; then
		_bench_err "sockperf messages are at least 14 bytes: $size B measured as 14 B"
		size=14
	fi
	ip netns exec "$ns_s" sockperf server --tcp -i "$addr" -p "$BENCH_TCP_PORT" ${spin:+"$spin"} \
		> "$BENCH_OUT/sockperf-server.log" 2>&1 &
	server=$!
	if ! _bench_wait_listen "$ns_s" "$BENCH_TCP_PORT"; then
		_bench_err "sockperf server did not start (see $BENCH_OUT/sockperf-server.log)"
		_bench_stop "$server"
		return 1
	fi
	ip netns exec "$ns_c" sockperf ping-pong --tcp -i "$addr" -p "$BENCH_TCP_PORT" \
		-m "$size" -t "$secs" --full-rtt ${spin:+"$spin"} > "$log" 2>&1
	local rc=$?
	_bench_stop "$server"
	# sockperf colours some lines: strip escapes before reading.
	sed 's/\x1b\[[0-9;]*m//g' "$log" | awk -v rc=$rc '
		/percentile 50.000 =/ { med = $NF }
		/percentile 99.000 =/ { p99 = $NF }
		END { if (rc || med == "" || p99 == "") exit 1; print med, p99 }' ||
		{ _bench_err "sockperf failed (see $log)"; return 1; }
}

# tcp_bandwidth NS_SERVER NS_CLIENT ADDR [SIZE] [SECONDS] -> "gbps" received:
# iperf3, one TCP stream, SIZE bytes per write (iperf3's -l; default its
# own 128 KiB).
tcp_bandwidth() { _bench_repeat _tcp_bandwidth_once "$@"; }

_tcp_bandwidth_once() {
	local ns_s=$1 ns_c=$2 addr=$3 size=${4:-} secs=${5:-$BENCH_TCP_SECONDS} server log rc
	local port=$((BENCH_TCP_PORT + 1))
	log=$BENCH_OUT/iperf3-${size:-default}.json
	mkdir -p "$BENCH_OUT"
	ip netns exec "$ns_s" iperf3 -s -1 -B "$addr" -p "$port" \
		> "$BENCH_OUT/iperf3-server.log" 2>&1 &
	server=$!
	if ! _bench_wait_listen "$ns_s" "$port"; then
		_bench_err "iperf3 server did not start (see $BENCH_OUT/iperf3-server.log)"
		_bench_stop "$server"
		return 1
	fi
	ip netns exec "$ns_c" iperf3 -c "$addr" -p "$port" -t "$secs" -J \
		${size:+-l "$size"} > "$log" 2>&1
	rc=$?
	wait "$server" 2>/dev/null
	if [ $rc -ne 0 ]; then
		_bench_err "iperf3 failed (see $log)"
		return 1
	fi
	jq -r '.end.sum_received.bits_per_second / 1e9 * 1000 | round / 1000' "$log"
}

# raw_sweep BACKEND SIZE... -> one TSV row per size (failed sizes are left
# out and said on stderr).
raw_sweep() {
	local backend=$1 size r
	shift
	for size in "$@"; do
		r=$(raw_bw "$backend" "$size") || continue
		printf 'raw-%s\t%s\t%s\t%s\n' "$backend" "$size" "${r% *}" "${r#* }"
	done
}

# tcp_sweep NS_SERVER NS_CLIENT ADDR SIZE... -> TSV rows; mpps is the rate
# of SIZE-byte writes the stream carried.
tcp_sweep() {
	local ns_s=$1 ns_c=$2 addr=$3 size g
	shift 3
	for size in "$@"; do
		g=$(tcp_bandwidth "$ns_s" "$ns_c" "$addr" "$size") || continue
		printf 'tcp\t%s\t%s\t%s\n' "$size" "$g" \
			"$(awk -v g="$g" -v s="$size" 'BEGIN { printf "%.4f", g * 1e3 / 8 / s }')"
	done
}

# bench_plot TSV [OUTDIR]: bandwidth.png (Gb/s) and msgrate.png (Mpps).
bench_plot() {
	local tsv=$1 dir=${2:-$(dirname "$1")}
	gnuplot -e "tsv='$tsv'; outdir='$dir'" "$_bench_top/tools/scripts/bench-plot.gp"
}

# Percent of all CPUs busy over one second (user, system, interrupts,
# steal): anything well above 0 while nothing of ours runs means other work
# shares the machine and the figures will be low.
bench_busy() {
	local a b
	a=$(awk '/^cpu / { print $2+$3+$4+$7+$8+$9, $5+$6 }' /proc/stat)
	sleep 1
	b=$(awk '/^cpu / { print $2+$3+$4+$7+$8+$9, $5+$6 }' /proc/stat)
	awk -v a="$a" -v b="$b" 'BEGIN {
		split(a, x, " "); split(b, y, " ");
		busy = y[1] - x[1]; idle = y[2] - x[2];
		printf "%.0f\n", busy + idle ? 100 * busy / (busy + idle) : 0 }'
}

# --- run directly ---------------------------------------------------------
_bench_sweep_main() {
	local name=${1:-rawb} sizes="64 128 256 512 1024 2048 3780 4096" busy
	local tsv=$BENCH_OUT/sweep.tsv
	[ "$(id -u)" -eq 0 ] || { _bench_err "needs root (network namespaces, XDP)"; return 1; }
	. "$_bench_top/tools/scripts/netns.sh"
	BENCH_NAME=$name
	netns_down "$name"
	netns_up "$name" --mtu 4200 || return 1
	mkdir -p "$BENCH_OUT"
	busy=$(bench_busy)
	[ "$busy" -le 10 ] || _bench_err "warning: ${busy}% of the CPUs busy before we start"
	# shellcheck disable=SC2086
	{
		printf '# series\tbytes\tgbps\tmpps\n'
		raw_sweep afxdp $sizes
		raw_sweep udp $sizes
		tcp_sweep "$name-b" "$name-a" 10.99.0.2 $sizes
	} > "$tsv.tmp" && mv "$tsv.tmp" "$tsv"
	cat "$tsv"
	bench_plot "$tsv" "$BENCH_OUT"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -u
	case ${1:-help} in
	sweep) shift; _bench_sweep_main "$@" ;;
	*) awk 'NR >= 4 && !/^#/ { exit } NR >= 4 { sub(/^# ?/, ""); print }' "$0"
	   [ "${1:-help}" = help ] || [ "${1:-}" = -h ] || [ "${1:-}" = --help ] || exit 2 ;;
	esac
fi
