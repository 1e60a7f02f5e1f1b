#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# roxe-perf between two hosts over roxe's fast path (XDP + AF_XDP), and over
# the UDP backend: every test and mode with --verify (the receiving end
# checks every byte it can see; any mismatch fails the run), multi-QP,
# sweeps, -D, events, polled engines; the perftest 4.5 exchange (--perftest
# at both ends); and the errors a user meets: mismatched tests, bad options.
# Timings are printed, never judged (they belong to make bench).
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

. "$(dirname "$(readlink -f "$0")")/ksft_lib.sh"
perf=$top/build/bin/roxe-perf
name=pf$$
name=${name:0:12}
a=$name-a b=$name-b

ksft_need_root
[ -x "$perf" ] || { log "FAIL: missing: $perf not built"; exit $KSFT_FAIL; }
. "$top/tools/scripts/netns.sh"
netns_up "$name" --mtu 9000 >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"; netns_down $name' EXIT

fails=0 n=0
# run "SERVER ARGS" "CLIENT ARGS" [want: ok | fail]: one server/client pair
run() {
	local sargs=$1 cargs=$2 want=${3:-ok} src=0 crc=0 rows
	n=$((n + 1))
	# shellcheck disable=SC2086 # the options, split on purpose
	ip netns exec "$b" timeout 60 "$perf" $sargs --netdev "$b" >"$out/server" 2>&1 &
	local server=$!
	if ! netns_wait_listen "$b" 18515; then
		log "FAIL: server \"$sargs\" did not start"; cat "$out/server"
		fails=$((fails + 1)); wait $server || true; return
	fi
	# shellcheck disable=SC2086
	ip netns exec "$a" timeout 60 "$perf" $cargs --netdev "$a" 10.99.0.2 >"$out/client" 2>&1 || crc=$?
	wait $server || src=$?
	rows=$(grep -c -E '^ [0-9]+ +[0-9]+ ' "$out/client" || true)
	if [ "$want" = ok ] && [ $crc = 0 ] && [ $src = 0 ] && [ "$rows" -gt 0 ]; then
		log "ok: $cargs: $(grep -E '^ [0-9]+ +[0-9]+ ' "$out/client" | tail -n1 | tr -s ' \t' ' ')"
		return
	fi
	# roxe-perf(1): exit 1 when the test failed (a sanitizer's abort, a
	# signal or the timeout is not that), with a word on why
	if [ "$want" = fail ] && [ $crc = 1 ] && [ $src = 1 ] &&
	   grep -q -i -E 'runs|peer' "$out/client" "$out/server"; then
		log "ok: $cargs vs $sargs fails as it should: $(grep -h -i -E 'runs|peer' \
			"$out/client" "$out/server" | sed -n 1p)"
		return
	fi
	log "FAIL: client \"$cargs\" exit $crc, server \"$sargs\" exit $src, $rows rows (want $want)"
	sed 's/^/#   client: /' "$out/client" | tail -n 8
	sed 's/^/#   server: /' "$out/server" | tail -n 8
	fails=$((fails + 1))
}

# Every test and mode, every byte checked, over AF_XDP, MTU 4096.
for t in write read send atomic; do
	run "$t bw" "$t bw -n 2000 -m 4096 --verify"
	run "$t lat" "$t lat -n 500 -m 4096 --verify"
done
# Several QPs, small and multi-packet messages, every size of a sweep.
run "write bw" "write bw -q 4 -s 10000 -n 500 -m 1024 --verify"
run "send bw" "send bw -q 3 -s 3000 -n 500 -t 32 -r 16 --verify"
run "read bw" "read bw -a -n 4 -m 1024 --verify"
run "send bw" "send bw -a -n 4 --verify"
run "write lat" "write lat -a -n 8 --verify"
# Duration mode, events, polled engines, the UDP backend, CMP_AND_SWAP.
run "send bw" "send bw -D 1 -s 1024 --verify -e"
run "write bw -P" "write bw -P -D 1 -s 8192 --verify"
run "send lat -P" "send lat -P -n 2000 -s 64 --verify"
run "read bw -B udp" "read bw -B udp -s 4096 -n 1000 --verify"
run "send lat -B udp" "send lat -B udp -n 500 --verify"
run "atomic bw" "atomic bw -A CMP_AND_SWAP -q 2 -n 1000 --verify"
# perftest 4.5's exchange at both ends (both need the same options then).
for t in "write bw" "read bw" "send bw" "atomic bw" "send lat" "write lat" "read lat" "atomic lat"; do
	run "$t --perftest -n 300 -s 8" "$t --perftest -n 300 -s 8"
done
run "send bw --perftest -a -n 3" "send bw --perftest -a -n 3"
# The timed loop takes no page fault per exchange: a fault is microseconds
# of the tool's own in the latency it reports (its timestamps once took one
# every 512 exchanges: 39 faults in 20000, each slowing one exchange 4 us).
# 18000 more exchanges may bring no more than a few faults of first touches
# and of other threads (0 to 3 here; one every 512 exchanges would be 35).
faults() {	# N: the client's minor faults over N exchanges of send lat -P
	local server f=-
	ip netns exec "$b" timeout 60 "$perf" send lat -P --netdev "$b" >"$out/server" 2>&1 &
	server=$!
	if netns_wait_listen "$b" 18515; then
		f=$(ip netns exec "$a" timeout 60 "$perf" send lat -P -s 8 -n "$1" --json \
			--netdev "$a" 10.99.0.2 2>"$out/client" | jq -r '.results[-1].minor_faults') || f=-
	fi
	wait "$server" || f=-
	echo "${f:--}"
}
n=$((n + 1))
f1=$(faults 2000)
f2=$(faults 20000)
if [ "$f1" != - ] && [ "$f2" != - ] && [ "$f1" != null ] && [ $((f2 - f1)) -le 12 ]; then
	log "ok: send lat -P: $f1 page faults over 2000 exchanges, $f2 over 20000"
else
	log "FAIL: send lat -P: page faults $f1 over 2000 exchanges, $f2 over 20000 (want at most 12 more)"
	fails=$((fails + 1))
fi
# Mismatches and misuse end cleanly, with a word for the user.
run "read bw" "write bw -n 10" fail
run "write bw --perftest" "write bw -n 10" fail
for bad in "write" "write bw -s 0" "atomic bw -s 64" "send lat -q 2" "write bw -P -e" \
	"write bw --verify --perftest" "fly bw" "write bw -B rdma"; do
	n=$((n + 1))
	rc=0
	# shellcheck disable=SC2086
	"$perf" $bad --netdev lo >"$out/usage" 2>&1 || rc=$?
	if [ $rc = 2 ] && [ -s "$out/usage" ]; then
		log "ok: roxe-perf $bad: exit 2, $(head -n1 "$out/usage")"
	else
		log "FAIL: roxe-perf $bad: exit $rc (want 2 and a message)"
		fails=$((fails + 1))
	fi
done
log "$((n - fails))/$n runs as expected"
[ $fails = 0 ] && exit $KSFT_PASS
exit $KSFT_FAIL
