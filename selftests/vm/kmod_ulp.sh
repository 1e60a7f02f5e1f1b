#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The kernel's SCSI RDMA ULPs, SRP and iSER, on roxe0 (issue #39), in the
# guest:
#   rxa (10.77.2.1, rxe0)  <-- veth -->  rxb (10.77.2.2, roxe0)
#   rxc (10.77.3.1, rxe1)  <-- veth -->  rxd (10.77.3.2, rxe2): the control
# SRP over rdma_cm: LIO's ib_srpt target (configfs, a fileio backstore in
# /tmp) and ib_srp's initiator (add_target), three ways:
#   - target on roxe0, initiator on rxe0: srpt posts its receives and its
#     RDMA READs and WRITEs from kernel memory through roxe0's bounce
#     regions, 4096 send slots' worth;
#   - target on rxe0, initiator on roxe0: ib_srp fast-registers each I/O's
#     pages on roxe0;
#   - target on rxe2, initiator on rxe1: rxe against itself, the reference.
# iSER: LIO's iSCSI target with isert and ib_iser (open-iscsi's iscsid and
# iscsiadm, from Debian's .debs unpacked under build/iser/), the same three
# ways and a fourth, both ends on roxe0 (the initiator logs in to the
# target portal at roxe0's second address): isert posts 128 receives of
# 9 KiB; ib_iser sends immediate data from its fast-registered MR (an SGE
# with the MR's lkey). (SRP has no such case: srpt has one target port per
# device, and ib_srp refuses a second login to it from one host.)
# NFS over RDMA: one nfsd with its rdma listener on port 20049 (rdma_cm on
# the any address: every device), the kernel client mounting with
# proto=rdma,port=20049 (mount.nfs, rpcbind and rpc.mountd from Debian's
# .debs under build/nfs/), NFSv3 and NFSv4.2, four ways: client on rxe0
# and server on roxe0, client on roxe0 and server on rxe0, both on roxe0
# (its second address, which rdma_cm resolves to roxe0 itself), and rxe1
# against rxe2. Each mount must show RDMA: mountstats' xprt is rdma and
# `rdma resource show qp` holds two QPs the mount added, connected to each
# other, one on the client's device, one on the server's.
# RDS over RDMA (rds_rdma, where the kernel has it; Debian 12 has no
# rds-tools): kmod_rds.c's AF_RDS sockets on the IB transport, 64 messages
# of 1 byte to 1 MiB each way, every byte checked, with rxe0 connecting to
# roxe0, roxe0 connecting to rxe0 (another type of service: a connection
# of its own), roxe0 to itself and rxe1 to rxe2, and 256 KiB RDMA WRITE
# and READ through a buffer one side maps for the other (rds_ib's
# fast-registered MR); RDS must show both connections up on "infiniband"
# and rds_ib's received-message counter grown by at least 128, and
# rdma_cm a new QP pair between the two devices.
# Each way 4 MiB of a pattern are written through the SCSI disk or the
# NFS mount (O_DIRECT), must land in the target's file, and read back the
# same (checksums on both sides). No ULP may see a post fail: return
# probes on roxe's and rxe's post verbs record none, the ULPs log none;
# the kernel log stays clean.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
A=10.77.2.1 B=10.77.2.2 C=10.77.3.1 D=10.77.3.2
SRP_PORT=5555

# ============================ guest side ==================================
KO=${ROXE_TOP:-}/build/kmod/$(uname -r)/roxe.ko
ROXED=${ROXE_TOP:-}/build/bin/roxed
T=/sys/kernel/config/target
fail=0

log() { echo "kmod_ulp: $*"; }
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }

# srpt names a port by its GID 0's interface id, as 4 groups of hex
port_guid() {
	cut -d: -f5- "/sys/class/infiniband/$1/ports/1/gids/0"
}

# srp_target DEV TARGET-ADDR INITIATOR-ADDR N: a 16 MiB file,
# /tmp/lun-N.img, as LUN 0 of DEV's port. srpt names an rdma_cm initiator
# by an address of the connection: 6.1's by the target's own (the passive
# side's source address), so an ACL for each.
srp_target() {
	local dev=$1 taddr=$2 iaddr=$3 n=$4 bs tpg a
	bs=$T/core/fileio_$n/disk$n
	tpg=$T/srpt/$(port_guid "$dev")/tpgt_1
	truncate -s 16M /tmp/lun-$n.img
	mkdir -p "$bs" || return 1
	echo "fd_dev_name=/tmp/lun-$n.img,fd_dev_size=16777216" >"$bs/control"
	echo 1 >"$bs/enable" || return 1
	mkdir -p "$tpg/lun/lun_0" || return 1
	ln -s "$bs" "$tpg/lun/lun_0/disk$n"
	for a in "$iaddr" "$taddr"; do
		mkdir -p "$tpg/acls/$a/lun_0" || return 1
		ln -s "$tpg/lun/lun_0" "$tpg/acls/$a/lun_0/lun0"
	done
	echo 1 >"$tpg/enable"
}

now_ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }
srp_disks() { echo $(ls /sys/block | grep '^sd' || true); }
# the disks not in the list $1
new_disks() {
	local d
	for d in $(srp_disks); do
		case " $1 " in *" $d "*) ;; *) echo "$d" ;; esac
	done
}
new_disk() { [ -n "$(new_disks "$1")" ]; }

# srp IDEV TDEV TADDR IADDR N: ib_srp on IDEV logs in to srpt on TDEV at
# TADDR (rdma_cm) and 4 MiB go through the disk both ways.
srp() {
	local idev=$1 tdev=$2 taddr=$3 iaddr=$4 n=$5 guid before t0
	local label="SRP initiator on $1, target on $2"
	srp_target "$tdev" "$taddr" "$iaddr" "$n" || { bad "$label: target setup"; return; }
	guid=$(sed 's/^0x//' /sys/module/ib_srpt/parameters/srpt_service_guid)
	before=$(srp_disks)
	t0=$(now_ms)
	if ! echo "id_ext=$guid,ioc_guid=$guid,dest=$taddr:$SRP_PORT" \
		>/sys/class/infiniband_srp/srp-$idev-1/add_target; then
		bad "$label: add_target"
		dmesg | tail -n 20 | sed 's/^/    /'
		return
	fi
	disk_io "$label" "$before" "$n" "$t0"
}

# disk_io LABEL BEFORE N T0: the disk that is not in BEFORE, 4 MiB written
# through it landing in /tmp/lun-N.img and read back.
disk_io() {
	local label=$1 before=$2 n=$3 t0=$4 disk sum back
	if ! vm_wait_for 30 new_disk "$before"; then
		bad "$label: no SCSI disk"
		dmesg | tail -n 20 | sed 's/^/    /'
		return
	fi
	read -r disk _ <<<"$(new_disks "$before")"
	disk=/dev/$disk
	vm_wait_for 10 test -b "$disk" || { bad "$label: no $disk"; return; }
	sum=$(md5sum </tmp/srp.data)
	# one 4 MiB request: the block layer splits it into the ULP's largest
	# (ib_srp's: 512 KiB), all in flight at once
	if ! dd if=/tmp/srp.data of="$disk" bs=4M oflag=direct 2>/dev/null; then
		bad "$label: write"
	elif [ "$(head -c 4194304 /tmp/lun-$n.img | md5sum)" != "$sum" ]; then
		bad "$label: the target's file differs from what was written"
	elif ! back=$(dd if="$disk" bs=4M count=1 iflag=direct 2>/dev/null | md5sum) ||
	     [ "$back" != "$sum" ]; then
		bad "$label: read back differs"
	else
		ok "$label: 4 MiB written and read back through $disk ($(($(now_ms) - t0)) ms from login)"
	fi
}

# Return probes on each provider's post verbs (vm_post_probes_on): some
# ULPs ignore a failed receive post (srpt fills its rings so), others log
# it or try again later.
POSTS="roxe_post_send roxe_post_recv roxe_post_srq_recv rxe_post_send rxe_post_recv rxe_post_srq_recv"

# iSER: LIO's iSCSI target with its isert driver (configfs) and ib_iser,
# logged in by open-iscsi's iscsid and iscsiadm (from Debian's .debs,
# unpacked under build/iser/ on the host, never installed there).
ISER=${ROXE_TOP:-}/build/iser/root
iscsiadm() { LD_LIBRARY_PATH=$ISER/usr/lib/x86_64-linux-gnu "$ISER/sbin/iscsiadm" "$@"; }

iser_initiator() {
	mkdir -p /etc/iscsi/nodes /etc/iscsi/send_targets /etc/iscsi/ifaces \
		/run/lock/iscsi /var/lock/iscsi /var/lib/iscsi
	echo "InitiatorName=iqn.2026-01.org.roxe:guest" >/etc/iscsi/initiatorname.iscsi
	: >/etc/iscsi/iscsid.conf
	modprobe ib_iser || return 1
	LD_LIBRARY_PATH=$ISER/usr/lib/x86_64-linux-gnu "$ISER/sbin/iscsid" -f \
		2>>"$ROXE_VM_OUT/iscsid.log" &
	vm_wait_for 10 iscsid_up
}
iscsid_up() { grep -q ISCSIADM_ABSTRACT /proc/net/unix; }

# iser_target TADDR N: LIO's iSCSI target iqn...:N on TADDR:3260 over
# iSER, a 16 MiB file as LUN 0, any initiator (no ACL, no CHAP).
iser_target() {
	local taddr=$1 n=$2 bs tpg
	bs=$T/core/fileio_$n/disk$n
	tpg=$T/iscsi/iqn.2026-01.org.roxe:t$n/tpgt_1
	truncate -s 16M /tmp/lun-$n.img
	mkdir -p "$bs" || return 1
	echo "fd_dev_name=/tmp/lun-$n.img,fd_dev_size=16777216" >"$bs/control"
	echo 1 >"$bs/enable" || return 1
	mkdir -p "$tpg/lun/lun_0" "$tpg/np/$taddr:3260" || return 1
	ln -s "$bs" "$tpg/lun/lun_0/disk$n"
	echo 1 >"$tpg/np/$taddr:3260/iser" || return 1
	echo 0 >"$tpg/attrib/authentication"
	echo 1 >"$tpg/attrib/generate_node_acls"
	echo 0 >"$tpg/attrib/demo_mode_write_protect"
	echo 1 >"$tpg/enable"
}

# iser IDEV TDEV TADDR N: ib_iser (from IDEV's address, by its route) logs
# in to isert on TDEV at TADDR; 4 MiB through the disk both ways.
iser() {
	local idev=$1 tdev=$2 taddr=$3 n=$4 iqn=iqn.2026-01.org.roxe:t$4 before t0
	local label="iSER initiator on $1, target on $2"
	iser_target "$taddr" "$n" || { bad "$label: target setup"; return; }
	before=$(srp_disks)
	t0=$(now_ms)
	if ! iscsiadm -m node -o new -T $iqn -p $taddr:3260 -I iser >/dev/null ||
	   ! iscsiadm -m node -T $iqn -p $taddr:3260 -I iser --login; then
		bad "$label: login"
		dmesg | tail -n 20 | sed 's/^/    /'
		tail -n 10 "$ROXE_VM_OUT/iscsid.log" | sed 's/^/    iscsid: /'
		return
	fi
	disk_io "$label" "$before" "$n" "$t0"
}

# NFS over RDMA (see the top). The client mounts without NLM (nolock:
# no rpc.statd); numeric ids (the kernel's default with AUTH_SYS).
NFS=${ROXE_TOP:-}/build/nfs/root
B2=10.77.2.3
nfs_run() { LD_LIBRARY_PATH=$NFS/usr/lib/x86_64-linux-gnu "$@"; }
rpcbind_up() { grep -q '/run/rpcbind.sock' /proc/net/unix; }
mountd_up() { [[ $(nfs_run "$NFS/usr/bin/rpcinfo" -p 127.0.0.1 2>/dev/null) == *mountd* ]]; }

# nfs_server: nfsd on every device's port 20049 (rdma only, no TCP or UDP
# listener), /srv/nfs (a tmpfs: rootfs cannot be exported) to anyone.
nfs_server() {
	local d=/proc/fs/nfsd
	modprobe nfsd && modprobe rpcrdma && modprobe nfsv3 && modprobe nfsv4 || return 1
	grep -q '^_rpc:' /etc/passwd || echo '_rpc:x:101:65534::/run/rpcbind:/bin/false' >>/etc/passwd
	mkdir -p /run/rpcbind /var/lib/nfs/v4recovery /srv/nfs
	# libtirpc reaches rpcbind at /var/run/rpcbind.sock
	[ -e /var/run ] || ln -s /run /var/run
	mount -t tmpfs none /srv/nfs || return 1
	grep -q " $d " /proc/mounts || mount -t nfsd nfsd $d || return 1
	nfs_run "$NFS/sbin/rpcbind" -f 2>>"$ROXE_VM_OUT/rpcbind.log" &
	vm_wait_for 10 rpcbind_up || { log "no rpcbind"; return 1; }
	echo '/srv/nfs *(rw,no_root_squash,insecure,no_subtree_check,fsid=1)' >/etc/exports
	nfs_run "$NFS/usr/sbin/exportfs" -ra || return 1
	nfs_run "$NFS/usr/sbin/rpc.mountd" -F 2>>"$ROXE_VM_OUT/mountd.log" &
	vm_wait_for 10 mountd_up || { log "no rpc.mountd"; return 1; }
	# the shortest NFSv4 grace period: the v4.2 mounts wait it out
	echo 10 >$d/nfsv4leasetime && echo 10 >$d/nfsv4gracetime || return 1
	echo "rdma 20049" >$d/portlist || return 1
	echo 4 >$d/threads
}

# The kernel's connected QPs as "DEV LQPN RQPN" lines (rpcrdma's, as
# every ULP's through rdma_create_qp, are rdma_cm's).
kernel_qps() {
	rdma resource show qp 2>/dev/null | awk '/comm \[/ && / rqpn / {
		for (i = 1; i < NF; i++) {
			if ($i == "link") l = $(i + 1)
			if ($i == "lqpn") q = $(i + 1)
			if ($i == "rqpn") r = $(i + 1)
		}
		sub(/\/.*/, "", l); print l, q, r }' | sort
}

# new_qp_pair CDEV SDEV BEFORE: of the QPs not in BEFORE (kernel_qps), one
# on CDEV connected to one on SDEV; prints "CDEV:LQPN <-> SDEV:LQPN"
new_qp_pair() {
	echo "$3" >/tmp/qps.before
	kernel_qps | awk 'NR == FNR { old[$0] = 1; next } !old[$0]' /tmp/qps.before - |
	awk -v c="$1" -v s="$2" '{ dev[NR] = $1; l[NR] = $2; r[NR] = $3 }
		END { for (i = 1; i <= NR; i++) for (j = 1; j <= NR; j++)
			if (i != j && dev[i] == c && dev[j] == s && l[i] == r[j] && r[i] == l[j]) {
				printf "%s:%s <-> %s:%s\n", c, l[i], s, l[j]; exit 0 }
			exit 1 }'
}

# nfs CDEV SDEV SERVER VERS N: CDEV's client mounts SERVER:/srv/nfs over
# RDMA; 4 MiB written, found in the server's file, read back.
nfs() {
	local cdev=$1 sdev=$2 srv=$3 vers=$4 n=$5 mnt=/mnt/nfs$5 opts sum back xprt t0 qps pair
	local label="NFSv$4 client on $1, server on $2"
	opts=vers=$vers,proto=rdma,port=20049
	[ "$vers" != 3 ] || opts=$opts,nolock
	mkdir -p $mnt
	sum=$(md5sum </tmp/srp.data)
	qps=$(kernel_qps)
	t0=$(now_ms)
	# what mount.nfs says (the mount's presence decides)
	timeout 60 env LD_LIBRARY_PATH=$NFS/usr/lib/x86_64-linux-gnu \
		"$NFS/sbin/mount.nfs" "$srv:/srv/nfs" $mnt -o $opts 2>&1 | sed 's/^/    /' || true
	if ! grep -q " $mnt nfs" /proc/mounts; then
		bad "$label: mount $srv:/srv/nfs -o $opts"
		dmesg | tail -n 20 | sed 's/^/    /'
		return
	fi
	# the mount's transport (mountstats: its "xprt:" line) and the QPs
	xprt=$(awk -v m=" $mnt " 'index($0, m) { on = 1; next } /^device / { on = 0 }
		on && $1 == "xprt:" { print; exit }' /proc/self/mountstats)
	if ! grep -q 'proto=rdma' <<<"$(grep " $mnt " /proc/mounts)" ||
	   [ "$(awk '{ print $2 }' <<<"$xprt")" != rdma ]; then
		bad "$label: not over RDMA: $(grep " $mnt " /proc/mounts); $xprt"
	elif ! pair=$(new_qp_pair "$cdev" "$sdev" "$qps"); then
		bad "$label: the mount connected no QP on $cdev to one on $sdev:"
		rdma resource show qp | sed 's/^/    /'
	# a hard mount retries for ever: SIGKILL ends its waits
	elif ! timeout -s KILL 60 dd if=/tmp/srp.data of=$mnt/f$n bs=4M oflag=direct 2>/dev/null; then
		bad "$label: write"
	elif [ "$(md5sum </srv/nfs/f$n)" != "$sum" ]; then
		bad "$label: the server's file differs from what was written"
	elif ! back=$(timeout -s KILL 60 dd if=$mnt/f$n bs=4M iflag=direct 2>/dev/null | md5sum) ||
	     [ "$back" != "$sum" ]; then
		bad "$label: read back differs"
	elif xprt=$(awk -v m=" $mnt " 'index($0, m) { on = 1; next } /^device / { on = 0 }
			on && $1 == "xprt:" { print; exit }' /proc/self/mountstats) &&
	     ! awk '{ exit !($16 >= 4194304 && $17 >= 4194304) }' <<<"$xprt"; then
		# xprtrdma's total_rdma_request and total_rdma_reply: the 4 MiB
		# each way went as RDMA chunks
		bad "$label: xprtrdma moved less than 4 MiB each way: $xprt"
	else
		ok "$label: 4 MiB written and read back ($(($(now_ms) - t0)) ms from mount; QPs $pair; $(echo $xprt))"
	fi
	umount $mnt || bad "$label: umount"
}

# rds DEV_A ADDR_A DEV_B ADDR_B TOS: kmod_rds from ADDR_A (which connects)
# to ADDR_B and back on a connection of type of service TOS.
RDS=${ROXE_TOP:-}/build/vm/kmod_rds
rds() {
	local adev=$1 a=$2 bdev=$3 b=$4 tos=$5 qps out rc=0 pair
	local label="RDS from $1 ($2) to $3 ($4), tos $5"
	qps=$(kernel_qps)
	out=$(timeout -s KILL 150 "$RDS" "$a" "$b" 64 "$tos" 2>&1) || rc=$?
	sed 's/^kmod_rds: /    /' <<<"$out"
	if [ $rc != 0 ]; then
		bad "$label: kmod_rds exited $rc"
		dmesg | tail -n 10 | sed 's/^/    /'
	elif ! pair=$(new_qp_pair "$adev" "$bdev" "$qps"); then
		bad "$label: no new QP on $adev connected to one on $bdev:"
		rdma resource show qp | sed 's/^/    /'
	else
		ok "$label: 64 messages each way and 256 KiB RDMA WRITE and READ, every byte checked, over IB (QPs $pair)"
	fi
}

# Every post the ULPs made was taken: none returned an error, and srpt
# logged no refused one.
check_posts() {
	local hits calls
	calls=$(vm_post_probe_calls kulp)
	hits=$(grep -a ' kulp_' "$VM_TRACING/trace"
	       dmesg | grep -aE 'IB send queue full|ib_post_send\(\) returned|sending cmd response failed|ib_post_(send|recv).*failed'
	       true)
	if [ -n "$hits" ]; then
		bad "$(wc -l <<<"$hits") failed posts (calls: $calls):"
		sed -n 1,8p <<<"$hits" | sed 's/^/    /'
	else
		ok "no post failed (calls: $calls)"
	fi
}

guest_main() {
	local i nfsd=0
	vm_rxe_roxe_pair $A $B 1 || { log "setup failed"; exit 1; }
	vm_rxe_control_pair $C $D || { bad "control pair rxe1 <-> rxe2"; exit 1; }
	grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config
	modprobe sd_mod && modprobe ib_srpt && modprobe target_core_file && modprobe ib_srp ||
		{ bad "modprobe ib_srpt, target_core_file, ib_srp"; exit 1; }
	vm_post_probes_on kulp $POSTS || { bad "return probes on the post verbs"; exit 1; }
	for i in roxe0 rxe0 rxe2; do
		mkdir -p "$T/srpt/$(port_guid $i)" || { bad "srpt port of $i ($(port_guid $i))"; exit 1; }
	done
	echo $SRP_PORT >"$T/srpt/discovery_auth/rdma_cm_port" || { bad "srpt rdma_cm_port"; exit 1; }
	dd if=/dev/urandom of=/tmp/srp.data bs=64k count=64 2>/dev/null
	# nfsd first: its NFSv4 grace period passes during SRP and iSER
	/usr/sbin/ip addr add $B2/24 dev rxb
	vm_wait_for 10 vm_gid_index roxe0 $B2 && nfs_server && nfsd=1
	srp rxe0 roxe0 $B $A 1
	srp roxe0 rxe0 $A $B 2
	srp rxe1 rxe2 $D $C 3
	if modprobe ib_isert && iser_initiator; then
		iser rxe0 roxe0 $B 4
		iser roxe0 rxe0 $A 5
		iser rxe1 rxe2 $D 6
		iser roxe0 roxe0 $B2 7	# both ends on roxe0 (loopback)
	else
		bad "iSER: modprobe ib_isert, ib_iser or iscsid"
	fi
	if [ $nfsd = 1 ]; then
		for i in 3 4.2; do
			nfs rxe0 roxe0 $B $i 1${i%.*}
			nfs roxe0 rxe0 $A $i 2${i%.*}
			nfs roxe0 roxe0 $B2 $i 3${i%.*}
			nfs rxe1 rxe2 $D $i 4${i%.*}
		done
	else
		bad "NFS: server (nfsd, rpcbind, rpc.mountd) or roxe0's GID for $B2"
		tail -n 5 "$ROXE_VM_OUT/rpcbind.log" "$ROXE_VM_OUT/mountd.log" 2>/dev/null | sed 's/^/    /'
	fi
	if ! grep -q '/rds_rdma\.ko' "/lib/modules/$(uname -r)/modules.dep"; then
		log "RDS: skipped, the kernel has no rds_rdma"
	elif modprobe rds_rdma; then
		rds rxe0 $A roxe0 $B 0
		rds roxe0 $B rxe0 $A 1
		rds roxe0 $B roxe0 $B2 0
		rds rxe1 $C rxe2 $D 0
	else
		bad "RDS: modprobe rds_rdma"
	fi
	check_posts
	# the bounce rings' pages come as posts reach them: roxed must never
	# have faulted where none was yet (roxe.ko maps a scrap page and says so)
	local nopages
	nopages=$(dmesg | grep -a 'no pages behind it' || true)
	if [ -n "$nopages" ]; then
		bad "roxed touched MR memory with no pages: $(echo "$nopages" | tail -n 1)"
	else
		ok "roxed touched no MR memory without pages"
	fi
	vm_check_dmesg
	[ $fail = 0 ] && log "all passed" || log "FAILED"
	exit $fail
}

# ============================ host side ===================================
host_missing() { echo "kmod_ulp: FAIL: missing: $*"; exit $KSFT_FAIL; }

host_main() {
	local top out
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	out=$(vm_out kmod-ulp)
	vm_host_ready
	vm_need_kmod "$top"
	[ -x "$top/build/bin/roxed" ] || host_missing "build/bin/roxed missing (make)"
	# open-iscsi's iscsid and iscsiadm; nfs-common's mount.nfs,
	# nfs-kernel-server's exportfs and rpc.mountd, rpcbind (and rpcinfo)
	vm_apt_unpack "$top/build/iser" open-iscsi libopeniscsiusr libisns0 ||
		host_missing "open-iscsi's .debs (apt-get download)"
	vm_apt_unpack "$top/build/nfs" nfs-common nfs-kernel-server rpcbind libnfsidmap1 libwrap0 ||
		host_missing "nfs-kernel-server's .debs (apt-get download)"
	local n=$top/build/nfs/root
	vm_build_prog kmod_ulp "$top" kmod_rds
	vm_run_guest kmod_ulp "$out" 240 \
		--add "$top/build/iser/root/sbin/iscsid" --add "$top/build/iser/root/sbin/iscsiadm" \
		--add "$top/build/iser/root/usr/lib/x86_64-linux-gnu" \
		--add "$n/sbin/mount.nfs" --add "$n/sbin/rpcbind" --add "$n/usr/bin/rpcinfo" \
		--add "$n/usr/sbin/exportfs" --add "$n/usr/sbin/rpc.mountd" \
		--add "$n/usr/lib/x86_64-linux-gnu" \
		--add /etc/netconfig --add /etc/services --add /etc/protocols --add /etc/rpc \
		--add "$top/build/vm/kmod_rds" \
		--add "$top/build/kmod/$KVER/roxe.ko" --add "$top/build/bin/roxed" \
		--add "$top/selftests/vm/vm_lib.sh"
	echo "kmod_ulp: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	guest_main
else
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"
	host_main
fi
