// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * PSN credit: an engine-wide limit on the PSNs its RC requesters have
 * outstanding, all QPs together.
 *
 * A frame a requester sends, or makes its peer send, waits in a receive
 * ring until an engine takes it: READ/ATOMIC responses in this engine's own
 * ring (AF_XDP: 1024 frames of a 4096 MTU), SEND/WRITE packets in the
 * peer's. A QP's send window (recovery.h) bounds what one QP has
 * outstanding, not the sum: 4096 QPs of up to 7 READs each may ask for
 * 28,672 responses at once, whatever the ring cannot hold while its engine
 * is off the CPU is dropped, and every QP times out alike, goes back alike
 * and overflows it again until retry_cnt runs out; WRITEs of 4096 QPs lose
 * requests in the peer's ring the same way, each loss a timeout. So an RC
 * packet leaves only while the PSNs all the engine's QPs have outstanding,
 * its own included, stay within e->credit_budget: half the port's receive
 * ring (the other half: ACKs, and the peer's requests when this side
 * answers too; the peer's ring is taken to be as large as ours, rxe's and
 * hardware's are larger). Nothing changes on the wire: a peer sees a
 * requester that sends later.
 *
 * What a QP is charged (req.credit) is its PSNs in [comp.psn, req.psn):
 * sent and not acknowledged, READ responses asked for and not received
 * (roxe_req_inflight), 0 outside RTS/SQD. roxe_credit_sync() sets it
 * wherever either moves: a packet sent, a response or ACK taken (the
 * completer), a go-back-N, a timeout, the tail probe; flush, reset and
 * destroy drop it and take the QP off the wait list. roxe_credit_check()
 * (tests) finds any place that forgot.
 *
 * A QP that does not fit joins the engine's wait list (FIFO) and stops;
 * once a QP waits, later ones queue behind it rather than take the credit
 * it waits for (a large READ is not starved by small packets). At each
 * turn's end (roxe_credit_turn) the waiters that fit what is free are put
 * on the ready list, in order: no spinning, and no wake-up lost, since the
 * check is made every turn while anyone waits, and while the credit is
 * short something is outstanding whose answer (or timer) turns the
 * engine. A woken QP that then finds no room (another took it) goes back
 * to the head. A packet goes when nothing else is outstanding, whatever it
 * takes: alone, never deadlocked. Outstanding PSNs come back only
 * with an ACK, and a responder acknowledges only what asked for one (at
 * the latest every ROXE_ACKREQ_EVERY packets): while the credit is low
 * (roxe_credit_low) every packet asks, so that the PSNs that hold it can
 * always be acknowledged, even with every QP held mid-message.
 *
 * Fair shares, so that no QP (no tenant of roxed's shared engines) can
 * hold the credit others wait for:
 *  - a QP may have at most e->credit_qp_cap PSNs outstanding, half the
 *    budget: its send window never opens past that (requester.c may_send),
 *    so it waits for its own ACKs there, like any full window, not on the
 *    engine's list; a READ larger than the cap goes out as several READ
 *    requests of at most the cap each (roxe_read_part_end), as a READ
 *    restarted after a loss does;
 *  - a charge lapses once its QP has had no answer for
 *    ROXE_CREDIT_HOLD_NS: what has not come back by then comes back on the
 *    peer's schedule, not as a burst of ours, and a QP without a timer
 *    (timeout 0) or with a timer of hours must not keep the credit that
 *    long. Its PSNs up to req.psn are no longer charged (credit_from);
 *    what it sends after is, and a go-back-N (roxe_requester_retry)
 *    charges everything again.
 * credit_test: one_qp_cannot_hold_the_credit.
 */
#include "transport/transport.h"
#include "transport/credit.h"
#include "transport/sched.h"
#include "wire/psn.h"

/* Of the port's receive ring, this share (1/n) for outstanding PSNs. */
#define CREDIT_SHARE		2
#define CREDIT_MIN		16
/* A port that does not say what its ring holds (a UDP socket's buffer). */
#define CREDIT_DEFAULT		512
/* One QP's cap: this share (1/n) of the budget. */
#define CREDIT_QP_SHARE		2

void roxe_credit_init(struct roxe_engine *e)
{
	uint32_t ring = e->port ? e->port->rx_frames : 0;
	uint32_t b = ring ? ring / CREDIT_SHARE : CREDIT_DEFAULT;

	e->credit_budget = b < CREDIT_MIN ? CREDIT_MIN : b;
	e->credit_qp_cap = e->credit_budget / CREDIT_QP_SHARE;
	e->credit_out = 0;
	e->credit_wait_head = e->credit_wait_tail = NULL;
	e->credit_charged = NULL;
	e->credit_scan_at = 0;
}

static bool fits(const struct roxe_engine *e, uint32_t free, uint32_t n)
{
	return !e->credit_out || n <= free;
}

static uint32_t credit_free(const struct roxe_engine *e)
{
	return e->credit_out < e->credit_budget ? e->credit_budget - e->credit_out : 0;
}

/* Three quarters spent: the packets that hold the rest ask for an ACK. */
bool roxe_credit_low(const struct roxe_engine *e)
{
	return e->credit_out >= e->credit_budget - e->credit_budget / 4;
}

static void wait_unlink(struct roxe_engine *e, struct roxe_qp *qp)
{
	if (qp->credit_wait_prev)
		qp->credit_wait_prev->credit_wait_next = qp->credit_wait_next;
	else
		e->credit_wait_head = qp->credit_wait_next;
	if (qp->credit_wait_next)
		qp->credit_wait_next->credit_wait_prev = qp->credit_wait_prev;
	else
		e->credit_wait_tail = qp->credit_wait_prev;
	qp->credit_wait_next = qp->credit_wait_prev = NULL;
	qp->credit_waiting = false;
}

static void wait_add(struct roxe_engine *e, struct roxe_qp *qp, bool front)
{
	qp->credit_waiting = true;
	if (front) {
		qp->credit_wait_prev = NULL;
		qp->credit_wait_next = e->credit_wait_head;
		if (e->credit_wait_head)
			e->credit_wait_head->credit_wait_prev = qp;
		else
			e->credit_wait_tail = qp;
		e->credit_wait_head = qp;
		return;
	}
	qp->credit_wait_next = NULL;
	qp->credit_wait_prev = e->credit_wait_tail;
	if (e->credit_wait_tail)
		e->credit_wait_tail->credit_wait_next = qp;
	else
		e->credit_wait_head = qp;
	e->credit_wait_tail = qp;
}

/*
 * May qp send a packet that takes n PSNs (a READ request: its responses)
 * now? Called last, once every other check passed, just before the packet
 * is built; the charge follows with roxe_credit_sync() once it is queued.
 */
bool roxe_credit_ok(struct roxe_qp *qp, uint32_t n)
{
	struct roxe_engine *e = qp->eng;
	bool woken = qp->credit_woken;

	if (qp->credit_waiting)
		return false;		/* its turn comes from the wait list */
	qp->credit_woken = false;
	if ((woken || !e->credit_wait_head) && fits(e, credit_free(e), n))
		return true;
	qp->credit_need = n;
	wait_add(e, qp, woken);
	e->stats->credit_waits++;
	return false;
}

/* What qp should be charged now: its outstanding PSNs, from credit_from
 * after a lapse. */
static uint32_t charge_of(const struct roxe_qp *qp)
{
	uint32_t n;

	if (qp->type != IBV_QPT_RC ||
	    (qp->eng_state != IBV_QPS_RTS && qp->eng_state != IBV_QPS_SQD))
		return 0;
	n = roxe_req_inflight(qp, qp->req.psn);
	if (qp->req.credit_lapsed) {
		int32_t d = roxe_psn_diff(qp->req.psn, qp->req.credit_from);

		if (d <= 0)
			return 0;
		if ((uint32_t)d < n)
			n = (uint32_t)d;
	}
	return n;
}

static void charged_link(struct roxe_engine *e, struct roxe_qp *qp)
{
	qp->credit_next = e->credit_charged;
	if (e->credit_charged)
		e->credit_charged->credit_pprev = &qp->credit_next;
	e->credit_charged = qp;
	qp->credit_pprev = &e->credit_charged;
}

static void charged_unlink(struct roxe_qp *qp)
{
	*qp->credit_pprev = qp->credit_next;
	if (qp->credit_next)
		qp->credit_next->credit_pprev = qp->credit_pprev;
	qp->credit_next = NULL;
	qp->credit_pprev = NULL;
}

static void charge_set(struct roxe_qp *qp, uint32_t n)
{
	struct roxe_engine *e = qp->eng;

	/* an answer, or a first charge: the hold starts again */
	if (!qp->req.credit || qp->req.credit_comp != qp->comp.psn) {
		qp->req.credit_comp = qp->comp.psn;
		qp->req.credit_at = e->now;
	}
	if (n && !qp->credit_pprev)
		charged_link(e, qp);
	else if (!n && qp->credit_pprev)
		charged_unlink(qp);
	e->credit_out = e->credit_out - qp->req.credit + n;
	qp->req.credit = n;
}

/* req.psn or comp.psn moved: the charge follows. */
void roxe_credit_sync(struct roxe_qp *qp)
{
	/* answered past the lapse: nothing lapsed is outstanding any more */
	if (qp->req.credit_lapsed && roxe_psn_diff(qp->comp.psn, qp->req.credit_from) >= 0)
		qp->req.credit_lapsed = false;
	charge_set(qp, charge_of(qp));
}

/* go-back-N: what goes again is charged again, lapsed or not */
void roxe_credit_recharge(struct roxe_qp *qp)
{
	qp->req.credit_lapsed = false;
	roxe_credit_sync(qp);
}

/* Let go of everything: flush, reset, destroy. */
void roxe_credit_drop(struct roxe_qp *qp)
{
	charge_set(qp, 0);
	qp->req.credit_lapsed = false;
	if (qp->credit_waiting)
		wait_unlink(qp->eng, qp);
	qp->credit_woken = false;
}

/* A waiter does not fit: the charges held ROXE_CREDIT_HOLD_NS without an
 * answer lapse (bounded: one walk of the charged QPs, every quarter hold). */
static void lapse_stale(struct roxe_engine *e)
{
	struct roxe_qp *qp, *n;

	if (e->now - e->credit_scan_at < ROXE_CREDIT_HOLD_NS / 4)
		return;
	e->credit_scan_at = e->now;
	for (qp = e->credit_charged; qp; qp = n) {
		n = qp->credit_next;
		if (e->now - qp->req.credit_at < ROXE_CREDIT_HOLD_NS)
			continue;
		qp->req.credit_lapsed = true;
		qp->req.credit_from = qp->req.psn;
		charge_set(qp, 0);
		e->stats->credit_lapses++;
	}
}

/* Turn's end: the waiters that fit what is free go on the ready list. */
void roxe_credit_turn(struct roxe_engine *e)
{
	uint32_t free;
	bool idle;
	struct roxe_qp *qp;

	if (e->credit_wait_head && e->credit_out &&
	    e->credit_wait_head->credit_need > credit_free(e))
		lapse_stale(e);
	free = credit_free(e);
	idle = !e->credit_out;

	/* bounded: each pass takes one QP off the list */
	while ((qp = e->credit_wait_head)) {
		if (!(idle || qp->credit_need <= free))
			break;
		free = qp->credit_need <= free ? free - qp->credit_need : 0;
		idle = false;
		wait_unlink(e, qp);
		qp->credit_woken = true;
		roxe_engine_ready(e, qp);
	}
}

/*
 * Does the engine's count agree with its QPs? Returns the number of
 * disagreements (QPs charged other than their outstanding PSNs, the total,
 * a waiter in a state that never sends, the list of charged QPs). Only
 * while the engine is still (a polled device between turns, or a stopped
 * one): it reads its state.
 */
unsigned roxe_credit_check(struct roxe_engine *e)
{
	struct roxe_device *dev = e->dev;
	unsigned bad = 0, waiters = 0, charged = 0, listed = 0;
	uint64_t sum = 0;

	for (uint32_t qpn = 0; qpn < ROXE_MAX_QPS; qpn++) {
		struct roxe_qp *qp = atomic_load(&dev->qps[qpn]);

		if (!qp || qp->eng != e)
			continue;
		sum += qp->req.credit;
		charged += qp->req.credit != 0;
		if (qp->req.credit != charge_of(qp))
			bad++;
		if (qp->credit_waiting && qp->eng_state != IBV_QPS_RTS &&
		    qp->eng_state != IBV_QPS_SQD)
			bad++;
	}
	for (struct roxe_qp *qp = e->credit_wait_head; qp && waiters <= ROXE_MAX_QPS;
	     qp = qp->credit_wait_next)
		waiters++;
	if (sum != e->credit_out || waiters > ROXE_MAX_QPS)
		bad++;
	/* the charged list: every QP with a charge, and only those */
	for (struct roxe_qp *qp = e->credit_charged; qp && listed <= ROXE_MAX_QPS;
	     qp = qp->credit_next, listed++)
		if (!qp->req.credit || qp->eng != e)
			bad++;
	if (listed != charged)
		bad++;
	return bad;
}
