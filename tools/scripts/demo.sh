#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make demo: two hosts (network namespaces joined by veth), roxe's XDP
# program attached on both, RC traffic between a roxe engine on each host
# (roxe-perf write bandwidth and send latency, every byte checked), then
# the per-QP counters as roxectl and bpftool show them. Cleans up on exit,
# also after Ctrl-C or a failure.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
bin=$top/build/bin
. "$top/tools/scripts/netns.sh"		# netns_wait_listen
name=roxedemo
a=$name-a
b=$name-b

cleanup() {
	"$top/tools/scripts/netns.sh" down "$name" >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n== %s\n' "$*"; }

# Map ids of the program attached to an interface: bpftool -j, read by python.
qp_stats_map_id() {
	local ns=$1 dev=$2 prog
	prog=$(ip -n "$ns" -j link show dev "$dev" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["xdp"]["prog"]["id"])')
	for id in $(bpftool -j prog show id "$prog" |
		python3 -c 'import json,sys; print(*json.load(sys.stdin)["map_ids"])'); do
		if bpftool -j map show id "$id" |
			python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)["name"] != "roxe_qp_stats")'; then
			echo "$id"
			return
		fi
	done
}

[ "$(id -u)" -eq 0 ] || { echo "demo: needs root (network namespaces, XDP)" >&2; exit 1; }

step "two hosts: $a (10.99.0.1) and $b (10.99.0.2), joined by veth"
"$top/tools/scripts/netns.sh" down "$name" >/dev/null 2>&1 || true
"$top/tools/scripts/netns.sh" up "$name"

step "attach roxe's XDP program on both (one engine each)"
ip netns exec "$a" "$bin/roxectl" attach "$a" --engines 1
ip netns exec "$b" "$bin/roxectl" attach "$b" --engines 1
ip netns exec "$b" "$bin/roxectl" status

# roxe-perf is perftest on roxe; --verify makes the receiving end check
# every byte (any mismatch fails the demo).
perf() {
	ip netns exec "$b" "$bin/roxe-perf" "$@" --netdev "$b" > "$tmp/server.out" 2>&1 &
	local server=$!
	# The server listens once its device is up: wait for that, not a guess.
	netns_wait_listen "$b" 18515 ||
		{ echo "demo: server did not start" >&2; cat "$tmp/server.out"; return 1; }
	ip netns exec "$a" "$bin/roxe-perf" "$@" --netdev "$a" 10.99.0.2
	wait "$server" || { cat "$tmp/server.out"; return 1; }
}
tmp=$(mktemp -d)
trap 'cleanup; rm -rf "$tmp"' EXIT

step "RDMA WRITE bandwidth: 2000 x 64 KiB on one QP (64 packets per message at MTU 1024)"
perf write bw -s 65536 -n 2000 -e --verify
step "SEND latency: 2000 ping-pongs of 8 B, polled engines (run-to-completion)"
perf send lat -s 8 -n 2000 -P --verify

step "roxectl stats on $b (XDP decisions, then per-QP transport counters)"
ip netns exec "$b" "$bin/roxectl" stats "$b"
step "roxectl stats on $a"
ip netns exec "$a" "$bin/roxectl" stats "$a"

step "the same counters through bpftool (map roxe_qp_stats of $b, QP 2: the send test's)"
id=$(qp_stats_map_id "$b" "$b")
bpftool map lookup id "$id" key 2 0 0 0

step "done: every message verified; namespaces removed on exit"
