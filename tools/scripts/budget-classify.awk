# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# budget-classify.awk: sums the CPU time of `perf script -F period,ip,sym,dso`
# samples (perf record -g -e cpu-clock) by stage of a frame's path and prints
# "stage<TAB>ns" lines. Used by bench-budget.sh.
#
# Each sample's stack is walked from the leaf up; the first frame that names
# a known function (or library) decides the stage, so kernel work is
# charged to what it does (the veth receive path, the AF_XDP copy into the
# UMEM, the XDP program) before the system call that led to it (sendto,
# poll). User-space stacks are not reliable without frame pointers: a leaf
# that matches no rule falls through to its callers, and a sample nobody
# claims is "other".

function stage_of(sym, dso) {
	# --- kernel, from the most specific up ---------------------------------
	if (sym ~ /^bpf_prog_.*roxe_xdp|^bpf_dispatcher_xdp/)
		return "k xdp"
	if (sym ~ /^(__)?xsk_rcv|^__xsk_rcv|^__xsk_map_redirect|^xdp_do_redirect|^xsk_flush|^__xsk_map_flush|^xp_alloc|^xsk_generic_rcv|^xdp_do_flush/)
		return "k rx umem"
	if (sym ~ /^veth_xdp_rcv|^veth_poll|^veth_convert|^skb_pp_cow|^__napi_poll|^net_rx_action|^napi_/)
		return "k rx veth"
	if (sym ~ /^xsk_sendmsg|^__xsk_generic_xmit|^__xsk_sendmsg|^__dev_direct_xmit|^veth_xmit|^xsk_destruct_skb|^__x64_sys_sendto|^__sys_sendto/)
		return "k tx"
	if (sym ~ /^__x64_sys_(poll|ppoll|recvfrom|recvmsg)|^do_sys_poll|^xsk_poll|^__sys_recvfrom/)
		return "k rx syscall"
	# --- user space ---------------------------------------------------------
	# a payload copied in from an MR is CRCed as it is copied: "copy"
	if (sym ~ /^crc32_copy/)
		return "copy"
	if (dso ~ /libdeflate/ || sym ~ /^roxe_icrc_|^crc32_(avx512|vpclmul|finish)/)
		return "icrc"
	if (sym ~ /^(__)?mem(move|cpy)|^roxe_sge_copy|^roxe_mr_copy|^roxe_mr_read_icrc|^sge_copy|^mr_copy|^roxe_mcast_copy/)
		return "copy"
	if (sym ~ /^afxdp_rx_|^fill_put|^roxe_handoff_|^rx_handed|^rx_turn|^udp_rx_/)
		return "rx ring"
	if (sym ~ /^roxe_frame_hdr_get|^roxe_frame_addr_get|^rx_frame|^roxe_local_set_has|^roxe_dev_is_local|^roxe_mc_set_has|^frame_ok|^roxe_dev_counts_rx/)
		return "parse"
	if (sym ~ /^roxe_frame_(build|hdrs|seal)|^roxe_ipv4_csum|^roxe_flow_sport|^build\.|^roxe_engine_tx_(buf|commit)|^afxdp_tx_(alloc|submit|free)|^tmpl_build|^send_one/)
		return "tx build"
	if (sym ~ /^afxdp_tx_flush|^roxe_engine_tx_(flush|turn_end)|^tx_flush_unheld|^tx_looped|^(__libc_)?sendto$|^udp_tx_/)
		return "tx kick"
	if (sym ~ /^roxe_cq_post|^roxe_poll_cq|^reap_completions|^cq_move|^roxe_complete_wqe|^complete_rwqe|^deliver$/)
		return "completion"
	if (sym ~ /^roxe_(requester|responder|completer)|^send_ack|^ack_below|^nak$|^take_rwqe|^roxe_mr_|^roxe_rkey_check|^roxe_qp_|^roxe_sq_|^flush_sq|^roxe_timer_|^roxe_fill_recv_wqe|^roxe_engine_(ready|unready|doorbell)|^roxe_post_(send|recv)|^roxe_rnr_timer/)
		return "transport"
	if (sym ~ /clock_gettime|^roxe_now_ns|^engine_turn|^roxe_engine_poll|^now_ns|^perf_|^(lat|bw)_(client|server)|^client|^server/ || dso ~ /\[vdso\]/)
		return "loop"
	return ""
}

function flush_sample(   i, st) {
	if (period == "")
		return
	st = ""
	for (i = 0; i < n && st == ""; i++)
		st = stage_of(syms[i], dsos[i])
	if (st == "")
		st = (n > 0 && dsos[0] ~ /kernel/) ? "k other" : "other"
	ns[st] += period
	total += period
	period = ""
	n = 0
}

/^[ \t]*[0-9]+[ \t]*$/ {		# a sample's header: its period (ns)
	flush_sample()
	period = $1 + 0
	next
}
/^[ \t]+[0-9a-f]+ / {			# a stack frame: ip sym (dso)
	dso = $NF
	gsub(/[()]/, "", dso)
	sym = $2
	sub(/\+0x[0-9a-f]+$/, "", sym)
	syms[n] = sym
	dsos[n] = dso
	n++
	next
}
END {
	flush_sample()
	for (s in ns)
		printf "%s\t%.0f\n", s, ns[s]
	printf "total\t%.0f\n", total
}
