#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# lat-ab.sh: two builds' RC SEND 8 B latency, interleaved, for a bisect or
# a before/after (issue #38):
#
#   lat-ab.sh BUILD_A BUILD_B [ROUNDS]     (BUILD: a tree's build/ folder)
#
# Each round runs `roxe-perf send lat -P -s 8 -n ITERS` over AF_XDP once
# with A and once with B (AB, then BA, ...), on one veth pair between two
# namespaces (MTU 9000, path MTU 4096, as make bench), the client pinned to
# CPU 0 and the server to CPU 1, and prints each one-way median (us; p99 in
# brackets) and B/A. The tx depth is always given: by default both
# definitions, -t 1 (ib_send_lat's: each send also waits for its ACK) and
# -t 16 (reply only). roxe-perf's own default changed from 16 to 1 in
# ec19c8d; a comparison that leaves it to each build's default compares two
# different measurements (issue #38).
#
# Environment: LAT_AB_DEPTHS ("1 16"), LAT_AB_ITERS (20000), LAT_AB_MAX_LOAD
# (0.7: wait until the 1-minute load is below it before each round),
# LAT_AB_LOCK (/tmp/roxe-netns.lock, held while a round runs; empty: none).
# Needs root. The figures are only as good as the machine is idle: on a
# shared VM compare B/A within a round, not figures across runs.
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 BUILD_A BUILD_B [ROUNDS]" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "lat-ab: needs root (network namespaces, XDP)" >&2; exit 1; }
A=$(cd "$1" && pwd) B=$(cd "$2" && pwd) rounds=${3:-3}
depths=${LAT_AB_DEPTHS:-1 16} iters=${LAT_AB_ITERS:-20000}
max_load=${LAT_AB_MAX_LOAD:-0.7} lock=${LAT_AB_LOCK-/tmp/roxe-netns.lock}
for d in "$A" "$B"; do
	[ -x "$d/bin/roxe-perf" ] || { echo "lat-ab: no $d/bin/roxe-perf" >&2; exit 1; }
done
top=$(cd "$(dirname "$0")/../.." && pwd)
name=latab a=latab-a b=latab-b
log=$(mktemp -d /tmp/lat-ab.XXXXXX)
. "$top/tools/scripts/netns.sh"

# the interface option of BUILD's roxe-perf: --netdev, or -d in builds from
# before roxe(7)'s COMMAND LINE convention (a bisect reaches them)
netdev_opt() {
	"$1/bin/roxe-perf" --help > "$log/help" 2>&1 || true
	if grep -- '--netdev' "$log/help" > /dev/null; then echo --netdev; else echo -d; fi
}

# one run: BUILD DEPTH -> "median p99" (one way, us)
one() {
	local srv nd
	nd=$(netdev_opt "$1")
	ip netns exec "$b" taskset -c 1 "$1/bin/roxe-perf" send lat "$nd" "$b" -P -B afxdp \
		> "$log/server" 2>&1 &
	srv=$!
	if ! netns_wait_listen "$b" 18515; then
		kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null
		echo "- -"; return
	fi
	if ! ip netns exec "$a" taskset -c 0 "$1/bin/roxe-perf" send lat "$nd" "$a" -P -B afxdp \
		-s 8 -m 4096 -t "$2" -n "$iters" --json 10.99.0.2 > "$log/json" 2> "$log/client"; then
		kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null
		echo "- -"; return
	fi
	wait "$srv" || true
	jq -r '.results[-1].usec | "\(.typical) \(.p99)"' "$log/json"
}

echo "lat-ab: A $A, B $B; send lat -P -s 8 -n $iters, AF_XDP, one way (us)"
[ -z "$lock" ] || exec 9> "$lock"
for r in $(seq "$rounds"); do
	until awk -v l="$(cut -d' ' -f1 /proc/loadavg)" -v m="$max_load" 'BEGIN { exit !(l < m) }'; do
		sleep 10
	done
	[ -z "$lock" ] || flock 9
	netns_down "$name"
	netns_up "$name" --mtu 9000 > /dev/null
	for t in $depths; do
		if [ $((r % 2)) = 1 ]; then
			ra=$(one "$A" "$t"); rb=$(one "$B" "$t")
		else
			rb=$(one "$B" "$t"); ra=$(one "$A" "$t")
		fi
		printf 'round %d  -t %-3s A %6s [%s]  B %6s [%s]  B/A %s\n' "$r" "$t" \
			"${ra% *}" "${ra#* }" "${rb% *}" "${rb#* }" \
			"$(awk -v x="${ra% *}" -v y="${rb% *}" 'BEGIN { if (x > 0 && y > 0) printf "%.3f", y / x; else print "-" }')"
	done
	netns_down "$name"
	[ -z "$lock" ] || flock -u 9
done
rm -rf "$log"
