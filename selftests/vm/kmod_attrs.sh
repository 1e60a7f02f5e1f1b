#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# roxe0's attributes against rxe0's, in one guest (issue #39): what a
# program or a kernel ULP reads of the two devices must be the same, or
# differ for a reason this file gives.
#   rxa (10.77.2.1, rxe0)  <-- veth -->  rxb (10.77.2.2, roxe0)
# Two views, each compared attribute by attribute:
#   - user space: `ibv_devinfo -v` of each (the device, its port, the
#     flag lists), through the stock rxe provider on both;
#   - the kernel: struct ib_device_attr, field by field, as a kernel ULP
#     sees it (selftests/vm/kverbs/roxe_attrs_test.ko): send and receive
#     SGEs apart, kernel capability flags, fast-registration and signature
#     limits.
# Every attribute whose values differ must have a line in WHY below, or
# the test fails naming both values. A WHY line whose attribute no longer
# differs is reported (the explanation is stale), not failed: kernels
# differ in what rxe offers.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
A=10.77.2.1 B=10.77.2.2

# ============================ guest side ==================================
KO=${ROXE_TOP:-}/build/kmod/$(uname -r)/roxe.ko
ATTRS_KO=${ROXE_TOP:-}/build/kmod-test/$(uname -r)/roxe_attrs_test.ko
ROXED=${ROXE_TOP:-}/build/bin/roxed
fail=0

log() { echo "kmod_attrs: $*"; }
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }

# Why roxe0 and rxe0 differ, by attribute (u: ibv_devinfo, k: the kernel's
# ib_device_attr; `why` sets both). Limits name their constant in
# include/roxe/limits.h or kmod/roxe.h.
declare -A WHY=()
why() { WHY[u:$1]=$2; WHY[k:$1]=$2; }
why node_guid "each device's EUI-64 of its own netdev's MAC (rxa, rxb), as rxe makes it"
why sys_image_guid "the node GUID, as rxe"
flags="roxe0 leaves out, of rxe's flags: SRQ_RESIZE (it refuses ibv_modify_srq's max_wr:"
flags+=" roxe(7) LIMITS), AUTO_PATH_MIG (one path per QP: it refuses alternate paths),"
flags+=" BAD_PKEY_CNTR and BAD_QKEY_CNTR (no such port counters: both read 0),"
flags+=" CHANGE_PHY_PORT and UD_AV_PORT_ENFORCE (one port: nothing to change or enforce)"
why device_cap_flags "$flags"
why device_cap_flags_ex "$flags"
why max_qp "QPNs ROXE_MIN_QPN (16) .. ROXE_MAX_QPS - 1 (32767) and QP1: the XDP maps hold an entry per QPN"
why max_qp_wr "ROXE_MAX_WR (16383) per work queue"
why max_srq_wr "ROXE_MAX_WR (16383) per work queue"
why max_cq "ROXE_MAX_CQ: roxed's CQ table"
why max_cqe "ROXE_MAX_CQE (65535), more than rxe's"
why max_mr "ROXE_MAX_MR - 1: keys are index << 8 | generation, index 0 unused"
why max_mr_size "ROXE_MAX_MR_SIZE: an MR is a 64 GiB mmap token range of roxed's"
why max_mw "ROXE_MAX_MW: windows' key indices sit above every MR's"
why max_pd "ROXE_MAX_PD: roxed's PD table"
why max_ah "ROXE_MAX_AH - 1 (AH number 0 names none), more than rxe's"
why max_srq "ROXE_MAX_SRQ: roxed's SRQ table"
why max_srq_sge "ROXE_MAX_SGE (32), as for QPs; rxe's SRQ WQE holds 27"
why max_pkeys "a P_Key table of one entry, the default P_Key (rxe's has 64, of which it uses the first)"
why max_qp_rd_atom "ROXE_MAX_RD_ATOMIC (16) READs/atomics in flight per QP each way: the responder's resources per QP"
why max_qp_init_rd_atom "ROXE_MAX_RD_ATOMIC (16), as max_qp_rd_atom"
why max_res_rd_atom "ROXE_MAX_RD_ATOMIC x max_qp, as rxe computes it from its own"
why max_fast_reg_page_list_len "ROXE_MAX_FAST_REG_PAGES (4096, 16 MiB of 4 KiB pages) against rxe's 512"
# ODP: rxe's from 6.15, roxe0's where compat.h has ROXE_ODP (7.3's guest),
# offered by default: the caps and IBK_ON_DEMAND_PAGING must be rxe's
WHY[u:port.max_msg_sz]="ROXE_MAX_MSG_SZ: IBA's 2^31 bytes, where rxe stops at 8 MiB"
WHY[u:port.active_speed]="roxe0 reports EDR without asking ethtool (that takes RTNL, which callers of query_port may hold); rxe asks the netdev (veth: 10 Gb/s)"

# ibv_devinfo -v as "KEY<TAB>VALUE" lines: a port's attributes prefixed
# "port.", a flag list joined into its flag word's value, the GID table
# left out (addresses differ by design)
devinfo_kv() {
	ibv_devinfo -v -d "$1" | awk '
		function put() { if (key != "") printf "%s\t%s\n", key, val; key = "" }
		/^[ \t]*GID\[/ { put(); next }
		/^hca_id:/ { next }
		/^\t\tport:/ { put(); port = 1; next }
		/^\t+[^\t:][^:]*:/ {
			put()
			line = $0; sub(/^\t+/, "", line)
			k = line; sub(/:.*/, "", k)
			v = line; sub(/^[^:]*:[ \t]*/, "", v)
			key = (port ? "port." : "") k; val = v
			next
		}
		/^\t+[A-Z_0-9]+$/ { f = $0; gsub(/\t/, "", f); val = val " " f; next }
		/^\t+[^:]+$/ { put(); l = $0; gsub(/^\t+/, "", l); printf "%s\t%s\n", (port ? "port." : "") l, "yes"; next }
		END { put() }'
}

# the kernel's ib_device_attr of each device as "DEV KEY VALUE" lines
kernel_kv() {
	dmesg -C
	insmod "$ATTRS_KO" devs=rxe0,roxe0 || { bad "insmod roxe_attrs_test.ko"; return 1; }
	rmmod roxe_attrs_test || bad "rmmod roxe_attrs_test"
	dmesg | grep -ao 'roxe_attrs_test: .*' | sed 's/^roxe_attrs_test: //' >"$ROXE_VM_OUT/kattrs.log"
	grep -q '^done 2$' "$ROXE_VM_OUT/kattrs.log" || { bad "roxe_attrs_test: $(cat "$ROXE_VM_OUT/kattrs.log")"; return 1; }
}

# compare VIEW FILE_RXE FILE_ROXE: each file "KEY<TAB>VALUE"
compare() {
	local view=$1 x=$2 r=$3 key vx vr n=0 diffs=0
	declare -A X=() R=()
	while IFS=$'\t' read -r key vx; do X[$key]=$vx; done <"$x"
	while IFS=$'\t' read -r key vr; do R[$key]=$vr; done <"$r"
	for key in $(printf '%s\n' "${!X[@]}" "${!R[@]}" | sort -u); do
		n=$((n + 1))
		vx=${X[$key]-(none)} vr=${R[$key]-(none)}
		[ "$vx" != "$vr" ] || continue
		diffs=$((diffs + 1))
		if [ -n "${WHY[$view:$key]:-}" ]; then
			ok "$view $key: rxe0 '$vx', roxe0 '$vr': ${WHY[$view:$key]}"
		else
			bad "$view $key: rxe0 '$vx', roxe0 '$vr': no reason given (WHY)"
		fi
	done
	for key in "${!WHY[@]}"; do
		[ "${key%%:*}" = "$view" ] || continue
		key=${key#*:}
		[ -n "${X[$key]+1}${R[$key]+1}" ] || continue	# not in this view
		[ "${X[$key]-(none)}" != "${R[$key]-(none)}" ] ||
			log "note: $view $key no longer differs ('${X[$key]}'): its WHY is stale here"
	done
	ok "$view: $n attributes compared, $diffs differ"
}

guest_main() {
	vm_rxe_roxe_pair $A $B 1 || { log "setup failed"; exit 1; }
	devinfo_kv rxe0 >"$ROXE_VM_OUT/devinfo-rxe0" && devinfo_kv roxe0 >"$ROXE_VM_OUT/devinfo-roxe0" ||
		{ bad "ibv_devinfo -v failed"; exit 1; }
	[ "$(wc -l <"$ROXE_VM_OUT/devinfo-rxe0")" -gt 40 ] ||
		{ bad "ibv_devinfo -v -d rxe0 printed $(wc -l <"$ROXE_VM_OUT/devinfo-rxe0") attributes"; exit 1; }
	compare u "$ROXE_VM_OUT/devinfo-rxe0" "$ROXE_VM_OUT/devinfo-roxe0"
	if kernel_kv; then
		awk '$1 == "attr" && $2 == "rxe0" { printf "%s\t%s\n", $3, $4 }' "$ROXE_VM_OUT/kattrs.log" >"$ROXE_VM_OUT/kattrs-rxe0"
		awk '$1 == "attr" && $2 == "roxe0" { printf "%s\t%s\n", $3, $4 }' "$ROXE_VM_OUT/kattrs.log" >"$ROXE_VM_OUT/kattrs-roxe0"
		compare k "$ROXE_VM_OUT/kattrs-rxe0" "$ROXE_VM_OUT/kattrs-roxe0"
	fi
	kill "$ROXED_PID" 2>/dev/null || true
	[ $fail = 0 ] && log "all passed" || log "FAILED"
	exit $fail
}

# ============================ host side ===================================
host_missing() { echo "kmod_attrs: FAIL: missing: $*"; exit $KSFT_FAIL; }

host_main() {
	local top out
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	out=$(vm_out kmod-attrs)
	vm_host_ready
	vm_need_kmod "$top" build/kmod-test/$KVER/roxe_attrs_test.ko
	[ -x "$top/build/bin/roxed" ] || host_missing "build/bin/roxed missing (make)"
	vm_run_guest kmod_attrs "$out" 120 \
		--add "$top/build/kmod/$KVER/roxe.ko" --add "$top/build/bin/roxed" \
		--add "$top/build/kmod-test/$KVER/roxe_attrs_test.ko" \
		--add "$top/selftests/vm/vm_lib.sh"
	echo "kmod_attrs: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	guest_main
else
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"
	host_main
fi
