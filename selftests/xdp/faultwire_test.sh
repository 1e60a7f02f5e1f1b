#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# RC through a faulty network, over the real fast path: two hosts with roxe
# (XDP + AF_XDP) and a middle namespace between them where faultwire
# forwards every frame, dropping, duplicating, reordering and corrupting
# RoCE v2 frames in both directions. (tc netem would be the usual tool, but
# this machine's kernel has no sch_netem; and netem on the hosts' own veths
# would never see roxe's frames: AF_XDP transmit bypasses the qdisc layer.)
#
# roxe-pingpong -c checks every byte of every exchange; both ends must finish.
# -L keeps each end's QP answering after its last exchange: the ACK of the
# other end's last message may be lost, and its retries need someone there.
# The per-QP counters must show that the faults really hit: retransmissions,
# and corrupted frames dropped on their ICRC.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

. "$(dirname "$(readlink -f "$0")")/ksft_lib.sh"
bin=$top/build/bin
name=nm$$
name=${name:0:12}
a=$name-a b=$name-b m=$name-m

ksft_need_root
wire=$bin/faultwire
[ -x "$wire" ] || { log "FAIL: missing: $wire not built (make)"; exit $KSFT_FAIL; }

. "$top/tools/scripts/netns.sh"
netns_up "$name" --middle >/dev/null

# Frames cross faultwire as plain bytes: the hosts must finish their own
# checksums and segments (no offload to a NIC that is not there).
for h in "$a" "$b"; do
	ip netns exec "$h" ethtool -K "$h" tx off tso off gso off >/dev/null 2>&1 ||
		{ log "FAIL: missing: cannot turn offloads off on $h"; exit $KSFT_FAIL; }
done
# faultwire takes the bridge's place: 2% loss, 1% duplication, 2%
# reordering, 1% corruption, each way.
ip -n "$m" link set "$name-ma" nomaster
ip -n "$m" link set "$name-mb" nomaster
ip netns exec "$m" "$wire" "$name-ma" "$name-mb" --drop 20000 --dup 10000 \
	--reorder 20000 --corrupt 10000 --seed $$ > "/tmp/$name-wire.log" 2>&1 &
wire_pid=$!
trap 'kill $wire_pid 2>/dev/null || true; netns_down $name' EXIT
ip netns exec "$a" "$bin/roxectl" attach "$a" --engines 1 >/dev/null
ip netns exec "$b" "$bin/roxectl" attach "$b" --engines 1 >/dev/null

# 300 exchanges of 4 KiB (4 packets each way), every byte checked.
ip netns exec "$b" timeout 120 "$bin/roxe-pingpong" --netdev "$b" -e -c -L 1500 -s 4096 -n 300 \
	> "/tmp/$name-server.log" 2>&1 &
server=$!
netns_wait_listen "$b" 18515 || fail "roxe-pingpong server did not start"
rc=0
ip netns exec "$a" timeout 120 "$bin/roxe-pingpong" --netdev "$a" -e -c -L 1500 -s 4096 -n 300 10.99.0.2 \
	> "/tmp/$name-client.log" 2>&1 || rc=$?
wait $server || rc=$((rc ? rc : 1))
sed 's/^/# client: /' "/tmp/$name-client.log"
sed 's/^/# server: /' "/tmp/$name-server.log"
rm -f "/tmp/$name-client.log" "/tmp/$name-server.log"
[ $rc = 0 ] || fail "roxe-pingpong failed ($rc)"

# Counters of QP 2 (the one QP each side had) from each host's maps.
counter() {	# host field
	ip netns exec "$1" "$bin/roxectl" stats "$1" --qpn 2 | awk -v f="$2" '$1 == f { print $2 }'
}
retrans=$(( $(counter "$a" retransmits) + $(counter "$b" retransmits) ))
icrc=$(( $(counter "$a" icrc_errors) + $(counter "$b" icrc_errors) ))
dups=$(( $(counter "$a" duplicates) + $(counter "$b" duplicates) ))
log "retransmits $retrans, frames dropped on ICRC $icrc, duplicates seen $dups"
kill $wire_pid && wait $wire_pid || true
sed 's/^/# /' "/tmp/$name-wire.log"
rm -f "/tmp/$name-wire.log"
[ "$retrans" -gt 0 ] || fail "no retransmission: the faults did not reach roxe"
[ "$icrc" -gt 0 ] || fail "no corrupted frame was caught by the ICRC check"
log "PASS"
exit $KSFT_PASS
