/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The transport: what its files all share. The QP (the state machines'
 * view of it, each stage's part in stages.h) and the engine thread that
 * runs a shard of them, over the objects of core/core.h and the ports of
 * roxe/port.h. The verbs (verbs/) create QPs and change their state;
 * everything here runs on the owning engine's thread. Each file's
 * functions are in its own header (engine.h, requester.h, sched.h, ...).
 *
 * Ownership and threads:
 * - Each QP belongs to one engine thread (QPN modulo the engine count); only
 *   that thread runs its requester, responder and completer, so per-QP
 *   transport state needs no lock.
 * - Applications produce into a QP's send and receive queues (rxe uAPI
 *   rings, include/private/roxe/queue.h) under a per-QP post lock, then ring the
 *   owning engine's doorbell: a lock-free list of QPs with new work.
 */
#ifndef ROXE_TRANSPORT_H
#define ROXE_TRANSPORT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "roxe/verbs.h"
#include "roxe/queue.h"
#include "roxe/frame.h"
#include "roxe/maps.h"
#include "roxe/kabi.h"
#include "core/core.h"
#include "roxe/port.h"
#include "transport/dcqcn.h"
#include "transport/stages.h"

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

/* A send completion held back (sq.c): its WC, the SQ consumer index to
 * publish with it, the in-place frame it waits for. */
struct roxe_held_wc {
	struct ib_uverbs_wc	wc;
	uint64_t		seq;
	uint64_t		since;		/* e->now when held */
	uint32_t		index;
	bool			signal;
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
	/* With a UMEM reserve (roxe_alloc_umem_mr), by slot: the engine's
	 * number of the WQE's last in-place frame (0: none), and the
	 * completions held until the port is done with such frames (sq.c). */
	uint64_t		*swqe_seq;
	struct roxe_held_wc	*held;
	uint32_t		held_head, held_n;
	struct roxe_qp		*held_next;	/* the engine's list of QPs holding some */
	bool			on_held;
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
	/* RESETs the application asked for and the engine did: one asked
	 * while the engine still saw RESET (INIT -> RESET between two of its
	 * turns) must still drop what was posted (qp_state.c). */
	atomic_uint		reset_asked, reset_done;
	uint64_t		cnp_last;	/* when it last sent a CNP (e->now); 0: never */

	struct roxe_req_info	req;		/* the requester's (requester.c) */
	struct roxe_comp_info	comp;		/* the completer's (completer.c) */
	struct roxe_resp_info	resp;		/* the responder's (responder.c) */

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
	/* the last nap taken with frames pending in the port; 0: none */
	uint64_t		tx_nap_ns;
	/* how long it spins idle before it sleeps (spin.h): the engine
	 * thread's, published for tests */
	_Atomic uint64_t	spin_ns;
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
	/* in-place frames built (their numbers, sq.c), QPs holding completions */
	uint64_t		inplace_built;
	struct roxe_qp		*held_qps;
	struct roxe_dcqcn_params cc;		/* the device's DCQCN parameters */
};

static inline int roxe_qp_state(const struct roxe_qp *qp)
{
	return atomic_load_explicit(&qp->state, memory_order_acquire);
}

#endif /* ROXE_TRANSPORT_H */
