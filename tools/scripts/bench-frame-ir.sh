#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# bench-frame-ir.sh: instructions per frame on the send path, counted by
# callgrind (exact and repeatable, unlike the cpu-clock profiles of
# bench-budget.sh). Builds tools/scripts/frame-ir.c against build/lib
# (make first) and runs each case under valgrind --tool=callgrind, one
# thread, polled devices:
#   wire-send   RC SEND 8 B over a loop wire
#   wire-write  RC WRITE 64 KiB over a loop wire, 16 frames of 4 KiB
#   loop-send   RC SEND 8 B between two QPs of one device: looped frames
#   loop-ud     UD SEND 8 B, looped
#   udp-ud      UD SEND 8 B through the UDP port (to 127.0.0.2)
# The loop-* and udp-* cases run in a network namespace of their own
# (unshare -n: root), on its lo.
#
# A frame's send path is what roxe_requester() runs for it (WQE to frame:
# headers, payload copy and ICRC, the commit, a looped frame's hand-over
# to its receiver) plus, for udp-ud, the port's udp_tx_submit(); the
# columns are the instructions (Ir) each runs, callees included, and their
# sum divided by the frames sent. Usage: tools/scripts/bench-frame-ir.sh [N] (messages a case,
# default 2000); BENCH_IR_CASES picks cases. Output in build/bench/ir/.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/bench/ir
n=${1:-2000}
cases=${BENCH_IR_CASES:-wire-send wire-write loop-send loop-ud udp-ud}

command -v valgrind > /dev/null || { echo "bench-frame-ir: needs valgrind" >&2; exit 1; }
[ -e "$top/build/lib/libroxe.so" ] || { echo "bench-frame-ir: make first" >&2; exit 1; }
mkdir -p "$out"
cc -O2 -g -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -I"$top/include" -I"$top/build/include" \
	-o "$out/frame-ir" "$top/tools/scripts/frame-ir.c" \
	-L"$top/build/lib" -Wl,-rpath,"$top/build/lib" -lroxe

# Ir spent in function $2 and what it calls (callgrind collecting only
# there: --toggle-collect), case $1; prints "frames Ir".
collect() {
	local f=$out/$1.$2.callgrind frames
	local vg=(valgrind --tool=callgrind --callgrind-out-file="$f" --toggle-collect="$2"
		  --collect-atstart=no -q)
	local run=("$out/frame-ir" "$1" "$n")

	case $1 in
	wire-*) frames=$("${vg[@]}" "${run[@]}" | awk '/^frames/ { print $2 }');;
	*) frames=$(unshare -n sh -c 'ip link set lo up && exec "$@"' sh "${vg[@]}" "${run[@]}" |
		awk '/^frames/ { print $2 }');;
	esac
	echo "$frames $(awk '/^summary:/ { print $2 }' "$f")"
}

printf '%-11s %7s %12s %12s %10s\n' case frames requester port_submit Ir/frame
for c in $cases; do
	read -r frames req < <(collect "$c" roxe_requester)
	sub=0
	[ "$c" = udp-ud ] && read -r _ sub < <(collect "$c" udp_tx_submit)
	awk -v c="$c" -v fr="$frames" -v r="$req" -v s="$sub" \
		'BEGIN { printf "%-11s %7d %12d %12d %10.0f\n", c, fr, r, s, (r + s) / fr }'
done
