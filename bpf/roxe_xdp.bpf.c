// SPDX-License-Identifier: GPL-2.0-only
/*
 * roxe's XDP program: classify each frame, leave everything that is not
 * RoCE v2 to the kernel untouched, validate RoCE v2 frames with the shared
 * parser (roxe/parse.h), and steer each one by destination QP to the AF_XDP
 * socket of the engine that owns the QP. Counts everything it decides in
 * the maps of roxe/maps.h.
 *
 * "xdp.frags": frames larger than one page (4096-MTU RoCE) arrive as
 * multi-buffer XDP; the parser reads only the headers in the first buffer
 * and takes the frame length from bpf_xdp_get_buff_len().
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "roxe/parse.h"
#include "roxe/maps.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ROXE_MAX_QPS);
	__type(key, __u32);
	__type(value, struct roxe_qp_route);
} roxe_qp_table SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, ROXE_MAX_XSKS);
	__type(key, __u32);
	__type(value, __u32);
} roxe_xsks SEC(".maps");

/* Mmapable: the owning engine writes its counters straight into it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ROXE_MAX_QPS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct roxe_qp_stats);
} roxe_qp_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct roxe_stats);
} roxe_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct roxe_config);
} roxe_config SEC(".maps");

/* The interface's own addresses, filled by the loader (user/port/xdp.c). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ROXE_MAX_LOCAL_ADDRS);
	__type(key, struct roxe_local_addr);
	__type(value, __u32);
} roxe_local_ips SEC(".maps");

/* Multicast groups with attached QPs (user/verbs/mcast.c fills it, through
 * roxe_xdp_set_mcast). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ROXE_MAX_MCAST_GRP);
	__type(key, struct roxe_local_addr);
	__type(value, __u32);
} roxe_mcast_grps SEC(".maps");

/* The engines' own counters; the program never touches them (the loader
 * binds the map to it so that roxe_xdp_open finds it). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ROXE_MAX_ENGINES);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct roxe_engine_stats);
} roxe_eng_stats SEC(".maps");

/* The destination QPN of a frame whose BTH is in the first buffer, or -1. */
static __always_inline long frame_dqpn(void *data, void *data_end, __u32 bth_off)
{
	const struct roxe_bth *bth;

	if (bth_off > ROXE_BTH_OFF_MAX)
		return -1;
	bth = data + bth_off;
	if ((void *)(bth + 1) > data_end)
		return -1;
	return roxe_bth_qpn(bth);
}

static __always_inline struct roxe_qp_stats *qp_stats(long qpn)
{
	__u32 key = qpn;

	if (qpn < 0 || qpn >= ROXE_MAX_QPS)
		return 0;
	return bpf_map_lookup_elem(&roxe_qp_stats, &key);
}

SEC("xdp.frags")
int roxe_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 frame_total = bpf_xdp_get_buff_len(ctx);
	struct roxe_qp_route *route;
	struct roxe_qp_stats *qs;
	struct roxe_config *cfg;
	struct roxe_stats *st;
	struct roxe_local_addr local;
	struct roxe_pkt pkt;
	__u32 zero = 0, slot, qpn_key;
	long qpn, act;
	int verdict;

	st = bpf_map_lookup_elem(&roxe_stats, &zero);
	cfg = bpf_map_lookup_elem(&roxe_config, &zero);
	if (!st || !cfg)
		return XDP_PASS;

	verdict = roxe_parse(data, data_end, frame_total, &pkt);
	if (verdict == ROXE_PKT_NOT_ROCE) {
		st->passed++;
		return XDP_PASS;
	}
	if (verdict != ROXE_PKT_OK) {
		if (verdict >= ROXE_PKT_BAD_IP_LEN && verdict < ROXE_PKT__COUNT)
			(*roxe_stats_malformed(st, verdict))++;
		/* Past the length checks the BTH is real: blame its QP. */
		if (verdict >= ROXE_PKT_BAD_VERSION) {
			qs = qp_stats(frame_dqpn(data, data_end, pkt.bth_off));
			if (qs)
				__sync_fetch_and_add(&qs->rx_drop_malformed, 1);
		}
		return XDP_DROP;
	}

	if (roxe_pkt_gids(data, data_end, &pkt, 0, local.gid)) {
		st->not_local_passed++;
		return XDP_PASS;
	}
	qpn = frame_dqpn(data, data_end, pkt.bth_off);
	/* A datagram to a multicast group a QP here is attached to: to the
	 * engine that fans multicast out (AF_XDP delivers to one socket). */
	if (qpn == ROXE_MCAST_QPN) {
		__u32 *eng = bpf_map_lookup_elem(&roxe_mcast_grps, &local);

		if (!eng) {
			st->not_local_passed++;
			return XDP_PASS;
		}
		slot = roxe_xsk_slot(ctx->rx_queue_index, *eng, cfg->engines);
		if (bpf_redirect_map(&roxe_xsks, slot, XDP_DROP) != XDP_REDIRECT) {
			st->redirect_failed++;
			return XDP_DROP;
		}
		st->redirected++;
		return XDP_REDIRECT;
	}
	/* A RoCE frame to another host (we are a bridge or a router on its
	 * way) is the kernel's to forward, never an engine's to take. */
	if (!bpf_map_lookup_elem(&roxe_local_ips, &local)) {
		st->not_local_passed++;
		return XDP_PASS;
	}

	route = 0;
	if (qpn >= 0 && qpn < ROXE_MAX_QPS) {
		qpn_key = qpn;
		route = bpf_map_lookup_elem(&roxe_qp_table, &qpn_key);
	}
	if (!route || !route->in_use) {
		if (cfg->pass_unknown_qp) {
			st->unknown_qp_passed++;
			return XDP_PASS;
		}
		st->unknown_qp++;
		return XDP_DROP;
	}

	qs = qp_stats(qpn);
	/* Congestion on the way, counted before steering: a frame the
	 * engine never sees (no socket) still shows. */
	if (qs && roxe_pkt_ecn(data, data_end, &pkt) == ROXE_ECN_CE)
		__sync_fetch_and_add(&qs->ecn_marked, 1);
	slot = roxe_xsk_slot(ctx->rx_queue_index, route->engine, cfg->engines);
	act = bpf_redirect_map(&roxe_xsks, slot, XDP_DROP);
	if (act != XDP_REDIRECT) {
		st->redirect_failed++;
		if (qs)
			__sync_fetch_and_add(&qs->rx_drop_no_socket, 1);
		return XDP_DROP;
	}
	st->redirected++;
	if (qs) {
		__sync_fetch_and_add(&qs->rx_packets, 1);
		__sync_fetch_and_add(&qs->rx_bytes, frame_total);
	}
	return XDP_REDIRECT;
}
