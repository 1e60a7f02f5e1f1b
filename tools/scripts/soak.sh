#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make soak: a long run of RC traffic through a faulty middle hop, every
# byte checked. Two hosts with roxe (XDP + AF_XDP) and a middle namespace
# where faultwire drops, duplicates and reorders frames both ways;
# roxe-perf send bw --verify (the server checks every byte of every
# message) on four QPs for ROXE_SOAK_SECONDS (default 600). Passes when
# both ends finish without error or mismatch, retransmissions happened,
# and neither process grew its memory by more than 10% after the first
# minute. (One roxe process per interface: AF_XDP binds a queue once.)
#
#   make soak                           10 minutes
#   ROXE_SOAK_SECONDS=60 tools/scripts/soak.sh  a short one
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
bin=$top/build/bin
secs=${ROXE_SOAK_SECONDS:-600}
faults=${ROXE_SOAK_FAULTS:---drop 10000 --dup 5000 --reorder 10000}
name=roxesoak
a=$name-a b=$name-b m=$name-m
out=$top/build/soak

[ "$(id -u)" -eq 0 ] || { echo "soak: needs root (network namespaces, XDP)" >&2; exit 1; }
[ "$secs" -ge 10 ] || { echo "soak: ROXE_SOAK_SECONDS must be at least 10" >&2; exit 2; }
mkdir -p "$out"
. "$top/tools/scripts/netns.sh"
netns_down "$name"
netns_up "$name" --middle >/dev/null
for h in "$a" "$b"; do
	ip netns exec "$h" ethtool -K "$h" tx off tso off gso off >/dev/null 2>&1 || true
done
ip -n "$m" link set "$name-ma" nomaster
ip -n "$m" link set "$name-mb" nomaster
# shellcheck disable=SC2086 # the fault options, split on purpose
ip netns exec "$m" "$bin/faultwire" "$name-ma" "$name-mb" $faults --seed $$ \
	> "$out/faultwire.log" 2>&1 &
wire=$!
trap 'kill $wire 2>/dev/null || true; netns_down $name' EXIT
# Attached for the whole run, so the counters outlive the processes.
for h in "$a" "$b"; do
	ip netns exec "$h" "$bin/roxectl" attach "$h" --engines 1 >/dev/null
done

# rss_kb PID: resident memory
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

echo "soak: $secs s of RC SEND bandwidth, 4 QPs, --verify, through faultwire ($faults)"
ip netns exec "$b" "$bin/roxe-perf" send bw --netdev "$b" > "$out/server.log" 2>&1 &
server=$!
netns_wait_listen "$b" 18515 || { echo "soak: server did not start" >&2; exit 1; }
ip netns exec "$a" "$bin/roxe-perf" send bw --netdev "$a" -D "$secs" --verify -q 4 -s 8192 -e \
	10.99.0.2 > "$out/client.log" 2>&1 &
client=$!
rs0=0 rc0=0 rs1=0 rc1=0
if [ "$secs" -gt 90 ]; then	# memory after a minute and near the end
	sleep 60
	rs0=$(rss_kb $server) rc0=$(rss_kb $client)
	sleep $((secs - 70))
	rs1=$(rss_kb $server) rc1=$(rss_kb $client)
fi
rc=0
wait $client || { echo "soak: FAIL: the client exited with $?"; rc=1; }
wait $server || { echo "soak: FAIL: the server exited with $?"; rc=1; }
for v in "server $rs0 $rs1" "client $rc0 $rc1"; do
	set -- $v
	[ "$2" -gt 0 ] && echo "soak: $1: RSS $2 kB after 60 s, $3 kB near the end"
	if [ "$2" -gt 0 ] && [ "$3" -gt $(($2 * 11 / 10)) ]; then
		echo "soak: FAIL: the $1 grew its memory by more than 10%"
		rc=1
	fi
done
grep -E '^ [0-9]+ +[0-9]+ ' "$out/client.log" | sed 's/^/soak: client: /' || rc=1
grep -E '^ [0-9]+ +[0-9]+ ' "$out/server.log" | sed 's/^/soak: server: /' || rc=1
grep -h 'verify:' "$out/server.log" | sed 's/^/soak: server: /'
grep -q 'verify: 0 errors' "$out/server.log" || rc=1
for h in "$a" "$b"; do
	ip netns exec "$h" "$bin/roxectl" stats "$h" --json > "$out/stats-$h.json"
done
retrans=$(jq '[.qps[].retransmits] | add // 0' "$out/stats-$a.json" "$out/stats-$b.json" |
	awk '{ s += $1 } END { print s + 0 }')
kill $wire 2>/dev/null && wait $wire 2>/dev/null
echo "soak: retransmissions $retrans; faultwire: $(tail -n1 "$out/faultwire.log")"
[ "$retrans" -gt 0 ] || { echo "soak: FAIL: no retransmission: the faults did not hit"; rc=1; }
if [ $rc = 0 ]; then echo "soak: PASS"; else echo "soak: FAIL (logs in $out)"; fi
exit $rc
