// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Response credit: an engine-wide limit on the READ/ATOMIC response PSNs
 * its requesters have asked for and not yet received.
 *
 * Every response lands in the engine's one receive ring (AF_XDP: 1024
 * frames). A QP keeps up to max_rd_atomic READs outstanding, and a
 * responder answers them as fast as its turns go: 4096 QPs of 7 READs
 * each pour 28,672 responses at a requester whose ring holds 1024; when
 * its engine is off the CPU the rest is dropped, every QP times out
 * alike, goes back alike, and overflows the ring again until retry_cnt
 * runs out. So a READ request (or ATOMIC, FLUSH, ATOMIC WRITE: one
 * response each) leaves only while the engine's outstanding responses
 * plus its own stay within e->rd_budget, half the port's receive ring
 * (the other half: ACKs, the peer's requests when this side answers
 * too). Nothing changes on the wire: a peer (rxe, hardware) sees a
 * requester that asks later.
 *
 * What a QP is charged (req.rd_charge) is, exactly, the response PSNs of
 * its READ/ATOMIC-class WQEs in [comp.psn, req.psn): asked for, not yet
 * answered. Kept so at each place those move:
 *   a request sent            + its PSNs from max(req.psn, comp.psn)
 *   a response retires a PSN  - 1, if that PSN was below req.psn
 *   go-back-N to comp.psn     0 (the range is empty; a READ restarted from
 *                             its first missing response is charged for
 *                             what it asks again)
 *   flush (ERR, SQE), RESET,
 *   destroy                   0, and off the wait list
 * roxe_rd_credit_check() recomputes it from the send queue (tests).
 *
 * A QP that does not fit joins the engine's wait list (FIFO) and stops;
 * once a QP waits, later ones queue behind it rather than take the credit
 * it waits for (a large READ is not starved by small ones). At each turn's
 * end (roxe_rd_credit_turn) the waiters that fit what is free are put on
 * the ready list, in order: no spinning, and no wake-up lost, since the
 * check is made every turn while anyone waits, and while the credit is
 * short something is outstanding whose response (or timer) turns the
 * engine. A woken QP that then finds no room (another took it) goes back
 * to the head. A request larger than the whole budget goes when nothing
 * else is outstanding: alone, never deadlocked.
 */
#include "transport/transport.h"
#include "roxe/psn.h"

/* Of the port's receive ring, this share (1/n) for responses. */
#define RD_CREDIT_SHARE		2
#define RD_CREDIT_MIN		16
/* A port that does not say what its ring holds (a UDP socket's buffer). */
#define RD_CREDIT_DEFAULT	512

void roxe_rd_credit_init(struct roxe_engine *e)
{
	uint32_t ring = e->port ? e->port->rx_frames : 0;
	uint32_t b = ring ? ring / RD_CREDIT_SHARE : RD_CREDIT_DEFAULT;

	e->rd_budget = b < RD_CREDIT_MIN ? RD_CREDIT_MIN : b;
	e->rd_out = 0;
	e->rd_wait_head = e->rd_wait_tail = NULL;
}

static bool fits(const struct roxe_engine *e, uint32_t free, uint32_t n)
{
	return !e->rd_out || n <= free;
}

static uint32_t credit_free(const struct roxe_engine *e)
{
	return e->rd_out < e->rd_budget ? e->rd_budget - e->rd_out : 0;
}

static void wait_unlink(struct roxe_engine *e, struct roxe_qp *qp)
{
	if (qp->rd_wait_prev)
		qp->rd_wait_prev->rd_wait_next = qp->rd_wait_next;
	else
		e->rd_wait_head = qp->rd_wait_next;
	if (qp->rd_wait_next)
		qp->rd_wait_next->rd_wait_prev = qp->rd_wait_prev;
	else
		e->rd_wait_tail = qp->rd_wait_prev;
	qp->rd_wait_next = qp->rd_wait_prev = NULL;
	qp->rd_waiting = false;
}

static void wait_add(struct roxe_engine *e, struct roxe_qp *qp, bool front)
{
	qp->rd_waiting = true;
	if (front) {
		qp->rd_wait_prev = NULL;
		qp->rd_wait_next = e->rd_wait_head;
		if (e->rd_wait_head)
			e->rd_wait_head->rd_wait_prev = qp;
		else
			e->rd_wait_tail = qp;
		e->rd_wait_head = qp;
		return;
	}
	qp->rd_wait_next = NULL;
	qp->rd_wait_prev = e->rd_wait_tail;
	if (e->rd_wait_tail)
		e->rd_wait_tail->rd_wait_next = qp;
	else
		e->rd_wait_head = qp;
	e->rd_wait_tail = qp;
}

/*
 * May qp ask for n more responses now? Called last, once every other check
 * passed, just before the request is built; the charge itself is taken by
 * roxe_rd_credit_sent() once it is queued.
 */
bool roxe_rd_credit_ok(struct roxe_qp *qp, uint32_t n)
{
	struct roxe_engine *e = qp->eng;
	bool woken = qp->rd_woken;

	if (qp->rd_waiting)
		return false;		/* its turn comes from the wait list */
	qp->rd_woken = false;
	if ((woken || !e->rd_wait_head) && fits(e, credit_free(e), n))
		return true;
	qp->rd_need = n;
	wait_add(e, qp, woken);
	e->stats->rd_credit_waits++;
	return false;
}

/* The charge of qp becomes n (and the engine's total with it). */
void roxe_rd_credit_set(struct roxe_qp *qp, uint32_t n)
{
	struct roxe_engine *e = qp->eng;

	e->rd_out = e->rd_out - qp->req.rd_charge + n;
	qp->req.rd_charge = n;
}

/* A READ/ATOMIC-class request was queued: it asked for the PSNs from psn
 * (req.psn before it) to req.psn (now); those below comp.psn were answered
 * already (an ACK or response that ran ahead of a go-back). */
void roxe_rd_credit_sent(struct roxe_qp *qp, uint32_t psn)
{
	int32_t n;

	if (roxe_psn_diff(qp->comp.psn, psn) > 0)
		psn = qp->comp.psn;
	n = roxe_psn_diff(qp->req.psn, psn);
	if (n > 0)
		roxe_rd_credit_set(qp, qp->req.rd_charge + (uint32_t)n);
}

/* The response at psn (== comp.psn before it moves) was accepted. */
void roxe_rd_credit_answered(struct roxe_qp *qp, uint32_t psn)
{
	if (qp->req.rd_charge && roxe_psn_diff(qp->req.psn, psn) > 0)
		roxe_rd_credit_set(qp, qp->req.rd_charge - 1);
}

/* req.psn went back to comp.psn: nothing is asked for any more. */
void roxe_rd_credit_rewind(struct roxe_qp *qp)
{
	if (roxe_psn_diff(qp->req.psn, qp->comp.psn) <= 0)
		roxe_rd_credit_set(qp, 0);
}

/* Let go of everything: flush, reset, destroy. */
void roxe_rd_credit_drop(struct roxe_qp *qp)
{
	roxe_rd_credit_set(qp, 0);
	if (qp->rd_waiting)
		wait_unlink(qp->eng, qp);
	qp->rd_woken = false;
}

/* Turn's end: the waiters that fit what is free go on the ready list. */
void roxe_rd_credit_turn(struct roxe_engine *e)
{
	uint32_t free = credit_free(e);
	bool idle = !e->rd_out;
	struct roxe_qp *qp;

	/* bounded: each pass takes one QP off the list */
	while ((qp = e->rd_wait_head)) {
		if (!(idle || qp->rd_need <= free))
			break;
		free = qp->rd_need <= free ? free - qp->rd_need : 0;
		idle = false;
		wait_unlink(e, qp);
		qp->rd_woken = true;
		roxe_engine_ready(e, qp);
	}
}

/* The response PSNs qp has asked for and not received, from its send queue. */
static uint32_t charge_of(struct roxe_qp *qp)
{
	uint32_t slot = qp->sq.index, sum = 0;
	uint32_t n = ((qp->req.wqe - slot) & qp->sq.mask) +
		     (qp->req.wqe != roxe_queue_producer_index(&qp->sq));

	for (; n; n--, slot = roxe_queue_next(&qp->sq, slot)) {
		const struct rxe_send_wqe *w = roxe_sq_wqe(qp, slot);
		uint32_t lo = w->first_psn, hi = roxe_psn_add(w->last_psn, 1);
		int32_t d;

		if (w->state == ROXE_WQE_POSTED)
			break;
		if (!roxe_wqe_is_read_or_atomic(w->wr.opcode))
			continue;
		if (roxe_psn_diff(qp->comp.psn, lo) > 0)
			lo = qp->comp.psn;
		if (roxe_psn_diff(hi, qp->req.psn) > 0)
			hi = qp->req.psn;
		d = roxe_psn_diff(hi, lo);
		if (d > 0)
			sum += (uint32_t)d;
	}
	return sum;
}

/*
 * Does the engine's count agree with its QPs' send queues? Returns the
 * number of disagreements (QPs charged wrongly, the total, a waiter in a
 * state that never sends). Only while the engine is still (a polled
 * device between turns, or a stopped one): it reads engine state.
 */
unsigned roxe_rd_credit_check(struct roxe_engine *e)
{
	struct roxe_device *dev = e->dev;
	unsigned bad = 0, waiters = 0;
	uint64_t sum = 0;

	for (uint32_t qpn = 0; qpn < ROXE_MAX_QPS; qpn++) {
		struct roxe_qp *qp = atomic_load(&dev->qps[qpn]);

		if (!qp || qp->eng != e || qp->type != IBV_QPT_RC)
			continue;
		sum += qp->req.rd_charge;
		if (qp->req.rd_charge != charge_of(qp))
			bad++;
		if (qp->rd_waiting && qp->eng_state != IBV_QPS_RTS && qp->eng_state != IBV_QPS_SQD)
			bad++;
	}
	for (struct roxe_qp *qp = e->rd_wait_head; qp && waiters <= ROXE_MAX_QPS;
	     qp = qp->rd_wait_next)
		waiters++;
	if (sum != e->rd_out || waiters > ROXE_MAX_QPS)
		bad++;
	return bad;
}
