/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Every limit roxe advertises or enforces, defined once: the engine
 * (user/), roxed (daemon/), the kernel module (kmod/) and the XDP maps
 * (bpf/) all take them from here. Plain constants: C, BPF and kernel code
 * include this. Only the limits roxe0 alone has (an MR's size as a token's
 * range, fast-reg pages, its GID table) are the module's, in kmod/roxe.h.
 */
#ifndef ROXE_LIMITS_H
#define ROXE_LIMITS_H

/* QPNs 0 .. ROXE_MAX_QPS-1 (QP0 unused, QP1 the GSI QP); the XDP maps hold
 * an entry per QPN. */
#define ROXE_MAX_QPS		32768
/* roxe0 (roxe.ko) numbers QPs ROXE_MIN_QPN .. ROXE_MAX_QPS - 1, and ib_mad's
 * QP1; an embedded device 2 .. ROXE_MAX_QPS - 1. */
#define ROXE_MIN_QPN		16	/* 0, 1: SMI/GSI; a few spare */
#define ROXE_GSI_QPN		1	/* ib_mad's QP1 */
#define ROXE_MAX_WR		16383		/* per work queue */
#define ROXE_MAX_SGE		32		/* per WR, as rxe */
#define ROXE_MAX_INLINE		512		/* inline bytes per send WR */
#define ROXE_MAX_CQ		16384
#define ROXE_MAX_CQE		65535		/* per CQ */
#define ROXE_MAX_MR		65536		/* keys: index (below this) << 8 | generation */
#define ROXE_MAX_PD		65536
/* Memory windows: keys index << 8 | generation as MRs', with indices
 * ROXE_MW_INDEX_BASE .. ROXE_MW_INDEX_BASE + ROXE_MAX_MW - 1, above every
 * MR's, so a key alone says whether it names a window (as rxe). */
#define ROXE_MAX_MW		4096
#define ROXE_MW_INDEX_BASE	ROXE_MAX_MR
#define ROXE_MAX_AH		65536
#define ROXE_UMEM_MR_MAX	(256ull << 20)	/* roxe_device_attr.umem_mr_bytes */
#define ROXE_MAX_SRQ		16384
/* An embedded device (libroxe without roxe.ko) keeps PDs, CQs and SRQs in
 * plain allocations, not in tables by number as roxed does for roxe0
 * (daemon/kserve.c): nothing bounds them but memory. It advertises
 * ROXE_MAX_PD PDs, as roxe0 does, and these CQs and SRQs. */
#define ROXE_MAX_CQ_EMB		65536
#define ROXE_MAX_SRQ_EMB	65536
#define ROXE_MAX_RD_ATOMIC	16		/* READ/ATOMIC in flight per QP, each way */
#define ROXE_MAX_MSG_SZ		0x80000000u	/* bytes a message: IBA's 2^31 */

/* Engines (threads) of one device. An interface's queues have no limit of
 * their own: every engine has an AF_XDP socket on every queue, and what
 * bounds queues x engines is the XDP program's socket map (ROXE_MAX_XSKS,
 * include/roxe/maps.h). */
#define ROXE_MAX_ENGINES	64
/* AF_XDP sockets of one interface, engines x queues: the size of the XDP
 * program's XSKMAP (roxe_xsks), 8 bytes a slot in the kernel (128 KiB).
 * 16 engines (roxe.ko's most) on 1024 queues, or 64 on 256. */
#define ROXE_MAX_XSKS		16384
/* Devices one `roxed --links` serves at once (a roxed each: `rdma link
 * add NAME type roxe`). */
#define ROXE_MAX_LINKS		256
/* Frames an engine's hand-off ring holds (user/transport/handoff.c: frames
 * for the host's own addresses, multicast copies from other engines): two
 * QPs' whole send windows. */
#define ROXE_HANDOFF_SLOTS	1024
/* Of them, the most one sending QP may have queued at once: half, a whole
 * send window (ROXE_MAX_INFLIGHT), so an RC QP within its window loses no
 * frame to it and a QP flooding the ring leaves the others 512 slots. The
 * frames no QP sent (multicast copies) together: a quarter, what the
 * engine takes from its ring in one turn (4 x 64); with them flooding too,
 * the others keep 256. */
#define ROXE_HANDOFF_QP_SLOTS		(ROXE_HANDOFF_SLOTS / 2)
#define ROXE_HANDOFF_MCAST_SLOTS	(ROXE_HANDOFF_SLOTS / 4)
/* The port's own addresses roxe tracks (GIDs; XDP's local-address map). */
#define ROXE_MAX_LOCAL_ADDRS	64
/* An embedded device's GID table: rxe's default GID, then the addresses. */
#define ROXE_GID_TBL_EMB	(ROXE_MAX_LOCAL_ADDRS + 1)

/* UD multicast, as rxe: groups, QPs attached to one group, attachments in
 * all (query_device's max_mcast_grp, max_mcast_qp_attach,
 * max_total_mcast_qp_attach). */
#define ROXE_MAX_MCAST_GRP		8192
#define ROXE_MAX_MCAST_QP_ATTACH	56
#define ROXE_MAX_TOT_MCAST_QP_ATTACH	0x70000
/* Attachments one tenant of roxed may hold (issue #33; an embedded
 * device's own QPs are one process's and have the device's limits): each
 * group needs one, so it takes eight users to fill the device's groups. */
#define ROXE_MAX_MCAST_TENANT_ATTACH	(ROXE_MAX_MCAST_GRP / 8)

/* CNPs (RoCE v2 congestion notification): at most one per QP per interval,
 * in microseconds: the default, and the most a device may set
 * (roxe_device_attr.cnp_interval_us, roxed --cnp-interval). */
#define ROXE_CNP_INTERVAL_US		50
#define ROXE_CNP_INTERVAL_MAX_US	1000000

/* DCQCN, the reaction to CNPs (user/transport/dcqcn.h): each device
 * parameter's default and range. Defaults are NVIDIA's for ConnectX-4 and
 * later ("DCQCN CC Parameters"; mlx5's cong params carry the same names)
 * but alpha's timer and gain, which are the paper's (Zhu et al., SIGCOMM
 * 2015: K = 55 us, g = 1/256): roxe's CNPs come at most once per 50 us per
 * QP (the paper's N, to which it matched K), and with hardware's 1 us
 * period alpha has all but vanished by the next CNP, each cut is a few per
 * cent, and two senders overflowed a simulated port (dcqcn_test's
 * two_senders_share_a_marking_port: 30 % of frames dropped with 1 Gbit/s
 * senders into 200 Mbit/s, none with these). Rates in Mbit/s, times in
 * microseconds. */
#define ROXE_DCQCN_RATE_MAX		400000	/* any rate: 400 Gbit/s */
#define ROXE_DCQCN_LINE_RATE_DEF	100000	/* an interface that tells no speed */
#define ROXE_DCQCN_MIN_RATE_DEF		1	/* rpg_min_rate */
#define ROXE_DCQCN_MIN_DEC_FAC_DEF	50	/* rpg_min_dec_fac, 0..100 % */
#define ROXE_DCQCN_GD_DEF		11	/* rpg_gd: the cut is alpha / 2 */
#define ROXE_DCQCN_GD_MIN		10
#define ROXE_DCQCN_GD_MAX		15
#define ROXE_DCQCN_REDUCE_PERIOD_DEF	4	/* rate_reduce_monitor_period */
#define ROXE_DCQCN_TIME_RESET_DEF	300	/* rpg_time_reset */
#define ROXE_DCQCN_TIME_MAX		131071	/* any period (hardware's 17 bits) */
#define ROXE_DCQCN_BYTE_RESET_DEF	32767	/* rpg_byte_reset, x 64 bytes: 2 MiB */
#define ROXE_DCQCN_BYTE_RESET_MAX	32767
#define ROXE_DCQCN_THRESHOLD_DEF	1	/* rpg_threshold (the paper's F: 5) */
#define ROXE_DCQCN_THRESHOLD_MAX	31
#define ROXE_DCQCN_AI_RATE_DEF		5	/* rpg_ai_rate */
#define ROXE_DCQCN_HAI_RATE_DEF		50	/* rpg_hai_rate */
#define ROXE_DCQCN_G_DEF		1020	/* dce_tcp_g: g = 1/256 (hardware: 1019) */
#define ROXE_DCQCN_G_MAX		1023
#define ROXE_DCQCN_ALPHA_PERIOD_DEF	55	/* dce_tcp_rtt (hardware: 1) */
#define ROXE_DCQCN_INITIAL_ALPHA_DEF	1023	/* initial_alpha_value, /1024 */
#define ROXE_DCQCN_ALPHA_MAX		1023
/* Rate stages one call catches up after an idle QP (each halves the gap to
 * the target: 64 reach the line rate from anywhere). */
#define ROXE_DCQCN_MAX_STEPS		64
/* The pacer's burst allowance, bytes of frames, on top of one frame. */
#define ROXE_PACE_BURST_BYTES		16384

#endif /* ROXE_LIMITS_H */
