#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Loopback on roxe0 (issue #16): server and client of unmodified programs
# on the same roxe0 (roxe.ko served by `roxed --netdev rxb`, XDP + AF_XDP), the
# client connecting to roxe0's own address, as on rxe:
#   - ibv_rc_pingpong -c (data checked), polling and with CQ events;
#   - perftest ib_write_bw, ib_send_bw, ib_read_bw, and ib_send_lat with
#     completion events (-e);
#   - rping -s / rping -c -a <own address> -V -C 10 (rdma_cm: ib_cm's MADs
#     go from roxe0's QP1 to roxe0's QP1);
#   - NVMe over RDMA with nvmet-rdma (target) and nvme-rdma (host) both on
#     roxe0: 4 MiB written through the block device (O_DIRECT) lands in the
#     target's file and reads back the same.
# None of it leaves the guest's roxe0: the frames go from roxed's engine
# to its own receive path. rxb's veth peer rxa counts what did leave (a
# few ARP/ND frames at most), roxectl stats the loopback frames.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
A=10.77.4.1 B=10.77.4.2

# ============================ guest side ==================================
IP=/usr/sbin/ip
KO=${ROXE_TOP:-}/build/kmod/$(uname -r)/roxe.ko
ROXED=${ROXE_TOP:-}/build/bin/roxed
ROXECTL=${ROXE_TOP:-}/build/bin/roxectl
fail=0

log() { echo "kmod_loopback: $*"; }
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }

# run NAME PROG ARGS...: PROG's server and client on roxe0, the
# client towards roxe0's own address B. pingpong takes -g, perftest -x.
PORT=19000
run() {
	local name=$1 prog=$2 gopt=-x
	shift 2
	case "$prog" in ibv_*) gopt=-g ;; esac
	PORT=$((PORT + 1))
	vm_run_pair "$name" vm_listening $PORT "$prog" roxe0 "$GR" roxe0 "$GR" $B "$gopt" "$@" || true
}

step_rping() {
	local spid rc=0 logf=$ROXE_VM_OUT/rping.log
	command -v rping >/dev/null || { bad "rping missing (rdmacm-utils)"; return; }
	rping -s -a $B -p 7174 -C 10 -V >"$logf.srv" 2>&1 &
	spid=$!
	vm_wait_for 20 vm_cm_listening 7174 || { bad "rping: server did not listen"; kill $spid; return; }
	timeout 60 rping -c -a $B -p 7174 -C 10 -V -v >"$logf.cli" 2>&1 || rc=$?
	timeout 20 tail --pid=$spid -f /dev/null || kill -KILL $spid 2>/dev/null || true
	wait $spid || rc=$((rc ? rc : 1))
	if [ $rc = 0 ] && [ "$(grep -c 'ping data' "$logf.cli")" = 10 ]; then
		ok "rping -c -a $B -V -C 10: 10 pings verified, server exited 0: $(tail -n1 "$logf.cli")"
	else
		bad "rping (client/server exit $rc)"
		sed 's/^/    srv: /' "$logf.srv" | tail -8
		sed 's/^/    cli: /' "$logf.cli" | tail -8
	fi
}

NVMET=/sys/kernel/config/nvmet
nvme_ns() { [ -b "/dev/${1}n1" ]; }

# nvmet-rdma on roxe0's address, nvme-rdma connecting from the same address.
step_nvmf() {
	local nqn=roxe-loop img=/tmp/nvmf.img s=$NVMET/subsystems/roxe-loop ctrl="" c qps
	grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config
	modprobe nvmet-rdma 2>/dev/null || true
	modprobe nvme-rdma 2>/dev/null || true
	truncate -s 16M $img
	mkdir $s $s/namespaces/1 $NVMET/ports/1 || { bad "nvmet setup"; return; }
	echo 1 >$s/attr_allow_any_host
	echo -n $img >$s/namespaces/1/device_path
	echo 1 >$s/namespaces/1/buffered_io	# tmpfs: no O_DIRECT
	echo 1 >$s/namespaces/1/enable
	echo rdma >$NVMET/ports/1/addr_trtype
	echo ipv4 >$NVMET/ports/1/addr_adrfam
	echo $B >$NVMET/ports/1/addr_traddr
	echo 4420 >$NVMET/ports/1/addr_trsvcid
	ln -s $s $NVMET/ports/1/subsystems/$nqn
	if ! echo "transport=rdma,traddr=$B,trsvcid=4420,host_traddr=$B,nqn=$nqn" >/dev/nvme-fabrics; then
		bad "nvme-rdma connect to $B (itself)"
	else
		for c in /sys/class/nvme/nvme*; do
			grep -q "^$nqn\$" "$c/subsysnqn" 2>/dev/null && ctrl=$(basename "$c")
		done
		if [ -z "$ctrl" ] || ! vm_wait_for 20 nvme_ns "$ctrl"; then
			bad "nvme: no namespace block device"
		else
			qps="$(rdma resource show qp link roxe0/1 2>/dev/null | grep -c 'type RC') RC QPs on roxe0"
			dd if=/dev/urandom of=/tmp/nvmf.data bs=64k count=64 2>/dev/null
			if ! dd if=/tmp/nvmf.data of=/dev/${ctrl}n1 bs=64k oflag=direct 2>/dev/null; then
				bad "nvme: write"
			elif ! head -c 4194304 $img | cmp -s - /tmp/nvmf.data; then
				bad "nvme: the target's file differs from what was written"
			elif ! dd if=/dev/${ctrl}n1 of=/tmp/nvmf.back bs=64k count=64 iflag=direct 2>/dev/null ||
			     ! cmp -s /tmp/nvmf.data /tmp/nvmf.back; then
				bad "nvme: read back differs"
			else
				ok "NVMe over RDMA, host and target on roxe0: 4 MiB written and read back through /dev/${ctrl}n1 ($qps)"
			fi
			echo 1 >/sys/class/nvme/$ctrl/delete_controller
		fi
	fi
	rm -f $NVMET/ports/1/subsystems/$nqn
	rmdir $NVMET/ports/1
	echo 0 >$s/namespaces/1/enable
	rmdir $s/namespaces/1 $s
	rm -f $img /tmp/nvmf.data /tmp/nvmf.back
}

rx_frames() { cat /sys/class/net/rxa/statistics/rx_packets; }

# roxectl stats: the XDP program's and the engines' counters on rxb.
step_counters() {
	local out lo left
	out=$("$ROXECTL" stats rxb 2>&1) || { bad "roxectl stats rxb: $out"; return; }
	echo "$out" | sed -n 1,24p | sed 's/^/    /'
	lo=$(awk '$1 == "loopback" { print $2 }' <<<"$out")
	left=$(($(rx_frames) - RXA0))
	log "loopback frames: ${lo:-none}; frames that reached rxa meanwhile: $left"
	[ "${lo:-0}" -gt 1000 ] && ok "roxectl stats: loopback $lo" || bad "roxectl stats: loopback ${lo:-missing}"
	[ "$left" -lt $((lo / 10)) ] && ok "almost nothing left rxb ($left frames, ARP/ND)" ||
		bad "$left frames left rxb for rxa"
}

guest_main() {
	local t0=$SECONDS
	$IP link add rxa type veth peer name rxb
	$IP addr add $A/24 dev rxa
	$IP addr add $B/24 dev rxb
	$IP link set rxa up
	$IP link set rxb up
	insmod "$KO" || { bad "insmod $KO"; exit 1; }
	"$ROXED" --netdev rxb --foreground 2>>"$ROXE_VM_OUT/roxed.log" &
	ROXED_PID=$!
	vm_wait_for 20 vm_have_dev roxe0 || { bad "roxed --netdev rxb: no roxe0"; cat "$ROXE_VM_OUT/roxed.log"; exit 1; }
	vm_wait_for 10 vm_verbs_dev roxe0 || { bad "no uverbs device for roxe0"; exit 1; }
	vm_wait_for 10 vm_gid_index roxe0 $B || { bad "no RoCE v2 GID for $B"; exit 1; }
	GR=$(vm_gid_index roxe0 $B)
	ok "roxe0 on rxb ($B, gid $GR), roxed pid $ROXED_PID"
	RXA0=$(rx_frames)
	run "rc_pingpong 4 KiB" ibv_rc_pingpong -c -s 4096 -n 200
	run "rc_pingpong events" ibv_rc_pingpong -c -e -s 16384 -n 100
	run "ib_write_bw" ib_write_bw -s 65536 -n 200
	run "ib_send_bw" ib_send_bw -s 65536 -n 200
	run "ib_read_bw" ib_read_bw -s 65536 -n 200
	# completion events (-e): Debian 12's perftest (4.5) waits for send
	# and receive completions on one channel and polls the CQ it expects,
	# so it sleeps for good (or overflows its one-entry send CQ) when a
	# reply completes before the ACK of the request it answers. roxe0 on
	# both ends keeps that order (sched.c: roxe_engine_tx_commit), so
	# here it must pass every time; rxe does not (kmod_interop.sh)
	run "ib_send_lat events" ib_send_lat -e -s 8 -n 300
	step_rping
	step_nvmf
	step_counters
	kill -TERM $ROXED_PID
	wait $ROXED_PID || true
	vm_wait_for 10 vm_no_dev roxe0 || bad "roxe0 stays after roxed's SIGTERM"
	rmmod roxe || bad "rmmod roxe"
	vm_check_dmesg
	log "guest part took $((SECONDS - t0)) s"
	[ $fail = 0 ] && log "all passed" || log "FAILED"
	exit $fail
}

# ============================ host side ===================================
host_missing() { echo "kmod_loopback: FAIL: missing: $*"; exit $KSFT_FAIL; }

host_main() {
	local top out extra=()
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	out=$(vm_out kmod-loopback)
	vm_host_ready
	vm_need_kmod "$top"
	[ -x "$top/build/bin/roxed" ] || host_missing "build/bin/roxed missing (make)"
	# rping (rdmacm-utils, tools/scripts/install-deps.sh): not in the
	# harness's image; the guest fails its step without it
	# (and libgcc_s, which glibc loads when rping's threads exit)
	command -v rping >/dev/null &&
		extra=(--add "$(command -v rping)" --add /lib/x86_64-linux-gnu/libgcc_s.so.1)
	vm_run_guest kmod_loopback "$out" 280 \
		--add "$top/build/kmod/$KVER/roxe.ko" --add "$top/build/bin/roxed" \
		--add "$top/build/bin/roxectl" --add "$top/selftests/vm/vm_lib.sh" "${extra[@]}"
	echo "kmod_loopback: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	guest_main
else
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"
	host_main
fi
