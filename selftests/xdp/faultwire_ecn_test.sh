#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# faultwire's congested port (--rate, --mark, --limit): ECN marks where the
# backlog passes the mark, drops only past the limit, nothing below the rate.
#
# Two hosts with a middle namespace where faultwire forwards at 100 Mbit/s,
# marking at 20 KiB of backlog and dropping past 100 KiB. Plain UDP to port
# 4791 (RoCE v2's: faultwire queues what roxe's parser takes for RoCE v2)
# from a socket that sets the ECN field, to a socket that reads it back
# (IP_RECVTOS). Frames are 1042 bytes on the wire; each carries a sequence
# number.
#   1. a burst of 400 ECT(0) frames, far faster than 100 Mbit/s: the first
#      19 cannot find 20 KiB queued, so none of them is marked; the first
#      97 cannot find 100 KiB, so none of them is dropped; marks and drops
#      happen; the receiver sees every CE faultwire counted (the kernel
#      checks the IPv4 checksum faultwire rewrote: a wrong one loses the
#      frame) and every frame faultwire did not drop.
#   2. a burst of 400 Not-ECT frames: none marked (counted as not
#      ECN-capable), drops again.
#   3. 200 ECT(0) frames at 1 per millisecond (8 Mbit/s): neither marks nor
#      drops.
#   4. a burst of 400 ECT(0) frames over IPv6 (1062 bytes): CE in the
#      traffic class, none of the first 19 marked.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

. "$(dirname "$(readlink -f "$0")")/ksft_lib.sh"
bin=$top/build/bin
name=ne$$
name=${name:0:12}
a=$name-a b=$name-b m=$name-m

ksft_need_root
wire=$bin/faultwire
[ -x "$wire" ] || { log "FAIL: missing: $wire not built (make)"; exit $KSFT_FAIL; }
command -v python3 >/dev/null || { log "FAIL: missing: python3 is missing"; exit $KSFT_FAIL; }

. "$top/tools/scripts/netns.sh"
netns_up "$name" --middle >/dev/null
for h in "$a" "$b"; do
	ip netns exec "$h" ethtool -K "$h" tx off tso off gso off >/dev/null 2>&1 ||
		{ log "FAIL: missing: cannot turn offloads off on $h"; exit $KSFT_FAIL; }
done
ip -n "$m" link set "$name-ma" nomaster
ip -n "$m" link set "$name-mb" nomaster
tmp=$(mktemp -d)
ip netns exec "$m" "$wire" "$name-ma" "$name-mb" --rate 100mbit --mark 20k --limit 100k \
	> "$tmp/wire.log" 2>&1 &
wire_pid=$!
trap 'kill $wire_pid 2>/dev/null || true; rm -rf "$tmp"; netns_down $name' EXIT

# The receiver: every datagram's sequence number and ECN field (IPv4 and
# IPv6), until 2 s of silence once the last phase began. It says when its
# sockets are bound (a file): the first burst goes after that, not after a
# guess at how long python takes to start.
ip netns exec "$b" python3 - "$tmp/recv.txt" "$tmp/bound" <<'EOF' &
import select, socket, struct, sys
IP_RECVTOS = getattr(socket, "IP_RECVTOS", 13)
IPV6_RECVTCLASS = getattr(socket, "IPV6_RECVTCLASS", 66)
IPV6_TCLASS = getattr(socket, "IPV6_TCLASS", 67)
s4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s4.setsockopt(socket.IPPROTO_IP, IP_RECVTOS, 1)
s4.bind(("10.99.0.2", 4791))
s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s6.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVTCLASS, 1)
s6.bind(("fd99::2", 4791))
for s in (s4, s6):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
out = open(sys.argv[1], "w")
open(sys.argv[2], "w").close()
wait = 30
while True:
    ready, _, _ = select.select([s4, s6], [], [], wait)
    if not ready:
        break
    for s in ready:
        data, anc, _, _ = s.recvmsg(2048, socket.CMSG_SPACE(4))
        tos = 0
        for lvl, typ, val in anc:
            if (lvl, typ) in ((socket.IPPROTO_IP, socket.IP_TOS),
                              (socket.IPPROTO_IPV6, IPV6_TCLASS)):
                tos = val[0]
        seq = struct.unpack("!I", data[:4])[0]
        out.write("%d %d\n" % (seq, tos & 3))
        if seq >= 3000:
            wait = 2
out.close()
EOF
recv_pid=$!
# bounded: met only by a receiver that never binds
for _ in $(seq 100); do [ -e "$tmp/bound" ] && break; sleep 0.1; done
[ -e "$tmp/bound" ] || fail "the receiver never bound its sockets"

# The sender: FIRST COUNT ECN GAP_S [6]
send() {
	ip netns exec "$a" python3 - "$@" <<'EOF'
import socket, struct, sys, time
first, count, ecn, gap = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
if len(sys.argv) > 5:
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IPV6, getattr(socket, "IPV6_TCLASS", 67), ecn)
    dst = ("fd99::2", 4791)
else:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, ecn)
    dst = ("10.99.0.2", 4791)
pad = bytes(996)
for i in range(first, first + count):
    s.sendto(struct.pack("!I", i) + pad, dst)
    if gap:
        time.sleep(gap)
EOF
}
# ARP and ND first, so that no burst is held behind them
ip netns exec "$a" ping -c 1 -W 2 10.99.0.2 >/dev/null || fail "no path through faultwire"
ip netns exec "$a" ping -6 -c 1 -W 2 fd99::2 >/dev/null || fail "no IPv6 path through faultwire"
# Half a second between the phases: the link's time to drain a burst
# (400 frames at 100 Mbit/s: 33 ms), a shape of the traffic. faultwire
# dates a frame when it reads it, so one starved that long would still
# see the bursts meet (arrival timestamps would end that).
send 0 400 2 0
sleep 0.5
send 1000 400 0 0
sleep 0.5
send 2000 200 2 0.001
sleep 0.5
send 3000 400 2 0 6
wait $recv_pid || fail "the receiver failed"
kill $wire_pid && wait $wire_pid || true
sed 's/^/# /' "$tmp/wire.log"

# faultwire's counts: marked M, dropped Q, not ECN-capable E
read -r marked qdrop notect < <(sed -n 's/.*marked \([0-9]*\), dropped \([0-9]*\), above the mark not ECN-capable \([0-9]*\),.*/\1 \2 \3/p' "$tmp/wire.log")
[ -n "${marked:-}" ] || fail "no queue counts from faultwire"
unsent=$(sed -n 's/.*overflowed \([0-9]*\), unsent \([0-9]*\)$/\1 \2/p' "$tmp/wire.log")
[ "$unsent" = "0 0" ] || log "note: overflowed/unsent $unsent (frames nobody dropped on purpose)"

awk -v marked="$marked" -v qdrop="$qdrop" -v notect="$notect" '
	{ seen[$1] = 1; ecn[$1] = $2 }
	END {
		fails = 0
		# phase 1: 0..399 ECT(0), a burst
		n1 = 0; ce1 = 0; firstce = -1; firstmiss = -1
		for (i = 0; i < 400; i++) {
			if (!(i in seen)) { if (firstmiss < 0) firstmiss = i; continue }
			n1++
			if (ecn[i] == 3) { ce1++; if (firstce < 0) firstce = i }
		}
		# phase 2: 1000..1399 Not-ECT, a burst
		n2 = 0; ce2 = 0
		for (i = 1000; i < 1400; i++) if (i in seen) { n2++; if (ecn[i] != 0) ce2++ }
		# phase 3: 2000..2199 ECT(0), below the rate
		n3 = 0; ce3 = 0
		for (i = 2000; i < 2200; i++) if (i in seen) { n3++; if (ecn[i] == 3) ce3++ }
		# phase 4: 3000..3399 ECT(0) over IPv6, a burst
		n6 = 0; ce6 = 0; firstce6 = -1
		for (i = 3000; i < 3400; i++) if (i in seen) {
			n6++
			if (ecn[i] == 3) { ce6++; if (firstce6 < 0) firstce6 = i - 3000 }
		}
		printf "# burst ECT(0): %d of 400 received, %d with CE, first CE #%d, first lost #%d\n", n1, ce1, firstce, firstmiss
		printf "# burst Not-ECT: %d of 400 received, %d not Not-ECT\n", n2, ce2
		printf "# paced ECT(0): %d of 200 received, %d with CE\n", n3, ce3
		printf "# IPv6 burst ECT(0): %d of 400 received, %d with CE, first CE #%d\n", n6, ce6, firstce6
		printf "# faultwire: marked %d, dropped %d, not ECN-capable above the mark %d\n", marked, qdrop, notect
		if (ce1 == 0) { print "# FAIL: the burst got no CE"; fails++ }
		if (firstce >= 0 && firstce < 19) { print "# FAIL: marked below the mark"; fails++ }
		if (firstmiss < 0) { print "# FAIL: the burst lost nothing past the limit"; fails++ }
		if (firstmiss >= 0 && firstmiss < 97) { print "# FAIL: dropped below the limit"; fails++ }
		if (ce1 + ce6 != marked) { print "# FAIL: CE received differs from faultwire marks (checksum?)"; fails++ }
		if (n1 + n2 + n3 + n6 != 1400 - qdrop) { print "# FAIL: frames lost besides the drops"; fails++ }
		if (ce6 == 0) { print "# FAIL: the IPv6 burst got no CE"; fails++ }
		if (firstce6 >= 0 && firstce6 < 19) { print "# FAIL: IPv6 marked below the mark"; fails++ }
		if (ce2 != 0) { print "# FAIL: a Not-ECT frame was marked"; fails++ }
		if (notect == 0) { print "# FAIL: Not-ECT frames above the mark not counted"; fails++ }
		if (n2 == 400) { print "# FAIL: the Not-ECT burst lost nothing past the limit"; fails++ }
		if (n3 != 200 || ce3 != 0) { print "# FAIL: below the rate, frames were marked or lost"; fails++ }
		exit fails ? 1 : 0
	}' "$tmp/recv.txt" || fail "see above"
log "PASS"
