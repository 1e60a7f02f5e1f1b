// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The RC requester's retransmission timeout and send window (the contract
 * and the choices are in recovery.h).
 */
#include "transport/recovery.h"
#include "wire/psn.h"

/* --- retransmission timeout ---------------------------------------------------- */
void roxe_rto_init(struct roxe_rto *r)
{
	r->srtt = r->rttvar = 0;
	r->backoff = 0;
	r->loss_at = 0;
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

void roxe_rto_loss(struct roxe_rto *r, uint64_t now)
{
	r->loss_at = now ? now : 1;
}

bool roxe_rto_lossy(const struct roxe_rto *r, uint64_t now)
{
	return r->loss_at && now - r->loss_at <= ROXE_PTO_LOSS_MEMORY_NS;
}

uint64_t roxe_rto_timer_ns(const struct roxe_rto *r, uint64_t cap, uint64_t now)
{
	return !cap || roxe_rto_lossy(r, now) ? roxe_rto_ns(r, cap) : cap;
}

uint64_t roxe_pto_ns(const struct roxe_rto *r, uint64_t rto, uint64_t now)
{
	uint64_t pto, est;

	if (!r->srtt || !roxe_rto_lossy(r, now))
		return 0;
	pto = r->srtt > UINT64_MAX / 2 ? UINT64_MAX : 2 * r->srtt;
	est = r->rttvar > (UINT64_MAX - r->srtt) / 4 ? UINT64_MAX : r->srtt + 4 * r->rttvar;
	if (pto < est)
		pto = est;
	if (pto < ROXE_PTO_MIN_NS)
		pto = ROXE_PTO_MIN_NS;
	return pto < rto ? pto : 0;
}

uint64_t roxe_stall_begin(struct roxe_stall *s, uint64_t min_rtt, uint64_t now)
{
	uint64_t t = min_rtt > UINT64_MAX / ROXE_STALL_PTO_RTTS ? UINT64_MAX :
		     min_rtt * ROXE_STALL_PTO_RTTS;

	s->at = now ? now : 1;
	if (s->usual > t / 2)
		t = s->usual > UINT64_MAX / 2 ? UINT64_MAX : 2 * s->usual;
	return t < ROXE_STALL_PTO_MIN_NS ? ROXE_STALL_PTO_MIN_NS : t;
}

void roxe_stall_end(struct roxe_stall *s, uint64_t now)
{
	uint64_t d;

	if (!s->at)
		return;
	d = now > s->at ? now - s->at : 0;
	s->at = 0;
	if (d > ROXE_RTO_MIN_NS)
		d = ROXE_RTO_MIN_NS;	/* an outage says nothing of the usual */
	s->usual = s->usual ? s->usual - s->usual / 8 + d / 8 : d;
}

/* --- send window ----------------------------------------------------------------- */
void roxe_cwnd_init(struct roxe_cwnd *w, uint32_t max)
{
	*w = (struct roxe_cwnd){ 0 };
	w->max = max < ROXE_CWND_MIN ? ROXE_CWND_MIN : max;
	w->floor = ROXE_CWND_FLOOR < w->max ? ROXE_CWND_FLOOR : w->max;
	w->cwnd = w->max;		/* no loss seen */
}

static uint64_t max_rate(const struct roxe_cwnd *w)
{
	uint64_t m = 0;

	for (unsigned i = 0; i < ROXE_BW_ROUNDS; i++)
		if (w->rate[i] > m)
			m = w->rate[i];
	return m;
}

uint32_t roxe_cwnd_bdp(const struct roxe_cwnd *w)
{
	uint64_t rate = max_rate(w), bdp;

	if (!rate || !w->min_rtt)
		return 0;
	if (rate > UINT64_MAX / w->min_rtt)
		return w->max;
	bdp = rate * w->min_rtt / 1000000000ull;
	return bdp > w->max ? w->max : (uint32_t)bdp;
}

/* The limit from the estimates (recovery.h). */
static void set_limit(struct roxe_cwnd *w)
{
	uint64_t lim = w->loss_ival && !w->selective ? w->loss_ival / ROXE_LOSS_SHARE : w->max;
	uint64_t bdp = (uint64_t)roxe_cwnd_bdp(w) * ROXE_BDP_GAIN;

	if (lim < bdp)
		lim = bdp;
	if (lim < w->floor)
		lim = w->floor;
	w->cwnd = lim > w->max ? w->max : (uint32_t)lim;
}

void roxe_cwnd_ack(struct roxe_cwnd *w, uint32_t acked, uint64_t now)
{
	uint64_t round = w->min_rtt > ROXE_BW_ROUND_MIN_NS ? w->min_rtt : ROXE_BW_ROUND_MIN_NS;

	if (acked > w->max)
		acked = w->max;		/* absurd counts are bounded */
	w->delivered += acked;
	w->outage = false;		/* an ACK undoes an outage's minimum */
	if (!w->round_start || now < w->round_start) {
		w->round_start = now;	/* the first ACK begins the first round */
		w->round_acked = 0;
	} else {
		w->round_acked += acked;
		if (now - w->round_start >= round) {
			w->rate[w->rate_at] = w->round_acked * 1000000000ull /
					      (now - w->round_start);
			w->rate_at = (w->rate_at + 1) % ROXE_BW_ROUNDS;
			w->round_start = now;
			w->round_acked = 0;
		}
	}
	set_limit(w);
}

void roxe_cwnd_rtt(struct roxe_cwnd *w, uint64_t rtt, uint64_t now)
{
	if (!rtt)
		rtt = 1;
	if (!w->min_rtt || rtt <= w->min_rtt || now - w->min_rtt_at > ROXE_MINRTT_WIN_NS) {
		w->min_rtt = rtt;
		w->min_rtt_at = now;
	}
}

void roxe_cwnd_loss(struct roxe_cwnd *w)
{
	uint64_t ival = w->delivered - w->loss_at;

	if (ival > (uint64_t)w->max * ROXE_LOSS_SHARE)
		ival = (uint64_t)w->max * ROXE_LOSS_SHARE;	/* beyond the limit, all alike */
	w->loss_at = w->delivered;
	/* the first sample sets it; then 1/4 each (an EWMA, RFC 6298-like,
	 * rounded up: it reaches the limit) */
	w->loss_ival = !w->loss_ival ? (uint32_t)ival :
		       (uint32_t)((3 * (uint64_t)w->loss_ival + ival + 3) / 4);
	if (!w->loss_ival)
		w->loss_ival = 1;
	if (!w->outage)
		set_limit(w);
}

void roxe_cwnd_selective(struct roxe_cwnd *w)
{
	w->selective = true;
	if (!w->outage)
		set_limit(w);
}

void roxe_cwnd_timeout(struct roxe_cwnd *w, bool again)
{
	roxe_cwnd_loss(w);
	/* A first expiry cuts nothing more (see recovery.h); a second with
	 * no progress between is an outage. */
	if (!again)
		return;
	w->outage = true;
	w->cwnd = ROXE_CWND_MIN < w->max ? ROXE_CWND_MIN : w->max;
}

/* --- selective repair ------------------------------------------------------------ */
bool roxe_repair_try(struct roxe_repair *r, uint32_t psn)
{
	bool next = r->pending && psn == roxe_psn_add(r->psn, 1) &&
		    roxe_psn_diff(r->hi, psn) >= 0;

	r->pending = false;
	if (!r->kept && r->misses >= ROXE_REPAIR_TRIES)
		return false;		/* a go-back-N peer */
	if (!next) {
		r->run = 0;
		return true;
	}
	/* the PSN after the repair is missing: not kept, or lost too */
	if (!r->kept) {
		r->misses++;
		return false;
	}
	if (++r->run >= ROXE_REPAIR_RUN) {
		r->run = 0;
		return false;
	}
	return true;
}

void roxe_repair_sent(struct roxe_repair *r, uint32_t psn, uint32_t last, uint64_t now)
{
	r->pending = true;
	r->psn = psn;
	r->hi = last;
	r->sent_at = now ? now : 1;
}

uint64_t roxe_repair_rtt(struct roxe_repair *r, uint32_t next, uint64_t now)
{
	uint64_t rtt;

	if (!r->pending || !r->sent_at || roxe_psn_diff(next, r->psn) <= 0)
		return 0;
	/* An answer within the turn that sent the repair was on its way
	 * already: it answers the original, not the repair. */
	rtt = now > r->sent_at ? now - r->sent_at : 0;
	r->sent_at = 0;
	return rtt;
}

bool roxe_repair_progress(struct roxe_repair *r, uint32_t next)
{
	int32_t d;

	if (!r->pending)
		return false;
	d = roxe_psn_diff(next, r->psn);
	if (d <= 0)
		return false;		/* the repair is not answered yet */
	if (roxe_psn_diff(r->hi, r->psn) <= 0) {
		r->pending = false;	/* nothing was sent behind it: no verdict */
		return false;
	}
	if (d == 1)
		return true;		/* pending stays: roxe_repair_try decides */
	r->kept = true;			/* past p + 1, sent before p went again */
	r->misses = 0;
	r->run = 0;
	r->pending = false;
	return false;
}
