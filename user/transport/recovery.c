// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The RC requester's retransmission timeout and send window (the contract
 * and the choices are in recovery.h).
 */
#include "transport/recovery.h"
#include "roxe/psn.h"

/* --- retransmission timeout ---------------------------------------------------- */
void roxe_rto_init(struct roxe_rto *r)
{
	r->srtt = r->rttvar = 0;
	r->backoff = 0;
}

static uint64_t absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

void roxe_rto_sample(struct roxe_rto *r, uint64_t rtt)
{
	if (!rtt)
		rtt = 1;
	if (!r->srtt) {
		/* 2.2: the first measurement */
		r->srtt = rtt;
		r->rttvar = rtt / 2;
	} else {
		/* 2.3: beta 1/4, alpha 1/8; RTTVAR before SRTT */
		r->rttvar = r->rttvar - r->rttvar / 4 + absdiff(r->srtt, rtt) / 4;
		r->srtt = r->srtt - r->srtt / 8 + rtt / 8;
		if (!r->srtt)
			r->srtt = 1;
	}
	r->backoff = 0;
}

void roxe_rto_backoff(struct roxe_rto *r)
{
	if (r->backoff < ROXE_RTO_MAX_BACKOFF)
		r->backoff++;
}

void roxe_rto_progress(struct roxe_rto *r)
{
	r->backoff = 0;
}

uint64_t roxe_rto_ns(const struct roxe_rto *r, uint64_t cap)
{
	uint64_t base;

	if (!r->srtt)
		return cap ? cap : ROXE_RTO_MIN_NS << r->backoff;
	base = r->srtt + 4 * r->rttvar;
	if (base < ROXE_RTO_MIN_NS)
		base = ROXE_RTO_MIN_NS;
	base = base > (UINT64_MAX >> r->backoff) ? UINT64_MAX : base << r->backoff;
	return cap && base > cap ? cap : base;
}

uint64_t roxe_pto_ns(const struct roxe_rto *r, uint64_t rto)
{
	uint64_t pto;

	if (!r->srtt)
		return 0;
	pto = r->srtt > UINT64_MAX / 2 ? UINT64_MAX : 2 * r->srtt;
	if (pto < ROXE_PTO_MIN_NS)
		pto = ROXE_PTO_MIN_NS;
	return pto < rto ? pto : 0;
}

/* --- send window ----------------------------------------------------------------- */
void roxe_cwnd_init(struct roxe_cwnd *w, uint32_t max)
{
	w->max = max < ROXE_CWND_MIN ? ROXE_CWND_MIN : max;
	w->cwnd = ROXE_CWND_INIT < w->max ? ROXE_CWND_INIT : w->max;
	w->ssthresh = w->max;
	w->acc = 0;
	w->recover = 0;
	w->in_recovery = false;
}

void roxe_cwnd_ack(struct roxe_cwnd *w, uint32_t acked, uint32_t una)
{
	if (w->in_recovery && roxe_psn_diff(una, w->recover) >= 0)
		w->in_recovery = false;
	if (acked > w->max)
		acked = w->max;
	if (w->cwnd < w->ssthresh) {		/* slow start */
		w->cwnd += acked;
		if (w->cwnd > w->ssthresh)
			w->cwnd = w->ssthresh;
	} else {				/* congestion avoidance */
		w->acc += acked;
		while (w->acc >= w->cwnd) {
			w->acc -= w->cwnd;
			w->cwnd++;
		}
	}
	if (w->cwnd > w->max)
		w->cwnd = w->max;
}

static void halve(struct roxe_cwnd *w, uint32_t inflight, uint32_t next)
{
	/* RFC 5681 (4): half what is in flight, never below the minimum */
	w->ssthresh = inflight / 2 > ROXE_CWND_MIN ? inflight / 2 : ROXE_CWND_MIN;
	w->recover = next;
	w->in_recovery = true;
	w->acc = 0;
}

bool roxe_cwnd_loss(struct roxe_cwnd *w, uint32_t psn, uint32_t inflight, uint32_t next)
{
	uint32_t floor = ROXE_CWND_INIT < w->max ? ROXE_CWND_INIT : w->max;

	if (w->in_recovery && roxe_psn_diff(psn, w->recover) < 0)
		return false;		/* part of the event being recovered */
	halve(w, inflight, next);
	if (w->ssthresh < floor)
		w->ssthresh = floor;	/* the path delivers: see recovery.h */
	w->cwnd = w->ssthresh;
	return true;
}

void roxe_cwnd_timeout(struct roxe_cwnd *w, uint32_t inflight, uint32_t next, bool again)
{
	uint32_t floor = ROXE_CWND_INIT < w->max ? ROXE_CWND_INIT : w->max;

	/* A first expiry halves, as a NAK does (see recovery.h); one after
	 * another with no progress between is an outage: the minimum, and
	 * ssthresh stays, as RFC 5681 asks for a segment resent again. */
	if (!again) {
		if (!w->in_recovery || roxe_psn_diff(next, w->recover) > 0)
			halve(w, inflight, next);
		if (w->ssthresh < floor)
			w->ssthresh = floor;
		w->recover = next;
		w->in_recovery = true;
		w->cwnd = w->ssthresh < w->cwnd ? w->ssthresh : w->cwnd;
		return;
	}
	w->recover = next;
	w->in_recovery = true;
	w->cwnd = ROXE_CWND_MIN;
}
