#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# roxe0 in a network namespace, and GID tables next to rxe's (issue #16).
#
#   root namespace: ra (10.88.0.1, fd88::1, rxe0)  <-- veth -->
#   namespace nsb:  rb (10.88.0.2, fd88::2, roxe0: roxed --netdev rb run in nsb)
#
# rxe on 6.1 only works in the initial namespace (its UDP sockets and routes
# are init_net's), so it stays there; roxe.ko takes the netdev from the
# namespace of the process that attaches (roxed), and ib_core fills roxe0's
# GID table from rb's addresses wherever rb lives. One boot, each step a
# check:
#   - the GID tables of rxe0 and roxe0 have the same layout, index for
#     index: 0 the default GID (fe80::/64 + the MAC's EUI-64, which the
#     interface's own link-local address does not repeat), 1 the IPv4
#     address, 2 the IPv6 one; all RoCE v2. An embedded device
#     (roxe-pingpong on a third interface rc with the same kind of
#     addresses) gives the same layout; selftests/xdp/addr_netns_test
#     checks how it follows changes;
#   - a second IPv4 address B (10.88.1.x) added on both ends takes index 3
#     on both; removed, index 3 empties on both (the others keep theirs);
#     added back, it is at 3 again;
#   - ibv_rc_pingpong -c (data checked) between rxe0 in the root namespace
#     and roxe0 in nsb, on A's GID index, then on B's after its return
#     (roxed's XDP program takes frames to B again: it followed the
#     address events);
#   - `rdma system` is shared by default: roxe0 is seen from both
#     namespaces; rb moved out of nsb is, for roxe0, its netdev gone:
#     roxe0 goes, roxed exits 1. Exclusive mode (set while no other namespace exists):
#     a new roxe0 starts in the initial namespace, invisible from nsb;
#     `rdma dev set rxe0 netns nsb` is refused (6.1's rxe cannot move),
#     `rdma dev set roxe0 netns nsb` moves roxe0 (it disassociates user
#     contexts), after which only nsb sees it and ibv_rc_pingpong -c from
#     nsb to rxe0 in the root namespace works;
#   - dmesg holds no WARNING, BUG or Oops.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4

# ============================ guest side ==================================
IP=/usr/sbin/ip
KO=${ROXE_TOP:-}/build/kmod/$(uname -r)/roxe.ko
ROXED=${ROXE_TOP:-}/build/bin/roxed
PINGPONG=${ROXE_TOP:-}/build/bin/roxe-pingpong
SYS=/sys/class/infiniband
NS=nsb
PORT=18600
fail=0

log() { echo "kmod_netns: $*"; }
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }

# role DEV I: what GID I of DEV holds, by role: LL (the default GID of
# NETDEV's MAC), v4A, v6A, v4B, empty, or the GID itself.
role() {
	local g t
	g=$(cat "$SYS/$1/ports/1/gids/$2" 2>/dev/null) || { echo "?"; return; }
	t=$(cat "$SYS/$1/ports/1/gid_attrs/types/$2" 2>/dev/null || echo none)
	case "$g" in
	0000:0000:0000:0000:0000:0000:0000:0000) echo empty; return ;;
	esac
	[ "$t" = "RoCE v2" ] || { echo "$g($t)"; return; }
	case "$g" in
	0000:0000:0000:0000:0000:ffff:0a58:00*) echo v4A ;;
	0000:0000:0000:0000:0000:ffff:0a58:01*) echo v4B ;;
	fd88:0000:0000:0000:0000:0000:0000:000*) echo v6A ;;
	fe80:*) if [ "$g" = "$(eui64_gid "$3")" ]; then echo LL; else echo "$g"; fi ;;
	*) echo "$g" ;;
	esac
}

# eui64_gid MAC: fe80::/64 with MAC's modified EUI-64, as sysfs prints it
eui64_gid() {
	local m
	IFS=: read -r -a m <<<"$1"
	printf 'fe80:0000:0000:0000:%02x%s:%sff:fe%s:%s%s' $((0x${m[0]} ^ 2)) "${m[1]}" "${m[2]}" \
		"${m[3]}" "${m[4]}" "${m[5]}"
}

# layout DEV MAC: roles of GIDs 0..4
layout() {
	local i out=""
	for i in 0 1 2 3 4; do out="$out $i:$(role "$1" $i "$2")"; done
	echo "${out# }"
}

MAC_A="" MAC_B=""
lay_rxe() { layout rxe0 "$MAC_A"; }
lay_roxe() { layout roxe0 "$MAC_B"; }
# both_are LAYOUT: rxe0's and roxe0's tables both show LAYOUT
both_are() { [ "$(lay_rxe)" = "$1" ] && [ "$(lay_roxe)" = "$1" ]; }

check_layout() {
	local want=$1 what=$2
	if vm_wait_for 10 both_are "$want"; then
		ok "$what: rxe0 and roxe0 both '$want'"
	else
		bad "$what: want '$want'"
		log "    rxe0:  $(lay_rxe)"
		log "    roxe0: $(lay_roxe)"
	fi
}

ns_listening() { $IP netns exec $NS netstat -ltn | grep ":$1 " >/dev/null; }

# pingpong LABEL GIDX: ibv_rc_pingpong -c, server roxe0 in nsb, client rxe0
pingpong() {
	local label=$1 gx=$2 spid rc=0 logf=$ROXE_VM_OUT/pp-${1// /_}
	PORT=$((PORT + 1))
	$IP netns exec $NS ibv_rc_pingpong -d roxe0 -g "$gx" -p $PORT -c -e -s 4096 -n 50 \
		>"$logf.srv" 2>&1 &
	spid=$!
	if ! vm_wait_for 20 ns_listening $PORT; then
		bad "$label: server did not listen"
		kill $spid 2>/dev/null || true
		return
	fi
	timeout 120 ibv_rc_pingpong -d rxe0 -g "$gx" -p $PORT -c -e -s 4096 -n 50 10.88.0.2 \
		>"$logf.cli" 2>&1 || rc=$?
	wait $spid || rc=$((rc ? rc : 1))
	if [ $rc = 0 ] && grep -q "50 iters" "$logf.cli"; then
		ok "$label: ibv_rc_pingpong -c rxe0 (root) <-> roxe0 ($NS), GID index $gx: $(grep -m1 'bytes in' "$logf.cli")"
	else
		bad "$label: ibv_rc_pingpong failed ($rc)"
		sed 's/^/    cli: /' "$logf.cli"
		sed 's/^/    srv: /' "$logf.srv"
	fi
}

# exited PID: PID is gone or a zombie
exited() { [ ! -e "/proc/$1" ] || grep -q '^State:.*Z' "/proc/$1/status"; }

start_roxed() {
	$IP netns exec $NS "$ROXED" --netdev rb --foreground 2>>"$ROXE_VM_OUT/roxed.log" &
	ROXED_PID=$!
	vm_wait_for 20 vm_have_dev roxe0
}

stop_roxed() {
	kill -TERM "$ROXED_PID" 2>/dev/null || true
	wait "$ROXED_PID" || true
	vm_wait_for 10 vm_no_dev roxe0
}

step_setup() {
	$IP netns add $NS
	$IP link add ra type veth peer name rb
	$IP link set rb netns $NS
	$IP addr add 10.88.0.1/24 dev ra
	$IP addr add fd88::1/64 dev ra nodad
	$IP link set ra up
	$IP -n $NS link set lo up
	$IP -n $NS addr add 10.88.0.2/24 dev rb
	$IP -n $NS addr add fd88::2/64 dev rb nodad
	$IP -n $NS link set rb up
	MAC_A=$(cat /sys/class/net/ra/address)
	MAC_B=$($IP netns exec $NS cat /sys/class/net/rb/address)
	ping -c 1 -W 5 10.88.0.2 >/dev/null || { bad "no IP path to $NS"; return 1; }
	rdma link add rxe0 type rxe netdev ra || { bad "rdma link add rxe0"; return 1; }
	insmod "$KO" || { bad "insmod $KO"; return 1; }
	if ! start_roxed; then
		bad "roxed --netdev rb in $NS registered no roxe0"
		cat "$ROXE_VM_OUT/roxed.log"
		return 1
	fi
	vm_wait_for 10 vm_verbs_dev roxe0 || { bad "no uverbs device for roxe0"; return 1; }
	ok "rxe0 on ra (root namespace), roxe0 on rb (roxed in $NS)"
	rdma link show | sed 's/^/    /'
}

step_gids() {
	check_layout "0:LL 1:v4A 2:v6A 3:empty 4:empty" "GID tables at start"
	$IP addr add 10.88.1.1/24 dev ra
	$IP -n $NS addr add 10.88.1.2/24 dev rb
	check_layout "0:LL 1:v4A 2:v6A 3:v4B 4:empty" "B added"
	$IP addr del 10.88.1.1/24 dev ra
	$IP -n $NS addr del 10.88.1.2/24 dev rb
	check_layout "0:LL 1:v4A 2:v6A 3:empty 4:empty" "B removed"
	pingpong "on A while B is away" 1
	$IP addr add 10.88.1.1/24 dev ra
	$IP -n $NS addr add 10.88.1.2/24 dev rb
	check_layout "0:LL 1:v4A 2:v6A 3:v4B 4:empty" "B back"
	pingpong "on B after its return" 3
}

# The embedded device's table (roxe-pingpong prints its GID at -g I before
# it connects) on an interface with the same kind of addresses: the same
# layout as rxe0's and roxe0's at start.
step_embedded() {
	local i g out lay=""
	$IP link add rc type veth peer name rd
	$IP addr add 10.88.2.1/24 dev rc
	$IP addr add fd88::21/64 dev rc nodad
	$IP link set rd up
	$IP link set rc up
	for i in 0 1 2 3; do
		out=$(timeout 30 "$PINGPONG" --netdev rc -g $i -n 1 -p 1 127.0.0.1 2>&1 || true)
		g=$(sed -n 's/.*local address:.*GID \(.*\)$/\1/p' <<<"$out")
		case "$g" in
		"$(eui64_ip6 "$(cat /sys/class/net/rc/address)")") g=LL ;;
		::ffff:10.88.2.1) g=v4A ;;
		fd88::21) g=v6A ;;
		"") g=empty ;;
		esac
		lay="$lay $i:$g"
	done
	lay=${lay# }
	[ "$lay" = "0:LL 1:v4A 2:v6A 3:empty" ] &&
		ok "embedded device on rc: '$lay', as rxe0's and roxe0's" ||
		bad "embedded device on rc: '$lay', want '0:LL 1:v4A 2:v6A 3:empty'"
	$IP link del rc
}

# eui64_ip6 MAC: the default GID as inet_ntop writes it
eui64_ip6() {
	local m
	IFS=: read -r -a m <<<"$1"
	printf 'fe80::%x:%x:%x:%x' $(((0x${m[0]} ^ 2) << 8 | 0x${m[1]})) \
		$((0x${m[2]} << 8 | 0xff)) $((0xfe << 8 | 0x${m[3]})) $((0x${m[4]} << 8 | 0x${m[5]}))
}

# rdma system: shared (the default) lets every namespace see roxe0;
# exclusive can only be set while no other namespace exists.
step_netns_mode() {
	local out rc=0
	out=$(rdma system show 2>&1) || true
	grep -q 'netns shared' <<<"$out" && ok "rdma system: $out" || bad "rdma system: $out"
	$IP netns exec $NS rdma dev 2>&1 | grep '^[0-9]*: roxe0' >/dev/null &&
		rdma dev 2>&1 | grep '^[0-9]*: roxe0' >/dev/null &&
		ok "shared: roxe0 seen from the root namespace and from $NS" ||
		bad "shared: roxe0 not seen from both namespaces"
	# rb leaves roxed's namespace: for roxe0 that is the netdev going away
	$IP -n $NS link set rb netns 1
	if vm_wait_for 10 vm_no_dev roxe0 && vm_wait_for 10 exited "$ROXED_PID"; then
		rc=0
		wait "$ROXED_PID" || rc=$?
		[ $rc = 1 ] && ok "rb moved out of $NS: roxe0 went, roxed exited 1" ||
			bad "rb moved out of $NS: roxed exited $rc"
	else
		bad "rb moved out of $NS: roxe0 or roxed still there"
		stop_roxed || true
	fi
	rdma link del rxe0
	$IP link del ra
	$IP netns del $NS
	if ! rdma system set netns exclusive; then
		bad "rdma system set netns exclusive"
		return
	fi
	ok "rdma system: $(rdma system show 2>&1)"
	$IP netns add $NS
	$IP link add ra type veth peer name rb
	$IP link set rb netns $NS
	$IP addr add 10.88.0.1/24 dev ra
	$IP link set ra up
	$IP -n $NS link set lo up
	$IP -n $NS addr add 10.88.0.2/24 dev rb
	$IP -n $NS link set rb up
	rdma link add rxe0 type rxe netdev ra || bad "exclusive: rdma link add rxe0"
	if ! start_roxed; then
		bad "exclusive: roxed in $NS registered no roxe0"
		rdma system set netns shared || true
		return
	fi
	if $IP netns exec $NS rdma dev 2>&1 | grep 'roxe0' >/dev/null; then
		bad "exclusive: roxe0 seen from $NS before any move"
	else
		ok "exclusive: roxe0 starts in the initial namespace, not seen from $NS"
	fi
	# rxe cannot move (6.1's rxe has no disassociate_ucontext); roxe0 can
	if out=$(rdma dev set rxe0 netns $NS 2>&1); then
		bad "exclusive: rdma dev set rxe0 netns $NS accepted (6.1 refuses it)"
	else
		ok "exclusive: rxe0 cannot move: ${out//$'\n'/ }"
	fi
	rc=0
	out=$(rdma dev set roxe0 netns $NS 2>&1) || rc=$?
	if [ $rc != 0 ]; then
		bad "exclusive: rdma dev set roxe0 netns $NS: exit $rc ${out}"
	elif ! $IP netns exec $NS rdma dev 2>&1 | grep ': roxe0:' >/dev/null ||
	     rdma dev 2>&1 | grep ': roxe0:' >/dev/null; then
		bad "exclusive: after the move roxe0 is not in $NS alone"
		$IP netns exec $NS rdma dev 2>&1 | sed 's/^/    nsb rdma dev: /'
		rdma dev 2>&1 | sed 's/^/    root rdma dev: /'
	else
		ok "exclusive: rdma dev set roxe0 netns $NS: roxe0 now seen from $NS only"
		pingpong "exclusive, roxe0 moved to $NS" 1
	fi
	stop_roxed || bad "exclusive: roxe0 did not go after SIGTERM to roxed"
	rdma link del rxe0 || true
	$IP netns del $NS
	rdma system set netns shared || bad "rdma system set netns shared"
}

guest_main() {
	local t0=$SECONDS
	: >"$ROXE_VM_OUT/roxed.log"
	dmesg -c >/dev/null
	if step_setup; then
		step_gids
		step_embedded
		step_netns_mode
	fi
	vm_check_dmesg
	log "guest part took $((SECONDS - t0)) s"
	return $fail
}

# ============================ host side ===================================
host_missing() { echo "kmod_netns: FAIL: missing: $*"; exit $KSFT_FAIL; }

host_main() {
	local top out
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	out=$(vm_out kmod_netns)
	vm_host_ready
	vm_need_kmod "$top"
	[ -x "$top/build/bin/roxed" ] || host_missing "build/bin/roxed missing (make)"
	vm_run_guest kmod_netns "$out" 240 \
		--add "$top/build/kmod/$KVER/roxe.ko" --add "$top/build/bin/roxed" \
		--add "$top/build/bin/roxe-pingpong" --add "$top/selftests/vm/vm_lib.sh"
	echo "kmod_netns: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	guest_main
else
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"
	host_main
fi
