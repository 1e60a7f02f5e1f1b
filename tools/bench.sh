#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make bench: what the tools measure today, side by side in one run on one
# veth pair between two network namespaces.
#
#   1. RC ping-pong round trip, roxe over AF_XDP vs roxe over UDP sockets,
#      8 B and 4 KiB messages (roxe-pingpong -e: applications sleep on CQ
#      events, the engines spin 50 us then sleep);
#   2. CPU an idle engine burns: a device open, a QP waiting, 3 s;
#   3. the per-frame hot paths (roxe-microbench: ICRC, parse, build).
#
# Results: a table on stdout and build/bench/results.json. Bandwidth sweeps,
# the raw AF_XDP and kernel TCP baselines and plots need roxe-perf, which
# is still to be written.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
bin=$top/build/bin
out=$top/build/bench
name=roxebench
a=$name-a b=$name-b
iters=${ROXE_BENCH_ITERS:-2000}

[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (network namespaces, XDP)" >&2; exit 1; }
mkdir -p "$out"
. "$top/tools/netns.sh"
netns_down "$name"
netns_up "$name" >/dev/null

# usec/iter of one roxe-pingpong run: backend size
pingpong() {
	local backend=$1 size=$2 server
	ip netns exec "$b" "$bin/roxe-pingpong" -d "$b" -B "$backend" -e -s "$size" -n "$iters" \
		> "$out/server.log" 2>&1 &
	server=$!
	netns_wait_listen "$b" 18515
	ip netns exec "$a" "$bin/roxe-pingpong" -d "$a" -B "$backend" -e -s "$size" -n "$iters" \
		10.99.0.2 > "$out/client.log" 2>&1
	wait "$server"
	awk '/usec\/iter/ { print $(NF-1) }' "$out/client.log"
}

# Percent of one core an idle engine used over 3 s (its process, in fact:
# the pingpong server waits in accept() with its device open).
idle_cpu() {
	local pid ticks0 ticks1 hz
	hz=$(getconf CLK_TCK)
	ip netns exec "$b" "$bin/roxe-pingpong" -d "$b" -p 18600 > /dev/null 2>&1 &
	pid=$!
	sleep 1		# past start-up
	ticks0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	sleep 3
	ticks1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	kill "$pid"; wait "$pid" 2>/dev/null || true
	awk -v d=$((ticks1 - ticks0)) -v hz="$hz" 'BEGIN { printf "%.2f", 100 * d / hz / 3 }'
}

echo "roxe bench: $(uname -r), $(nproc) cores, $iters round trips per figure"
declare -A lat
for backend in afxdp udp; do
	for size in 8 4096; do
		lat[$backend,$size]=$(pingpong "$backend" "$size")
	done
done
idle=$(idle_cpu)
"$bin/roxe-microbench" --json > "$out/microbench.json"

printf '\nRC ping-pong round trip (usec/iter, lower is better)\n'
printf '  %-8s %12s %12s %16s\n' size afxdp udp 'udp / afxdp'
for size in 8 4096; do
	printf '  %-8s %12s %12s %16s\n' "$size" "${lat[afxdp,$size]}" "${lat[udp,$size]}" \
		"$(awk -v u="${lat[udp,$size]}" -v x="${lat[afxdp,$size]}" 'BEGIN { printf "%.2f", u / x }')"
done
printf '\nidle engine: %s%% of a core (target: < 1%%)\n' "$idle"
printf 'per-frame hot paths: %s\n' "$out/microbench.json"

cat > "$out/results.json" <<EOF
{
  "kernel": "$(uname -r)", "cores": $(nproc), "iters": $iters,
  "pingpong_usec_per_iter": {
    "afxdp": { "8": ${lat[afxdp,8]}, "4096": ${lat[afxdp,4096]} },
    "udp": { "8": ${lat[udp,8]}, "4096": ${lat[udp,4096]} }
  },
  "idle_engine_cpu_percent": $idle,
  "microbench": $(cat "$out/microbench.json")
}
EOF
echo "results: $out/results.json"
