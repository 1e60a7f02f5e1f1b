#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# roxe0 (roxe.ko + roxed) against kernel rxe through a router, over IPv4
# and IPv6 GIDs, one boot. In the guest:
#
#   rxa (rxe0)              namespace rt (forwarding)              rxb (roxe0)
#   10.77.3.1/24   <-veth->  ra 10.77.3.254 | rb 10.77.4.254  <-veth->  10.77.4.2/24
#   fd77:3::1/64             fd77:3::fe    | fd77:4::fe              fd77:4::2/64
#
# rxa and rxb are both in the root namespace (6.1's rxe only works there):
# policy routes send traffic between their addresses through the router
# (`via`, so the next hop is the router's MAC) instead of through lo, with
# a hop limit of their own: 9 from rxa's side, 11 from rxb's. ib_core
# resolves a user QP's or AH's next hop and hop limit from the route
# (ib_resolve_eth_dmac), for rxe and roxe0 alike: ibv_rc_pingpong's
# hop_limit 1 becomes the route's, and roxe0 must send what ib_core gave it.
#
# Cases, each both ways round (roxe0 server, then rxe0 server):
#   - ibv_rc_pingpong -c -e -g <GID>, perftest ib_write_bw and ib_read_bw
#     -x <GID>, over the IPv4 GIDs and over the IPv6 GIDs;
#   - tcpdump in rt: every RoCE frame rxe0 sent arrives with TTL / hop
#     limit 9, every frame roxe0 sent with 11;
#   - rxe0's counters: no unrecovered error.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
A4=10.77.3.1 B4=10.77.4.2 A6=fd77:3::1 B6=fd77:4::2
# the IPv6 GIDs as sysfs writes them
A6_GID=fd77:0003:0000:0000:0000:0000:0000:0001
B6_GID=fd77:0004:0000:0000:0000:0000:0000:0002
HOPS_A=9 HOPS_B=11

# ============================ guest side ==================================
KO=${ROXE_TOP:-}/build/kmod/$(uname -r)/roxe.ko
ROXED=${ROXE_TOP:-}/build/bin/roxed
IP=/usr/sbin/ip
fail=0

log() { echo "route_interop: $*"; }
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }

# gid_index DEV GID: the RoCE v2 GID index of GID (sysfs form) on DEV
gid_index() {
	local port=/sys/class/infiniband/$1/ports/1 i
	for i in $(seq 0 15); do
		[ "$(cat "$port/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] || continue
		[ "$(cat "$port/gids/$i")" = "$2" ] || continue
		echo "$i"
		return 0
	done
	return 1
}

v4_gid() {
	local a
	IFS=. read -r -a a <<<"$1"
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "${a[@]}"
}

in_rt() { $IP netns exec rt "$@"; }

# The routed topology above; 1 after bad.
setup_net() {
	local f
	mkdir -p /run/netns
	echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad
	$IP netns add rt
	in_rt sh -c 'echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad'
	$IP link add rxa type veth peer name ra netns rt
	$IP link add rxb type veth peer name rb netns rt
	in_rt sh -c 'echo 1 >/proc/sys/net/ipv4/ip_forward; echo 1 >/proc/sys/net/ipv6/conf/all/forwarding'
	in_rt $IP link set lo up
	in_rt $IP addr add 10.77.3.254/24 dev ra
	in_rt $IP addr add 10.77.4.254/24 dev rb
	in_rt $IP addr add fd77:3::fe/64 dev ra nodad
	in_rt $IP addr add fd77:4::fe/64 dev rb nodad
	in_rt $IP link set ra up
	in_rt $IP link set rb up
	$IP addr add $A4/24 dev rxa
	$IP addr add $B4/24 dev rxb
	$IP addr add $A6/64 dev rxa nodad
	$IP addr add $B6/64 dev rxb nodad
	# Both ends are local here: accept frames from our own addresses.
	for f in all/accept_local rxa/accept_local rxb/accept_local; do
		echo 1 >"/proc/sys/net/ipv4/conf/$f"
	done
	for f in all rxa rxb; do echo 0 >"/proc/sys/net/ipv4/conf/$f/rp_filter"; done
	$IP link set rxa up
	$IP link set rxb up
	# Ahead of the local table: each end reaches the other through rt.
	$IP rule add pref 10 iif lo to $B4 lookup 101
	$IP rule add pref 11 iif lo to $A4 lookup 102
	$IP rule add pref 100 lookup local
	$IP rule del pref 0
	$IP route add $B4/32 via 10.77.3.254 dev rxa src $A4 hoplimit $HOPS_A table 101
	$IP route add $A4/32 via 10.77.4.254 dev rxb src $B4 hoplimit $HOPS_B table 102
	$IP -6 rule add pref 10 iif lo to $B6 lookup 101
	$IP -6 rule add pref 11 iif lo to $A6 lookup 102
	$IP -6 rule add pref 100 lookup local
	$IP -6 rule del pref 0
	$IP -6 route add $B6/128 via fd77:3::fe dev rxa src $A6 hoplimit $HOPS_A table 101
	$IP -6 route add $A6/128 via fd77:4::fe dev rxb src $B6 hoplimit $HOPS_B table 102
	ping -c 1 -W 5 $B4 >/dev/null && ping -6 -c 1 -W 5 $B6 >/dev/null ||
		{ bad "no IP path through the router"; $IP route get $B4; $IP -6 route get $B6; return 1; }
	$IP route get $B4 | sed -n 1p | grep "via 10.77.3.254" >/dev/null ||
		{ bad "$B4 is not reached through the router: $($IP route get $B4)"; return 1; }
	ok "router namespace between rxa ($A4, $A6) and rxb ($B4, $B6)"
}

setup_rdma() {
	insmod "$KO" || { bad "insmod $KO"; return 1; }
	rdma link add rxe0 type rxe netdev rxa
	"$ROXED" --netdev rxb --foreground 2>>"$ROXE_VM_OUT/roxed.log" &
	ROXED_PID=$!
	vm_wait_for 20 vm_have_dev roxe0 ||
		{ bad "roxed --netdev rxb registered no roxe0"; cat "$ROXE_VM_OUT/roxed.log"; return 1; }
	vm_wait_for 10 vm_verbs_dev roxe0 || { bad "no uverbs device for roxe0"; return 1; }
	vm_wait_for 10 gid_index rxe0 "$(v4_gid $A4)" && vm_wait_for 10 gid_index roxe0 "$(v4_gid $B4)" &&
		vm_wait_for 10 gid_index rxe0 $A6_GID && vm_wait_for 10 gid_index roxe0 $B6_GID ||
		{ bad "no RoCE v2 GIDs"; return 1; }
	GX4=$(gid_index rxe0 "$(v4_gid $A4)") GR4=$(gid_index roxe0 "$(v4_gid $B4)")
	GX6=$(gid_index rxe0 $A6_GID) GR6=$(gid_index roxe0 $B6_GID)
	ok "rxe0 on rxa (gids $GX4, $GX6), roxe0 on rxb (gids $GR4, $GR6), roxed pid $ROXED_PID"
}

# run_once LABEL PROG SDEV SGID CDEV CGID SADDR GOPT ARGS...
PORT=19500
run_once() {
	PORT=$((PORT + 1))
	vm_run_pair "$1" vm_listening $PORT "${@:2}" || true
}

# run FAMILY NAME PROG ARGS...: both ways round over FAMILY's GIDs (the
# TCP exchange over IPv4 either way).
run() {
	local fam=$1 name=$2 prog=$3 gopt=-x gx gr
	shift 3
	case "$prog" in ibv_*) gopt=-g ;; esac
	if [ "$fam" = 4 ]; then gx=$GX4 gr=$GR4; else gx=$GX6 gr=$GR6; fi
	run_once "IPv$fam $name roxe0 server" "$prog" roxe0 "$gr" rxe0 "$gx" $B4 "$gopt" "$@"
	run_once "IPv$fam $name rxe0 server" "$prog" rxe0 "$gx" roxe0 "$gr" $A4 "$gopt" "$@"
}

# capture_start IF SRC FILE: RoCE frames from SRC arriving at rt's IF
capture_start() {
	# not in_rt: $! must be tcpdump itself (ip execs it), not a subshell.
	# Immediate mode gives each frame a slot of the snap length: with
	# the default (256 KiB) and buffer (2 MiB) the ring holds 7 frames,
	# and the kernel drops what -v's printing is too slow to take.
	$IP netns exec rt tcpdump -i "$1" -nn -v -l --immediate-mode -s 128 -B 4096 -Z root "udp port 4791 and src host $2" \
		>"$3" 2>"$3.err" &
	CAP_PIDS="${CAP_PIDS:-} $!:$3"
	tcpdump_listening $! "$3.err" || bad "tcpdump on $1 did not start"
}

capture_stop() {
	local p f
	for p in $CAP_PIDS; do
		f=${p#*:}
		tcpdump_stop "${p%%:*}" "$f.err" || bad "tcpdump into $f stopped before it wrote every frame"
	done
	CAP_PIDS=
}

# check_hops FILE WHO WANT: every frame in FILE had TTL / hop limit WANT
check_hops() {
	local seen
	seen=$(grep -oE '(ttl|hlim) [0-9]+' "$1" | sort | uniq -c | tr -s ' ' | tr '\n' ';' || true)
	if [ -z "$seen" ]; then
		bad "$2: no RoCE frames captured"
	elif [ "$(grep -oE '(ttl|hlim) [0-9]+' "$1" | awk '{ print $2 }' | sort -u)" = "$3" ]; then
		ok "$2: every frame arrived at the router with hop limit $3 (the route's) ($seen)"
	else
		bad "$2: hop limits seen at the router: $seen; the route says $3"
	fi
}

family() {
	local fam=$1 a b out=$ROXE_VM_OUT/cap$1
	if [ "$fam" = 4 ]; then a=$A4 b=$B4; else a=$A6 b=$B6; fi
	capture_start ra "$a" "$out-rxe0.txt"
	capture_start rb "$b" "$out-roxe0.txt"
	run "$fam" "rc_pingpong" ibv_rc_pingpong -c -e -s 4096 -n 20
	capture_stop
	check_hops "$out-rxe0.txt" "IPv$fam rxe0's frames" $HOPS_A
	check_hops "$out-roxe0.txt" "IPv$fam roxe0's frames" $HOPS_B
	run "$fam" "ib_write_bw" ib_write_bw -F -s 65536 -n 50
	run "$fam" "ib_read_bw" ib_read_bw -F -e -s 65536 -n 50
}

guest_main() {
	# every pair's QPs with a local ACK timeout of 4 s at least: stock
	# programs set 67 ms, less than the hop through rt under TCG may
	# delay an ACK; then no retry is excused (roxe-linger.so)
	VM_PAIR_ENV=(LD_PRELOAD="$ROXE_TOP/build/lib/roxe-linger.so" ROXE_MIN_TIMEOUT=20)
	setup_net || exit 1
	setup_rdma || exit 1
	family 4
	family 6
	vm_rxe_counters rxe0 >"$ROXE_VM_OUT/rxe-counters"
	# every error counter, rxe's retries (completer_retry_err) too
	vm_check_rxe_counters "$ROXE_VM_OUT/rxe-counters" "rxe0 after the runs" | sed 's/^/    /'
	[ "${PIPESTATUS[0]}" = 0 ] || bad "rxe counted errors"
	vm_check_dmesg
	[ $fail = 0 ] && log "PASS" || log "FAIL"
	exit $fail
}

# ============================ host side ===================================
host_missing() { echo "route_interop: FAIL: missing: $*"; exit $KSFT_FAIL; }

host_main() {
	local top out
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	out=$(vm_out route-interop)
	vm_host_ready
	vm_need_kmod "$top"
	[ -x "$top/build/bin/roxed" ] || host_missing "build/bin/roxed missing (make)"
	vm_run_guest route_interop "$out" 300 \
		--add "$top/build/kmod/$KVER/roxe.ko" --add "$top/build/bin/roxed" \
		--add "$top/selftests/vm/vm_lib.sh"
	echo "route_interop: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	guest_main
else
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"
	host_main
fi
