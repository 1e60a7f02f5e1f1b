/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The transport engine's private state: device, engines, PDs, MRs, CQs,
 * SRQs, QPs. Public API: include/roxe/verbs.h.
 *
 * Ownership and threads:
 * - Each QP belongs to one engine thread (QPN modulo the engine count); only
 *   that thread runs its requester, responder and completer, so per-QP
 *   transport state needs no lock.
 * - Applications produce into a QP's send and receive queues (rxe uAPI
 *   rings, include/roxe/queue.h) under a per-QP post lock, then ring the
 *   owning engine's doorbell: a lock-free list of QPs with new work.
 * - CQs and SRQs may be shared by QPs of several engines: producing a CQE
 *   or taking an SRQ WQE takes that object's spinlock (uncontended unless
 *   it really is shared).
 * - MRs and QPs are looked up by key/number in device tables that engines
 *   read without locks; destroying one unpublishes it, then waits until
 *   every engine has passed a quiescent point (roxe_dev_quiesce) before
 *   freeing it.
 */
#ifndef ROXE_ENGINE_H
#define ROXE_ENGINE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "roxe/verbs.h"
#include "roxe/queue.h"
#include "roxe/frame.h"
#include "roxe/maps.h"
#include "roxe/kabi.h"
#include "port.h"

#define ROXE_MAX_MR		(1u << 16)
#define ROXE_MAX_SGE		32
#define ROXE_MAX_INLINE		512
#define ROXE_MAX_WR		16383
#define ROXE_MAX_CQE		65535
#define ROXE_MAX_RD_ATOMIC	16
#define ROXE_MAX_INFLIGHT	512		/* PSNs a requester may have unacked */
#define ROXE_ACKREQ_EVERY	32		/* ask for an ACK at least this often */
#define ROXE_RX_BURST		64
#define ROXE_TX_BUDGET		32		/* packets per QP per turn */

struct roxe_engine;
struct roxe_qp;

/* Count a NAK sent or received, by NAK code, in the QP's roxe_qp_stats. */
static inline void roxe_count_nak(struct roxe_qp_stats *st, uint8_t code, bool sent)
{
	switch (code) {
	case ROXE_NAK_PSN_SEQ_ERR:
		sent ? st->nak_seq_err_sent++ : st->nak_seq_err_rcvd++;
		break;
	case ROXE_NAK_INVALID_REQUEST:
		sent ? st->nak_inv_req_sent++ : st->nak_inv_req_rcvd++;
		break;
	case ROXE_NAK_REMOTE_ACCESS:
		sent ? st->nak_rem_access_sent++ : st->nak_rem_access_rcvd++;
		break;
	default:
		sent ? st->nak_rem_op_sent++ : st->nak_rem_op_rcvd++;
		break;
	}
}

struct roxe_pd {
	struct roxe_device	*dev;
	atomic_uint		users;		/* MRs, QPs, SRQs, AHs */
};

/* roxe.ko's fast-registration MRs: the module puts pages behind the
 * window (map) or takes them away (!map); 0 or -errno. */
typedef int roxe_mr_window_fn(void *ctx, uint32_t key, bool map);

struct roxe_mr_priv {
	struct roxe_mr		pub;
	struct roxe_pd		*pd;
	uint64_t		iova;		/* the MR's first byte as the wire names it */
	uint8_t			*host;		/* ... and where it is in this process */
	atomic_bool		valid;		/* false after SEND_WITH_INV / LOCAL_INV */
	/* Engines read the fields above without locks, as a seqlock: gen is
	 * odd while a fast-registration MR is (re)registered or invalidated
	 * (writers hold write_lock), and moves on with each, so an access
	 * that saw the same even gen before and after used one registration
	 * throughout; one that did not fails with a protection error. */
	atomic_uint		gen;
	pthread_spinlock_t	write_lock;
	/* a fast-registration MR (REG_MR WQEs register it): its window */
	uint8_t			*window;	/* NULL: an ordinary MR */
	uint64_t		window_bytes;
	roxe_mr_window_fn	*window_fn;
	void			*window_ctx;
};

struct roxe_comp_channel {
	struct roxe_device	*dev;
	int			efd;		/* eventfd: a count of pending events */
	pthread_mutex_t		lock;
	struct roxe_cq		*cqs;		/* CQs using this channel */
	atomic_uint		users;
};

struct roxe_cq {
	struct roxe_device	*dev;
	struct roxe_comp_channel *channel;
	struct roxe_cq		*channel_next;
	void			*context;
	struct rxe_queue_buf	*buf;
	struct roxe_queue	prod;		/* engines, under lock */
	struct roxe_queue	cons;		/* the application */
	pthread_spinlock_t	lock;
	int			cqe;		/* capacity granted */
	atomic_int		armed;		/* 0, or IBV_WC_... 1 any, 2 solicited */
	atomic_bool		event_pending;
	atomic_bool		overflow;	/* lost a CQE: reported once, then error */
	bool			overflow_reported;	/* async event queued (engines) */
	atomic_bool		overflow_polled;	/* -EOVERFLOW returned (poller) */
	atomic_uint		users;		/* QPs */
	atomic_uint		events_unacked;
	/* Served CQs (roxed): the ring is another process's; a CQE that may
	 * raise a completion event calls this instead of the channel logic
	 * (solicited: a solicited or an error CQE). */
	void			(*served_event)(void *ctx, struct roxe_cq *cq, bool solicited);
	void			*served_ctx;
	uint32_t		id;		/* served: the owner's CQ number */
};

struct roxe_srq {
	struct roxe_device	*dev;
	struct roxe_pd		*pd;
	struct rxe_queue_buf	*buf;
	struct roxe_queue	prod;		/* the application, under post lock */
	struct roxe_queue	cons;		/* engines, under lock */
	pthread_spinlock_t	post_lock;
	pthread_spinlock_t	lock;
	uint32_t		max_wr, max_sge;
	atomic_uint		limit;		/* 0: disarmed */
	atomic_uint		users;
	bool			served;		/* the ring is another process's */
	uint32_t		id;		/* served: the owner's SRQ number */
};

/* An address handle roxe.ko created for an application (ROXE_KOP_CREATE_AH):
 * what ib_core resolved, by AH number; its UD WQEs name it by that number
 * (rxe_send_wr.wr.ud.ah_num), never by an address vector of their own. */
#define ROXE_MAX_AH		ROXE_KABI_MAX_AH
struct roxe_served_ah {
	struct roxe_pd		*pd;
	struct roxe_frame_addr	addr;		/* GIDs, dmac, tclass, hop limit, flow */
};

/* An address handle: rxe's AV, so UD WQEs carry it by value as in the uAPI. */
struct roxe_ah {
	struct ibv_ah		ibv;		/* what the application holds */
	struct roxe_pd		*pd;
	struct rxe_av		av;
};

/* A receive WQE in progress (SEND spanning several packets). */
struct roxe_rwqe {
	uint64_t		wr_id;
	uint32_t		length;		/* sum of the SGEs */
	uint32_t		num_sge;
	uint32_t		offset;		/* bytes placed so far */
	struct rxe_sge		sge[ROXE_MAX_SGE];
};

/* A READ or ATOMIC request the responder answered: kept so a duplicate
 * (the requester retrying) gets the same answer without re-executing. */
struct roxe_rd_res {
	uint8_t			opcode;		/* 0: slot free */
	uint32_t		psn, last_psn;	/* request PSN, last response PSN */
	uint64_t		va;
	uint32_t		rkey, length;
	uint64_t		atomic_orig;
	uint8_t			atomic_syndrome;
};

/* The responder streams READ responses over several engine turns. */
struct roxe_read_out {
	bool			active;
	uint32_t		psn;		/* next response PSN */
	uint32_t		first_psn, last_psn;
	uint64_t		va;		/* next byte */
	uint32_t		rkey;
	uint32_t		resid;
};

/* The state of the engine's copy of a send WQE (roxe_qp.swqe[slot].state). */
enum roxe_wqe_state {
	ROXE_WQE_POSTED = 0,		/* not taken from the ring yet (or retired) */
	ROXE_WQE_SENDING,		/* taken; some packets sent */
	ROXE_WQE_SENT,			/* all packets sent, awaiting ACK/response */
};

struct roxe_qp {
	/* set at creation, read-only afterwards */
	struct roxe_device	*dev;
	struct roxe_engine	*eng;
	struct roxe_pd		*pd;
	struct roxe_cq		*scq, *rcq;
	struct roxe_srq		*srq;
	void			*context;
	uint32_t		qpn;
	enum ibv_qp_type	type;
	bool			sq_sig_all;
	struct ibv_qp_cap	cap;
	struct rxe_queue_buf	*sq_buf, *rq_buf;
	uint32_t		sq_elem_size, rq_elem_size;
	/* Served QPs (roxed): the rings belong to an application that posts
	 * into them directly and may rewrite a WQE at any time, so whatever
	 * bounds a memory access is clamped to what a slot holds. */
	bool			served;
	uint32_t		sq_slot_sge;	/* SGEs a send slot holds */
	uint32_t		sq_slot_inline;	/* inline bytes a send slot holds */
	/* The engine's private copies of the send WQEs, by slot: the fixed
	 * part of each (roxe_sq_take), read from the ring once. The ring slot
	 * is read again only for the SGEs and inline data, each bounded by
	 * what a slot holds. */
	struct rxe_send_wqe	*swqe;
	/* A kernel ULP's QP (roxe.ko writes its WQEs, in a ring only the
	 * module and roxed map): UD WQEs may carry the address vector. An
	 * application's UD WQEs name a served AH by number instead. */
	bool			kernel_av;

	/* the application side */
	pthread_mutex_t		modify_lock;
	pthread_spinlock_t	sq_post_lock, rq_post_lock;
	struct roxe_queue	sq_prod, rq_prod;
	uint32_t		ssn;

	/* attributes (modify_qp writes them under modify_lock while the
	 * engine is told to re-read through a state change) */
	_Atomic int		state;		/* enum ibv_qp_state */
	/* SQD: set by modify on entering SQD, cleared by the engine once no
	 * send WQE is in progress (or by modify on leaving SQD). */
	atomic_bool		sq_draining;
	bool			sqd_notify;	/* IBV_EVENT_SQ_DRAINED wanted */
	atomic_bool		dying;		/* destroy asked the engine to let go */
	atomic_bool		detached;	/* the engine has let go */
	struct ibv_qp_attr	attr;
	struct roxe_frame_addr	path;		/* RC/UC: addressing at RTR */
	uint32_t		mtu;		/* path MTU, bytes */
	uint64_t		timeout_ns;	/* 0: no retransmit timer */

	/* doorbell: on the engine's lock-free list of QPs with news */
	struct roxe_qp		*db_next;
	atomic_bool		db_queued;

	/* engine side ------------------------------------------------------- */
	struct roxe_queue	sq;		/* consumer: oldest WQE not completed */
	struct roxe_queue	rq;		/* consumer: next receive WQE */
	struct roxe_qp		*ready_next;	/* engine's list of QPs to serve */
	int			held_ack_slot;	/* its ACK held in the engine's batch; -1 */
	bool			on_ready;
	struct roxe_qp		*timer_next, **timer_pprev;
	int			eng_state;	/* state the engine acted on */

	struct {				/* requester */
		uint32_t	wqe;		/* slot of the next WQE to send from */
		uint32_t	psn;		/* next PSN */
		uint32_t	max_psn;	/* next PSN never sent yet (go-back-N rewinds psn) */
		uint32_t	offset;		/* bytes of that WQE already sent */
		unsigned	rd_atomic;	/* READ/ATOMIC requests in flight */
		unsigned	since_ackreq;
		bool		fenced;		/* waiting for READ/ATOMIC to finish */
		bool		rnr_wait;	/* paused by an RNR NAK until rnr_deadline */
		uint64_t	rnr_deadline;
	} req;
	struct {				/* completer */
		uint32_t	psn;		/* oldest PSN not yet acknowledged */
		unsigned	retry_cnt;	/* left for timeouts / seq NAKs */
		unsigned	rnr_retry;	/* left; 7 means infinite */
		uint64_t	deadline;	/* retransmit timer; 0: disarmed */
		bool		seq_nak_seen;	/* one go-back-N per NAKed PSN */
		uint32_t	seq_nak_psn;
	} comp;
	struct {				/* responder */
		uint32_t	psn;		/* next PSN expected */
		uint32_t	msn;
		uint8_t		in_msg;		/* 0, ROXE_OPK_SEND or ROXE_OPK_WRITE */
		bool		rwqe_valid;
		struct roxe_rwqe rwqe;
		uint64_t	wr_va;
		uint32_t	wr_rkey;	/* looked up again per packet */
		uint32_t	wr_resid;
		uint32_t	wr_len;		/* the WRITE's DMA length */
		bool		nak_sent;	/* seq NAK already sent for this gap */
		/* pending output, sent when the engine serves the QP */
		bool		ack_pending;
		uint8_t		ack_syndrome;
		uint32_t	ack_psn;
		struct roxe_rd_res *res;	/* max_dest_rd_atomic slots */
		unsigned	res_next;
		/* READ/ATOMIC replies owed, in PSN order; the head is being
		 * answered (read: its progress). ACKs wait behind them. */
		struct roxe_rd_res *outq[ROXE_MAX_RD_ATOMIC];
		unsigned	out_head, out_len;
		struct roxe_read_out read;
	} resp;

	/* Transport counters: this QP's entry of roxe_qp_stats (the mmapped
	 * BPF map with XDP, else the device's own array). Written only here. */
	struct roxe_qp_stats	*stats;
};

/* An engine thread: one port, a shard of the QPs. */
struct roxe_engine {
	struct roxe_device	*dev;
	unsigned		id;
	pthread_t		thread;
	struct roxe_port	*port;
	int			efd;		/* doorbell wakeup */
	atomic_bool		stop;
	atomic_bool		sleeping;
	atomic_bool		driving;	/* polled device: a thread runs a turn */
	uint64_t		next_timer;	/* earliest timer deadline; 0: none */
	atomic_ulong		epoch;		/* advances every loop turn */
	_Atomic(struct roxe_qp *) db_head;	/* doorbell list (push by CAS, take all) */
	/* roxed: roxe.ko's doorbell ring for this engine (kabi.h) */
	_Atomic(struct roxe_kabi_db_ring *) kdb;
	uint32_t		kdb_cons;
	struct roxe_qp		*ready_head, *ready_tail;
	struct roxe_qp		*timers;	/* QPs with a timer armed */
	uint64_t		now;		/* ns, CLOCK_MONOTONIC, per turn */
	/* tx batch */
	struct roxe_buf		tx[ROXE_RX_BURST];
	unsigned		ntx;
	struct roxe_qp		*tx_held[ROXE_RX_BURST];	/* a QP's held ACK; NULL: not one */
	bool			tx_urgent;	/* the batch holds more than held ACKs */
	uint64_t		ack_held_since;	/* oldest held ACK; 0: none */
	struct roxe_engine_stats *stats;	/* this engine's global counters */
};

struct roxe_xdp;
struct roxe_afxdp;

struct roxe_local_set {
	unsigned		n;
	uint8_t			gid[ROXE_MAX_LOCAL_ADDRS][16];
};

struct roxe_device {
	unsigned		nengines;
	bool			polled;		/* no engine threads: poll_cq drives */
	/* the interface (AFXDP, UDP backends) */
	char			ifname[16];
	int			ifindex;
	struct roxe_xdp		*xdp;		/* the attached program and its maps */
	bool			xdp_ours;	/* we attached it (a BPF link): it leaves with us */
	struct roxe_afxdp	*afxdp;
	struct roxe_port	*udp_port;
	/* per-QP counters: the mmapped roxe_qp_stats map, else our own */
	struct roxe_qp_stats	*qp_stats;
	bool			qp_stats_own;
	struct roxe_engine	engines[ROXE_MAX_ENGINES];
	enum roxe_backend	backend;
	uint32_t		mtu;		/* active IB MTU, bytes */
	uint8_t			gid[16];
	uint8_t			mac[6];
	/* The port's own addresses (gid among them): the only UD sources we
	 * send from, the only destinations UD takes frames for (the XDP
	 * program's roxe_local_ips holds the same). Engines read it without
	 * locks; roxe_device_refresh_addrs replaces it whole, then frees the
	 * old one after roxe_dev_quiesce. */
	_Atomic(struct roxe_local_set *) local;
	/* engines' global counters: the mmapped roxe_eng_stats, else our own */
	struct roxe_engine_stats *eng_stats;
	bool			eng_stats_own;
	/* lookups read by engines without locks (see top) */
	_Atomic(struct roxe_qp *) *qps;		/* by QPN */
	_Atomic(struct roxe_mr_priv *) *mrs;	/* by key >> 8 */
	_Atomic(struct roxe_served_ah *) *ahs;	/* by AH number (roxed) */
	pthread_mutex_t		lock;		/* allocation of QPNs and keys */
	uint32_t		next_qpn, next_mr;
	uint8_t			key_gen;
	/* async events */
	int			async_efd;
	pthread_mutex_t		async_lock;
	struct roxe_async_event	async[ROXE_ASYNC_EVENTS];
	unsigned		async_head, async_tail;
	uint64_t		async_lost;	/* raised while the ring was full */
};

/* --- engine.c --- */
int roxe_engine_start(struct roxe_engine *e);
void roxe_engine_stop(struct roxe_engine *e);
bool roxe_engine_poll(struct roxe_engine *e);	/* polled devices: one turn */
void roxe_engine_doorbell(struct roxe_qp *qp);
void roxe_dev_quiesce(struct roxe_device *dev);
/* Frames the state machines send: borrow, fill, queue. */
struct roxe_buf *roxe_engine_tx_buf(struct roxe_engine *e);
void roxe_engine_tx_commit(struct roxe_engine *e, struct roxe_qp *qp, struct roxe_buf *b);
void roxe_engine_tx_commit_ack(struct roxe_engine *e, struct roxe_qp *qp, struct roxe_buf *b);
void roxe_engine_tx_commit_resp(struct roxe_engine *e, struct roxe_qp *qp, struct roxe_buf *b);
void roxe_engine_ready(struct roxe_engine *e, struct roxe_qp *qp);
void roxe_timer_arm(struct roxe_qp *qp);
void roxe_timer_disarm(struct roxe_qp *qp);

/* --- mr.c --- */
struct roxe_mr_priv *roxe_mr_lookup(struct roxe_device *dev, uint32_t key, bool remote);
/* Check that [va, va+len) lies in the MR, that it belongs to pd, and that
 * it grants access; returns 0 or -EACCES (access) / -ERANGE (bounds). */
int roxe_mr_check(const struct roxe_mr_priv *mr, const struct roxe_pd *pd,
		  uint64_t va, uint64_t len, unsigned access);
/* One access to an MR: which registration it used (roxe_mr_map). */
struct roxe_mr_access {
	const struct roxe_mr_priv *mr;
	uint32_t		gen;
};
/* Where [va, va+len) of the MR that rkey names is in this process, after
 * roxe_mr_check()'s checks; NULL if any fails. Once the bytes are copied,
 * roxe_mr_access_ok(acc) says whether the registration held meanwhile. */
void *roxe_mr_map(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t rkey,
		  uint64_t va, uint64_t len, unsigned access, struct roxe_mr_access *acc);
bool roxe_mr_access_ok(const struct roxe_mr_access *acc);
/* Copy len bytes between buf and [va, va+len) of the MR rkey names (to_mr:
 * into the MR), with roxe_mr_map()'s checks; 0 or -EACCES. */
int roxe_mr_copy(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t rkey, uint64_t va,
		 void *buf, uint32_t len, unsigned access, bool to_mr);
/* Copy between a local SGE list (lkeys) and a buffer. to_sges: data flows
 * into the SGEs (needs LOCAL_WRITE). offset: bytes into the SGE list.
 * Returns 0, -EACCES or -ERANGE (a bad lkey, access, or bounds). */
int roxe_sge_copy(struct roxe_device *dev, struct roxe_pd *pd, const struct rxe_sge *sge,
		  unsigned num_sge, uint32_t offset, void *buf, uint32_t len, bool to_sges);

/* --- cq.c --- */
/* A ring for the engine's own objects; g: the shape it got. */
struct rxe_queue_buf *roxe_queue_buf_alloc(uint32_t entries, uint32_t elem_size,
					   struct roxe_queue_geom *g);
/* Returns false when the CQ overflowed (the CQE is lost, the CQ in error). */
bool roxe_cq_post(struct roxe_cq *cq, const struct ib_uverbs_wc *wc, bool solicited);
void roxe_async_event(struct roxe_device *dev, enum ibv_event_type type, void *element);
/* Drop element's events not read yet: its destroy, before it is freed. */
void roxe_async_purge(struct roxe_device *dev, const void *element);

/* --- device.c, srq.c, completer.c --- */
int roxe_dev_resolve_mac(struct roxe_device *dev, const uint8_t gid[16], uint8_t mac[6]);
bool roxe_dev_counts_rx(const struct roxe_device *dev);
bool roxe_dev_is_local(const struct roxe_device *dev, const uint8_t gid[16]);
int roxe_fill_recv_wqe(struct rxe_recv_wqe *w, const struct ibv_recv_wr *wr, uint32_t max_sge);
uint64_t roxe_rnr_timer_ns(uint8_t code);
void roxe_completer_progress(struct roxe_qp *qp);

/* --- qp.c --- */
/* Engine side: a fatal error, flush everything and stop; ev is the
 * affiliated async event to raise (IBV_EVENT_QP_FATAL, QP_REQ_ERR, ...). */
void roxe_qp_to_error(struct roxe_qp *qp, enum ibv_event_type ev);
/* Engine side: the send WQE being sent failed locally (w->status set). */
void roxe_qp_send_error(struct roxe_qp *qp);
void roxe_qp_sq_drain_check(struct roxe_qp *qp);	/* SQD: drained yet? */
void roxe_qp_engine_sync(struct roxe_qp *qp);	/* act on a state change */
enum ibv_wc_status roxe_qp_check_send_wqe(const struct roxe_qp *qp, const struct rxe_send_wqe *w);
uint32_t roxe_qp_send_wqe_psns(const struct roxe_qp *qp, const struct rxe_send_wqe *w);

/* --- requester.c, completer.c, responder.c --- */
void roxe_requester(struct roxe_qp *qp);			/* send what can be sent */
void roxe_requester_retry(struct roxe_qp *qp, uint32_t psn);	/* go back to psn */
void roxe_completer(struct roxe_qp *qp, const uint8_t *frame, const struct roxe_pkt *pkt);
void roxe_completer_timeout(struct roxe_qp *qp);
void roxe_complete_wqe(struct roxe_qp *qp, struct rxe_send_wqe *w, enum ibv_wc_status st);
void roxe_responder(struct roxe_qp *qp, const uint8_t *frame, const struct roxe_pkt *pkt);
void roxe_responder_send(struct roxe_qp *qp);			/* ACKs, READ responses */

/* --- served objects (roxed): queues and memory of roxe.ko's applications --
 * Created at the numbers and keys the module chose, on rings and pages it
 * mapped into this process; the application posts and polls without us. */
struct roxe_served_qp_init {
	uint32_t		qpn;
	enum ibv_qp_type	type;
	struct roxe_cq		*send_cq, *recv_cq;
	struct roxe_srq		*srq;
	struct rxe_queue_buf	*sq_buf, *rq_buf;	/* rq_buf NULL with an SRQ */
	struct roxe_queue_geom	sq_geom, rq_geom;	/* the module's word on their shape */
	struct ibv_qp_cap	cap;
	bool			sq_sig_all;
	bool			kernel_av;	/* a kernel ULP's QP: UD WQEs carry AVs */
};
int roxe_served_qp_create(struct roxe_pd *pd, const struct roxe_served_qp_init *init,
			  struct roxe_qp **qp);
/* As roxe_modify_qp, but the source GID and the peer's MAC come from the
 * module (it resolved them for the GID index the application chose). */
int roxe_served_modify_qp(struct roxe_qp *qp, struct ibv_qp_attr *attr, int mask,
			  const uint8_t sgid[16], const uint8_t dmac[6]);
int roxe_served_cq_create(struct roxe_device *dev, uint32_t id, struct rxe_queue_buf *buf,
			  struct roxe_queue_geom g,
			  void (*event)(void *ctx, struct roxe_cq *cq, bool solicited),
			  void *ctx, struct roxe_cq **cq);
int roxe_served_srq_create(struct roxe_pd *pd, uint32_t id, struct rxe_queue_buf *buf,
			   struct roxe_queue_geom g, uint32_t max_sge, uint32_t limit,
			   struct roxe_srq **srq);
/* An MR at the module's key; byte iova of it is at host. */
int roxe_served_mr_add(struct roxe_pd *pd, uint32_t key, uint64_t iova, size_t length,
		       unsigned access, void *host, struct roxe_mr **mr);
/* A fast-registration MR at the module's key, invalid until a REG_MR WQE
 * registers it within window (window_bytes); fn moves the pages. */
int roxe_served_mr_fast(struct roxe_pd *pd, uint32_t key, void *window, uint64_t window_bytes,
			roxe_mr_window_fn *fn, void *ctx, struct roxe_mr **mr);
/* An application's AH at the module's number, with what ib_core resolved
 * for it (sgid must be one of the port's own addresses); replaces an AH
 * left at that number. 0 or -EINVAL, -EADDRNOTAVAIL, -ENOMEM. */
int roxe_served_ah_add(struct roxe_pd *pd, uint32_t num, const struct roxe_frame_addr *addr);
/* Gone: returns once no engine can be using it. */
void roxe_served_ah_del(struct roxe_device *dev, uint32_t num);
/* Execute a REG_MR WQE (include/roxe/kabi.h) of qp: an IBV_WC_* status. */
int roxe_mr_fast_reg(struct roxe_qp *qp, const struct rxe_send_wqe *w);
/* LOCAL_INV, SEND_WITH_INV of key by a QP of pd: a fast-registration
 * MR goes invalid (its window empties). 0, or -EINVAL when key names no
 * valid fast-registration MR of pd: ordinary MRs are never invalidated
 * (IBA 10.6.3.5, as rxe). */
int roxe_mr_invalidate(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t key,
		       bool remote);

/* WQEs that send nothing: they take effect in order and complete when the
 * requester reaches them. */
static inline bool roxe_wqe_is_local(uint32_t op)
{
	return op == IBV_WR_LOCAL_INV || op == ROXE_KABI_WR_REG_MR;
}
/* Start taking doorbells from roxe.ko's ring for engine e. */
void roxe_engine_set_kdb(struct roxe_engine *e, struct roxe_kabi_db_ring *ring);

/* SGEs of a send WQE the engine may read: what its copy says, at most
 * what a slot holds. */
static inline uint32_t roxe_wqe_num_sge(const struct roxe_qp *qp, const struct rxe_send_wqe *w)
{
	uint32_t n = w->dma.num_sge;

	return n < qp->sq_slot_sge ? n : qp->sq_slot_sge;
}

/* The engine's copy of the send WQE in slot: taken or not (state POSTED). */
static inline struct rxe_send_wqe *roxe_sq_wqe(const struct roxe_qp *qp, uint32_t slot)
{
	return &qp->swqe[slot & qp->sq.mask];
}

/* Take the WQE in slot from the ring, if not taken yet: its fixed part is
 * copied once into the engine's copy, which alone is read from then on. */
static inline struct rxe_send_wqe *roxe_sq_take(const struct roxe_qp *qp, uint32_t slot)
{
	struct rxe_send_wqe *w = roxe_sq_wqe(qp, slot);

	if (w->state == ROXE_WQE_POSTED) {
		memcpy(w, roxe_queue_slot(&qp->sq, slot), sizeof(*w));
		w->state = ROXE_WQE_POSTED;
		w->status = IBV_WC_SUCCESS;
	}
	return w;
}

/* The ring slot behind the engine's copy w: its SGEs and inline data. */
static inline const struct rxe_dma_info *roxe_sq_dma(const struct roxe_qp *qp,
						    const struct rxe_send_wqe *w)
{
	const struct rxe_send_wqe *slot = roxe_queue_slot(&qp->sq, (uint32_t)(w - qp->swqe));

	return &slot->dma;
}

static inline int roxe_qp_state(const struct roxe_qp *qp)
{
	return atomic_load_explicit(&qp->state, memory_order_acquire);
}

uint64_t roxe_now_ns(void);

#endif /* ROXE_ENGINE_H */
