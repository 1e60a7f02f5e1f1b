// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * A QP's send control: what ties the QP to the arithmetic of recovery.h
 * (the retransmission timer, the tail and stall probes) and dcqcn.h (the
 * rate and its pacer). The requester asks it before each packet
 * (roxe_pace_ok) and tells it of a full window, the completer starts the
 * timer on progress, the CNP path hands it the peer's notifications, and
 * qp_state.c resets it when the QP enters RTS. It calls
 * only the scheduler (timers, the ready list), so none of those callers
 * depends on another through it.
 */
#include "transport/transport.h"
#include "transport/sendctl.h"
#include "transport/sched.h"

/* The retransmission timer from now: the tail probe first when one is due
 * (recovery.h), else the RTO. */
void roxe_retrans_timer_start(struct roxe_qp *qp)
{
	uint64_t rto = roxe_rto_timer_ns(&qp->comp.rto, qp->timeout_ns, qp->eng->now);
	uint64_t pto = roxe_pto_ns(&qp->comp.rto, rto, qp->eng->now);

	qp->comp.probe_due = pto != 0;
	if (qp->comp.deadline)
		roxe_stall_end(&qp->comp.stall, qp->eng->now);	/* progress */
	else
		qp->comp.stall.at = 0;
	qp->comp.timer_from = qp->eng->now;
	qp->comp.deadline = qp->eng->now + (pto ? pto : rto);
	roxe_timer_arm(qp);
}

/* The stall probe (recovery.h): once per progress, on a lossy QP, a full
 * window brings the probe in (the timer's rest is the RTO's, as after a
 * tail probe). */
void roxe_retrans_stalled(struct roxe_qp *qp)
{
	uint64_t at;

	if (qp->comp.stall.at || !qp->comp.deadline || !qp->comp.rto.srtt ||
	    !roxe_rto_lossy(&qp->comp.rto, qp->eng->now))
		return;
	at = qp->eng->now + roxe_stall_begin(&qp->comp.stall, qp->comp.cwnd.min_rtt,
					     qp->eng->now);
	if (at >= qp->comp.deadline)
		return;
	qp->comp.deadline = at;
	qp->comp.probe_due = true;
	roxe_timer_arm(qp);
}

/* Publish the QP's rate (roxectl stats --qp: cc_rate_mbps; 0: unlimited). */
static void cc_publish(struct roxe_qp *qp)
{
	qp->stats->cc_rate_mbps = roxe_dcqcn_rate_mbps(&qp->req.cc);
}

/*
 * The pacer: may a frame of a rate-limited QP leave now? If not, the QP
 * waits on its timer until the time it may (sched.c, engine.c's timers),
 * which puts it back on the ready list: no spin, and no wake-up lost (the
 * timer stays armed while pace_wait holds). A QP at the line rate (no
 * CNP, or recovered) never comes here.
 */
bool roxe_pace_ok(struct roxe_qp *qp)
{
	struct roxe_engine *e = qp->eng;
	uint64_t when;

	roxe_dcqcn_advance(&qp->req.cc, &e->cc, e->now);
	cc_publish(qp);
	if (!qp->req.cc.limited)
		return true;		/* recovered to the line rate */
	when = roxe_pace_when(&qp->req.pace, e->now);
	if (!when)
		return true;
	qp->req.pace_wait = true;
	qp->req.pace_deadline = when;
	roxe_timer_arm(qp);
	return false;
}

void roxe_pace_sent_frame(struct roxe_qp *qp, uint32_t len)
{
	struct roxe_engine *e = qp->eng;

	if (!qp->req.cc.limited)
		return;
	roxe_pace_sent(&qp->req.pace, qp->req.cc.rc, len, e->now);
	roxe_dcqcn_sent(&qp->req.cc, &e->cc, len, e->now);
}

void roxe_dcqcn_qp_cnp(struct roxe_qp *qp)
{
	struct roxe_engine *e = qp->eng;
	bool was = qp->req.cc.limited;

	/* counted here, not in struct roxe_dcqcn: roxe_recovery_reset starts
	 * that afresh on each RTS, the QP's counters stay */
	if (roxe_dcqcn_cnp(&qp->req.cc, &e->cc, e->now))
		qp->stats->cc_rate_cuts++;
	if (!was && qp->req.cc.limited)
		roxe_pace_init(&qp->req.pace, e->now);
	cc_publish(qp);
}

void roxe_recovery_reset(struct roxe_qp *qp)
{
	roxe_rto_init(&qp->comp.rto);
	roxe_cwnd_init(&qp->comp.cwnd, ROXE_MAX_INFLIGHT);
	qp->comp.cwnd_psn = qp->comp.psn;
	qp->comp.probe_due = false;
	qp->comp.repair = (struct roxe_repair){ 0 };
	qp->comp.stall = (struct roxe_stall){ 0 };
	qp->req.rtt_timing = false;
	qp->req.probe = false;
	/* a QP entering RTS starts at the line rate */
	roxe_dcqcn_init(&qp->req.cc, &qp->eng->cc);
	qp->req.pace_wait = false;
	cc_publish(qp);
}
