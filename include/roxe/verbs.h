/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * roxe's C verbs API (embedded mode): the transport engine runs as threads
 * inside the calling process. It follows libibverbs' semantics and reuses
 * its public types (struct ibv_send_wr, ibv_recv_wr, ibv_wc, ibv_qp_attr,
 * ibv_qp_cap, ibv_ah_attr, enum ibv_qp_state, IBV_WC_* statuses, IBV_ACCESS_*
 * flags...), so code written against libibverbs ports over line by line.
 *
 * Return values: 0 or a count on success, a negative errno on failure
 * (libibverbs returns positive errno from post calls; roxe is uniform).
 *   -EINVAL   bad argument or attribute mask (see each call)
 *   -ENOMEM   out of memory or queue full (post: the work queue is full)
 *   -EBUSY    resource still in use (PD with MRs/QPs, CQ with QPs)
 *   -EOVERFLOW a CQ overran: completions were lost, the CQ is in error
 *
 * Threads: every call may come from any application thread. Posting to one
 * QP from several threads is serialised by a per-QP lock (the engine's
 * packet path takes none).
 */
#ifndef ROXE_VERBS_H
#define ROXE_VERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

struct roxe_device;
struct roxe_pd;
struct roxe_cq;
struct roxe_qp;
struct roxe_srq;
struct roxe_comp_channel;
struct roxe_port;

enum roxe_backend {
	ROXE_BACKEND_AFXDP,	/* XDP + AF_XDP on a real interface (default) */
	ROXE_BACKEND_UDP,	/* a UDP socket on port 4791 */
	ROXE_BACKEND_PORTS,	/* caller-made ports (loop wires in tests) */
};

struct roxe_device_attr {
	const char		*ifname;	/* AFXDP, UDP: the interface */
	enum roxe_backend	backend;
	unsigned		engines;	/* 0: one per usable core, on AF_XDP at
						 * most one per interface queue */
	unsigned		mtu;		/* 256..4096; 0: from the interface */
	/* No engine threads: roxe_poll_cq() runs the engines (run-to-
	 * completion). Lowest latency, but the application must keep polling
	 * a CQ, even when it expects nothing, for ACKs, retransmissions and
	 * timers to happen; completion channels are not available. */
	bool			polled;
	/* Congestion (RoCE v2 ECN): frames leave ECN-capable, ECT(0) in the
	 * IP header, unless no_ecn (then Not-ECT); either way roxe owns the
	 * ECN bits, a QP's traffic class sets only the DSCP. A frame that
	 * arrives marked CE makes the receiving QP send its peer a CNP, at
	 * most one per cnp_interval_us (0: ROXE_CNP_INTERVAL_US, 50; up to
	 * ROXE_CNP_INTERVAL_MAX_US). */
	bool			no_ecn;
	unsigned		cnp_interval_us;
	/* PORTS backend: one port per engine, and the device's addressing. */
	struct roxe_port	**ports;
	uint8_t			gid[16];	/* IPv4-mapped for IPv4 */
	uint8_t			mac[6];
	/* Congestion control (DCQCN's reaction to CNPs, and the pacer):
	 * NULL or "" on with the defaults (listed in the roxed man page); "off";
	 * or comma-separated name=value pairs over the defaults, e.g.
	 * "ai_rate=10,time_reset_us=100". The line rate defaults to the
	 * interface's speed where it tells one. A bad item: -EINVAL. */
	const char		*cc;
	/* Engine threads at SCHED_FIFO with this priority (1..99; needs
	 * CAP_SYS_NICE): a frame or doorbell then wakes its engine at once, as
	 * softirq work preempts a task, even with applications spinning on
	 * every core (where, at the default policy, the engine may wait for
	 * the scheduler's next slice). 0: the default policy. Not with polled.
	 * Above 99, or refused by the kernel: the open fails (-EINVAL, -EPERM). */
	unsigned		rt_priority;
	/* Responders drop what follows a gap in the PSNs, as rxe's do, instead
	 * of keeping copies past it (up to 2 MiB per engine, taken on the first
	 * gap) until the gap fills: for comparing, or to save the memory. */
	bool			no_ooo_stash;
	/* AFXDP: bind the AF_XDP sockets in copy mode (XDP_COPY) even where
	 * the driver offers zero-copy: for comparing the two. */
	bool			xdp_copy;
	/* Frame tracing, for debugging; NULL: none. Each engine calls
	 * trace(trace_arg, line) with one line (no newline) per frame it sends
	 * and receives, from the thread that runs it, as it happens. With
	 * trace_recorder it keeps its last 512 lines instead and hands them
	 * over, after a heading line, when the device closes: a flight recorder
	 * that barely changes the timing it records. */
	void			(*trace)(void *trace_arg, const char *line);
	void			*trace_arg;
	bool			trace_recorder;
	/* AF_XDP: bytes of the UMEM (the memory the sockets share with the
	 * kernel) set aside for roxe_alloc_umem_mr(), on top of the receive
	 * and transmit buffers (it takes none of them), rounded up to 4 KiB
	 * chunks, at most 256 MiB; pinned like the rest of the UMEM (RLIMIT_MEMLOCK).
	 * 0: none. Other backends: -EINVAL if set. */
	uint64_t		umem_mr_bytes;
};

int roxe_device_open(const struct roxe_device_attr *attr, struct roxe_device **dev);
void roxe_device_close(struct roxe_device *dev);
/* Errors the device met where no call could return them (an engine's
 * wake-up through its eventfd that failed): the last one as -errno, 0 if
 * none; with count, how many since the open. Each is also counted in its
 * engine's roxe_engine_stats.wakeup_errors (roxectl stats). */
int roxe_device_last_error(struct roxe_device *dev, uint64_t *count);
/* Read the interface's addresses again now: the device's GID and the
 * interface's current ones become the port's own, for the XDP program and
 * the engines, and the GID table follows. The device does this by itself
 * on every rtnetlink address event. 1 when they changed, 0 when not, or
 * -errno. */
int roxe_device_refresh_addrs(struct roxe_device *dev);
int roxe_query_device(struct roxe_device *dev, struct ibv_device_attr *attr);
int roxe_query_port(struct roxe_device *dev, struct ibv_port_attr *attr);
/* On an interface, rxe's GID table: 0 the default (link-local) GID, then
 * the interface's addresses where ib_core puts them (IPv4 ::ffff:a.b.c.d);
 * an empty entry reads as zeros. On caller-made ports: one GID, index 0. */
int roxe_query_gid(struct roxe_device *dev, int index, union ibv_gid *gid);
/* The GID index of the device's own address (the one it was opened with):
 * the sgid_index to use without a choice of one's own; -ENOENT while that
 * address is not on the interface. */
int roxe_device_gid_index(struct roxe_device *dev);

/* --- protection domains, memory regions ------------------------------------ */
int roxe_alloc_pd(struct roxe_device *dev, struct roxe_pd **pd);
int roxe_dealloc_pd(struct roxe_pd *pd);			/* -EBUSY while used */

/* Fields are read-only for the caller. */
struct roxe_mr {
	void		*addr;
	size_t		length;
	uint32_t	lkey;
	uint32_t	rkey;
	unsigned	access;		/* IBV_ACCESS_* */
};
/* access: IBV_ACCESS_LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC,
 * MW_BIND (memory windows may be bound to it), ROXE_ACCESS_FLUSH_GLOBAL,
 * ON_DEMAND (taken and kept: no MR of the embedded API is pinned, the
 * engine faults the pages in as it touches them, in the caller's process);
 * remote write or atomic access requires local write (-EINVAL otherwise).
 * ROXE_ACCESS_FLUSH_PERSISTENT is -EINVAL: no memory roxe registers is
 * persistent (kernel rxe refuses it on DRAM). */
int roxe_reg_mr(struct roxe_pd *pd, void *addr, size_t length, unsigned access,
		struct roxe_mr **mr);
/*
 * An MR in the device's UMEM (roxe_device_attr.umem_mr_bytes), length
 * bytes (whole 4 KiB chunks are taken), zeroed; mr->addr is where it is.
 * An RC SEND, WRITE or READ response whose payload lies within one SGE of
 * such an MR leaves without being copied: the frame's descriptors point at
 * the MR's bytes (the ICRC is still computed over them), where the
 * sockets are multi-buffer (Linux 6.6; else every frame is copied, as
 * from any MR); the work request completes only once the kernel has given
 * those descriptors back. UC, UD, inline data, a payload across SGEs or
 * to this host's own address (loopback) are copied as usual.
 * roxe_query_umem() counts both. Received data is always copied into it
 * (the kernel picks a receive buffer; docs/embedding.md). roxe_dereg_mr()
 * gives the chunks back. -ENOSPC: the reserve has no run of free chunks
 * that long; -EOPNOTSUPP: the device has no reserve (not AF_XDP, or
 * umem_mr_bytes 0); -EINVAL: length 0, or access as roxe_reg_mr().
 */
int roxe_alloc_umem_mr(struct roxe_pd *pd, size_t length, unsigned access,
		       struct roxe_mr **mr);
struct roxe_umem_stats {
	uint64_t	reserve_bytes;	/* umem_mr_bytes as made (whole chunks) */
	uint64_t	reserve_free;	/* not allocated */
	bool		inplace;	/* frames may leave in place (multi-buffer) */
	uint64_t	tx_inplace;	/* frames sent from a UMEM MR in place */
	uint64_t	tx_copied;	/* frames from a UMEM MR that were copied */
};
/* All engines' counts, read while they run (each one exact on its own). */
int roxe_query_umem(struct roxe_device *dev, struct roxe_umem_stats *st);
/* -EINVAL while memory windows are bound to it (as rxe). */
int roxe_dereg_mr(struct roxe_mr *mr);
/* The MR as the struct ibv_mr a BIND_MW WR names (bind_info.mr): roxe
 * reads only its lkey. Valid while the MR is. */
struct ibv_mr *roxe_mr_ibv(struct roxe_mr *mr);

/* --- memory windows (IBA 10.6.7; rxe's rules) ------------------------------
 * type IBV_MW_TYPE_1 or IBV_MW_TYPE_2 (2B); mw->rkey is the window's key
 * (ROXE_MAX_MW of them). A window grants remote access (IBV_ACCESS_REMOTE_*
 * of its bind) to [addr, addr+length) of an MR registered with
 * IBV_ACCESS_MW_BIND, through its rkey alone; a writable window needs the
 * MR's local write. A type 1 window is bound by roxe_bind_mw(): it posts a
 * BIND_MW WQE to qp (any QP of the window's PD may then use the key) and
 * sets mw->rkey to ibv_inc_rkey() of it at once, as rxe's provider does
 * (after an IBV_WC_MW_BIND_ERR completion the application restores it);
 * length 0 and no MR unbind it; it is never invalidated. A type 2 window is
 * bound by an IBV_WR_BIND_MW WR on an RC or UC QP of its PD (wr.bind_mw:
 * mw, the new rkey, bind_info; zero-based allowed), to that QP alone (the
 * new rkey is the window's from then on: the next bind's mw->rkey must
 * name it, as with rxe); it is free again after IBV_WR_LOCAL_INV of its rkey, or a SEND_WITH_INV
 * naming it that its QP receives. A bind completes with IBV_WC_BIND_MW,
 * or fails with IBV_WC_MW_BIND_ERR (the QP then stops as for other local
 * errors); a bad LOCAL_INV with IBV_WC_LOC_QP_OP_ERR. Access through a
 * window outside its range or rights is NAKed as a remote access error.
 * roxe_dealloc_mw of a bound window unbinds it. */
int roxe_alloc_mw(struct roxe_pd *pd, enum ibv_mw_type type, struct ibv_mw **mw);
int roxe_dealloc_mw(struct ibv_mw *mw);
int roxe_bind_mw(struct roxe_qp *qp, struct ibv_mw *mw, const struct ibv_mw_bind *bind);

/* --- completion queues and channels ----------------------------------------- */
int roxe_create_comp_channel(struct roxe_device *dev, struct roxe_comp_channel **ch);
int roxe_destroy_comp_channel(struct roxe_comp_channel *ch);	/* -EBUSY with CQs */
/* A file descriptor that turns readable when a CQ event is pending:
 * usable with poll/epoll, then call roxe_get_cq_event(). */
int roxe_comp_channel_fd(const struct roxe_comp_channel *ch);

int roxe_create_cq(struct roxe_device *dev, int cqe, void *cq_context,
		   struct roxe_comp_channel *ch, struct roxe_cq **cq);
int roxe_destroy_cq(struct roxe_cq *cq);			/* -EBUSY with QPs */
/* At least cqe entries (1..ROXE_MAX_CQE), the completions not yet polled
 * kept in order; -EINVAL if more than cqe are outstanding. Not while
 * another thread polls the CQ. */
int roxe_resize_cq(struct roxe_cq *cq, int cqe);
/* Returns the number of completions (0..n), or -EOVERFLOW once after the
 * CQ overran (the CQ is then in error; an IBV_EVENT_CQ_ERR is queued). */
int roxe_poll_cq(struct roxe_cq *cq, int n, struct ibv_wc *wc);
int roxe_req_notify_cq(struct roxe_cq *cq, int solicited_only);
/* Blocks until an armed CQ of the channel has an event; -EINTR when a
 * signal interrupts the wait. */
int roxe_get_cq_event(struct roxe_comp_channel *ch, struct roxe_cq **cq, void **cq_context);
void roxe_ack_cq_events(struct roxe_cq *cq, unsigned n);
/* "success", "remote access error", ... (libibverbs' texts are its own). */
const char *roxe_wc_status_str(enum ibv_wc_status status);

/* --- queue pairs ------------------------------------------------------------ */
struct roxe_qp_init_attr {
	struct roxe_cq		*send_cq;
	struct roxe_cq		*recv_cq;
	struct roxe_srq		*srq;		/* NULL: the QP has its own RQ */
	struct ibv_qp_cap	cap;		/* updated with what was granted */
	enum ibv_qp_type	qp_type;	/* IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD */
	int			sq_sig_all;
	void			*qp_context;
};

int roxe_create_qp(struct roxe_pd *pd, struct roxe_qp_init_attr *attr, struct roxe_qp **qp);
int roxe_destroy_qp(struct roxe_qp *qp);
uint32_t roxe_qp_num(const struct roxe_qp *qp);
/*
 * Transitions and masks as ibv_modify_qp (IBA table 91): a mask missing a
 * required attribute, or naming one not allowed in that transition, gives
 * -EINVAL and leaves the QP unchanged; so does a transition the engine's
 * own move to ERR or SQE overtook (query the QP). For RC/UC at RTR,
 * ah_attr.grh.dgid names the peer (IPv4-mapped for IPv4) and
 * ah_attr.is_global must be 1.
 *
 * SQD (send queue drain), entered from RTS: no new send WQE starts; those
 * already started are sent to the end (on RC, acknowledged) and complete as
 * usual. Sends may still be posted: they start at SQD -> RTS. sq_draining
 * (roxe_query_qp) is 1 until no started WQE is left; then, once, after the
 * last of their completions, IBV_EVENT_SQ_DRAINED is queued if the
 * RTS -> SQD call named IBV_QP_EN_SQD_ASYNC_NOTIFY with en_sqd_async_notify
 * set (as IBA says; kernel rxe raises it unasked too). SQD -> SQD
 * changes what table 91 allows (RC: port, AV, timeout, retry_cnt,
 * rnr_retry, max_rd_atomic, max_dest_rd_atomic, access flags, P_Key index,
 * min RNR timer; UC: AV, access flags, P_Key index; UD: P_Key index,
 * Q_Key) only once drained, -EBUSY before. SQD -> RTS resumes, drained or
 * not (then no SQ_DRAINED comes).
 *
 * SQE (send queue error), UC and UD only: a send WQE that fails locally
 * (an lkey that does not cover its data: IBV_WC_LOC_PROT_ERR) moves the QP
 * to SQE by itself. That WQE completes with its error, every other send
 * posted with IBV_WC_WR_FLUSH_ERR; receives go on; roxe_post_send returns
 * -EINVAL. No async event: the error completion is the report. SQE -> RTS
 * (optional: IBV_QP_CUR_STATE, UC IBV_QP_ACCESS_FLAGS, UD IBV_QP_QKEY)
 * resumes sending. On RC the same error is fatal, as RC send errors are:
 * the QP goes to ERR (both queues flush) and IBV_EVENT_QP_FATAL is raised.
 */
int roxe_modify_qp(struct roxe_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
int roxe_query_qp(struct roxe_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		  struct roxe_qp_init_attr *init_attr);

/* Post: -EINVAL for a bad WR (too many SGEs, inline too long, opcode not
 * valid for the QP type), -ENOMEM when the queue is full, -EINVAL when the
 * QP state does not accept posts (RESET for receives; RESET, INIT, RTR and
 * SQE for sends); *bad_wr names the first WR not posted. Sends posted in
 * SQD wait for RTS; WRs posted in ERR complete at once, flushed. */
int roxe_post_send(struct roxe_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);

/*
 * IBA 1.5's ATOMIC WRITE and FLUSH (RC only), as kernel rxe speaks them
 * since Linux 6.2. Their numbers are the kernel's uAPI ones, which
 * rdma-core 45 and later name IBV_WR_FLUSH, IBV_WR_ATOMIC_WRITE,
 * IBV_WC_FLUSH, IBV_WC_ATOMIC_WRITE and IBV_ACCESS_FLUSH_GLOBAL/PERSISTENT
 * (rdma-core 44 names ATOMIC WRITE's only).
 *
 * ROXE_WR_ATOMIC_WRITE: wr.rdma.remote_addr and wr.rdma.rkey name 8 bytes
 * of remote memory that MR and QP open to IBV_ACCESS_REMOTE_WRITE; the 8
 * bytes sg_list describes (one or more SGEs, 8 bytes in all) are copied
 * when posted, like inline data. The responder stores them with one
 * aligned 64-bit store, after every earlier request of the QP took effect:
 * a reader sees the old or the new 8 bytes, never a mix. A remote address
 * not 8-byte aligned is refused (IBV_WC_REM_INV_REQ_ERR). Completes with
 * ROXE_WC_ATOMIC_WRITE.
 *
 * ROXE_WR_FLUSH: makes the data of earlier requests in a range (or a
 * whole MR) visible to the remote node before it completes (placement type
 * ROXE_FLUSH_GLOBAL; ROXE_FLUSH_PERSISTENT needs persistent memory, which
 * no roxe MR is). The responder's MR needs the placement type's
 * ROXE_ACCESS_FLUSH_* bit, its QP the same bit in qp_access_flags. Fill
 * the WR with roxe_wr_flush(): it carries remote_addr, rkey, length and
 * the FETH in wr.atomic. Completes with ROXE_WC_FLUSH.
 *
 * Both take a responder resource, so they count against max_rd_atomic.
 * Refusals complete the WR with IBV_WC_REM_ACCESS_ERR (R_Key, MR access
 * or range) or IBV_WC_REM_INV_REQ_ERR (QP access, alignment, length), as
 * kernel rxe's responder answers, and move the QP to the error state.
 */
#define ROXE_WR_FLUSH			((enum ibv_wr_opcode)14)
#define ROXE_WR_ATOMIC_WRITE		((enum ibv_wr_opcode)15)
#define ROXE_WC_FLUSH			((enum ibv_wc_opcode)8)
#define ROXE_WC_ATOMIC_WRITE		((enum ibv_wc_opcode)9)
#define ROXE_ACCESS_FLUSH_GLOBAL	(1u << 8)
#define ROXE_ACCESS_FLUSH_PERSISTENT	(1u << 9)
/* FLUSH placement types (bits) and selectivity levels. */
#define ROXE_FLUSH_GLOBAL		1
#define ROXE_FLUSH_PERSISTENT		2
#define ROXE_FLUSH_RANGE		0	/* [remote_addr, remote_addr + length) */
#define ROXE_FLUSH_MR			1	/* the whole MR rkey names */

static inline void roxe_wr_flush(struct ibv_send_wr *wr, uint32_t rkey, uint64_t remote_addr,
				 uint32_t length, uint8_t type, uint8_t level)
{
	wr->opcode = ROXE_WR_FLUSH;
	wr->sg_list = NULL;
	wr->num_sge = 0;
	wr->wr.atomic.remote_addr = remote_addr;
	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.compare_add = length;
	wr->wr.atomic.swap = (uint64_t)type | (uint64_t)level << 8;
}
int roxe_post_recv(struct roxe_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);

/* --- address handles (UD) ----------------------------------------------------- */
/* wr.ud.ah in struct ibv_send_wr takes the struct ibv_ah * this returns. */
int roxe_create_ah(struct roxe_pd *pd, const struct ibv_ah_attr *attr, struct ibv_ah **ah);
int roxe_destroy_ah(struct ibv_ah *ah);

/* --- multicast (UD) -------------------------------------------------------------
 * A UD QP attached to a multicast group (gid: IPv4 224.0.0.0/4 as
 * ::ffff:a.b.c.d, or IPv6 ff00::/8) receives the datagrams sent to it
 * (destination QPN 0xFFFFFF) whose Q_Key is its own, those this host sends
 * too. A UD send through an AH to the group reaches every attached QP. The
 * first attach of a group joins the interface to its Ethernet address;
 * destroying a QP detaches it. As rxe: -EINVAL for a QP not UD, a GID not
 * multicast, or (detach) a QP not attached; -ENOMEM past max_mcast_grp,
 * max_mcast_qp_attach or max_total_mcast_qp_attach (roxe_query_device);
 * attaching twice is no error. -EOPNOTSUPP on the UDP backend. */
int roxe_attach_mcast(struct roxe_qp *qp, const union ibv_gid *gid);
int roxe_detach_mcast(struct roxe_qp *qp, const union ibv_gid *gid);

/* --- shared receive queues ------------------------------------------------------ */
int roxe_create_srq(struct roxe_pd *pd, struct ibv_srq_init_attr *attr, struct roxe_srq **srq);
int roxe_modify_srq(struct roxe_srq *srq, struct ibv_srq_attr *attr, int attr_mask);
int roxe_query_srq(struct roxe_srq *srq, struct ibv_srq_attr *attr);
int roxe_destroy_srq(struct roxe_srq *srq);
int roxe_post_srq_recv(struct roxe_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);

/* --- asynchronous events ---------------------------------------------------------
 * What roxe raises (a QP's events come after its error completions are in
 * its CQs; none when the application itself moves a QP to ERR; none for
 * SQE, see roxe_modify_qp):
 *   IBV_EVENT_QP_FATAL          the engine moved the QP to ERR: an RC send
 *                               error (retries or RNR retries exhausted, a
 *                               NAK, a bad response, a local error), or as
 *                               responder a receive WQE it could not write
 *   IBV_EVENT_QP_REQ_ERR        to ERR: as responder, an invalid request
 *                               (bad opcode sequence, length) was NAKed
 *   IBV_EVENT_QP_ACCESS_ERR     to ERR: as responder, an R_Key or access
 *                               violation was NAKed
 *   IBV_EVENT_SQ_DRAINED        SQD's drain is over (if asked for)
 *   IBV_EVENT_CQ_ERR            a CQ overran
 *   IBV_EVENT_SRQ_LIMIT_REACHED an SRQ fell below its armed limit
 * Up to ROXE_ASYNC_EVENTS wait to be read, at most ROXE_ASYNC_EVENTS_PER_OBJECT
 * of them one object's (one QP, CQ or SRQ, of one tenant of roxed, cannot
 * crowd out everyone else's), and once they are all waiting, a tenant's
 * share of them (roxed's tenants, the users roxe.ko names; a device of
 * one's own is one tenant, which may fill the ring); later ones are lost
 * and counted (roxe_async_lost). Destroying an object drops its events
 * not yet read, so an event never names an object that is gone.
 */
#define ROXE_ASYNC_EVENTS		256
#define ROXE_ASYNC_EVENTS_PER_OBJECT	8
struct roxe_async_event {
	enum ibv_event_type	type;	/* IBV_EVENT_QP_FATAL, CQ_ERR, SRQ_LIMIT_REACHED, ... */
	uint32_t		id;	/* the object's number: its QPN; a served CQ's
					 * or SRQ's roxe.ko number; else 0 */
	union {
		struct roxe_qp	*qp;
		struct roxe_cq	*cq;
		struct roxe_srq	*srq;
	} element;
};
int roxe_async_fd(const struct roxe_device *dev);
/* -EAGAIN when none is pending. */
int roxe_get_async_event(struct roxe_device *dev, struct roxe_async_event *ev);
/* Events lost because ROXE_ASYNC_EVENTS, or ROXE_ASYNC_EVENTS_PER_OBJECT of
 * the object's, were waiting, or because their tenant held its share of a
 * full ring (also those that gave way to another tenant's). */
uint64_t roxe_async_lost(const struct roxe_device *dev);

#ifdef __cplusplus
}
#endif
#endif /* ROXE_VERBS_H */
