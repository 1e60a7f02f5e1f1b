#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# netns.sh: the two-host topology roxe's tests, demo and benchmarks run on.
#
#   netns.sh up NAME [--queues N] [--mtu BYTES] [--middle | --routed]
#   netns.sh down NAME
#   netns.sh help
#
# "up" creates network namespaces NAME-a and NAME-b joined by a veth pair
# whose ends are called NAME-a and NAME-b too (so NAME has at most 12
# characters), with 10.99.0.1/24 + fd99::1/64 on NAME-a and 10.99.0.2/24 +
# fd99::2/64 on NAME-b. --queues gives each end N rx and tx queues (one per
# roxe engine: AF_XDP binds to queues); --mtu sets the MTU (default 1500).
#
# --middle puts a third namespace, NAME-m, between them: each host's veth
# goes to NAME-m (ends NAME-ma, NAME-mb), where a bridge joins them. Loss,
# reordering and corruption are injected there (tc netem on NAME-ma or
# NAME-mb, the middle's egress towards a or b): netem on the hosts' own veths
# never sees AF_XDP frames, which bypass the qdisc layer.
#
# --routed puts the hosts in different subnets with a router between them:
# namespace NAME-r forwards IPv4 and IPv6 between NAME-ra (10.99.1.254/24,
# fd99:1::fe/64, towards a) and NAME-rb (10.99.2.254/24, fd99:2::fe/64,
# towards b). NAME-a has 10.99.1.1/24 + fd99:1::1/64, NAME-b 10.99.2.2/24 +
# fd99:2::2/64, each with default routes through the router: RoCE v2
# between them goes through the kernel's route and neighbour tables (the
# router's MAC is the next hop) and the router decrements TTL/hop limit.
#
# Sourced, it defines netns_up, netns_down and netns_wait_listen (a TCP
# listener in a namespace, e.g. a pingpong server); netns_up registers an EXIT
# trap that tears the topology down however the script ends:
#   . tools/scripts/netns.sh; netns_up t1 --queues 2; ip netns exec t1-a ping 10.99.0.2
#
# Everything lives inside the namespaces: no address outside 10.99.0.0/16
# and fd99::/16 is configured and the root namespace is left untouched.
NETNS_ADDR_A=10.99.0.1
NETNS_ADDR_B=10.99.0.2
NETNS_ADDR6_A=fd99::1
NETNS_ADDR6_B=fd99::2

# Wait up to 10 s for a TCP listener on PORT in namespace NS (a pingpong
# server is ready once its device is up); 1 if none came.
netns_wait_listen()
{
	local ns=$1 port=$2 tries
	for tries in $(seq 100); do
		ip netns exec "$ns" ss -Hltn "sport = :$port" | grep -q . && return 0
		sleep 0.1
	done
	return 1
}

netns_down()
{
	local name=$1 ns

	[ -n "$name" ] || return 1
	for ns in "$name-a" "$name-b" "$name-m" "$name-r"; do
		ip netns del "$ns" 2>/dev/null || true
	done
	return 0
}

# Set up one host end: address, up, no IPv6 duplicate address detection wait.
_netns_host()
{
	local ns=$1 dev=$2 addr=$3 addr6=$4 mtu=$5

	ip -n "$ns" link set lo up &&
	ip -n "$ns" link set "$dev" mtu "$mtu" &&
	ip -n "$ns" addr add "$addr/24" dev "$dev" &&
	ip -n "$ns" addr add "$addr6/64" dev "$dev" nodad &&
	ip -n "$ns" link set "$dev" up
}

_netns_create()
{
	local name=$1 queues=$2 mtu=$3 middle=$4
	local a="$name-a" b="$name-b" m="$name-m"
	local q="numtxqueues $queues numrxqueues $queues"

	ip netns add "$a" && ip netns add "$b" || return 1
	if [ "$middle" = 1 ]; then
		ip netns add "$m" || return 1
		ip netns exec "$m" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 || return 1
		# shellcheck disable=SC2086
		ip link add "$a" netns "$a" $q type veth peer "$name-ma" netns "$m" $q &&
		ip link add "$b" netns "$b" $q type veth peer "$name-mb" netns "$m" $q &&
		ip -n "$m" link add br0 type bridge &&
		ip -n "$m" link set "$name-ma" master br0 mtu "$mtu" up &&
		ip -n "$m" link set "$name-mb" master br0 mtu "$mtu" up &&
		ip -n "$m" link set br0 mtu "$mtu" up || return 1
	elif [ "$middle" = routed ]; then
		_netns_routed "$name" "$queues" "$mtu"
		return
	else
		# shellcheck disable=SC2086
		ip link add "$a" netns "$a" $q type veth peer "$b" netns "$b" $q || return 1
	fi
	_netns_host "$a" "$a" $NETNS_ADDR_A $NETNS_ADDR6_A "$mtu" &&
	_netns_host "$b" "$b" $NETNS_ADDR_B $NETNS_ADDR6_B "$mtu"
}

# Two subnets and a router namespace between them (see --routed above).
_netns_routed()
{
	local name=$1 queues=$2 mtu=$3
	local a="$name-a" b="$name-b" r="$name-r" ns
	local q="numtxqueues $queues numrxqueues $queues"

	ip netns add "$r" || return 1
	# No duplicate address detection on link-local addresses either: the
	# router's neighbour discovery must not wait a second for it.
	for ns in "$a" "$b" "$r"; do
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.accept_dad=0 || return 1
	done
	# shellcheck disable=SC2086
	ip link add "$a" netns "$a" $q type veth peer "$name-ra" netns "$r" $q &&
	ip link add "$b" netns "$b" $q type veth peer "$name-rb" netns "$r" $q &&
	ip netns exec "$r" sysctl -qw net.ipv4.ip_forward=1 &&
	ip netns exec "$r" sysctl -qw net.ipv6.conf.all.forwarding=1 &&
	_netns_host "$r" "$name-ra" 10.99.1.254 fd99:1::fe "$mtu" &&
	_netns_host "$r" "$name-rb" 10.99.2.254 fd99:2::fe "$mtu" &&
	_netns_host "$a" "$a" 10.99.1.1 fd99:1::1 "$mtu" &&
	_netns_host "$b" "$b" 10.99.2.2 fd99:2::2 "$mtu" &&
	ip -n "$a" route add default via 10.99.1.254 &&
	ip -n "$a" -6 route add default via fd99:1::fe &&
	ip -n "$b" route add default via 10.99.2.254 &&
	ip -n "$b" -6 route add default via fd99:2::fe
}

netns_up()
{
	local name=$1 queues=1 mtu=1500 middle=0

	shift || { echo "netns.sh: up needs a NAME" >&2; return 2; }
	while [ $# -gt 0 ]; do
		case $1 in
		--queues) queues=$2; shift 2 ;;
		--mtu) mtu=$2; shift 2 ;;
		--middle) middle=1; shift ;;
		--routed) middle=routed; shift ;;
		*) echo "netns.sh: unknown option $1" >&2; return 2 ;;
		esac
	done
	if [ ${#name} -gt 12 ] || [ -z "$name" ]; then
		echo "netns.sh: NAME must be 1 to 12 characters (interface names)" >&2
		return 2
	fi
	if ip netns list | grep -qE "^$name-[abmr]( |\$)"; then
		echo "netns.sh: namespaces $name-* exist already (netns.sh down $name)" >&2
		return 1
	fi
	# When sourced, tear down on any exit; keep a trap that was there.
	if [ "${BASH_SOURCE[0]}" != "$0" ]; then
		NETNS_CLEANUP="${NETNS_CLEANUP:+$NETNS_CLEANUP; }netns_down $name"
		# shellcheck disable=SC2064
		trap "$NETNS_CLEANUP" EXIT
	fi
	if ! _netns_create "$name" "$queues" "$mtu" "$middle"; then
		echo "netns.sh: cannot create topology $name" >&2
		netns_down "$name"
		return 1
	fi
}

netns_usage()
{
	# The comment block at the top, from its fourth line to its end.
	awk 'NR >= 4 && !/^#/ { exit } NR >= 4 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -u
	cmd=${1:-help}
	shift || true
	case $cmd in
	up) netns_up "$@" ;;
	down) netns_down "${1:?netns.sh: down needs a NAME}" ;;
	help|-h|--help) netns_usage ;;
	*) netns_usage >&2; exit 2 ;;
	esac
fi
