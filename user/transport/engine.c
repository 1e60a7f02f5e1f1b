// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The engine thread: one port, a shard of the QPs, no locks on the packet
 * path. Each turn it
 *   1. receives a burst, verifies each frame (parser, ICRC) and hands it to
 *      the QP's responder (requests) or completer (responses);
 *   2. takes the doorbell list (QPs the application posted to or modified)
 *      and acts on state changes;
 *   3. serves the ready list: each QP sends ACKs/READ responses and new
 *      requests, a bounded budget per turn so QPs share the wire fairly;
 *   4. fires due timers (retransmit, RNR wait), wakes the QPs that wait for
 *      PSN credit if it is free (credit.c), flushes its transmit batch.
 * Idle, it spins a little (latency; as long as spinning catches work:
 * spin.h), then sleeps in poll() on the port and its doorbell eventfd
 * until traffic, a post, or the next timer. On a test's virtual clock
 * (engine.h) it sleeps at once and with no timeout: only the test's
 * roxe_clock_advance brings a deadline.
 *
 * A polled device (roxe_device_attr.polled) has no engine threads: the
 * application's roxe_poll_cq() calls run the turns (run-to-completion), so
 * one spinning thread per process does everything: the lowest latency on
 * few cores, at the price of a busy core.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "transport/transport.h"
#include "transport/wake.h"
#include "transport/engine.h"
#include "transport/cnp.h"
#include "transport/completer.h"
#include "transport/credit.h"
#include "transport/handoff.h"
#include "transport/mcast.h"
#include "transport/qp_state.h"
#include "transport/requester.h"
#include "transport/responder.h"
#include "transport/sched.h"
#include "transport/spin.h"
#include "transport/sq.h"
#include "transport/stash.h"
#include "transport/trace.h"

/* Spinning, a turn costs less than a clock read where the clock is a
 * system call (no vDSO clocksource: TCG guests, some VMs); the spin's end
 * is late by at most this many idle turns. */
#define SPIN_CLOCK_TURNS	8
/* Asleep with frames the port has not handed over (tx_pending): naps
 * before the next kick, doubled while they stay (a link whose queue
 * stays stopped costs a few thousand wake-ups a second, not one per
 * turn), back to the first once the port is clear. */
#define TX_NAP_MIN_NS	20000
#define TX_NAP_MAX_NS	256000

/* The virtual clock (engine.h). vclock_on is set once, before any
 * engine thread exists, and only read after: the branch costs the real
 * clock nothing. The list of engines to wake is touched only when one
 * starts or stops and on an advance, never in a turn. */
static bool vclock_on;
static _Atomic uint64_t vclock_ns;
static pthread_mutex_t vclock_lock = PTHREAD_MUTEX_INITIALIZER;
static struct roxe_engine *vclock_engines;

uint64_t roxe_now_ns(void)
{
	if (__builtin_expect(vclock_on, 0))
		return atomic_load_explicit(&vclock_ns, memory_order_acquire);
	return roxe_mono_ns();
}

void roxe_clock_virtual(uint64_t start_ns)
{
	/* 0 is "never" to the timers and the loss memory */
	atomic_store(&vclock_ns, start_ns ? start_ns : 1);
	vclock_on = true;
}

void roxe_clock_advance(uint64_t ns)
{
	atomic_fetch_add_explicit(&vclock_ns, ns, memory_order_release);
	/* Each engine looks at the clock on waking: its due timers fire in
	 * that turn. (Polled engines turn when their poller says.) */
	pthread_mutex_lock(&vclock_lock);
	for (struct roxe_engine *e = vclock_engines; e; e = e->vclock_next)
		roxe_engine_kick(e);
	pthread_mutex_unlock(&vclock_lock);
}

static void vclock_join(struct roxe_engine *e)
{
	pthread_mutex_lock(&vclock_lock);
	e->vclock_next = vclock_engines;
	vclock_engines = e;
	pthread_mutex_unlock(&vclock_lock);
}

static void vclock_leave(struct roxe_engine *e)
{
	struct roxe_engine **pp;

	pthread_mutex_lock(&vclock_lock);
	for (pp = &vclock_engines; *pp; pp = &(*pp)->vclock_next) {
		if (*pp == e) {
			*pp = e->vclock_next;
			break;
		}
	}
	pthread_mutex_unlock(&vclock_lock);
}

bool roxe_engine_parked(struct roxe_engine *e)
{
	return atomic_load_explicit(&e->parked, memory_order_acquire);
}

bool roxe_engine_wake_pending(struct roxe_engine *e)
{
	struct pollfd pfd[2] = {
		{ .fd = e->efd, .events = POLLIN },
		{ .fd = e->port->wait_fd, .events = POLLIN },
	};

	return poll(pfd, e->port->wait_fd >= 0 ? 2 : 1, 0) != 0;
}

/* --- doorbells: lock-free push by any thread, take-all by the engine ------ */
void roxe_engine_doorbell(struct roxe_qp *qp)
{
	struct roxe_engine *e = qp->eng;
	struct roxe_qp *head;

	if (!atomic_exchange(&qp->db_queued, true)) {
		head = atomic_load(&e->db_head);
		do
			qp->db_next = head;
		while (!atomic_compare_exchange_weak(&e->db_head, &head, qp));
	}
	if (atomic_load(&e->sleeping))
		roxe_engine_kick(e);
}

static bool kdb_pending(struct roxe_engine *e);

void roxe_dev_quiesce(struct roxe_device *dev)
{
	unsigned long start[ROXE_MAX_ENGINES];

	for (unsigned i = 0; i < dev->nengines; i++)
		start[i] = atomic_load(&dev->engines[i].epoch);
	for (unsigned i = 0; i < dev->nengines; i++) {
		struct roxe_engine *e = &dev->engines[i];

		/* Two whole turns, or asleep with no doorbell queued (the
		 * application's or roxe.ko's), or exited (not merely told to
		 * stop: its last turn may still run): the engine holds no
		 * pointer it read before we started, and has taken every
		 * doorbell rung before. Bounded (100 s at least) against an
		 * engine that never turns. */
		for (long waited = 0; waited < 10000000 &&
		     atomic_load(&e->epoch) < start[i] + 2 &&
		     !(atomic_load(&e->sleeping) && !atomic_load(&e->db_head) &&
		       !kdb_pending(e)) &&
		     !atomic_load(&e->exited); waited++) {
			if (dev->polled)
				roxe_engine_poll(e);	/* or another poller turns it */
			else
				usleep(10);
		}
	}
}

uint64_t roxe_engine_next_deadline(const struct roxe_engine *e)
{
	uint64_t next = 0;

	for (const struct roxe_qp *qp = e->timers; qp; qp = qp->timer_next)
		next = roxe_timer_next(qp, next);
	return next;
}

/* Fire what is due; returns the earliest deadline still pending (0: none). */
static uint64_t timers_turn(struct roxe_engine *e)
{
	uint64_t next = 0, fine = 0, qfine;
	struct roxe_qp *qp = e->timers, *n;

	for (; qp; qp = n) {
		n = qp->timer_next;
		if (qp->comp.deadline && e->now >= qp->comp.deadline)
			roxe_completer_timeout(qp);
		if (qp->req.rnr_wait && e->now >= qp->req.rnr_deadline) {
			qp->req.rnr_wait = false;
			roxe_engine_ready(e, qp);
		}
		if (qp->req.pace_wait && e->now >= qp->req.pace_deadline) {
			qp->req.pace_wait = false;	/* the pacer lets it go */
			roxe_engine_ready(e, qp);
		}
		if (qp->resp.reack_left && e->now >= qp->resp.reack_at)
			roxe_responder_reack(qp);
		if (qp->resp.page_wait && e->now >= qp->resp.page_at)
			roxe_responder_page_retry(qp);
		if (!roxe_timer_next(qp, 0)) {
			roxe_timer_disarm(qp);
			continue;
		}
		next = roxe_timer_next(qp, next);
		qfine = roxe_timer_fine(qp);
		if (qfine && (!fine || qfine < fine))
			fine = qfine;
	}
	e->next_fine = fine;
	return next;
}

/* --- receive ---------------------------------------------------------------------- */
/*
 * Is the frame from where the QP expects (as rxe's check_addr)? RC and UC:
 * from the path's destination to its source. UD (QP1 too): to one of the
 * port's own addresses, from anyone. Otherwise a third host on the link,
 * knowing only a QPN and a PSN, could write into the QP. A frame from one
 * of the port's own addresses comes only through loopback (looped), never
 * from the port: one that does is a third host posing as this one (to a
 * QP connected to its own device, or to QP1 as the own rdma_cm). A looped
 * frame also names the QP that sent it (src_qpn, loopback.c): RC and UC
 * take it only from their peer QP, UD only with the sender as the DETH's
 * source QP, so no other QP of this host (another tenant of roxed) can
 * pose as a local peer.
 */
static bool rx_addr_ok(const struct roxe_qp *qp, const uint8_t *f, const struct roxe_buf *b,
		       const struct roxe_pkt *pkt, bool looped, uint32_t src_qpn)
{
	uint8_t sgid[16], dgid[16];

	if (roxe_pkt_gids(f, f + b->len, pkt, sgid, dgid))
		return false;
	if (!looped && roxe_dev_is_local(qp->dev, sgid))
		return false;
	if (qp->type == IBV_QPT_UD)
		return roxe_dev_is_local(qp->dev, dgid) &&
		       (!looped || !(pkt->flags & ROXE_HDR_DETH) ||
			roxe_deth_sqp((const struct roxe_deth *)(f + pkt->bth_off +
								 ROXE_BTH_LEN)) == src_qpn);
	if (looped && src_qpn != qp->attr.dest_qp_num)
		return false;
	return roxe_gid_eq(sgid, qp->path.dgid) && roxe_gid_eq(dgid, qp->path.sgid);
}

/* Header validation (IBA 9.6.1.5): an opcode of another transport than
 * the QP's is dropped, whatever its PSN, before any state moves: an RC QP
 * that took a UC or UD opcode at its expected PSN as an invalid request
 * went to ERR on one forged frame (wire_addr_test:
 * rc_wrong_transport_opcode_dropped). */
static bool rx_transport_ok(const struct roxe_qp *qp, uint8_t opcode)
{
	uint8_t t = roxe_opcode_info(opcode)->qpt;

	switch (qp->type) {
	case IBV_QPT_RC:
		return t == ROXE_WQPT_RC;
	case IBV_QPT_UC:
		return t == ROXE_WQPT_UC;
	default:
		return t == ROXE_WQPT_UD;	/* UD, and QP1 */
	}
}

/* looped: from this host (loopback.c, through handoff.c), not the port:
 * XDP never saw it; src_qpn sent it. */
static void rx_frame(struct roxe_engine *e, const struct roxe_buf *b, bool looped,
		     uint32_t src_qpn)
{
	struct roxe_device *dev = e->dev;
	struct roxe_pkt pkt;
	struct roxe_qp *qp;
	uint32_t qpn;
	bool counts;
	int v;

	if (dev->trace)
		roxe_trace_frame(e, "rx", b->data, b->len);
	v = roxe_parse(b->data, b->data + b->len, b->len, &pkt);
	if (v != ROXE_PKT_OK)
		return;		/* counted by the XDP program on the fast path */
	qpn = roxe_bth_qpn((const struct roxe_bth *)(b->data + pkt.bth_off));
	if (qpn == ROXE_MCAST_QPN) {
		roxe_mcast_rx(e, b->data, b->len, &pkt);
		return;
	}
	qp = qpn < ROXE_MAX_QPS ? atomic_load_explicit(&dev->qps[qpn], memory_order_acquire) : NULL;
	if (!qp || qp->eng != e || atomic_load(&qp->dying))
		return;
	if (roxe_icrc_check(b->data, &pkt) != ROXE_PKT_OK) {
		qp->stats->icrc_errors++;
		return;
	}
	if (!rx_addr_ok(qp, b->data, b, &pkt, looped, src_qpn)) {
		qp->stats->rx_drop_addr++;
		e->stats->rx_drop_addr++;
		return;
	}
	counts = looped || roxe_dev_counts_rx(dev);
	if (counts) {
		qp->stats->rx_packets++;
		qp->stats->rx_bytes += b->len;
	}
	if (qp->eng_state != roxe_qp_state(qp))
		roxe_qp_engine_sync(qp);
	/* ECN on any frame (ICRC masks it); a CNP goes no further */
	if (roxe_pkt_ecn(b->data, b->data + b->len, &pkt) == ROXE_ECN_CE)
		roxe_ecn_ce_rx(qp, counts);
	if (pkt.opcode == ROXE_OP_CNP) {
		roxe_cnp_rx(qp);
		return;
	}
	if (!rx_transport_ok(qp, pkt.opcode)) {
		qp->stats->rx_drop_opcode++;
		return;
	}
	if (pkt.flags & ROXE_OPF_REQUEST)
		roxe_responder(qp, b->data, &pkt);
	else
		roxe_completer(qp, b->data, &pkt);
}

/* A frame another engine handed e (handoff.c): a looped frame gets every
 * check a frame from the port gets; a multicast copy was checked by the
 * engine that received it and goes to e's attached QPs only. */
static void rx_handed(struct roxe_engine *e, const struct roxe_buf *b, enum roxe_handoff_kind kind,
		      uint32_t src_qpn)
{
	if (kind == ROXE_HO_VERIFIED) {
		roxe_mcast_copy_rx(e, b->data, b->len);
		return;
	}
	e->stats->loopback++;
	rx_frame(e, b, true, src_qpn);
}

static bool rx_turn(struct roxe_engine *e)
{
	struct roxe_buf bufs[ROXE_RX_BURST];
	unsigned n = roxe_port_rx(e->port, bufs, ROXE_RX_BURST);

	for (unsigned i = 0; i < n; i++)
		rx_frame(e, &bufs[i], false, ROXE_LOOP_NO_QPN);
	if (n)
		roxe_port_rx_release(e->port, bufs, n);
	/* Handed frames cost no syscall: take more of them per turn. */
	return (roxe_handoff_rx(e, 4 * ROXE_RX_BURST, rx_handed) | n) > 0;
}

/* --- doorbells and the ready list ---------------------------------------------------- */
static bool doorbell_turn(struct roxe_engine *e)
{
	struct roxe_qp *qp, *n;

	/* a locked exchange only when there is something to take: this runs
	 * every turn, a spinning engine's included */
	if (!atomic_load_explicit(&e->db_head, memory_order_relaxed))
		return false;
	qp = atomic_exchange(&e->db_head, NULL);
	for (; qp; qp = n) {
		n = qp->db_next;
		atomic_store(&qp->db_queued, false);
		if (atomic_load(&qp->dying)) {
			/* The app may have seen a receive completion (and destroyed
			 * the QP) before this turn's ACK for it left: send what the
			 * responder owes, or the requester retries forever. */
			roxe_responder_send(qp);
			roxe_engine_tx_flush(e);	/* its held ACK too: the QP is going away */
			roxe_engine_unready(e, qp);
			roxe_timer_disarm(qp);
			roxe_credit_drop(qp);	/* nothing of it is outstanding */
			roxe_stash_drop(qp);
			roxe_sq_held_drop(qp);
			roxe_resp_page_drop(&qp->resp);
			atomic_store(&qp->detached, true);
			continue;
		}
		roxe_qp_engine_sync(qp);
		roxe_engine_ready(e, qp);
	}
	return true;
}

/*
 * roxed: the doorbells roxe.ko queued for this engine (kabi.h). The ring is
 * shared with the kernel, which we trust to count, but every QPN is still
 * bounds-checked and must name a served QP of this engine. A QP has one
 * slot at most: its bit in queued is set while its QPN is on the ring, and
 * we clear it before we read its send queue. After an overflow every
 * served QP of the engine is looked at.
 */
void roxe_engine_set_kdb(struct roxe_engine *e, struct roxe_kabi_db_ring *ring,
			 __u64 *queued)
{
	e->kdb_cons = __atomic_load_n(&ring->cons, __ATOMIC_RELAXED);
	e->kdb_queued = queued;
	atomic_store_explicit(&e->kdb, ring, memory_order_release);
	/* Doorbells rung before the engine knew the ring: look now. */
	roxe_engine_kick(e);
}

/* A QP's doorbells count once per turn (turn: the engine's epoch + 1, never
 * 0): an application ringing in a loop, its queue kept full, gets one flush
 * of what it posted per turn, not one per doorbell. */
static void kdb_ring(struct roxe_engine *e, uint32_t qpn, unsigned long turn)
{
	struct roxe_qp *qp;

	if (qpn >= ROXE_MAX_QPS)
		return;
	qp = atomic_load_explicit(&e->dev->qps[qpn], memory_order_acquire);
	if (qp && qp->served && qp->eng == e && !atomic_load(&qp->dying) &&
	    qp->kdb_turn != turn) {
		qp->kdb_turn = turn;
		roxe_qp_engine_sync(qp);	/* in ERR: flush what was posted */
		roxe_engine_ready(e, qp);
	}
}

/* The QP's doorbell bit goes (kabi.h), with acquire: the send queue, read
 * after it, holds what the application wrote before any doorbell that
 * found the bit set. */
static void kdb_clear(struct roxe_engine *e, uint32_t qpn)
{
	if (qpn < ROXE_KABI_MAX_QPS)
		__atomic_fetch_and(&e->kdb_queued[qpn / 64], ~(1ull << (qpn % 64)),
				   __ATOMIC_ACQ_REL);
}

/* What roxe.ko says while the engine is awake (kabi.h): 1, it needs no
 * signal; 0, then a full barrier before the last look at the ring. */
static void kdb_awake(struct roxe_engine *e, bool awake)
{
	struct roxe_kabi_db_ring *r = atomic_load_explicit(&e->kdb, memory_order_acquire);

	if (!r)
		return;
	__atomic_store_n(&r->awake, awake, __ATOMIC_RELAXED);
	if (!awake)
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* The last look before sleeping: a QPN queued, or an overflow */
static bool kdb_pending(struct roxe_engine *e)
{
	struct roxe_kabi_db_ring *r = atomic_load_explicit(&e->kdb, memory_order_acquire);

	return r && (__atomic_load_n(&r->prod, __ATOMIC_ACQUIRE) != e->kdb_cons ||
		     __atomic_load_n(&r->overflow, __ATOMIC_RELAXED));
}

static bool kdb_turn(struct roxe_engine *e)
{
	struct roxe_kabi_db_ring *r = atomic_load_explicit(&e->kdb, memory_order_acquire);
	unsigned long turn = atomic_load_explicit(&e->epoch, memory_order_relaxed) + 1;
	uint32_t prod, cons;
	bool overflow;

	if (!r)
		return false;
	prod = __atomic_load_n(&r->prod, __ATOMIC_ACQUIRE);
	cons = e->kdb_cons;
	if (prod == cons && !__atomic_load_n(&r->overflow, __ATOMIC_RELAXED))
		return false;
	overflow = __atomic_exchange_n(&r->overflow, 0, __ATOMIC_ACQ_REL);
	if (prod - cons > ROXE_KABI_DB_SLOTS) {
		/* never, with the module's count: every QP's bit goes, and
		 * every QP is looked at */
		for (uint32_t qpn = e->id; qpn < ROXE_MAX_QPS; qpn += e->dev->nengines)
			kdb_clear(e, qpn);
		cons = prod;
		__atomic_store_n(&r->cons, cons, __ATOMIC_RELEASE);
		overflow = true;
	}
	for (; cons != prod; cons++) {	/* at most the ring */
		uint32_t qpn = __atomic_load_n(&r->qpn[cons % ROXE_KABI_DB_SLOTS],
					       __ATOMIC_RELAXED);

		/* the slot is the module's again (we have read it), then
		 * the bit: a doorbell from now on queues the QP again */
		__atomic_store_n(&r->cons, cons + 1, __ATOMIC_RELEASE);
		kdb_clear(e, qpn);
		kdb_ring(e, qpn, turn);
	}
	if (overflow) {
		e->stats->kdb_overflows++;
		for (uint32_t qpn = e->id; qpn < ROXE_MAX_QPS; qpn += e->dev->nengines)
			kdb_ring(e, qpn, turn);
	}
	e->kdb_cons = prod;
	return true;
}

/* Serve this turn's list; QPs with more to do queue up again. Once the
 * turn's request budget is spent, the QPs not served yet go back to the
 * front of the list, in order, for the next turn: a turn costs what it
 * sends, not the number of QPs waiting. */
static bool ready_turn(struct roxe_engine *e)
{
	struct roxe_qp *qp = e->ready_head, *last = e->ready_tail;
	bool busy = qp != NULL;

	e->ready_head = e->ready_tail = NULL;
	while (qp) {
		struct roxe_qp *n = qp->ready_next;

		if (!e->tx_left) {
			last->ready_next = e->ready_head;
			if (!e->ready_head)
				e->ready_tail = last;
			e->ready_head = qp;
			break;
		}
		qp->on_ready = false;
		qp->ready_next = NULL;
		if (!atomic_load(&qp->dying)) {
			roxe_responder_send(qp);
			roxe_requester(qp);
		}
		qp = n;
	}
	return busy;
}

static void sleep_until_work(struct roxe_engine *e, uint64_t next_timer)
{
	struct pollfd pfd[2] = {
		{ .fd = e->efd, .events = POLLIN },
		{ .fd = e->port->wait_fd, .events = POLLIN },
	};
	struct timespec ts, *timeout = NULL;
	uint64_t v;

	roxe_port_idle(e->port);	/* a burst may come while we sleep */
	if (e->port->tx_pending)
		roxe_port_flush(e->port);
	atomic_store(&e->sleeping, true);
	kdb_awake(e, false);
	/* A doorbell rung before `sleeping` (or awake) was visible is seen
	 * here; QPs left on the ready list are served before sleeping. */
	if (!atomic_load(&e->db_head) && !e->ready_head && !roxe_handoff_pending(e) &&
	    !kdb_pending(e) && !atomic_load(&e->stop)) {
		uint64_t d = UINT64_MAX;

		/* On the virtual clock, no timeout: a deadline comes only
		 * with roxe_clock_advance, which wakes us. */
		if (next_timer && !vclock_on) {
			/* the spin's last reading will do, but to the
			 * nanosecond for a fine timer */
			uint64_t now = e->next_fine ? roxe_now_ns() : e->now;

			d = next_timer > now ? next_timer - now : 0;
			/* A paced QP's next frame or a stall probe,
			 * microseconds away: to the nanosecond. The other
			 * timers (retransmission, RNR) are rounded up to
			 * the next whole millisecond: fired on the dot on a
			 * loaded host, they expire while answers are still
			 * queued, and go-back-N recoveries run out of
			 * retries (faults_test, RETRY_EXC). */
			if (!(e->next_fine && e->next_fine <= next_timer))
				d = (d / 1000000 + 1) * 1000000;
		}
		/* Frames the port has not handed over: only another kick
		 * sends them, and nothing else may wake us. Completions held
		 * for in-place frames: nothing wakes us when the kernel gives
		 * their descriptors back either. */
		if (!e->port->tx_pending && !e->held_qps) {
			e->tx_nap_ns = 0;
		} else {
			e->tx_nap_ns = e->tx_nap_ns ? e->tx_nap_ns * 2 : TX_NAP_MIN_NS;
			if (e->tx_nap_ns > TX_NAP_MAX_NS)
				e->tx_nap_ns = TX_NAP_MAX_NS;
			if (d > e->tx_nap_ns)
				d = e->tx_nap_ns;
		}
		if (d != UINT64_MAX) {
			ts.tv_sec = (time_t)(d / 1000000000ull);
			ts.tv_nsec = (long)(d % 1000000000ull);
			timeout = &ts;
		}
		if (vclock_on && !timeout)
			atomic_store_explicit(&e->parked, true, memory_order_release);
		ppoll(pfd, e->port->wait_fd >= 0 ? 2 : 1, timeout, NULL);
		if (vclock_on)
			atomic_store(&e->parked, false);
	}
	atomic_store(&e->sleeping, false);
	kdb_awake(e, true);
	/* Reset the doorbell's count only when it was rung: a frame or a
	 * timer that woke us leaves nothing to read (a system call saved
	 * per wake-up); one rung meanwhile wakes the next ppoll at once. */
	if ((pfd[0].revents & POLLIN) && read(e->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		roxe_engine_fault(e, errno);
}

/* One turn of the loop; true when it found work. clock: read the clock
 * (else e->now stays the last turn's). */
static bool engine_turn(struct roxe_engine *e, bool clock)
{
	bool busy, rx;

	roxe_mr_turn_begin(e->dev, e->id);
	if (clock) {
		/* never back: a polled engine's turns run on whichever thread
		 * polls, and each thread scales the TSC on its own
		 * (mono_clock.c) */
		uint64_t now = roxe_now_ns();

		if (now > e->now)
			e->now = now;
	}
	e->tx_left = ROXE_TURN_TX_BUDGET;
	if (e->port->tx_pending)
		roxe_port_flush(e->port);	/* what it could not send last turn */
	rx = rx_turn(e);
	busy = rx;
	busy |= doorbell_turn(e);
	busy |= kdb_turn(e);
	busy |= ready_turn(e);
	/* Not every busy turn: with thousands of QPs armed the walk would
	 * cost more than the turn's packets (roxe_timer_arm keeps next_timer
	 * at most the earliest deadline). */
	if (e->timers && (!e->next_timer || e->now >= e->next_timer))
		e->next_timer = timers_turn(e);
	/* QPs waiting for PSN credit that now fits */
	if (e->credit_wait_head)
		roxe_credit_turn(e);
	/* A timer that fired, or credit returned, queued its QP: that is
	 * work, not idling. */
	busy |= e->ready_head != NULL;
	roxe_engine_tx_turn_end(e, !rx);
	if (e->held_qps)
		roxe_sq_held_turn(e);	/* completions that waited for in-place frames */
	roxe_mr_turn_end();
	/* The turn's one writer (the engine thread, or the poller holding
	 * driving): a plain store, no locked add. */
	atomic_store_explicit(&e->epoch, atomic_load_explicit(&e->epoch, memory_order_relaxed) + 1,
			      memory_order_release);
	return busy;
}

static void *engine_main(void *arg)
{
	struct roxe_engine *e = arg;
	/* idle since (the first idle turn); the gap's start once a spin
	 * ended in a sleep (0: no sleep since the last work); the spin */
	uint64_t idle_since = 0, gap_from = 0, spin = ROXE_SPIN_MAX_NS;
	unsigned idle_turns = 0;

	while (!atomic_load_explicit(&e->stop, memory_order_relaxed)) {
		/* Spinning idle, the clock is read every SPIN_CLOCK_TURNS
		 * turns, not every turn: the first after work and after a
		 * sleep always, and every turn while a paced frame waits. */
		bool clock = !idle_turns || e->next_fine || !(idle_turns % SPIN_CLOCK_TURNS);

		if (engine_turn(e, clock)) {
			if (gap_from) {		/* work after a sleep: adapt (spin.h) */
				spin = roxe_spin_next(spin, e->now - gap_from);
				atomic_store_explicit(&e->spin_ns, spin, memory_order_relaxed);
				gap_from = 0;
			}
			idle_since = 0;
			idle_turns = 0;
			continue;
		}
		idle_turns++;
		if (!idle_since && !vclock_on) {
			idle_since = e->now;
		} else if (vclock_on || e->now - idle_since >= spin) {
			/* (a virtual clock stands still: no spin, sleep) */
			roxe_engine_tx_flush(e);		/* held ACKs leave before we sleep */
			if (!gap_from && !vclock_on)
				gap_from = idle_since;
			sleep_until_work(e, e->timers ? e->next_timer : 0);
			idle_since = 0;
			idle_turns = 0;
		}
	}
	if (e->dev->trace_recorder)
		roxe_trace_dump(e);
	return NULL;
}

/* Polled devices: whichever application thread gets the engine runs a turn;
 * the others go on (the turn serves their QPs too). */
bool roxe_engine_poll(struct roxe_engine *e)
{
	bool busy;

	if (atomic_exchange_explicit(&e->driving, true, memory_order_acquire))
		return false;
	busy = engine_turn(e, true);	/* the caller's time between polls is its own */
	atomic_store_explicit(&e->driving, false, memory_order_release);
	return busy;
}

static int engine_thread_create(struct roxe_engine *e)
{
	pthread_attr_t ta;
	int err;

	if (!e->dev->rt_priority)
		return -pthread_create(&e->thread, NULL, engine_main, e);
	/* Created with the policy, not switched after: it never runs at the
	 * default one, and a refusal (EPERM) is the caller's to see. */
	err = pthread_attr_init(&ta);
	if (!err) {
		struct sched_param sp = { .sched_priority = (int)e->dev->rt_priority };

		err = pthread_attr_setinheritsched(&ta, PTHREAD_EXPLICIT_SCHED) ?:
		      pthread_attr_setschedpolicy(&ta, SCHED_FIFO) ?:
		      pthread_attr_setschedparam(&ta, &sp) ?:
		      pthread_create(&e->thread, &ta, engine_main, e);
		pthread_attr_destroy(&ta);
	}
	return -err;
}

int roxe_engine_start(struct roxe_engine *e)
{
	int err;

	if (e->dev->polled)
		return 0;
	if (vclock_on)
		vclock_join(e);
	atomic_store_explicit(&e->spin_ns, ROXE_SPIN_MAX_NS, memory_order_relaxed);
	err = engine_thread_create(e);
	if (err && vclock_on)
		vclock_leave(e);
	return err;
}

void roxe_engine_stop(struct roxe_engine *e)
{
	atomic_store(&e->stop, true);
	if (e->dev->polled) {
		while (atomic_exchange(&e->driving, true))	/* a poller's last turn */
			sched_yield();
		roxe_engine_tx_flush(e);		/* held ACKs */
		if (e->dev->trace_recorder)
			roxe_trace_dump(e);
		atomic_store(&e->exited, true);
		return;
	}
	roxe_engine_kick(e);
	pthread_join(e->thread, NULL);
	if (vclock_on)
		vclock_leave(e);
	roxe_engine_tx_flush(e);		/* held ACKs */
	atomic_store(&e->exited, true);
}
