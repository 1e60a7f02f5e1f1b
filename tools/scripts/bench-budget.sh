#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# bench-budget.sh: where each frame's nanoseconds go. Profiles both ends of
#   roxe RC WRITE 64 KiB     roxe-perf write bw -P, path MTU 4096 (16 frames
#                            of 4 KiB a message)
#   raw AF_XDP 4 KiB frames  roxe-rawperf bw (the same frame size, no
#                            transport: no ICRC, no copy, no ACKs)
#   roxe RC SEND 8 B         roxe-perf send lat -P (ping-pong)
#   raw AF_XDP 8 B           roxe-rawperf lat
# with `perf record -g -e cpu-clock` attached to each end in the steady state
# (after a warm-up), sorts every sample into a stage of the frame's path
# (tools/scripts/budget-classify.awk) and prints CPU nanoseconds per 4 KiB
# data frame (WRITE) and per round trip (SEND), sender and receiver (client
# and server) side by side with the raw path's.
#
# On veth the sender's CPU does the receiver's kernel work too: the peer's
# veth receive, its XDP program and the copy into its UMEM run inside the
# sender's sendto(). A side's CPU time includes its idle polling (both ends
# spin): "sum" is that side's CPU per frame, "wall" the time per frame or
# round trip the run measured.
#
# Usage (root): tools/scripts/bench-budget.sh [SECONDS]   (default 2: the
# profiled window of each case). Tables on stdout; build/bench/budget.tsv
# (case side stage ns_per_unit). make bench runs it at its end.
# BUDGET_REUSE=1 tabulates the profiles of the last run again; BUDGET_CASES
# (default "write rawbw send rawlat") runs only the cases it names;
# BUDGET_WRITE_OPTS adds roxe-perf options to both ends of the WRITE case
# (--umem-mr: from and to MRs in the UMEM, docs/benchmark-frame-budget.md).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
bin=$top/build/bin
out=${BENCH_OUT:-$top/build/bench}
win=${1:-2}
name=${BUDGET_NAME:-roxebudget}
a=$name-a b=$name-b
classify=$top/tools/scripts/budget-classify.awk
warm=1

[ "$(id -u)" -eq 0 ] || { echo "bench-budget: needs root (network namespaces, XDP, perf)" >&2; exit 1; }
command -v perf > /dev/null || { echo "bench-budget: needs perf (linux-perf)" >&2; exit 1; }
mkdir -p "$out/budget"
. "$top/tools/scripts/netns.sh"
netns_down "$name"
netns_up "$name" --mtu 9000 > /dev/null
trap 'netns_down "$name"' EXIT

# Profile PID for the window into FILE.
profile() {
	perf record -q -e cpu-clock -c 100000 -g -p "$1" -o "$2" -- sleep "$win" \
		> /dev/null 2>&1
}

# ns of CPU by stage for a perf.data, divided by the units (frames or round
# trips) the run did over the profile's own window: "stage<TAB>ns" lines.
per_unit() {
	local data=$1 rate=$2 span
	span=$(perf report -i "$data" --header-only 2>/dev/null |
		awk -F: '/time of first sample/ { f = $2 } /time of last sample/ { l = $2 }
			 END { printf "%.6f", l - f }')
	perf script -i "$data" -F period,ip,sym,dso 2>/dev/null | awk -f "$classify" |
		awk -v span="$span" -v rate="$rate" -F '\t' \
			'{ u = span * rate; printf "%s\t%.0f\n", $1, (u > 0 ? $2 / u : 0) }'
}

# One case: CASE SERVER_CMD... -- CLIENT_CMD...; the client's output in
# $out/budget/CASE.json, profiles in CASE.{server,client}.data.
run_case() {
	local c=$1 srv=() cli=() sp cp p1 p2
	shift
	case " ${BUDGET_CASES:-write rawbw send rawlat} " in
	*" $c "*) ;;
	*) rm -f "$out/budget/$c".*; return 0;;
	esac
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	ip netns exec "$b" "${srv[@]}" > "$out/budget/$c.server.log" 2>&1 &
	sp=$!
	sleep 1
	ip netns exec "$a" "${cli[@]}" > "$out/budget/$c.json" 2> "$out/budget/$c.client.log" &
	cp=$!
	sleep "$warm"
	profile "$sp" "$out/budget/$c.server.data" &
	p1=$!
	profile "$cp" "$out/budget/$c.client.data" &
	p2=$!
	wait "$p1" "$p2" || true
	if ! wait "$cp"; then
		echo "bench-budget: $c failed (see $out/budget/$c.*)" >&2
		kill "$sp" 2> /dev/null || true
		wait "$sp" 2> /dev/null || true
		return 1
	fi
	wait "$sp" || true
}

if [ -z "${BUDGET_REUSE:-}" ]; then
dur=$(awk -v w="$win" -v x="$warm" 'BEGIN { print int(w + x + 4) }')
perf=$bin/roxe-perf
# shellcheck disable=SC2086
run_case write "$perf" write bw --netdev "$b" -P ${BUDGET_WRITE_OPTS:-} -- \
	"$perf" write bw --netdev "$a" -P ${BUDGET_WRITE_OPTS:-} -s 65536 -m 4096 -D "$dur" --json \
	10.99.0.2 || true
run_case rawbw "$bin/roxe-rawperf" --netdev "$b" --json bw -- \
	"$bin/roxe-rawperf" --netdev "$a" -s 4096 -D "$dur" --json bw 10.99.0.2 || true
# round trips for about the run's length (a short one ends the profile early:
# the window is the profile's own)
n=$(awk -v d="$dur" 'BEGIN { print int(d * 60000) }')
warm=0.5
run_case send "$perf" send lat --netdev "$b" -P -- \
	"$perf" send lat --netdev "$a" -P -s 8 -m 4096 -n "$n" --json 10.99.0.2 || true
run_case rawlat "$bin/roxe-rawperf" --netdev "$b" --json lat -- \
	"$bin/roxe-rawperf" --netdev "$a" -s 8 -n "$n" --json lat 10.99.0.2 || true
fi

# units per second: 4 KiB data frames (WRITE: 16 a message; raw: frames
# received) and round trips (roxe-perf reports half the round trip)
# (a failed case leaves 0: its column shows "-")
num() { sed -n '/^{/,$p' "$out/budget/$1.json" 2> /dev/null | jq -r "$2 // 0" 2> /dev/null | grep . || echo 0; }
r_write=$(num write '.results[-1].mpps * 1e6 * 16')
r_rawbw=$(num rawbw '.received.mpps * 1e6')
# raw: the sender's work is per frame sent (frames the receiver dropped too)
r_rawbw_tx=$(num rawbw '.sent.mpps * 1e6')
rtt_send=$(num send '.results[-1].usec.avg * 2')
rtt_raw=$(num rawlat '.rtt_us.mean')
inv() { awk -v t="$1" -v k="$2" 'BEGIN { print (t > 0 ? k / t : 0) }'; }
r_send=$(inv "$rtt_send" 1e6)
r_rawlat=$(inv "$rtt_raw" 1e6)

tsv=$out/budget.tsv
: > "$tsv"
for c in write rawbw send rawlat; do
	for side in client server; do
		case $c$side in
		write*) rate=$r_write;;
		rawbwclient) rate=$r_rawbw_tx;;
		rawbw*) rate=$r_rawbw;;
		send*) rate=$r_send;;
		rawlat*) rate=$r_rawlat;;
		esac
		if [ ! -s "$out/budget/$c.$side.data" ] || [ "$rate" = 0 ]; then
			continue
		fi
		per_unit "$out/budget/$c.$side.data" "$rate" |
			awk -F '\t' -v c="$c" -v s="$side" '{ printf "%s\t%s\t%s\t%s\n", c, s, $1, $2 }' >> "$tsv"
	done
done

stages="k_tx k_rx_veth k_xdp k_rx_umem k_rx_syscall k_other rx_ring parse icrc transport copy completion tx_build tx_kick loop other"
label() {
	case $1 in
	k_tx) echo "tx: sendto, skb, veth xmit (kernel)";;
	k_rx_veth) echo "rx: veth NAPI, skb to xdp (kernel)";;
	k_xdp) echo "rx: roxe's XDP program";;
	k_rx_umem) echo "rx: AF_XDP redirect, copy to UMEM (k)";;
	k_rx_syscall) echo "rx: poll/recvfrom (kernel)";;
	k_other) echo "other kernel (irq, timers, faults)";;
	rx_ring) echo "rx ring, fill ring (user)";;
	parse) echo "parse, validate";;
	icrc) echo "ICRC (CRC-32: VPCLMUL or libdeflate)";;
	transport) echo "transport: req/resp/completer, MR";;
	copy) echo "payload copy (sent: with its CRC)";;
	completion) echo "completion: CQ post and poll";;
	tx_build) echo "tx build: headers, IP csum, ring";;
	tx_kick) echo "tx kick (user side of sendto)";;
	loop) echo "poll loop, clock, app (idle incl.)";;
	other) echo "other user";;
	esac
}
table() {
	local c1=$1 c2=$2 unit=$3 wall1=$4 wall2=$5 st k
	printf '  %-38s %9s %9s %9s %9s\n' "ns of CPU per $unit" "roxe" "roxe" "raw" "raw"
	printf '  %-38s %9s %9s %9s %9s\n' "" sender receiver sender receiver
	for st in $stages; do
		k=${st//_/ }
		printf '  %-38s' "$(label "$st")"
		for cs in "$c1 client" "$c1 server" "$c2 client" "$c2 server"; do
			awk -F '\t' -v c="${cs% *}" -v s="${cs#* }" -v k="$k" \
				'$1 == c && $2 == s && $3 == k { v = $4 } END { printf " %9s", v == "" ? "-" : v }' "$tsv"
		done
		printf '\n'
	done
	printf '  %-38s' "sum (a side's CPU per $unit)"
	for cs in "$c1 client" "$c1 server" "$c2 client" "$c2 server"; do
		awk -F '\t' -v c="${cs% *}" -v s="${cs#* }" \
			'$1 == c && $2 == s && $3 == "total" { v = $4 } END { printf " %9s", v }' "$tsv"
	done
	printf '\n  %-38s %9.0f %9s %9.0f %9s\n' "wall time per $unit (measured)" "$wall1" "" "$wall2" ""
}

printf 'Per-frame budget (bench-budget.sh, %ss profiled per case, perf cpu-clock)\n' "$win"
printf '\nRC WRITE 64 KiB, per 4 KiB data frame; raw AF_XDP 4 KiB frames\n'
table write rawbw "frame" "$(inv "$r_write" 1e9)" "$(inv "$r_rawbw" 1e9)"
printf '\nRC SEND 8 B ping-pong, per round trip; raw AF_XDP 8 B ping-pong\n'
printf '  (sender = client, receiver = server: the one that answers)\n'
table send rawlat "round trip" "$(awk -v t="$rtt_send" 'BEGIN { print t * 1000 }')" \
	"$(awk -v t="$rtt_raw" 'BEGIN { print t * 1000 }')"
echo "budget: $tsv"
