#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# roxectl between two namespaces: ping (IPv4, IPv6) and TCP keep working
# while roxe is attached; status and stats see it; a second attach is
# refused politely; detach leaves the interface without XDP.
set -u
ksft_skip=4
here=$(cd "$(dirname "$0")" && pwd -P)
TOP=${TOP:-$(cd "$here/../.." && pwd)}
ROXECTL=${ROXECTL:-$TOP/build/bin/roxectl}
TOP_BIN=$TOP/build/bin
name=rxsh$(( $$ % 1000 ))
a=$name-a b=$name-b
fails=0

[ "$(id -u)" = 0 ] || { echo "# needs root"; exit $ksft_skip; }
[ -x "$ROXECTL" ] || { echo "# $ROXECTL is not built"; exit 1; }

. "$TOP/tools/scripts/netns.sh"
netns_up "$name" --queues 2 || exit 1

check() {	# check DESCRIPTION COMMAND...
	local what=$1; shift
	if "$@" >/tmp/$name.out 2>&1; then
		echo "# ok: $what"
	else
		echo "# FAIL: $what"; sed 's/^/#   /' /tmp/$name.out; fails=$((fails + 1))
	fi
}
in_b() { ip netns exec "$b" "$@"; }
in_a() { ip netns exec "$a" "$@"; }

# The server says it listens (a file once listen() returned); the client
# connects after that, never after a guess at how long python starts.
tcp_roundtrip() {
	local ready=/tmp/$name.listening i
	rm -f "$ready"
	in_b python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.99.0.2", 7777)); s.listen(1); s.settimeout(5)
open(sys.argv[1], "w").close()
c, _ = s.accept(); c.settimeout(10); data = b""
while len(data) < 100000:
    d = c.recv(65536)
    if not d: break
    data += d
c.sendall(str(len(data)).encode()); c.close()' "$ready" &
	local srv=$!
	# bounded: met only by a server that never listens
	for i in $(seq 100); do [ -e "$ready" ] && break; sleep 0.1; done
	rm -f "$ready"
	in_a python3 -c '
import socket
c = socket.create_connection(("10.99.0.2", 7777), timeout=5)
c.sendall(b"x" * 100000); c.shutdown(socket.SHUT_WR)
assert c.recv(100) == b"100000"'
	local rc=$?
	wait $srv
	return $rc
}

check "attach (native, 2 engines)" in_b "$ROXECTL" attach "$b" --engines 2 --mode native
check "link shows roxe_xdp" sh -c "ip -n $b link show $b | grep -q 'prog/xdp id .* name roxe_xdp'"
check "ping IPv4 while attached" in_a ping -c 3 -i 0.2 -W 2 10.99.0.2
check "ping IPv6 while attached" in_a ping -c 3 -i 0.2 -W 2 fd99::2
check "TCP 100 kB while attached" tcp_roundtrip
check "status lists the interface" sh -c "ip netns exec $b $ROXECTL status | grep -qE '^$b +native .* 2 +drop'"
check "stats counts the kernel's frames as passed" sh -c \
	"ip netns exec $b $ROXECTL stats $b --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"global\"][\"passed\"] >= 6 and d[\"global\"][\"redirected\"] == 0, d'"
check "stats table prints" sh -c "ip netns exec $b $ROXECTL stats | grep -q 'bad_version'"
check "second attach refused" sh -c \
	"ip netns exec $b $ROXECTL attach $b 2>&1 | grep -q 'already attached'"
check "second attach exits 1" sh -c "ip netns exec $b $ROXECTL attach $b; [ \$? = 1 ]"
check "missing interface named" sh -c "ip netns exec $b $ROXECTL attach nosuch0 2>&1 | grep -q 'no interface named nosuch0'"
check "detach" in_b "$ROXECTL" detach "$b"
check "no XDP left on the link" sh -c "! ip -n $b link show $b | grep -q xdp"
check "ping after detach" in_a ping -c 2 -i 0.2 -W 2 10.99.0.2
check "stats after detach says not attached" sh -c "ip netns exec $b $ROXECTL stats $b 2>&1 | grep -q 'not attached'"
check "generic mode attach and detach" sh -c \
	"ip netns exec $a $ROXECTL attach $a --mode generic --engines 1 | grep -q generic && ip netns exec $a $ROXECTL detach $a"
check "help is a manual" sh -c "$ROXECTL --help | grep -q '^SYNOPSIS'"

# A program that attached roxe itself owns the attachment (a BPF link): it
# goes with the program, even one killed with SIGKILL.
killed_owner_detaches() {
	local pid i
	ip netns exec "$b" "$TOP_BIN/roxe-pingpong" --netdev "$b" -e >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 50); do
		ip -n "$b" link show "$b" | grep -q 'prog/xdp' && break
		sleep 0.1
	done
	ip -n "$b" link show "$b" | grep -q 'prog/xdp' || { kill $pid; return 1; }
	kill -KILL $pid
	wait $pid 2>/dev/null
	for i in $(seq 50); do
		ip -n "$b" link show "$b" | grep -q xdp || return 0
		sleep 0.1
	done
	return 1
}
check "SIGKILL of a program that attached roxe detaches it" killed_owner_detaches

rm -f /tmp/$name.out
[ $fails = 0 ]
