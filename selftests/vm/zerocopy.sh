#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# AF_XDP zero-copy for real (issue #37): two roxe engines on two NICs of
# one guest, joined back to back, each NIC in its own network namespace,
# on trixie-backports' kernel: virtio-net (virtio_net has AF_XDP zero-copy
# from 6.13; 6.1 and 6.12 refuse it), or, run as zerocopy-igb.sh (a link
# here; or ZC_NIC=igb), QEMU's emulated 82576 (igb has it from 6.14).
#
#   guest: eth0 (namespace A, 10.77.0.2) and eth1 (namespace B,
#          10.77.0.3); their taps are joined by a bridge in the VM's
#          namespace (run.sh --pair).
#          virtio-net: ZC_NIC_QUEUES queue pairs (default 2) each,
#          iommu_platform=on and disable-legacy=on (run.sh --dma-api:
#          virtio_net's zero-copy needs rings that use the DMA API).
#          igb: bookworm-backports' QEMU (run.sh --nic igb; Debian 12's
#          7.2 has no igb), 2 vCPUs, so 2 of the 82576's queues at boot;
#          the test sets 1, then 2 (ethtool -L), RSS over the UDP ports
#          (ethtool -N rx-flow-hash udp4 sdfn) with a fixed key (-X)
#   roxe:  roxe-perf at both ends (native XDP; roxe binds XDP_ZEROCOPY |
#          XDP_USE_NEED_WAKEUP first)
#
# Checks:
#   - xsk_bind (selftests/vm/xsk_bind.c) on the bare eth1: the kernel's
#     answer to a zero-copy bind with and without XDP_USE_SG (printed);
#     without XDP_USE_SG it must be ok;
#   - at netdev MTU 1500, with 1 queue pair in use (-E 1) and with 2 (-E 2):
#     WRITE, READ, SEND and FETCH_ADD, roxe-perf --verify at path MTU 1024
#     (every byte and every returned value checked at the receiving end,
#     "verify: 0 errors", exit 0 at both ends), the server in B for WRITE
#     and READ, in A for SEND and atomics; while each server waits,
#     roxectl status in its namespace: native mode, a socket per engine
#     on every queue the NIC uses, each "zerocopy" as the kernel reports it
#     (sock_diag's XDP_DU_F_ZEROCOPY); igb: the WRITE's 4 QPs put frames
#     on both of eth1's queues (ethtool -S);
#   - fill ring starvation (2 queues): the WRITE server stopped (SIGSTOP)
#     mid-stream and frames for its QP sent until the kernel counts its
#     fill ring empty (roxectl status --json: fill_ring_empty grew), then
#     resumed: the stream completes, verified;
#   - queue reset (2 queues): the WRITE server's rings halved and restored
#     mid-stream (ethtool -G: virtio_net resets each virtqueue, igb
#     restarts its rings), each size as asked; the stream completes,
#     verified, its sockets as before (zerocopy);
#   - the SEND server's NIC down for 2 s and up again mid-stream: carrier
#     again, its sockets as before (zerocopy), the stream completes,
#     verified;
#   - at netdev MTU 9000, WRITE --verify at path MTU 4096: roxe's mode must
#     be what the driver allows a multi-buffer bind (zero-copy when
#     xsk_bind's XDP_USE_SG bind was ok, else copy: a 4096-byte RoCE frame
#     does not fit one 4096-byte chunk behind 256 bytes of headroom);
#     igb refuses a driver-mode XDP program there (its 3 KiB receive
#     buffers), so roxe's program is generic and its sockets copy;
#   - dmesg without WARNING, BUG or Oops.
#
# The guest has as many vCPUs as its NICs have queue pairs, and the queue
# pairs in use only grow during the test. 7.3.4's virtio_net oopses
# otherwise: with 1 vCPU and 2 pairs, XDP adds a pair for XDP_TX to the one
# in use, roxe binds zero-copy there too, and detaching XDP takes the pair
# away before the kernel releases the socket's pool (a deferred work): the
# driver's pool disable refuses a queue beyond those in use (EINVAL) and
# leaves the pool on the receive queue; the next zero-copy bind there
# recycles the freed pool's buffers (xp_free from virtnet_rq_bind_xsk_pool,
# a page fault; docs/kernels.md).
#
#   KVER (default trixie-bpo), ZC_NIC (virtio, the default, or igb),
#   ZC_NIC_QUEUES (default 2).
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
PORT=18700
# zerocopy-igb.sh (a link to this file) runs the same on igb
NIC=${ZC_NIC:-virtio}
[ "${0##*/}" != zerocopy-igb.sh ] || NIC=igb
NICQ=${ZC_NIC_QUEUES:-2}
# as many vCPUs as queue pairs: virtio_net's XDP then adds no pairs of its
# own for XDP_TX (it wants one per vCPU beyond those in use), which it
# takes away again when the program goes (see the top)
SMP=$NICQ
PERF_TIMEOUT=120
A_ADDR=10.77.0.2
B_ADDR=10.77.0.3

NAME=zerocopy
[ "$NIC" = virtio ] || NAME=zerocopy-$NIC
log() { echo "$NAME: $*"; }

# ============================ guest side ==================================
fail=0
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }
IP=/usr/sbin/ip

# nsx NS CMD...: CMD in the guest's namespace NS
nsx() { local ns=$1; shift; $IP netns exec "$ns" "$@"; }

# live_queues NS IF: the queue pairs IF uses now (with XDP attached
# virtio_net adds pairs for XDP_TX where it has them)
live_queues() { nsx "$1" ethtool -l "$2" | awk '/^Current/ { c = 1 } c && /^Combined:/ { print $2 }'; }

listening() { nsx "$1" netstat -ltn | grep ":$2 " >/dev/null; }

# check_status FILE IF ENGINES QUEUES WANT [XDP]: roxectl status's tables
# for IF: XDP mode (native), ENGINES engines, one socket per engine on
# each of QUEUES queues, every socket's mode WANT (zerocopy or copy)
check_status() {
	local f=$1 ifc=$2 ne=$3 nq=$4 want=$5 xdp=${6:-native} mode engines socks n
	sed 's/^/    /' "$f"
	mode=$(awk -v i="$ifc" '$1 == i && NF == 5 && $2 !~ /^[0-9]+$/ { print $2; exit }' "$f")
	engines=$(awk -v i="$ifc" '$1 == i && NF == 5 && $2 !~ /^[0-9]+$/ { print $4; exit }' "$f")
	[ "${mode:-}" = "$xdp" ] || bad "$ifc: mode '${mode:-none}', want $xdp"
	[ "${engines:-}" = "$ne" ] || bad "$ifc: ${engines:-no} engines, want $ne"
	socks=$(awk -v i="$ifc" '$1 == i && NF == 5 && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/' "$f")
	n=$(grep -c . <<<"$socks" || true)
	[ "$n" = $((ne * nq)) ] || bad "$ifc: $n AF_XDP sockets, want $((ne * nq)) (engines x queues)"
	n=$(grep -c " $want\$" <<<"$socks" || true)
	if [ "$n" = $((ne * nq)) ]; then
		ok "$ifc: $n AF_XDP sockets on $nq queues, every one $want"
	else
		bad "$ifc: $n of $((ne * nq)) AF_XDP sockets $want"
	fi
}

# perf LABEL SNS SIF CNS CIF SADDR ENGINES WANT ARGS...: roxe-perf ARGS
# --verify with ENGINES engines, the server in SNS on SIF, the client in
# CNS on CIF towards the server's SADDR; roxectl status of the server
# while it waits: its sockets cover every queue pair SIF uses then, in
# XDP mode PERF_XDP (native). PERF_DURING: a command run (with the
# server's roxe-perf pid) once the client has started; its failure fails
# the case.
PERF_XDP=native
PERF_DURING=
perf() {
	local label=$1 sns=$2 sif=$3 cns=$4 cif=$5 saddr=$6 ne=$7 want=$8 o=$ROXE_VM_OUT
	local pp=$ROXE_TOP/build/bin/roxe-perf spid cpid rc=0 src=0 drc=0 tag=${1// /_} nq
	shift 8
	nsx "$sns" timeout $PERF_TIMEOUT "$pp" "$@" --netdev "$sif" -E "$ne" -p $PORT --verify \
		>"$o/$tag.srv" 2>&1 &
	spid=$!
	if ! vm_wait_for 30 listening "$sns" $PORT; then
		bad "$label: the server did not listen"
		sed 's/^/    srv: /' "$o/$tag.srv" | tail -n 10
		kill $spid 2>/dev/null
		wait $spid || true
		return 0
	fi
	nsx "$sns" "$ROXE_TOP/build/bin/roxectl" status >"$o/$tag.status" 2>&1 || bad "roxectl status in $sns"
	nq=$(live_queues "$sns" "$sif")
	check_status "$o/$tag.status" "$sif" "$ne" "$nq" "$want" "$PERF_XDP"
	nsx "$cns" timeout $PERF_TIMEOUT "$pp" "$@" --netdev "$cif" -E "$ne" -p $PORT --verify "$saddr" \
		>"$o/$tag.cli" 2>&1 &
	cpid=$!
	# timeout's child: the server's roxe-perf
	[ -z "$PERF_DURING" ] || $PERF_DURING "$(cat /proc/$spid/task/$spid/children)" || drc=$?
	wait $cpid || rc=$?
	wait $spid || src=$?
	[ $drc = 0 ] || bad "$label: $PERF_DURING failed ($drc)"
	if [ $rc = 0 ] && [ $src = 0 ] && grep -q '^ verify: 0 errors$' "$o/$tag.cli" &&
		grep -q '^ verify: 0 errors$' "$o/$tag.srv"; then
		ok "$label ($want): $(grep -E '^ +[0-9]+ +[0-9]+ ' "$o/$tag.cli" | tail -n 1 | tr -s ' '), verify: 0 errors at both ends"
	else
		bad "$label: client exit $rc, server exit $src"
		sed 's/^/    cli: /' "$o/$tag.cli" | tail -n 10
		sed 's/^/    srv: /' "$o/$tag.srv" | tail -n 10
	fi
}

# the usual Toeplitz key (Microsoft's RSS example): the same queue for
# the same flow in every run (igb's own is random)
RSS_KEY=6d:5a:56:da:25:5b:0e:c2:41:67:25:3d:43:a3:8f:b0:d0:ca:2b:cb:ae:7b:30:b4:77:cb:2d:a3:80:30:f2:0c:6a:42:b7:3b:be:ac:01:fa

# queues Q: both NICs with Q queue pairs in use, as a user sets them; on
# igb RSS over the UDP ports too (its default hashes UDP on the
# addresses alone, which puts every RoCE v2 frame between two hosts on
# one queue), with a fixed key
set_queues() {
	local ns ifc
	for ns in A B; do
		ifc=eth0
		[ $ns = A ] || ifc=eth1
		nsx $ns ethtool -L $ifc combined "$1" || bad "ethtool -L $ifc combined $1"
		[ "$NIC" = igb ] || continue
		nsx $ns ethtool -N $ifc rx-flow-hash udp4 sdfn || bad "ethtool -N $ifc rx-flow-hash udp4 sdfn"
		nsx $ns ethtool -X $ifc hkey $RSS_KEY equal "$1" || bad "ethtool -X $ifc hkey ... equal $1"
	done
}

# nic_features IF: the virtio features the driver took, by name where it
# matters here; igb's driver and firmware
nic_features() {
	local f
	if [ "$NIC" = igb ]; then
		ethtool -i "$1" | awk '/^(driver|firmware-version):/ { printf "%s ", $0 }'
		return
	fi
	f=$(cat "/sys/class/net/$1/device/features")
	echo "ACCESS_PLATFORM=${f:33:1} MRG_RXBUF=${f:15:1} RING_RESET=${f:40:1} VERSION_1=${f:32:1}"
}

# rx_queues NS IF: "q0=N q1=N ..." the frames each receive queue took
# (igb's rx_queue_N_packets)
rx_queues() {
	nsx "$1" ethtool -S "$2" | awk '
		$1 ~ /^rx_queue_[0-9]+_packets:$/ { q = substr($1, 10); sub(/_packets:$/, "", q); printf "q%s=%s ", q, $2 }'
}

# every_queue_took BEFORE AFTER: rx_queues's counts grew on every queue
every_queue_took() {
	local b a
	for a in $2; do
		b=$(tr ' ' '\n' <<<"$1" | grep "^${a%%=*}=" || echo "${a%%=*}=0")
		[ "${a#*=}" -gt "${b#*=}" ] || return 1
	done
}

# fill_empty NS: the times the kernel found a fill ring of NS's AF_XDP
# sockets empty (roxectl status --json: xsk_diag's n_fill_ring_empty,
# per pool: the sockets of a queue share one, and each tells it)
fill_empty() {
	nsx "$1" "$ROXE_TOP/build/bin/roxectl" status --json |
		grep -o '"fill_ring_empty": [0-9]*' | awk '{ n += $2 } END { print n + 0 }'
}

# starve PID: the server (PID) stopped for a while mid-stream, and frames
# for its QP sent to it until the kernel finds the fill ring of its NIC's
# queue empty (zero-copy: the driver then waits for a wakeup to fill its
# ring again). Those frames (RoCE v2 to the server's QPN, with a bad
# ICRC) take receive buffers as the stream's would, and roxe drops them
# unread; the client's resends bring the stream back once the server runs
# again. The client's own frames cannot do it: a stalled QP's window
# shrinks to a few packets, far below a fill ring's 1024 and more.
STARVE_MAX=8000
stream_qpn() { nsx B "$ROXE_TOP/build/bin/roxectl" stats eth1 --json | grep -o '"qpn":[0-9]*' | sed -n 1p | grep .; }
starve() {
	local pid=$1 qpn before during i bth t0
	[ -n "$pid" ] || { log "starve: no server pid"; return 1; }
	# the stream's QP: the one XDP has steered frames to, once it streams
	vm_wait_for 30 stream_qpn || { log "starve: no QP with traffic on eth1 (roxectl stats)"; return 1; }
	sleep 1
	qpn=$(stream_qpn)
	qpn=$(printf '%06x' "${qpn#*:}")
	# BTH: RC SEND_ONLY, pkey 0xffff, the QPN, PSN 0; 64 bytes of
	# payload; an ICRC of zeros
	bth='\x04\x00\xff\xff\x00\x'${qpn:0:2}'\x'${qpn:2:2}'\x'${qpn:4:2}'\x00\x00\x00\x00'
	bth+=$(printf '\\x00%.0s' $(seq 68))
	before=$(fill_empty B)
	kill -STOP "$pid" || return 1
	during=$before t0=$SECONDS
	# from A, 500 at a time, until a fill ring ran dry (at most
	# STARVE_MAX frames, 5 s)
	for ((i = 0; i < STARVE_MAX && SECONDS - t0 < 5; i += 500)); do
		# shellcheck disable=SC2016 # expanded by the inner bash
		nsx A bash -c 'exec 3>/dev/udp/$1/4791 || exit 1
			for ((j = 0; j < 500; j++)); do printf "$2" >&3; done 2>/dev/null' \
			- "$B_ADDR" "$bth" || { kill -CONT "$pid"; log "starve: cannot send from A"; return 1; }
		during=$(fill_empty B)
		[ "$during" = "$before" ] || { i=$((i + 500)); break; }
	done
	sleep 1
	during=$(fill_empty B)
	nsx B "$ROXE_TOP/build/bin/roxectl" status --json >"$ROXE_VM_OUT/starved.json" 2>&1
	kill -CONT "$pid" || return 1
	log "server stopped, $i frames sent to its QP 0x$qpn: its fill rings found empty $before times before, $during after"
	[ "$during" -gt "$before" ] || { log "the server's fill rings never ran dry"; return 1; }
}

carrier() { [ "$(nsx "$1" cat "/sys/class/net/$2/carrier" 2>/dev/null)" = 1 ]; }

# flap PID: the server's NIC (eth0 in A) down for 2 s and up again while
# the client streams; roxe's sockets and program stay on it, then the
# server's sockets are as before and its NIC has carrier again
flap() {
	local t0 o=$ROXE_VM_OUT
	sleep 1
	nsx A $IP link set eth0 down || return 1
	sleep 2
	nsx A $IP link set eth0 up || return 1
	t0=$(date +%s)
	vm_wait_for 20 carrier A eth0 || { log "flap: no carrier on eth0 20 s after up"; return 1; }
	log "eth0 down 2 s, carrier again $(($(date +%s) - t0)) s after up"
	nsx A "$ROXE_TOP/build/bin/roxectl" status >"$o/flap.status" 2>&1 || return 1
	check_status "$o/flap.status" eth0 "$NICQ" "$(live_queues A eth0)" zerocopy
}

# ring_size NS IF RX|TX: IF's ring size now (ethtool -g)
ring_size() { nsx "$1" ethtool -g "$2" | awk -v k="$3:" '/^Current/ { c = 1 } c && $1 == k { print $2; exit }'; }

# resize PID: the WRITE server's NIC (eth1 in B) with its rings halved
# and then restored while the client streams. Each resize resets every
# queue under roxe's bound zero-copy sockets: virtio_net resets each
# virtqueue (VIRTIO_F_RING_RESET) and refills it from the socket's pool,
# igb takes the interface down and up with the pool still assigned. Then
# the server's sockets are as before.
resize() {
	local rx tx half o=$ROXE_VM_OUT
	rx=$(ring_size B eth1 RX) tx=$(ring_size B eth1 TX)
	[ -n "$rx" ] && [ -n "$tx" ] || { log "resize: eth1's ring sizes unknown"; return 1; }
	sleep 1
	for half in 1 0; do
		local r=$rx t=$tx
		[ $half = 0 ] || r=$((rx / 2)) t=$((tx / 2))
		nsx B ethtool -G eth1 rx $r tx $t || { log "resize: ethtool -G eth1 rx $r tx $t failed"; return 1; }
		[ "$(ring_size B eth1 RX) $(ring_size B eth1 TX)" = "$r $t" ] ||
			{ log "resize: eth1's rings $(ring_size B eth1 RX) $(ring_size B eth1 TX), want $r $t"; return 1; }
		sleep 2
	done
	vm_wait_for 20 carrier B eth1 || { log "resize: no carrier on eth1 20 s after"; return 1; }
	log "eth1's rings resized mid-stream, rx $rx tx $tx to $((rx / 2)) $((tx / 2)) and back"
	nsx B "$ROXE_TOP/build/bin/roxectl" status >"$o/resize.status" 2>&1 || return 1
	check_status "$o/resize.status" eth1 "$NICQ" "$(live_queues B eth1)" zerocopy
}

guest_main() {
	local o=$ROXE_VM_OUT q bind zc_sg before after
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"

	log "guest kernel $(uname -r); eth0: $(nic_features eth0); eth1: $(nic_features eth1)"
	# the bare NIC's answer, before anything is on it
	$IP link set eth1 up
	bind=$("$ROXE_TOP/build/vm/xsk_bind" eth1 0 2>&1) || bad "xsk_bind eth1 0: $bind"
	sed 's/^/    /' <<<"$bind"
	grep -q 'zerocopy|need_wakeup: ok$' <<<"$bind" &&
		ok "$NIC binds AF_XDP zero-copy (XDP_ZEROCOPY | XDP_USE_NEED_WAKEUP)" ||
		bad "$NIC refuses AF_XDP zero-copy"
	zc_sg=copy
	! grep -q 'zerocopy|need_wakeup|sg: ok$' <<<"$bind" || zc_sg=zerocopy

	$IP netns add A
	$IP netns add B
	$IP link set eth0 netns A
	$IP link set eth1 netns B
	nsx A $IP addr add $A_ADDR/24 dev eth0
	nsx B $IP addr add $B_ADDR/24 dev eth1
	for ns in A B; do nsx $ns $IP link set lo up; done
	nsx A $IP link set eth0 up
	nsx B $IP link set eth1 up
	# igb: carrier comes with its watchdog, a second or two
	vm_wait_for 20 nsx A ping -c 1 -W 1 $B_ADDR && ok "eth0 (A) and eth1 (B) face each other" ||
		bad "no IP path from A to B"

	# netdev MTU 1500: path MTU 1024, single-buffer frames
	for q in $(seq "$NICQ"); do
		set_queues "$q"
		before=$(rx_queues B eth1)
		perf "WRITE q$q" B eth1 A eth0 $B_ADDR "$q" zerocopy write bw -m 1024 -s 65536 -n 100 -q 4
		after=$(rx_queues B eth1)
		# igb: 4 QPs' flows, the fixed key: frames on every queue
		if [ "$NIC" = igb ]; then
			log "eth1's receive queues before WRITE q$q: $before; after: $after"
			[ "$q" = 1 ] || every_queue_took "$before" "$after" ||
				bad "WRITE q$q: not every queue of eth1 received frames"
		fi
		perf "READ q$q" B eth1 A eth0 $B_ADDR "$q" zerocopy read bw -m 1024 -s 65536 -n 100
		perf "SEND q$q" A eth0 B eth1 $A_ADDR "$q" zerocopy send bw -m 1024 -s 4096 -n 500
		perf "FETCH_ADD q$q" A eth0 B eth1 $A_ADDR "$q" zerocopy atomic bw -m 1024 -n 500
	done
	# The receiver stopped mid-stream: its fill ring runs dry, then it
	# must get the driver going again. Resends 2 s apart (-u 19), 7 of them.
	PERF_DURING=starve perf "WRITE fill ring starved q$NICQ" B eth1 A eth0 $B_ADDR "$NICQ" zerocopy \
		write bw -m 1024 -s 65536 -D 8 -u 19
	# The receiver's queues reset mid-stream (ring resizes): resends 2 s
	# apart (-u 19)
	PERF_DURING=resize perf "WRITE queue reset q$NICQ" B eth1 A eth0 $B_ADDR "$NICQ" zerocopy \
		write bw -m 1024 -s 65536 -D 8 -u 19
	# The receiver's NIC down and up mid-stream: resends 2 s apart (-u 19)
	PERF_DURING=flap perf "SEND link down and up q$NICQ" A eth0 B eth1 $A_ADDR "$NICQ" zerocopy \
		send bw -m 1024 -s 4096 -D 8 -u 19
	# netdev MTU 9000: 4096-byte RoCE frames need multi-buffer. The
	# queue pairs in use only grow (see the top)
	nsx A $IP link set eth0 mtu 9000 && nsx B $IP link set eth1 mtu 9000 || bad "MTU 9000"
	# igb takes no XDP program in its driver above MTU ~3000 (its receive
	# buffers hold 2 or 3 KiB, igb_xdp_setup): roxe's goes in generic
	# mode, its sockets copy
	[ "$NIC" != igb ] || PERF_XDP=generic
	PERF_XDP=$PERF_XDP perf "WRITE MTU 4096 q$NICQ" B eth1 A eth0 $B_ADDR "$NICQ" $zc_sg \
		write bw -m 4096 -s 65536 -n 100
	[ $zc_sg = zerocopy ] ||
		log "zero-copy: no at netdev MTU 9000 (the driver refuses XDP_ZEROCOPY | XDP_USE_SG, and a 4096-byte RoCE frame needs two chunks)"
	vm_check_dmesg
	dmesg >"$o/dmesg.txt"
	return $fail
}

# ============================ host side ===================================
host_missing() { echo "$NAME: FAIL: missing: $*"; exit $KSFT_FAIL; }

host_main() {
	local top out self p nicargs
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	self=$(readlink -f "$0")
	# virtio_net's AF_XDP zero-copy came in 6.13
	: "${KVER:=trixie-bpo}"
	out=$(vm_out "$NAME")
	vm_host_ready
	for p in roxe-perf roxectl; do
		[ -x "$top/build/bin/$p" ] || host_missing "build/bin/$p missing (make)"
	done
	pkg-config --exists libxdp || host_missing "libxdp's headers (libxdp-dev) for xsk_bind"
	mkdir -p "$top/build/vm"
	if [ ! -x "$top/build/vm/xsk_bind" ] || [ "$top/selftests/vm/xsk_bind.c" -nt "$top/build/vm/xsk_bind" ]; then
		cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -o "$top/build/vm/xsk_bind" \
			"$top/selftests/vm/xsk_bind.c" -lxdp -lbpf ||
			{ echo "$NAME: FAIL: cannot build xsk_bind"; exit $KSFT_FAIL; }
	fi
	if [ "$NIC" = igb ]; then
		# bookworm-backports' QEMU (QEMU 7.2 has no igb); its queues:
		# ethtool -L in the guest, up to one per vCPU
		"$top/tools/vm/fetch-qemu.sh" >/dev/null || host_missing "bookworm-backports' QEMU (tools/vm/fetch-qemu.sh)"
		nicargs=(--nic igb)
	else
		nicargs=(--dma-api --queues "$NICQ")
	fi
	log "guest kernel $KVER, $SMP vCPUs, two $NIC NICs back to back, $NICQ queue pairs each"
	vm_run_guest "$NAME" "$out" 400 --pair "${nicargs[@]}" --smp "$SMP" \
		--add "$top/build/bin/roxe-perf" --add "$top/build/bin/roxectl" \
		--add "$top/build/vm/xsk_bind" --add "$top/selftests/vm/vm_lib.sh" \
		--env "ZC_NIC_QUEUES=$NICQ" --env "ZC_NIC=$NIC"
	echo "$NAME: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	guest_main
else
	host_main
fi
