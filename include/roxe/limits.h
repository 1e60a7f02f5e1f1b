/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Every limit roxe advertises or enforces, defined once: the engine
 * (user/), roxed (daemon/), the kernel module (kmod/) and the XDP maps
 * (bpf/) all take them from here. Plain constants: C, BPF and kernel code
 * include this.
 */
#ifndef ROXE_LIMITS_H
#define ROXE_LIMITS_H

/* QPNs 0 .. ROXE_MAX_QPS-1 (QP0 unused, QP1 the GSI QP); the XDP maps hold
 * an entry per QPN. */
#define ROXE_MAX_QPS		32768
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
#define ROXE_MAX_SRQ		16384
#define ROXE_MAX_RD_ATOMIC	16		/* READ/ATOMIC in flight per QP, each way */

/* Engines and the interface's queues (AF_XDP sockets: one per engine per
 * queue, see include/roxe/maps.h). */
#define ROXE_MAX_ENGINES	64
#define ROXE_MAX_QUEUES		64
/* Frames an engine's hand-off ring holds (user/transport/handoff.c: frames
 * for the host's own addresses, multicast copies from other engines): two
 * QPs' whole send windows. */
#define ROXE_HANDOFF_SLOTS	1024
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

/* CNPs (RoCE v2 congestion notification): at most one per QP per interval,
 * in microseconds: the default, and the most a device may set
 * (roxe_device_attr.cnp_interval_us, roxed --cnp-interval). */
#define ROXE_CNP_INTERVAL_US		50
#define ROXE_CNP_INTERVAL_MAX_US	1000000

#endif /* ROXE_LIMITS_H */
