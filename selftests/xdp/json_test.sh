#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# --json means stdout is exactly one JSON document: every tool with --json
# (roxe-perf, roxe-pingpong, roxe-rawperf, roxectl attach, status, detach,
# stats and devices, faultwire, roxe-microbench; roxe-pcap's is in
# selftests/wire) is run and its stdout alone checked with jq -e; a
# roxe-perf run that fails still prints a document that says so. Strings are escaped:
# roxe is attached to an interface whose name holds a quote and a
# backslash, and a stand-in for roxed's status socket answers with them.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -u

. "$(dirname "$(readlink -f "$0")")/ksft_lib.sh"
bin=$top/build/bin
name=js$$
name=${name:0:12}
a=$name-a b=$name-b

ksft_need_root
command -v jq >/dev/null || { log "FAIL: missing: jq is missing (tools/scripts/install-deps.sh)"; exit $KSFT_FAIL; }
for t in roxe-perf roxe-pingpong roxe-rawperf roxectl roxe-microbench faultwire; do
	[ -x "$bin/$t" ] || { log "FAIL: missing: $bin/$t not built"; exit $KSFT_FAIL; }
done
. "$top/tools/scripts/netns.sh"
netns_up "$name" >/dev/null || exit $KSFT_FAIL
out=$(mktemp -d)
sock=/run/roxe/$name.sock
cleanup() { rm -rf "$out" "$sock"; netns_down "$name"; }
trap cleanup EXIT

fails=0 n=0
# doc WHAT FILE FILTER: FILE holds exactly one JSON document, for which
# FILTER is true.
doc() {
	n=$((n + 1))
	if jq -e -s "length == 1 and (.[0] | $3)" "$2" >/dev/null 2>"$out/jq"; then
		log "ok: $1"
		return
	fi
	log "FAIL: $1: stdout is not one JSON document with $3"
	sed 's/^/#   stdout: /' "$2" | head -n 12
	sed 's/^/#   jq: /' "$out/jq"
	fails=$((fails + 1))
}

# pair TOOL PORT "SERVER ARGS" "CLIENT ARGS": a server in b, a client in a;
# stdout and stderr kept apart in $out/{server,client}.{out,err}.
pair() {
	local tool=$1 port=$2 sargs=$3 cargs=$4
	# shellcheck disable=SC2086 # the options, split on purpose
	ip netns exec "$b" timeout 60 "$bin/$tool" $sargs >"$out/server.out" 2>"$out/server.err" &
	local server=$!
	netns_wait_listen "$b" "$port" || log "server $tool $sargs did not start"
	# shellcheck disable=SC2086
	ip netns exec "$a" timeout 60 "$bin/$tool" $cargs 10.99.0.2 >"$out/client.out" \
		2>"$out/client.err"
	echo "client exit $?" >>"$out/client.err"
	wait $server
	echo "server exit $?" >>"$out/server.err"
}

# roxe-perf: the results in JSON, perftest's text on stderr.
pair roxe-perf 18515 "send bw --netdev $b --json" "send bw --netdev $a -n 500 --json"
doc "roxe-perf send bw client" "$out/client.out" \
	'.ok and .role == "client" and .interface == "'"$a"'" and (.results | length == 1) and .results[0].bw_avg_gbps > 0'
doc "roxe-perf send bw server" "$out/server.out" '.ok and .role == "server"'
n=$((n + 1))
if grep -q 'Send BW Test' "$out/client.err" && ! grep -q 'Send BW Test' "$out/client.out"; then
	log "ok: roxe-perf --json: perftest's text on stderr only"
else
	log "FAIL: roxe-perf --json: perftest's text is not on stderr alone"
	fails=$((fails + 1))
fi
# A passive server has no figures of its own: still one document.
pair roxe-perf 18515 "read lat --netdev $b --json" "read lat --netdev $a -n 200 --json"
doc "roxe-perf read lat client" "$out/client.out" \
	'.ok and .results[0].usec.typical > 0 and .results[0].what == "round trip"'
doc "roxe-perf read lat server (passive)" "$out/server.out" '.ok and .results == []'
# A run that fails (the two ends run different tests) says so in JSON.
pair roxe-perf 18515 "read bw --netdev $b --json" "write bw --netdev $a -n 10 --json"
doc "roxe-perf mismatched client" "$out/client.out" '.ok == false'
doc "roxe-perf mismatched server" "$out/server.out" '.ok == false'

# roxe-rawperf over the UDP backend (no XDP program needed).
pair roxe-rawperf 18520 "--netdev $b -B udp --json lat" "--netdev $a -B udp -n 200 -w 10 --json lat"
doc "roxe-rawperf lat client" "$out/client.out" '.role == "client" and .rtt_us.median > 0'
doc "roxe-rawperf lat server" "$out/server.out" '.role == "server" and .served > 0'
# -k 2: two frames each way, answered once both arrived: the server
# answers 210 exchanges (more only for the client's resends of lost ones).
pair roxe-rawperf 18520 "--netdev $b -B udp --json lat" "--netdev $a -B udp -n 200 -w 10 -k 2 --json lat"
lost=$(jq -r '.lost // 0' "$out/client.out" 2>/dev/null)
doc "roxe-rawperf lat -k 2 client" "$out/client.out" '.frames == 2 and .rtt_us.median > 0'
doc "roxe-rawperf lat -k 2 server" "$out/server.out" \
	".frames == 2 and .served >= 420 and .served <= 2 * (210 + ${lost:-0})"

# roxe-pingpong: the result, and the addresses of both ends; its text on
# stderr.
pair roxe-pingpong 18515 "--netdev $b --json -n 50 -c" "--netdev $a --json -n 50 -c"
doc "roxe-pingpong client" "$out/client.out" \
	'.ok and .role == "client" and .iterations == 50 and .usec_per_iter > 0 and (.remote.qpn | type == "number") and .bad_exchange == null'
doc "roxe-pingpong server" "$out/server.out" '.ok and .role == "server" and .local.gid == "::ffff:10.99.0.2"'
n=$((n + 1))
if grep -q "iters in" "$out/client.err"; then
	log "ok: roxe-pingpong --json: ibv_rc_pingpong's text on stderr"
else
	log "FAIL: roxe-pingpong --json: its text is not on stderr"
	fails=$((fails + 1))
fi

# roxe-microbench.
"$bin/roxe-microbench" --json --time 2 >"$out/mb.out" 2>"$out/mb.err"
doc "roxe-microbench" "$out/mb.out" '(.cpu | type == "string") and (.results | length > 10)'

# roxectl stats: one object for IFACE, one array for all interfaces; the
# interface's name escaped.
weird='rx"q\1'
if ! { ip -n "$a" link add "$weird" type veth peer name "${name}w" &&
	ip -n "$a" link set "$weird" up && ip -n "$a" link set "${name}w" up; }; then
	log "cannot make interface $weird"
fi
ip netns exec "$a" "$bin/roxectl" attach "$weird" --mode generic --engines 1 >/dev/null
ip netns exec "$a" "$bin/roxectl" attach "$a" --mode generic --engines 1 >/dev/null
ip netns exec "$a" "$bin/roxectl" stats "$weird" --json >"$out/stats1" 2>"$out/stats.err"
doc "roxectl stats IFACE (name with a quote and a backslash)" "$out/stats1" \
	'.interface == "rx\"q\\1" and (.global.passed | type == "number") and (.qps | type == "array")'
ip netns exec "$a" "$bin/roxectl" stats --json >"$out/stats2" 2>>"$out/stats.err"
doc "roxectl stats, every interface" "$out/stats2" \
	'type == "array" and length == 2 and ([.[].interface] | sort == ["'"$a"'", "rx\"q\\1"])'
ip netns exec "$a" "$bin/roxectl" stats "$a" --qpn 2 --json >"$out/stats3" 2>>"$out/stats.err"
doc "roxectl stats IFACE --qpn 2" "$out/stats3" '.qps | length == 1 and .[0].qpn == 2'

# roxectl attach, status and detach: one document each.
x=${name}x y=${name}y
ip -n "$a" link add "$x" type veth peer name "$y" && ip -n "$a" link set "$x" up &&
	ip -n "$a" link set "$y" up || log "cannot make $x"
ip netns exec "$a" "$bin/roxectl" attach "$x" --mode generic -E 1 --json >"$out/att" 2>>"$out/stats.err"
doc "roxectl attach --json" "$out/att" \
	'.interface == "'"$x"'" and .mode == "generic" and .engines == 1 and .unknown_qp == "drop"'
ip netns exec "$a" "$bin/roxectl" status --json >"$out/status" 2>>"$out/stats.err"
doc "roxectl status --json" "$out/status" \
	'(.interfaces | length == 3) and (.sockets | type == "array") and
	 (.sockets_error == null or (.sockets_error | type == "string"))'
ip netns exec "$a" "$bin/roxectl" detach "$x" --json >"$out/det" 2>>"$out/stats.err"
doc "roxectl detach --json" "$out/det" '.interface == "'"$x"'" and .detached'

# faultwire: what it did, when it stops; with --rate, the queue's counts.
# Between x and u, two veth pairs' ends (between x and y, a pair, every
# frame would go round and round).
u=${name}u v=${name}v
ip -n "$a" link add "$u" type veth peer name "$v" && ip -n "$a" link set "$u" up &&
	ip -n "$a" link set "$v" up || log "cannot make $u"
# fw_run FILE ARGS...: faultwire until SIGTERM, which it handles once both
# its sockets are open
fw_run() {
	local f=$1 fw
	shift
	ip netns exec "$a" "$bin/faultwire" "$x" "$u" "$@" --json >"$f" 2>>"$out/fw.err" &
	fw=$!
	for _ in $(seq 50); do
		[ "$(find /proc/$fw/fd -lname 'socket:*' 2>/dev/null | wc -l)" -ge 2 ] && break
		sleep 0.1
	done
	sleep 0.2
	kill -TERM $fw
	wait $fw
}
fw_run "$out/fw1" --drop 1000
doc "faultwire --json" "$out/fw1" '(.forwarded | type == "number") and .queue == null'
fw_run "$out/fw2" --rate 1gbit --mark 16k
doc "faultwire --rate --json" "$out/fw2" '.queue.rate_bps == 1000000000 and (.queue.marked | type == "number")'

# roxectl devices: none, then one from a stand-in roxed whose status text
# carries a quote, a backslash, a control byte, a byte that is not UTF-8,
# a number with a leading zero (not a JSON number) and missing keys.
"$bin/roxectl" devices "$name" --json >"$out/dev0" 2>"$out/dev.err"
doc "roxectl devices, none served" "$out/dev0" '. == []'
mkdir -p /run/roxe
python3 - "$sock" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(4); s.settimeout(20)
text = b"pid 4242\ninterface we\"ird\\\ndevice roxe9\nport ACTIVE\nmtu 1024\nengines 2\n" \
       b"backend af\x01xdp\xff\nuptime_s 7\nqps 3\ncommands 012\n"
for _ in range(1):
    c, _ = s.accept(); c.sendall(text); c.close()
PY
stub=$!
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
"$bin/roxectl" devices "$name" --json >"$out/dev1" 2>>"$out/dev.err"
wait $stub
doc "roxectl devices, one served (odd values escaped)" "$out/dev1" \
	'length == 1 and .[0].interface == "we\"ird\\" and .[0].device == "roxe9" and .[0].mtu == 1024 and .[0].srqs == null and .[0].backend == "af\u0001xdp\ufffd" and .[0].commands == "012"'

log "$((n - fails))/$n outputs as expected"
[ $fails = 0 ] && exit $KSFT_PASS
exit $KSFT_FAIL
