#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# AF_XDP zero-copy for real (issue #37): two roxe engines on two virtio-net
# NICs of one guest, joined back to back, each NIC in its own network
# namespace, on trixie-backports' kernel (virtio_net has AF_XDP zero-copy
# from 6.13; 6.1 and 6.12 refuse it).
#
#   guest: eth0 (namespace A, 10.77.0.2) and eth1 (namespace B,
#          10.77.0.3), virtio-net with ZC_NIC_QUEUES queue pairs (default
#          2) each, iommu_platform=on and disable-legacy=on (run.sh --pair
#          --dma-api: virtio_net's zero-copy needs rings that use the DMA
#          API); their taps are joined by a bridge in the VM's namespace
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
#     (sock_diag's XDP_DU_F_ZEROCOPY);
#   - at netdev MTU 9000, WRITE --verify at path MTU 4096: roxe's mode must
#     be what the driver allows a multi-buffer bind (zero-copy when
#     xsk_bind's XDP_USE_SG bind was ok, else copy: a 4096-byte RoCE frame
#     does not fit one 4096-byte chunk behind 256 bytes of headroom);
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
#   KVER (default trixie-bpo), ZC_NIC_QUEUES (default 2).
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
PORT=18700
NICQ=${ZC_NIC_QUEUES:-2}
# as many vCPUs as queue pairs: virtio_net's XDP then adds no pairs of its
# own for XDP_TX (it wants one per vCPU beyond those in use), which it
# takes away again when the program goes (see the top)
SMP=$NICQ
PERF_TIMEOUT=120
A_ADDR=10.77.0.2
B_ADDR=10.77.0.3

log() { echo "zerocopy: $*"; }

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

# check_status FILE IF ENGINES QUEUES WANT: roxectl status's tables for IF:
# native mode, ENGINES engines, one socket per engine on each of QUEUES
# queues, every socket's mode WANT (zerocopy or copy)
check_status() {
	local f=$1 ifc=$2 ne=$3 nq=$4 want=$5 mode engines socks n
	sed 's/^/    /' "$f"
	mode=$(awk -v i="$ifc" '$1 == i && NF == 5 && $2 !~ /^[0-9]+$/ { print $2; exit }' "$f")
	engines=$(awk -v i="$ifc" '$1 == i && NF == 5 && $2 !~ /^[0-9]+$/ { print $4; exit }' "$f")
	[ "${mode:-}" = native ] || bad "$ifc: mode '${mode:-none}', want native"
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
# while it waits: its sockets cover every queue pair SIF uses then
perf() {
	local label=$1 sns=$2 sif=$3 cns=$4 cif=$5 saddr=$6 ne=$7 want=$8 o=$ROXE_VM_OUT
	local pp=$ROXE_TOP/build/bin/roxe-perf spid rc=0 src=0 tag=${1// /_} nq
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
	check_status "$o/$tag.status" "$sif" "$ne" "$nq" "$want"
	nsx "$cns" timeout $PERF_TIMEOUT "$pp" "$@" --netdev "$cif" -E "$ne" -p $PORT --verify "$saddr" \
		>"$o/$tag.cli" 2>&1 || rc=$?
	wait $spid || src=$?
	if [ $rc = 0 ] && [ $src = 0 ] && grep -q '^ verify: 0 errors$' "$o/$tag.cli" &&
		grep -q '^ verify: 0 errors$' "$o/$tag.srv"; then
		ok "$label ($want): $(grep -E '^ +[0-9]+ +[0-9]+ ' "$o/$tag.cli" | tail -n 1 | tr -s ' '), verify: 0 errors at both ends"
	else
		bad "$label: client exit $rc, server exit $src"
		sed 's/^/    cli: /' "$o/$tag.cli" | tail -n 10
		sed 's/^/    srv: /' "$o/$tag.srv" | tail -n 10
	fi
}

# queues Q: both NICs with Q queue pairs in use
set_queues() {
	nsx A ethtool -L eth0 combined "$1" || bad "ethtool -L eth0 combined $1"
	nsx B ethtool -L eth1 combined "$1" || bad "ethtool -L eth1 combined $1"
}

# nic_features IF: the virtio features the driver took, by name where it
# matters here
nic_features() {
	local f
	f=$(cat "/sys/class/net/$1/device/features")
	echo "ACCESS_PLATFORM=${f:33:1} MRG_RXBUF=${f:15:1} RING_RESET=${f:40:1} VERSION_1=${f:32:1}"
}

guest_main() {
	local o=$ROXE_VM_OUT q nq bind zc_sg want
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"

	log "guest kernel $(uname -r); eth0: $(nic_features eth0); eth1: $(nic_features eth1)"
	# the bare NIC's answer, before anything is on it
	$IP link set eth1 up
	bind=$("$ROXE_TOP/build/vm/xsk_bind" eth1 0 2>&1) || bad "xsk_bind eth1 0: $bind"
	sed 's/^/    /' <<<"$bind"
	grep -q 'zerocopy|need_wakeup: ok$' <<<"$bind" &&
		ok "virtio_net binds AF_XDP zero-copy (XDP_ZEROCOPY | XDP_USE_NEED_WAKEUP)" ||
		bad "virtio_net refuses AF_XDP zero-copy"
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
	nsx A ping -c 1 -W 5 $B_ADDR >/dev/null && ok "eth0 (A) and eth1 (B) face each other" ||
		bad "no IP path from A to B"

	# netdev MTU 1500: path MTU 1024, single-buffer frames
	for q in $(seq "$NICQ"); do
		set_queues "$q"
		perf "WRITE q$q" B eth1 A eth0 $B_ADDR "$q" zerocopy write bw -m 1024 -s 65536 -n 200
		perf "READ q$q" B eth1 A eth0 $B_ADDR "$q" zerocopy read bw -m 1024 -s 65536 -n 100
		perf "SEND q$q" A eth0 B eth1 $A_ADDR "$q" zerocopy send bw -m 1024 -s 4096 -n 500
		perf "FETCH_ADD q$q" A eth0 B eth1 $A_ADDR "$q" zerocopy atomic bw -m 1024 -n 500
	done
	# netdev MTU 9000: 4096-byte RoCE frames need multi-buffer. The
	# queue pairs in use only grow (see the top)
	nsx A $IP link set eth0 mtu 9000 && nsx B $IP link set eth1 mtu 9000 || bad "MTU 9000"
	perf "WRITE MTU 4096 q$NICQ" B eth1 A eth0 $B_ADDR "$NICQ" $zc_sg write bw -m 4096 -s 65536 -n 100
	[ $zc_sg = zerocopy ] ||
		log "zero-copy: no at netdev MTU 9000 (the driver refuses XDP_ZEROCOPY | XDP_USE_SG, and a 4096-byte RoCE frame needs two chunks)"
	vm_check_dmesg
	dmesg >"$o/dmesg.txt"
	return $fail
}

# ============================ host side ===================================
host_missing() { echo "zerocopy: FAIL: missing: $*"; exit $KSFT_FAIL; }

host_main() {
	local top out self p
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	self=$(readlink -f "$0")
	# virtio_net's AF_XDP zero-copy came in 6.13
	: "${KVER:=trixie-bpo}"
	out=$(vm_out zerocopy)
	vm_host_ready
	for p in roxe-perf roxectl; do
		[ -x "$top/build/bin/$p" ] || host_missing "build/bin/$p missing (make)"
	done
	pkg-config --exists libxdp || host_missing "libxdp's headers (libxdp-dev) for xsk_bind"
	mkdir -p "$top/build/vm"
	if [ ! -x "$top/build/vm/xsk_bind" ] || [ "$top/selftests/vm/xsk_bind.c" -nt "$top/build/vm/xsk_bind" ]; then
		cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -o "$top/build/vm/xsk_bind" \
			"$top/selftests/vm/xsk_bind.c" -lxdp -lbpf ||
			{ echo "zerocopy: FAIL: cannot build xsk_bind"; exit $KSFT_FAIL; }
	fi
	log "guest kernel $KVER, $SMP vCPUs, two virtio-net NICs back to back, $NICQ queue pairs each"
	vm_run_guest zerocopy "$out" 400 --pair --dma-api --queues "$NICQ" --smp "$SMP" \
		--add "$top/build/bin/roxe-perf" --add "$top/build/bin/roxectl" \
		--add "$top/build/vm/xsk_bind" --add "$top/selftests/vm/vm_lib.sh" \
		--env "ZC_NIC_QUEUES=$NICQ"
	echo "zerocopy: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	guest_main
else
	host_main
fi
