#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# bench-frame-ir.sh: instructions per frame on the send path, counted by
# callgrind (exact and repeatable, unlike the cpu-clock profiles of
# bench-budget.sh). Builds tools/scripts/frame-ir.c against build/lib
# (make first) and runs each case under valgrind --tool=callgrind, one
# thread, polled devices (libroxe.a linked in: the loop wire is not
# exported by the shared library):
#   wire-send   RC SEND 8 B over a loop wire
#   wire-write  RC WRITE 64 KiB over a loop wire, 16 frames of 4 KiB
#   loop-send   RC SEND 8 B between two QPs of one device: looped frames
#   loop-ud     UD SEND 8 B, looped
#   udp-ud      UD SEND 8 B through the UDP port (to 127.0.0.2)
#   xdp-write   RC WRITE 64 KiB over AF_XDP (copy mode, veth, MTU 4096):
#               roxe-perf write bw -P between two namespaces
#               (tools/scripts/netns.sh), the client under callgrind
#   xdp-write-umem  the same from and to MRs in the UMEM (--umem-mr):
#               the payload leaves in place
# The loop-* and udp-* cases run in a network namespace of their own
# (unshare -n: root), on its lo; the xdp-* ones in a pair of them.
#
# A frame's send path is what roxe_requester() runs for it (WQE to frame:
# headers, payload copy and ICRC, the commit, a looped frame's hand-over
# to its receiver) plus, for udp-ud, the port's udp_tx_submit(); the
# columns are the instructions (Ir) each runs, callees included, and their
# sum divided by the frames sent; for xdp-* the port's columns are
# afxdp_tx_submit and reap_completions (the completion ring: an in-place
# frame has more descriptors to queue and to take back). Usage: tools/scripts/bench-frame-ir.sh [N] (messages a case,
# default 2000); BENCH_IR_CASES picks cases. Output in build/bench/ir/.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/bench/ir
n=${1:-2000}
cases=${BENCH_IR_CASES:-wire-send wire-write loop-send loop-ud udp-ud xdp-write xdp-write-umem}

command -v valgrind > /dev/null || { echo "bench-frame-ir: needs valgrind" >&2; exit 1; }
[ -e "$top/build/lib/libroxe.so" ] || { echo "bench-frame-ir: make first" >&2; exit 1; }
mkdir -p "$out"
cc -O2 -g -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -I"$top/include" -I"$top/include/private" \
	-I"$top/build/include" \
	-o "$out/frame-ir" "$top/tools/scripts/frame-ir.c" \
	"$top/build/lib/libroxe.a" -lxdp -lbpf -lelf -lz -ldeflate -lpcap -lnl-route-3 -lnl-3 -lpthread

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

# One xdp-* case, the client's whole run collected: prints "frames
# requester submit reap" (frames: the data frames roxe_requester committed,
# retransmissions included).
xdp_case() {
	local f=$out/$1.callgrind opt=() name=roxeir sp
	[ "$1" = xdp-write-umem ] && opt=(--umem-mr)
	. "$top/tools/scripts/netns.sh"
	netns_down "$name"
	netns_up "$name" --mtu 9000 > /dev/null
	ip netns exec "$name-b" "$top/build/bin/roxe-perf" write bw --netdev "$name-b" -P "${opt[@]}" \
		> "$out/$1.server.log" 2>&1 &
	sp=$!
	sleep 1
	ip netns exec "$name-a" valgrind --tool=callgrind --callgrind-out-file="$f" -q \
		"$top/build/bin/roxe-perf" write bw --netdev "$name-a" -P "${opt[@]}" -s 65536 -m 4096 \
		-n $((n / 2)) 10.99.0.2 > "$out/$1.client.log" 2>&1 || true
	wait "$sp" || true
	netns_down "$name"
	callgrind_annotate --tree=caller --inclusive=yes "$f" 2>/dev/null | awk '
		/< .*requester.c:send_packet \(/ { calls = $0; sub(/.*\(/, "", calls); sub(/x\).*/, "", calls) }
		/^ *[0-9,]+ .*\* .*:roxe_engine_tx_commit( |$)/ { fr = calls }
		/^ *[0-9,]+ .*\* .*:roxe_requester( |$)/ { v = $1; gsub(",", "", v); req = v }
		/^ *[0-9,]+ .*\* .*:afxdp_tx_submit( |$)/ { v = $1; gsub(",", "", v); sub_ = v }
		/^ *[0-9,]+ .*\* .*:reap_completions( |$)/ { v = $1; gsub(",", "", v); reap = v }
		END { gsub(",", "", fr); print fr + 0, req + 0, sub_ + 0, reap + 0 }'
}

printf '%-14s %7s %12s %12s %10s %10s\n' case frames requester port_submit port_reap Ir/frame
for c in $cases; do
	if [ "${c#xdp-}" != "$c" ]; then
		read -r frames req sub reap < <(xdp_case "$c")
		awk -v c="$c" -v fr="$frames" -v r="$req" -v s="$sub" -v p="$reap" \
			'BEGIN { printf "%-14s %7d %12d %12d %10d %10.0f\n", c, fr, r, s, p,
				 fr ? (r + s + p) / fr : 0 }'
		continue
	fi
	read -r frames req < <(collect "$c" roxe_requester)
	sub=0
	[ "$c" = udp-ud ] && read -r _ sub < <(collect "$c" udp_tx_submit)
	awk -v c="$c" -v fr="$frames" -v r="$req" -v s="$sub" \
		'BEGIN { printf "%-14s %7d %12d %12d %10s %10.0f\n", c, fr, r, s, "-", (r + s) / fr }'
done
