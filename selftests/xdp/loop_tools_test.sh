#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Loopback with the tools (issue #16): roxe-pingpong and roxe-perf server and
# client on one host, in one network namespace: the server on one
# interface, the client on another (two processes cannot share an
# interface's AF_XDP queues), the client connecting to the server's
# address, which is the host's own. The two interfaces are the two ends of
# one veth pair, both in the namespace. Over AF_XDP a frame for the other
# interface's address leaves towards that interface's MAC (as the kernel's
# rdma_translate_ip answers ib_core) and crosses the link; over the UDP
# backend the kernel delivers it locally. ROXE_TRACE reaches the engines
# through the tools (libroxe reads no environment).
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

. "$(dirname "$(readlink -f "$0")")/ksft_lib.sh"
bin=${ROXE_BIN:-$top/build/bin}
ns=lt$$ x=lt$$x y=lt$$y

ksft_need_root
[ -x "$bin/roxe-perf" ] || { log "FAIL: missing: $bin/roxe-perf not built"; exit $KSFT_FAIL; }
. "$top/tools/scripts/netns.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"; ip netns del $ns 2>/dev/null || true' EXIT
ip netns add $ns
ip -n $ns link add $x numtxqueues 2 numrxqueues 2 type veth peer name $y numtxqueues 2 numrxqueues 2
ip -n $ns addr add 10.97.0.1/24 dev $x
ip -n $ns addr add 10.97.0.2/24 dev $y
ip -n $ns link set lo up
ip -n $ns link set $x up
ip -n $ns link set $y up

fails=0
# run TOOL "SERVER ARGS" "CLIENT ARGS": server on x, client on y to x's address
run() {
	local tool=$1 sargs=$2 cargs=$3 src=0 crc=0
	# shellcheck disable=SC2086 # the options, split on purpose
	ip netns exec $ns timeout 60 "$bin/$tool" $sargs --netdev $x >"$out/server" 2>&1 &
	local server=$!
	if ! netns_wait_listen $ns 18515; then
		log "FAIL: $tool server \"$sargs\" did not start"; cat "$out/server"
		fails=$((fails + 1)); wait $server || true; return
	fi
	# shellcheck disable=SC2086
	ip netns exec $ns timeout 60 "$bin/$tool" $cargs --netdev $y 10.97.0.1 >"$out/client" 2>&1 || crc=$?
	wait $server || src=$?
	if [ $crc = 0 ] && [ $src = 0 ]; then
		log "ok: $tool $cargs: $(grep -E '^ [0-9]+ +[0-9]+ |bytes in' "$out/client" | tail -n1 | tr -s ' \t' ' ')"
		return
	fi
	log "FAIL: $tool client \"$cargs\" exit $crc, server \"$sargs\" exit $src"
	sed 's/^/#   client: /' "$out/client" | tail -n 8
	sed 's/^/#   server: /' "$out/server" | tail -n 8
	fails=$((fails + 1))
}

run roxe-pingpong "-c -n 200" "-c -n 200"
run roxe-pingpong "-e -c -n 100" "-e -c -n 100"
run roxe-perf "write bw" "write bw -n 2000 --verify"
run roxe-perf "read bw" "read bw -n 1000 --verify"
run roxe-perf "send lat" "send lat -n 500 --verify"
run roxe-perf "atomic bw" "atomic bw -n 1000 --verify"
run roxe-perf "send bw -B udp" "send bw -B udp -n 1000 --verify"
run roxe-pingpong "-c -n 100 -B udp" "-c -n 100 -B udp"
# roxe(7)'s variables reach libroxe through the tools, libroxe reading none:
# ROXE_TRACE=1 prints each frame as it goes, 2 each engine's last ones when
# the device closes.
for level in 1 2; do
	want=" tx RC_SEND_"
	[ $level = 1 ] || want=" last [0-9]* frames:"
	ROXE_TRACE=$level run roxe-pingpong "-c -n 20 -B udp" "-c -n 20 -B udp"
	if grep -q -- "$want" "$out/client" && grep -q -- "$want" "$out/server"; then
		log "ok: ROXE_TRACE=$level: both ends print '$want' lines"
	else
		log "FAIL: ROXE_TRACE=$level: no '$want' line from one end"
		fails=$((fails + 1))
	fi
done
[ $fails = 0 ] || { log "$fails failed"; exit $KSFT_FAIL; }
exit $KSFT_PASS
