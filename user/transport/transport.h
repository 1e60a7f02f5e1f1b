/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The transport: QPs (the engine's state machines' view of them) and the
 * engine threads that run them, over the objects of core/core.h and the
 * ports of roxe/port.h. The verbs (verbs/) create QPs and change their
 * state; everything here runs on the owning engine's thread.
 *
 * Ownership and threads:
 * - Each QP belongs to one engine thread (QPN modulo the engine count); only
 *   that thread runs its requester, responder and completer, so per-QP
 *   transport state needs no lock.
 * - Applications produce into a QP's send and receive queues (rxe uAPI
 *   rings, include/roxe/queue.h) under a per-QP post lock, then ring the
 *   owning engine's doorbell: a lock-free list of QPs with new work.
 */
#ifndef ROXE_TRANSPORT_H
#define ROXE_TRANSPORT_H

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
#include "core/core.h"
#include "roxe/port.h"
#include "roxe/psn.h"
#include "transport/recovery.h"
#include "transport/dcqcn.h"

#define ROXE_MAX_INFLIGHT	512		/* PSNs a requester may have unacked */
#define ROXE_ACKREQ_EVERY	32		/* ask for an ACK at least this often */
#define ROXE_RX_BURST		64
#define ROXE_TX_BUDGET		32		/* packets per QP per turn */
/* Request packets per engine turn, all QPs together: two receive bursts,
 * so that a turn of many QPs cannot pour more into the peer's receive ring
 * (2048 descriptors on AF_XDP) than the acknowledgements it takes back in a
 * turn can clock out. Without it 4096 QPs of one message each overflow the
 * ring every time they (re)send together, and go-back-N never catches up. */
#define ROXE_TURN_TX_BUDGET	(2 * ROXE_RX_BURST)
/* The responder's out-of-sequence stash (stash.c): frames per engine, and
 * how far ahead of the expected PSN one may be. The frames are shared
 * max-min between the QPs that hold some: one QP alone may take all 512,
 * two keep 256 each, k at least 512 / k each. */
#define ROXE_STASH_SLOTS	512
#define ROXE_STASH_SPAN		1024

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
	 * module and roxed map): UD WQEs may carry the address vector, and
	 * REG_MR WQEs (fast registration) are its alone. An application's UD
	 * WQEs name a served AH by number instead. */
	bool			kernel_ulp;
	uint64_t		tenant;		/* whose its events are (core/event.c) */

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
	/* The engine's, beside the path every frame reads (loopback.c):
	 * where frames to loop_dgid go, NULL: the port */
	unsigned		loop_epoch;	/* 0: not looked up */
	uint8_t			loop_dgid[16];
	struct roxe_device	*loop_to;
	uint32_t		mtu;		/* path MTU, bytes */
	uint32_t		path_mtu_cap;	/* the route's limit on it; 0: none */
	uint64_t		timeout_ns;	/* 0: no retransmit timer */

	/* doorbell: on the engine's lock-free list of QPs with news */
	struct roxe_qp		*db_next;
	atomic_bool		db_queued;

	/* engine side ------------------------------------------------------- */
	struct roxe_queue	sq;		/* consumer: oldest WQE not completed */
	struct roxe_queue	rq;		/* consumer: next receive WQE */
	struct roxe_qp		*ready_next;	/* engine's list of QPs to serve */
	int			held_ack_slot;	/* its ACK held in the engine's batch; -1 */
	unsigned long		kdb_turn;	/* the turn its doorbell was last taken */
	bool			on_ready;
	struct roxe_qp		*timer_next, **timer_pprev;
	/* the engine's wait list for PSN credit (credit.c) */
	struct roxe_qp		*credit_wait_next, *credit_wait_prev;
	uint32_t		credit_need;	/* PSNs its next packet takes */
	bool			credit_waiting;	/* on the list */
	bool			credit_woken;	/* taken off it: may use the credit freed */
	/* the engine's list of QPs charged (credit.c: their charges lapse) */
	struct roxe_qp		*credit_next, **credit_pprev;
	int			eng_state;	/* state the engine acted on */
	uint64_t		cnp_last;	/* when it last sent a CNP (e->now); 0: never */

	struct {				/* requester */
		uint32_t	wqe;		/* slot of the next WQE to send from */
		uint32_t	psn;		/* next PSN */
		uint32_t	max_psn;	/* next PSN never sent yet (go-back-N rewinds psn) */
		uint32_t	offset;		/* bytes of that WQE already sent */
		unsigned	rd_atomic;	/* READ/ATOMIC requests in flight */
		uint32_t	credit;		/* PSNs charged to the engine (credit.c) */
		uint32_t	credit_from;	/* charged from here (after a lapse) */
		uint32_t	credit_comp;	/* comp.psn when the charge last moved */
		uint64_t	credit_at;	/* ... and when (e->now) */
		bool		credit_lapsed;	/* PSNs before credit_from not charged */
		unsigned	since_ackreq;
		bool		fenced;		/* waiting for READ/ATOMIC to finish */
		bool		rnr_wait;	/* paused by an RNR NAK until rnr_deadline */
		uint64_t	rnr_deadline;
		bool		probe;		/* the packet built is a tail probe: AckReq */
		/* RTT: one PSN timed at a time, sent once (Karn) */
		bool		rtt_timing;
		uint32_t	rtt_psn;
		uint64_t	rtt_sent;	/* engine time it left */
		/* DCQCN (dcqcn.h): the rate CNPs set and its pacer; a QP
		 * the pacer holds waits on its timer until pace_deadline */
		struct roxe_dcqcn cc;
		struct roxe_pacer pace;
		bool		pace_wait;
		uint64_t	pace_deadline;
	} req;
	struct {				/* completer */
		uint32_t	psn;		/* oldest PSN not yet acknowledged */
		unsigned	retry_cnt;	/* left for timeouts / seq NAKs */
		unsigned	rnr_retry;	/* left; 7 means infinite */
		uint64_t	deadline;	/* retransmit timer; 0: disarmed */
		bool		seq_nak_seen;	/* one go-back-N per NAKed PSN */
		uint32_t	seq_nak_psn;
		/* loss recovery (recovery.h) */
		struct roxe_rto	rto;
		struct roxe_cwnd cwnd;
		uint32_t	cwnd_psn;	/* comp.psn the window has counted to */
		bool		probe_due;	/* deadline is the tail probe's */
		struct roxe_stall stall;	/* the window blocked (recovery.h) */
		uint64_t	timer_from;	/* ns: when the probe's timer began */
		struct roxe_repair repair;	/* selective repair (recovery.h) */
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
		uint32_t	stashed;	/* frames it holds in the engine's stash */
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
	atomic_bool		exited;		/* stopped: runs no turn any more */
	/* Virtual clock only: asleep with nothing to do until a frame, a
	 * doorbell or roxe_clock_advance (roxe_engine_parked) */
	atomic_bool		parked;
	struct roxe_engine	*vclock_next;	/* engines roxe_clock_advance wakes */
	struct roxe_handoff	*handoff;	/* frames other engines hand it (handoff.c) */
	struct roxe_stash	*stash;		/* out-of-sequence frames (stash.c); lazily */
	/* At most the earliest deadline of the armed timers (roxe_timer_arm
	 * lowers it), so they are walked only once one may be due; 0: walk. */
	uint64_t		next_timer;
	/* The earliest of their deadlines the engine sleeps to the
	 * nanosecond for (roxe_timer_fine); 0: none. */
	uint64_t		next_fine;
	atomic_ulong		epoch;		/* advances every loop turn */
	_Atomic(struct roxe_qp *) db_head;	/* doorbell list (push by CAS, take all) */
	/* roxed: roxe.ko's doorbell ring for this engine (kabi.h) */
	_Atomic(struct roxe_kabi_db_ring *) kdb;
	__u64			*kdb_queued;	/* its doorbell bits, by QPN (kabi.h) */
	uint32_t		kdb_cons;
	struct roxe_qp		*ready_head, *ready_tail;
	unsigned		tx_left;	/* request packets this turn may still send */
	struct roxe_qp		*timers;	/* QPs with a timer armed */
	/* PSN credit (credit.c): the PSNs its requesters have outstanding,
	 * the most they may, the QPs waiting for room */
	uint32_t		credit_out;
	uint32_t		credit_budget;
	uint32_t		credit_qp_cap;	/* the most one QP may hold */
	struct roxe_qp		*credit_wait_head, *credit_wait_tail;
	struct roxe_qp		*credit_charged;	/* QPs holding credit */
	uint64_t		credit_scan_at;	/* last look for lapsed charges */
	uint64_t		now;		/* ns, roxe_now_ns(), per turn */
	/* tx batch */
	struct roxe_buf		tx[ROXE_RX_BURST];
	unsigned		ntx;
	struct roxe_qp		*tx_held[ROXE_RX_BURST];	/* a QP's held ACK; NULL: not one */
	bool			tx_urgent;	/* the batch holds more than held ACKs */
	uint64_t		ack_held_since;	/* oldest held ACK; 0: none */
	struct roxe_engine_stats *stats;	/* this engine's global counters */
	struct roxe_dcqcn_params cc;		/* the device's DCQCN parameters */
};



/* --- engine.c: the engine thread --- */
int roxe_engine_start(struct roxe_engine *e);
void roxe_engine_stop(struct roxe_engine *e);
bool roxe_engine_poll(struct roxe_engine *e);	/* polled devices: one turn */
void roxe_engine_doorbell(struct roxe_qp *qp);
/* Wake the engine (a failure counts in its stats: roxe_device_last_error) */
void roxe_engine_kick(struct roxe_engine *e);
void roxe_dev_quiesce(struct roxe_device *dev);
/* --- sched.c: the ready list, timers and the transmit batch --- */
void roxe_engine_ready(struct roxe_engine *e, struct roxe_qp *qp);
void roxe_engine_unready(struct roxe_engine *e, struct roxe_qp *qp);
void roxe_timer_arm(struct roxe_qp *qp);
void roxe_timer_disarm(struct roxe_qp *qp);
/* The QP's earliest deadline that wants the engine awake to the nanosecond
 * (a pacer's, a stall probe's; the others keep a sleeping engine's
 * millisecond); 0: none. */
uint64_t roxe_timer_fine(const struct roxe_qp *qp);
/* Frames the state machines send: borrow, fill, queue. */
struct roxe_buf *roxe_engine_tx_buf(struct roxe_engine *e);
void roxe_engine_tx_commit(struct roxe_engine *e, struct roxe_qp *qp, struct roxe_buf *b);
void roxe_engine_tx_commit_ack(struct roxe_engine *e, struct roxe_qp *qp, struct roxe_buf *b);
void roxe_engine_tx_commit_resp(struct roxe_engine *e, struct roxe_qp *qp, struct roxe_buf *b);
void roxe_engine_tx_flush(struct roxe_engine *e);	/* everything, held ACKs too */
/* What a turn's end sends; rx_idle: the turn received nothing. */
void roxe_engine_tx_turn_end(struct roxe_engine *e, bool rx_idle);

/* --- credit.c: the engine's limit on the PSNs its requesters have out --- */
/* A charge with no answer for this long lapses; looked for at most every
 * quarter of it, and only while a QP waits for credit. */
#define ROXE_CREDIT_HOLD_NS	100000000ull
void roxe_credit_init(struct roxe_engine *e);	/* from its port's ring */
bool roxe_credit_ok(struct roxe_qp *qp, uint32_t n);	/* false: it waits */
bool roxe_credit_low(const struct roxe_engine *e);	/* packets ask for ACKs */
void roxe_credit_sync(struct roxe_qp *qp);	/* req.psn or comp.psn moved */
void roxe_credit_drop(struct roxe_qp *qp);
void roxe_credit_recharge(struct roxe_qp *qp);	/* go-back-N: charge all again */
void roxe_credit_turn(struct roxe_engine *e);
unsigned roxe_credit_check(struct roxe_engine *e);	/* tests: disagreements */

/* --- cnp.c: ECN marks in, CNPs out and in (RoCE v2 annex A17.9.3) --- */
int roxe_cnp_build(const struct roxe_qp *qp, void *buf, size_t cap);
void roxe_ecn_ce_rx(struct roxe_qp *qp, bool count);	/* count: XDP did not */
void roxe_cnp_rx(struct roxe_qp *qp);
void roxe_cnp_received(struct roxe_qp *qp);	/* a valid CNP: the reaction point */

/* --- stash.c: the responder's out-of-sequence frames (the contract is there) --- */
void roxe_stash_fini(struct roxe_engine *e);
/* Keep a copy of the request frame with PSN psn, ahead of resp.psn;
 * false: not kept (dropped, as without a stash). */
bool roxe_stash_put(struct roxe_qp *qp, const uint8_t *frame, const struct roxe_pkt *pkt,
		    uint32_t psn);
/* The kept frame with PSN psn: its bytes (*frame) and layout, no longer
 * the QP's; a slot number for roxe_stash_release() once run, or -1: none. */
int roxe_stash_take(struct roxe_qp *qp, uint32_t psn, const uint8_t **frame,
		    struct roxe_pkt *pkt);
void roxe_stash_release(struct roxe_engine *e, int slot);
#define ROXE_STASH_FRAME_MAX	(4096 + 128)
void roxe_stash_drop(struct roxe_qp *qp);	/* all the QP's frames */

/* --- handoff.c: frames one engine hands another (the contract is there) --- */
/* No QP sent it (a multicast copy): no RC, UC or UD QP takes it as looped. */
#define ROXE_LOOP_NO_QPN	0xffffffffu
enum roxe_handoff_kind {
	ROXE_HO_CHECK,		/* built by this host (loopback): rx_frame's full checks */
	ROXE_HO_VERIFIED,	/* a multicast copy, ICRC checked by the handing engine:
				 * to the receiver's attached QPs only */
};
int roxe_handoff_init(struct roxe_engine *e);
void roxe_handoff_fini(struct roxe_engine *e);
/* Copy frame f (len bytes), sent by QP src_qpn of this host, into e's
 * ring; any thread, never blocks, takes no lock. false: dropped (the ring
 * is full, or holds src_qpn's share) and counted in e's loopback_drop. */
bool roxe_handoff_push(struct roxe_engine *e, const uint8_t *f, uint32_t len,
		       enum roxe_handoff_kind kind, uint32_t src_qpn);
bool roxe_handoff_pending(const struct roxe_engine *e);	/* frames, or drops to count */
/* The engine: take up to budget frames, each through rx. */
unsigned roxe_handoff_rx(struct roxe_engine *e, unsigned budget,
			 void (*rx)(struct roxe_engine *e, const struct roxe_buf *b,
				    enum roxe_handoff_kind kind, uint32_t src_qpn));

/* --- loopback.c: frames for the host's own addresses --- */
/*
 * roxe_loop_deliver: hand frame (len bytes, a whole frame as built for the
 * wire: Ethernet header to ICRC) to the receive path of dev's engine that
 * owns its destination QPN (QPN modulo the engine count), as if it had
 * arrived on dev's port; dev is the RECEIVING device; src_qpn is the QP
 * that sent it (an RC/UC QP takes a looped frame only from its peer QP, a
 * UD QP only with that number as the DETH's source). The frame is copied
 * (roxe_handoff_push, ROXE_HO_CHECK): the caller keeps its buffer. Any
 * thread; never blocks, takes no lock. Returns 0 (queued: the engine
 * verifies, counts as `loopback` and processes it on its next turn),
 * -EINVAL (not a RoCE v2 frame roxe_parse accepts), -ENOBUFS (the engine's
 * ring is full, or holds src_qpn's share of it: dropped and counted in
 * loopback_drop on the engine's next turn, as a full wire would; the
 * transport retransmits).
 */
int roxe_loop_deliver(struct roxe_device *dev, const uint8_t *frame, uint32_t len,
		      uint32_t src_qpn);
/* The local device whose own address gid is: dev itself, else another
 * device of this process in dev's network namespace; NULL: none. */
struct roxe_device *roxe_loop_find(struct roxe_device *dev, const uint8_t gid[16]);
/* roxe_loop_find() of the frame's destination IP address. */
struct roxe_device *roxe_loop_target(struct roxe_device *dev, const uint8_t *frame, uint32_t len);
/* The same for a frame of qp's, remembered per RC/UC QP until the epoch
 * moves: roxe_loop_epoch_bump() wherever an answer may change. */
struct roxe_device *roxe_loop_target_qp(struct roxe_qp *qp, const uint8_t *frame, uint32_t len);
void roxe_loop_epoch_bump(void);
/* Devices on a real interface: found by other devices of the process
 * (register before the engines start, unregister after they stopped). */
int roxe_loop_register(struct roxe_device *dev);
void roxe_loop_unregister(struct roxe_device *dev, void (*quiesce)(struct roxe_device *));

/* --- trace.c: the device's trace callback (roxe_device_attr.trace) --- */
void roxe_trace_frame(const struct roxe_engine *e, const char *dir, const uint8_t *f,
		      uint32_t len);
void roxe_trace_dump(const struct roxe_engine *e);

/* --- sq.c: retiring send WQEs --- */
/* The oldest WQE not retired, if it has been (partly) sent. */
struct rxe_send_wqe *roxe_sq_head(struct roxe_qp *qp);




/* --- mcast.c: UD multicast group sets and their delivery --- */
/* A device's multicast groups (verbs/mcast.c keeps them, engines read
 * the published set). */
struct roxe_mc_group {
	uint8_t		gid[16];
	uint32_t	first, n;		/* its QPNs: qpn[first .. first+n) */
};

/* Immutable once published: groups sorted by GID. */
struct roxe_mc_set {
	uint32_t	ngrp, nattach;
	struct roxe_mc_group *grp;
	uint32_t	*qpn;
};

struct roxe_mcast {
	pthread_mutex_t	lock;			/* attach, detach */
	_Atomic(struct roxe_mc_set *) set;
	int		sock;			/* SIOCADDMULTI; -1: not a real interface */
};


const struct roxe_mc_group *roxe_mc_set_find(const struct roxe_mc_set *s, const uint8_t gid[16]);
bool roxe_mc_set_has(const struct roxe_mc_set *s, const struct roxe_mc_group *g, uint32_t qpn);
/* A new set: old with qpn added to group add (if add), and removed from
 * group del (if del) or from every group (if all). NULL: no memory. */
struct roxe_mc_set *roxe_mc_set_edit(const struct roxe_mc_set *old, const uint8_t *add,
				     const uint8_t *del, bool all, uint32_t qpn);
/* Engine side: a received frame with DQPN ROXE_MCAST_QPN (ICRC unchecked). */
void roxe_mcast_rx(struct roxe_engine *e, const uint8_t *f, uint32_t len,
		   const struct roxe_pkt *pkt);
/* Engine side: a multicast frame e sends, to this host's attached QPs
 * (the contract is in mcast.c). */
void roxe_mcast_loop(struct roxe_engine *e, const uint8_t *f, uint32_t len);
/* Engine side: a ROXE_HO_VERIFIED copy another engine handed e. */
void roxe_mcast_copy_rx(struct roxe_engine *e, const uint8_t *f, uint32_t len);

/* --- qp_state.c: the engine's side of QP state changes --- */
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
uint64_t roxe_rnr_timer_ns(uint8_t code);
void roxe_completer_progress(struct roxe_qp *qp);	/* retire local WQEs at the head */
void roxe_requester(struct roxe_qp *qp);			/* send what can be sent */
void roxe_requester_retry(struct roxe_qp *qp, uint32_t psn);	/* go back to psn */
void roxe_requester_probe(struct roxe_qp *qp);	/* the tail probe: recovery.h */
bool roxe_requester_repair(struct roxe_qp *qp, uint32_t psn);	/* psn alone: recovery.h */

/* --- sendctl.c: the QP's retransmission timer, window and rate --- */
void roxe_recovery_reset(struct roxe_qp *qp);		/* entering RTS */
/* A valid CNP for qp arrived (engine side): DCQCN cuts its rate. */
void roxe_dcqcn_qp_cnp(struct roxe_qp *qp);
void roxe_retrans_timer_start(struct roxe_qp *qp);	/* (re)start it from now */
/* The send window blocked the requester: the stall probe (recovery.h). */
void roxe_retrans_stalled(struct roxe_qp *qp);
/* May a frame of a rate-limited QP leave now? Else it waits on its timer. */
bool roxe_pace_ok(struct roxe_qp *qp);
/* A data frame of len bytes (as on the wire) left a rate-limited QP: the
 * pacer's and DCQCN's byte counter's (requests and READ responses). */
void roxe_pace_sent_frame(struct roxe_qp *qp, uint32_t len);
/* PSNs sent and not yet acknowledged (0 while go-back-N runs behind an ACK). */
static inline uint32_t roxe_req_inflight(const struct roxe_qp *qp, uint32_t upto)
{
	int32_t d = roxe_psn_diff(upto, qp->comp.psn);

	return d > 0 ? (uint32_t)d : 0;
}
/*
 * A READ goes out as requests of at most the engine's per-QP credit cap
 * (credit.c) of responses each, in parts aligned from its first byte: the
 * end of the part holding byte off of w, where that request's last
 * response ends. The requester asks for it, the completer expects a LAST
 * response there.
 */
static inline uint32_t roxe_read_part_end(const struct roxe_qp *qp, const struct rxe_send_wqe *w,
					  uint32_t off)
{
	uint64_t part = (uint64_t)qp->eng->credit_qp_cap * qp->mtu;
	uint64_t end = (off / part + 1) * part;

	return end < w->dma.length ? (uint32_t)end : w->dma.length;
}
void roxe_completer(struct roxe_qp *qp, const uint8_t *frame, const struct roxe_pkt *pkt);
void roxe_completer_timeout(struct roxe_qp *qp);
void roxe_complete_wqe(struct roxe_qp *qp, struct rxe_send_wqe *w, enum ibv_wc_status st);
void roxe_responder(struct roxe_qp *qp, const uint8_t *frame, const struct roxe_pkt *pkt);
void roxe_responder_send(struct roxe_qp *qp);			/* ACKs, READ responses */

/* May a WR of opcode op be posted to a QP of type t? */
static inline bool roxe_qp_opcode_ok(enum ibv_qp_type t, uint32_t op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return true;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return t != IBV_QPT_UD;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
	case ROXE_UWR_FLUSH:		/* IBA 1.5: RC only */
	case ROXE_UWR_ATOMIC_WRITE:
		return t == IBV_QPT_RC;
	case IBV_WR_BIND_MW:		/* as rxe's provider */
		return t == IBV_QPT_RC || t == IBV_QPT_UC;
	default:
		return false;
	}
}

/* Requests answered by a response of their own, one PSN each but a READ's,
 * that take a responder resource: counted against max_rd_atomic. FLUSH and
 * ATOMIC WRITE are among them (IBA 1.5: answered by a zero-length READ
 * response, replayed from the resource when repeated). */
static inline bool roxe_wqe_is_read_or_atomic(uint32_t op)
{
	return op == IBV_WR_RDMA_READ || op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == ROXE_UWR_FLUSH ||
	       op == ROXE_UWR_ATOMIC_WRITE;
}

/* The public names of the IBA 1.5 opcodes and access bits are the uAPI's. */
_Static_assert(ROXE_WR_FLUSH == ROXE_UWR_FLUSH && ROXE_WR_ATOMIC_WRITE == ROXE_UWR_ATOMIC_WRITE &&
	       ROXE_WC_FLUSH == ROXE_UWC_FLUSH && ROXE_WC_ATOMIC_WRITE == ROXE_UWC_ATOMIC_WRITE,
	       "IBA 1.5 opcodes");

/* WQEs that send nothing: they take effect in order and complete when the
 * requester reaches them. */
static inline bool roxe_wqe_is_local(uint32_t op)
{
	return op == IBV_WR_LOCAL_INV || op == ROXE_KABI_WR_REG_MR || op == IBV_WR_BIND_MW;
}
/* Start taking doorbells from roxe.ko's ring for engine e. */
void roxe_engine_set_kdb(struct roxe_engine *e, struct roxe_kabi_db_ring *ring,
			 __u64 *queued);

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

/*
 * The engines' clock is CLOCK_MONOTONIC, or, for tests, a virtual clock:
 * roxe_clock_virtual() switches the process to it before any engine
 * starts. Time then moves only in roxe_clock_advance(), which wakes every
 * engine thread, so a timer fires when the test says and never because the
 * host was slow; an idle engine sleeps with no timeout meanwhile.
 */
void roxe_clock_virtual(uint64_t start_ns);
void roxe_clock_advance(uint64_t ns);
/* For a test on the virtual clock that waits for the engines to settle:
 * has the engine thread parked (asleep, nothing queued)? Is a wakeup
 * pending on its eventfd or port? (Parked across a look at wake_pending
 * with epoch unchanged: it stays asleep until the clock or a frame moves.) */
bool roxe_engine_parked(struct roxe_engine *e);
bool roxe_engine_wake_pending(struct roxe_engine *e);
/* The earliest deadline armed on e's QPs (0: none): e parked, or polled
 * and not turning. */
uint64_t roxe_engine_next_deadline(const struct roxe_engine *e);

#endif /* ROXE_TRANSPORT_H */
