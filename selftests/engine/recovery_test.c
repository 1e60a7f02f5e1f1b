// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loss recovery (user/transport/recovery.h, requester.c, completer.c).
 *
 * First the arithmetic: the RFC 6298 estimator (SRTT/RTTVAR, floor, backoff,
 * cap), the tail probe's timeout, and the send window (the IBA limit
 * without losses, the loss interval, the BDP term, an outage, limits).
 * Then the engine, on a loop wire with a filtering port at each end that
 * drops chosen frames, counts what the requester sends, can hold what its
 * engine receives, and can replay a NAK late; on the virtual clock
 * (vclock.h), so no timer fires unless the case moves the clock, and the
 * counts are exact however loaded the host:
 *   - under frequent losses the window bounds what go-back-N resends;
 *   - a sequence NAK resends once, from the NAKed PSN, the window only;
 *   - a late duplicate of that NAK resends nothing;
 *   - on a QP that went back lately, a lost tail goes again in a tail
 *     probe (the oldest PSN unacknowledged and the last), long before the
 *     configured timeout; on a clean one, on the configured timeout, as a
 *     go-back;
 *   - a resend lost after a NAK is probed (the missing PSN first, then
 *     the last), not left to the RTO;
 *   - a stalled ACK on a path that lost nothing sends nothing twice;
 *   - Karn: an ACK of a resent PSN gives no RTT sample;
 *   - a READ whose response is lost restarts from that response (a new
 *     READ request for the rest: its PSN, address and length);
 *   - a responder that keeps sends no ACK ahead of a go-back-N requester's
 *     resend once it has seen it go back (kernel rxe 6.12 hangs on one).
 */
#include <arpa/inet.h>
#include "kselftest_harness.h"
#include "pair.h"
#include "roxe/parse.h"
#include "wire/psn.h"
#include "transport/transport.h"
#include "transport/credit.h"
#include "transport/engine.h"
#include "transport/requester.h"
#include "transport/sched.h"
#include "vclock.h"

/* --- the estimator ------------------------------------------------------------ */
#define MS 1000000ull
#define US 1000ull

TEST(rto_without_sample_is_the_configured_timeout)
{
	struct roxe_rto r;

	roxe_rto_init(&r);
	EXPECT_EQ(268 * MS, roxe_rto_ns(&r, 268 * MS));
	roxe_rto_backoff(&r);
	EXPECT_EQ(268 * MS, roxe_rto_ns(&r, 268 * MS));	/* never past the cap */
	/* no cap (timeout 0 never arms the timer, but the arithmetic holds) */
	roxe_rto_init(&r);
	EXPECT_EQ(ROXE_RTO_MIN_NS, roxe_rto_ns(&r, 0));
}

TEST(rto_srtt_rttvar_updates)
{
	struct roxe_rto r;

	roxe_rto_init(&r);
	roxe_rto_sample(&r, 20 * MS);		/* 2.2: SRTT R, RTTVAR R/2 */
	EXPECT_EQ(20 * MS, r.srtt);
	EXPECT_EQ(10 * MS, r.rttvar);
	EXPECT_EQ(60 * MS, roxe_rto_ns(&r, 0));	/* SRTT + 4 RTTVAR */
	roxe_rto_sample(&r, 40 * MS);		/* 2.3: RTTVAR first, with the old SRTT */
	EXPECT_EQ(12500 * US, r.rttvar);	/* 3/4 * 10 + 1/4 * |20 - 40| */
	EXPECT_EQ(22500 * US, r.srtt);		/* 7/8 * 20 + 1/8 * 40 */
	EXPECT_EQ(72500 * US, roxe_rto_ns(&r, 0));
	roxe_rto_sample(&r, 22500 * US);	/* steady: the variance decays */
	EXPECT_EQ(22500 * US, r.srtt);
	EXPECT_EQ(9375 * US, r.rttvar);
}

TEST(rto_floor)
{
	struct roxe_rto r;

	roxe_rto_init(&r);
	roxe_rto_sample(&r, 20 * US);
	EXPECT_EQ(20 * US, r.srtt);
	EXPECT_EQ(ROXE_RTO_MIN_NS, roxe_rto_ns(&r, 268 * MS));
	roxe_rto_sample(&r, 0);			/* a same-turn ACK: 1 ns, no zero SRTT */
	EXPECT_NE(0u, r.srtt);
	EXPECT_EQ(ROXE_RTO_MIN_NS, roxe_rto_ns(&r, 268 * MS));
	/* a configured timeout below the floor still bounds it */
	EXPECT_EQ(500 * US, roxe_rto_ns(&r, 500 * US));
}

TEST(rto_backoff_doubles_to_the_cap_and_resets_on_progress)
{
	struct roxe_rto r;
	uint64_t prev;

	roxe_rto_init(&r);
	roxe_rto_sample(&r, 20 * MS);
	EXPECT_EQ(60 * MS, roxe_rto_ns(&r, 500 * MS));
	roxe_rto_backoff(&r);
	EXPECT_EQ(120 * MS, roxe_rto_ns(&r, 500 * MS));
	roxe_rto_backoff(&r);
	EXPECT_EQ(240 * MS, roxe_rto_ns(&r, 500 * MS));
	roxe_rto_backoff(&r);
	EXPECT_EQ(480 * MS, roxe_rto_ns(&r, 500 * MS));
	roxe_rto_backoff(&r);
	EXPECT_EQ(500 * MS, roxe_rto_ns(&r, 500 * MS));	/* the configured timeout */
	roxe_rto_progress(&r);
	EXPECT_EQ(60 * MS, roxe_rto_ns(&r, 500 * MS));
	/* a new sample also ends the backoff */
	roxe_rto_backoff(&r);
	roxe_rto_sample(&r, 20 * MS);
	EXPECT_EQ(0u, r.backoff);
	/* bounded: saturates, never wraps */
	prev = roxe_rto_ns(&r, 0);
	for (int i = 0; i < 100; i++) {
		roxe_rto_backoff(&r);
		EXPECT_GE(roxe_rto_ns(&r, 0), prev);
		prev = roxe_rto_ns(&r, 0);
	}
	EXPECT_EQ((unsigned)ROXE_RTO_MAX_BACKOFF, r.backoff);
	/* IBA's largest local ACK timeout (31: 4.096 us << 31) is reached */
	EXPECT_EQ(4096ull << 31, roxe_rto_ns(&r, 4096ull << 31));
}

TEST(tail_probe_timeout)
{
	struct roxe_rto r;
	uint64_t t = 5000 * MS;		/* a clock past the loss memory */

	roxe_rto_init(&r);
	roxe_rto_loss(&r, t);
	EXPECT_EQ(0u, roxe_pto_ns(&r, roxe_rto_ns(&r, 268 * MS), t));	/* no sample: none */
	roxe_rto_sample(&r, 100 * US);
	EXPECT_EQ(ROXE_PTO_MIN_NS, roxe_pto_ns(&r, roxe_rto_ns(&r, 268 * MS), t));
	roxe_rto_init(&r);
	roxe_rto_loss(&r, t);
	roxe_rto_sample(&r, 3 * MS);	/* RTTVAR 1.5 ms: SRTT + 4 RTTVAR = 9 ms */
	EXPECT_EQ(9 * MS, roxe_pto_ns(&r, roxe_rto_ns(&r, 268 * MS), t));
	for (int i = 0; i < 30; i++)	/* steady: RTTVAR decays, two SRTTs rule */
		roxe_rto_sample(&r, 3 * MS);
	EXPECT_EQ(6 * MS, roxe_pto_ns(&r, roxe_rto_ns(&r, 268 * MS), t));
	EXPECT_EQ(0u, roxe_pto_ns(&r, 5 * MS, t));	/* never at or past the RTO */
}

/* A probe on a path that lost nothing can only be a duplicate (a stall, not
 * a loss): it is armed for ROXE_PTO_LOSS_MEMORY_NS after a go-back only. */
TEST(tail_probe_only_after_a_loss)
{
	struct roxe_rto r;
	uint64_t t = 5000 * MS, rto;

	roxe_rto_init(&r);
	roxe_rto_sample(&r, 100 * US);
	rto = roxe_rto_ns(&r, 268 * MS);
	EXPECT_EQ(0u, roxe_pto_ns(&r, rto, t));			/* never lost */
	roxe_rto_loss(&r, t);
	EXPECT_EQ(ROXE_PTO_MIN_NS, roxe_pto_ns(&r, rto, t + ROXE_PTO_LOSS_MEMORY_NS));
	EXPECT_EQ(0u, roxe_pto_ns(&r, rto, t + ROXE_PTO_LOSS_MEMORY_NS + 1));
	roxe_rto_sample(&r, 100 * US);		/* samples do not forget it */
	EXPECT_EQ(ROXE_PTO_MIN_NS, roxe_pto_ns(&r, rto, t + 1));
	roxe_rto_init(&r);
	roxe_rto_loss(&r, 0);			/* a clock at 0 still counts */
	roxe_rto_sample(&r, 100 * US);
	EXPECT_EQ(ROXE_PTO_MIN_NS, roxe_pto_ns(&r, rto, 1));
}

/* A clean QP runs the configured timeout; one that went back lately, or
 * one with none configured, the estimate. */
TEST(rto_timer_follows_the_estimate_only_on_a_lossy_qp)
{
	struct roxe_rto r;
	uint64_t t = 5000 * MS;

	roxe_rto_init(&r);
	roxe_rto_sample(&r, 100 * US);
	EXPECT_FALSE(roxe_rto_lossy(&r, t));
	EXPECT_EQ(268 * MS, roxe_rto_timer_ns(&r, 268 * MS, t));
	EXPECT_EQ(ROXE_RTO_MIN_NS, roxe_rto_timer_ns(&r, 0, t));
	roxe_rto_loss(&r, t);
	EXPECT_TRUE(roxe_rto_lossy(&r, t + ROXE_PTO_LOSS_MEMORY_NS));
	EXPECT_EQ(ROXE_RTO_MIN_NS, roxe_rto_timer_ns(&r, 268 * MS, t + 1));
	EXPECT_EQ(268 * MS, roxe_rto_timer_ns(&r, 268 * MS, t + ROXE_PTO_LOSS_MEMORY_NS + 1));
	EXPECT_EQ(5 * MS, roxe_rto_timer_ns(&r, 5 * MS, t + 1));	/* never past the cap */
}

/* --- the window -------------------------------------------------------------- */
/* Without losses the limit is IBA's; one loss among 1100 PSNs (0.09 %:
 * more than ROXE_LOSS_SHARE x 512 apart) is no reason to hold back: still
 * IBA's. */
/* The stall probe's timeout: the floor, the min RTT's multiple past it, and
 * twice the usual wait of a blocked window past that. On a slow link a
 * full window is the steady state and ACKs come 0.5 ms apart: after a few
 * blocks the probe no longer fires between them. An outage (the probe and
 * more) counts as the RTO floor at most. */
TEST(stall_probe_timeout)
{
	struct roxe_stall s = { 0 };
	uint64_t now = 1000000000, t;

	EXPECT_EQ(ROXE_STALL_PTO_MIN_NS, roxe_stall_begin(&s, 0, now));
	EXPECT_EQ(now, s.at);
	roxe_stall_end(&s, now + 40000);		/* a repair: 40 us */
	EXPECT_EQ(0, s.at);
	EXPECT_EQ(40000, s.usual);
	EXPECT_EQ(ROXE_STALL_PTO_MIN_NS, roxe_stall_begin(&s, 20000, now));
	EXPECT_EQ(ROXE_STALL_PTO_RTTS * 100000ull, roxe_stall_begin(&s, 100000, now));
	roxe_stall_end(&s, now);
	/* a slow link: every block waits 500 us for the next ACK */
	s = (struct roxe_stall){ 0 };
	for (int i = 0; i < 4; i++) {
		t = roxe_stall_begin(&s, 70000, now);
		now += 500000;
		roxe_stall_end(&s, now);
	}
	t = roxe_stall_begin(&s, 70000, now);
	EXPECT_GT(t, 500000u) TH_LOG("the probe would fire between ACKs: %llu ns",
				     (unsigned long long)t);
	EXPECT_LE(t, 1000000u);
	roxe_stall_end(&s, now + 60 * 1000000000ull);	/* an outage */
	EXPECT_LE(s.usual, 500000 + ROXE_RTO_MIN_NS / 8);
	roxe_stall_end(&s, now);			/* no stall: nothing */
	EXPECT_LE(s.usual, 500000 + ROXE_RTO_MIN_NS / 8);
}

TEST(cwnd_isolated_losses_cut_nothing)
{
	struct roxe_cwnd w;
	uint64_t t = 1;

	roxe_cwnd_init(&w, ROXE_MAX_INFLIGHT);
	EXPECT_EQ((uint32_t)ROXE_MAX_INFLIGHT, w.cwnd);
	for (int loss = 0; loss < 5; loss++) {
		for (int i = 0; i < 110; i++)
			roxe_cwnd_ack(&w, 10, t += 10 * US);
		roxe_cwnd_loss(&w);
		EXPECT_EQ((uint32_t)ROXE_MAX_INFLIGHT, w.cwnd);
	}
	/* a first timeout is a go-back like a NAK, no more */
	for (int i = 0; i < 3; i++)		/* 1536 PSNs */
		roxe_cwnd_ack(&w, ROXE_MAX_INFLIGHT, t += 10 * US);
	roxe_cwnd_timeout(&w, false);
	EXPECT_EQ((uint32_t)ROXE_MAX_INFLIGHT, w.cwnd);
}

/* Frequent losses: the limit follows the mean PSNs between go-backs (an
 * EWMA), never below the floor, and grows back as they thin out. */
TEST(cwnd_follows_the_loss_interval)
{
	struct roxe_cwnd w;
	uint32_t prev;

	roxe_cwnd_init(&w, ROXE_MAX_INFLIGHT);
	/* no ACK timed: no BDP estimate, only the loss interval counts */
	for (int loss = 0; loss < 20; loss++) {
		roxe_cwnd_ack(&w, 200, 0);
		roxe_cwnd_loss(&w);
	}
	EXPECT_EQ(0u, roxe_cwnd_bdp(&w));
	EXPECT_EQ(200u, w.loss_ival);
	EXPECT_EQ(200u / ROXE_LOSS_SHARE, w.cwnd);
	/* one loss after 400: a quarter of the way, (3 x 200 + 400) / 4 */
	roxe_cwnd_ack(&w, 400, 0);
	roxe_cwnd_loss(&w);
	EXPECT_EQ(250u, w.loss_ival);
	EXPECT_EQ(250u / ROXE_LOSS_SHARE, w.cwnd);
	/* back to back (a NAK and then the timer for one loss): smaller, not
	 * collapsed, (3 x 250 + 0 + 3) / 4 */
	prev = w.cwnd;
	roxe_cwnd_loss(&w);
	EXPECT_EQ(188u, w.loss_ival);
	EXPECT_LT(w.cwnd, prev);
	/* losses on every PSN: the floor */
	for (int loss = 0; loss < 50; loss++)
		roxe_cwnd_loss(&w);
	EXPECT_EQ((uint32_t)ROXE_CWND_FLOOR, w.cwnd);
	/* losses thinning out: back to the IBA limit */
	for (int loss = 0; loss < 50; loss++) {
		for (int i = 0; i < 4; i++)		/* 2048 PSNs */
			roxe_cwnd_ack(&w, ROXE_MAX_INFLIGHT, 0);
		roxe_cwnd_loss(&w);
	}
	EXPECT_EQ((uint32_t)ROXE_MAX_INFLIGHT, w.cwnd);
}

/* The BDP term: however lossy, the limit keeps gain x rate x min RTT in
 * flight. 10 PSNs every 100 us (100000 PSN/s) over a 1 ms min RTT: a BDP
 * of 100. */
TEST(cwnd_keeps_the_bdp_in_flight)
{
	struct roxe_cwnd w;
	uint64_t t = 1000 * MS;

	roxe_cwnd_init(&w, ROXE_MAX_INFLIGHT);
	roxe_cwnd_rtt(&w, 5 * MS, t);
	roxe_cwnd_rtt(&w, 1 * MS, t);
	roxe_cwnd_rtt(&w, 3 * MS, t);		/* the min holds */
	EXPECT_EQ(1 * MS, w.min_rtt);
	for (int i = 0; i < 100; i++) {
		roxe_cwnd_ack(&w, 10, t += 100 * US);
		if (i % 10 == 9)
			roxe_cwnd_loss(&w);		/* a loss every 100 PSNs */
	}
	EXPECT_EQ(100u, roxe_cwnd_bdp(&w));
	EXPECT_EQ(100u * ROXE_BDP_GAIN, w.cwnd);
	/* a round that waited (an RTO, the application): the max holds */
	roxe_cwnd_ack(&w, 10, t += 50 * MS);
	EXPECT_EQ(100u, roxe_cwnd_bdp(&w));
	/* the min RTT expires after its window: a new (larger) one holds */
	roxe_cwnd_rtt(&w, 2 * MS, t + ROXE_MINRTT_WIN_NS + 1);
	EXPECT_EQ(2 * MS, w.min_rtt);
	EXPECT_EQ(200u, roxe_cwnd_bdp(&w));
}

TEST(cwnd_outage_and_limits)
{
	struct roxe_cwnd w;

	/* a second timeout without progress: an outage, the minimum; the
	 * next ACK undoes it */
	roxe_cwnd_init(&w, ROXE_MAX_INFLIGHT);
	for (int i = 0; i < 3; i++)		/* 1536 PSNs */
		roxe_cwnd_ack(&w, ROXE_MAX_INFLIGHT, 0);
	roxe_cwnd_timeout(&w, false);
	EXPECT_EQ((uint32_t)ROXE_MAX_INFLIGHT, w.cwnd);
	roxe_cwnd_timeout(&w, true);
	EXPECT_EQ((uint32_t)ROXE_CWND_MIN, w.cwnd);
	roxe_cwnd_timeout(&w, true);
	EXPECT_EQ((uint32_t)ROXE_CWND_MIN, w.cwnd);
	roxe_cwnd_ack(&w, 1, 0);
	EXPECT_GE(w.cwnd, (uint32_t)ROXE_CWND_FLOOR);
	/* absurd counts are bounded */
	roxe_cwnd_init(&w, ROXE_MAX_INFLIGHT);
	for (int i = 0; i < 3; i++)	/* each counts as the limit: 1536 */
		roxe_cwnd_ack(&w, 0xffffffffu, 1);
	EXPECT_EQ((uint32_t)ROXE_MAX_INFLIGHT, w.cwnd);
	roxe_cwnd_loss(&w);
	EXPECT_EQ((uint32_t)ROXE_MAX_INFLIGHT, w.cwnd);
	/* a small IBA limit caps the start, the floor, the estimate */
	roxe_cwnd_init(&w, 4);
	EXPECT_EQ(4u, w.cwnd);
	roxe_cwnd_ack(&w, 100, 100);
	EXPECT_EQ(4u, w.cwnd);
	roxe_cwnd_loss(&w);
	roxe_cwnd_loss(&w);
	EXPECT_EQ(4u, w.cwnd);
}

/* The selective repair's verdicts (recovery.h), as arithmetic. */
TEST(repair_verdicts)
{
	struct roxe_repair r = { 0 };
	unsigned i;

	/* An unknown peer: tried; the answer times the path, once. */
	EXPECT_TRUE(roxe_repair_try(&r, 100));
	roxe_repair_sent(&r, 100, 150, 1000);
	EXPECT_EQ(0u, roxe_repair_rtt(&r, 100, 1200));	/* not answered yet */
	EXPECT_FALSE(roxe_repair_progress(&r, 100));
	EXPECT_EQ(500u, roxe_repair_rtt(&r, 101, 1500));
	EXPECT_EQ(0u, roxe_repair_rtt(&r, 101, 1600));
	/* It stopped at exactly the repair: 101 is missing there. */
	EXPECT_TRUE(roxe_repair_progress(&r, 101));
	EXPECT_FALSE(roxe_repair_try(&r, 101));		/* not kept: go back */
	EXPECT_EQ(1u, r.misses);
	/* a NAK elsewhere is tried again, until ROXE_REPAIR_TRIES misses */
	for (i = 1; i < ROXE_REPAIR_TRIES; i++) {
		EXPECT_TRUE(roxe_repair_try(&r, 200 * i));
		roxe_repair_sent(&r, 200 * i, 200 * i + 50, 1000);
		EXPECT_TRUE(roxe_repair_progress(&r, 200 * i + 1));
		EXPECT_FALSE(roxe_repair_try(&r, 200 * i + 1));
	}
	EXPECT_EQ((unsigned)ROXE_REPAIR_TRIES, r.misses);
	EXPECT_FALSE(roxe_repair_try(&r, 5000));	/* a go-back-N peer */
	EXPECT_FALSE(r.kept);

	/* A peer that kept: sticky; a run of next-PSN gaps ends in go-back-N. */
	r = (struct roxe_repair){ 0 };
	EXPECT_TRUE(roxe_repair_try(&r, 100));
	roxe_repair_sent(&r, 100, 150, 1000);
	EXPECT_FALSE(roxe_repair_progress(&r, 120));
	EXPECT_TRUE(r.kept);
	EXPECT_FALSE(r.pending);
	EXPECT_TRUE(roxe_repair_try(&r, 120));
	for (i = 0; i + 1 < ROXE_REPAIR_RUN; i++) {
		roxe_repair_sent(&r, 120 + i, 150, 1000);
		EXPECT_TRUE(roxe_repair_progress(&r, 121 + i));
		EXPECT_TRUE(roxe_repair_try(&r, 121 + i));
	}
	roxe_repair_sent(&r, 120 + i, 150, 1000);
	EXPECT_TRUE(roxe_repair_progress(&r, 121 + i));
	EXPECT_FALSE(roxe_repair_try(&r, 121 + i));
	EXPECT_TRUE(r.kept);

	/* Nothing was sent behind the repair: no verdict either way. */
	r = (struct roxe_repair){ 0 };
	EXPECT_TRUE(roxe_repair_try(&r, 400));
	roxe_repair_sent(&r, 400, 400, 1000);
	EXPECT_FALSE(roxe_repair_progress(&r, 401));
	EXPECT_FALSE(r.pending);
	EXPECT_FALSE(r.kept);
	EXPECT_EQ(0u, r.misses);
}

/* --- the engine, behind filtering ports -------------------------------------------- */
#define NPSN	1024	/* PSNs a filter counts, from its base */
#define COPIES		5
#define COPY_FRAME	(1024 + 256)

/* A port in front of a loop port: what the engine sends passes through
 * filter(), on the engine's thread; the test reads the record once the
 * exchange is over (a completion polled after the last frame), or once the
 * pair has settled on the virtual clock (vclock.h). */
struct fport {
	struct roxe_port	port;		/* first: the engine's view */
	struct roxe_port	*in;
	uint32_t		base;		/* PSN counted as 0 */
	int64_t			drop_psn;	/* drop its first copy; -1: none */
	unsigned		drop_copies;	/* or its first drop_copies (0: 1) */
	unsigned		drop_every;	/* and every drop_every-th request
						 * frame (0: none), random loss's
						 * regular cousin */
	unsigned		nreq;		/* request frames seen */
	int			drop_kind;	/* 0: requests, 1: responses */
	bool			dup_nak;	/* replay the first NAK after the next ACK */
	uint64_t		rx_hold_until;	/* virtual ns: receive nothing
						 * before (a stalled host); atomic */
	/* What came while held, kept here (not left on the wire, whose
	 * wakeup would keep the engine from parking): delivered first after */
	uint8_t			*held;		/* HOLD_MAX frames */
	uint32_t		held_len[64];
	unsigned		nheld, held_next;
	/* record */
	unsigned		sent[NPSN];	/* requests by PSN - base */
	uint32_t		order[NPSN];	/* the first NPSN requests' PSN - base */
	uint64_t		order_ns[NPSN];	/* and when each went */
	unsigned		norder;
	unsigned		dropped, naks, replayed;
	unsigned		plain_acks;	/* ACK frames (not NAKs) */
	uint32_t		plain_ack_psn[16];	/* the first 16's PSNs */
	uint8_t			nak[256];
	uint32_t		nak_len, nak_psn;
	unsigned		nreads;
	struct roxe_frame_hdr	reads[8];	/* READ requests seen */
	/* The last request sent (PSN - base, + 1; 0: none yet), read by the
	 * other end's filter on its own engine's thread; and the plain ACKs
	 * this end sent that name a PSN past it: ahead of the requester's
	 * latest (re)transmission */
	uint32_t		last_req;
	const struct fport	*peer;
	unsigned		acks_ahead;
	/* Kernel rxe's go-back-N, which resends everything from the NAKed
	 * PSN whatever comes back meanwhile: the first copies of the
	 * requests copy_lo .. copy_lo + COPIES - 1 (PSN - base; 0: none)
	 * are kept, and once copy_lo - 1 has gone again they go again too,
	 * from f_rx, as soon as the peer's answer to that resend arrives */
	uint32_t		copy_lo;
	uint8_t			copy[COPIES][COPY_FRAME];
	uint32_t		copy_len[COPIES];
	bool			copies_due;
	unsigned		copied;		/* copies sent */
};

static bool is_response(uint8_t op)
{
	return op >= 0x0d && op <= 0x12;	/* READ responses, ACK, atomic ACK */
}

/* Keep frame b? Records it. */
static bool filter(struct fport *fp, const struct roxe_buf *b)
{
	struct roxe_frame_hdr h;
	struct roxe_pkt pkt;
	uint32_t off;

	if (roxe_parse(b->data, b->data + b->len, b->len, &pkt) != ROXE_PKT_OK)
		return true;
	roxe_frame_hdr_get(b->data, &pkt, &h);
	off = (h.psn - fp->base) & ROXE_PSN_MASK;
	if (!is_response(h.opcode) && off < NPSN)
		fp->sent[off]++;
	/* the copies stand in for the requester's own resends of those */
	if (fp->copy_lo && !is_response(h.opcode) && off >= fp->copy_lo &&
	    off < fp->copy_lo + COPIES && fp->sent[off] > 1)
		return false;
	if (!is_response(h.opcode))
		__atomic_store_n(&fp->last_req, off + 1, __ATOMIC_RELEASE);
	if (fp->copy_lo && !is_response(h.opcode) && off >= fp->copy_lo &&
	    off < fp->copy_lo + COPIES && fp->sent[off] == 1 && b->len <= COPY_FRAME) {
		memcpy(fp->copy[off - fp->copy_lo], b->data, b->len);
		fp->copy_len[off - fp->copy_lo] = b->len;
	}
	if (fp->copy_lo && !is_response(h.opcode) && off == fp->copy_lo - 1 && fp->sent[off] == 2)
		fp->copies_due = true;
	if (h.opcode == ROXE_OP_RC_ACKNOWLEDGE &&
	    (h.syndrome & ROXE_AETH_TYPE_MASK) == ROXE_AETH_ACK && fp->peer) {
		uint32_t last = __atomic_load_n(&fp->peer->last_req, __ATOMIC_ACQUIRE);

		if (last && ((h.psn - fp->peer->base) & ROXE_PSN_MASK) + 1 > last)
			fp->acks_ahead++;
	}
	if (!is_response(h.opcode) && fp->norder < NPSN) {
		fp->order_ns[fp->norder] = roxe_now_ns();
		fp->order[fp->norder++] = off;
	}
	if (h.opcode == ROXE_OP_RC_RDMA_READ_REQUEST && fp->nreads < 8)
		fp->reads[fp->nreads++] = h;
	if (h.opcode == ROXE_OP_RC_ACKNOWLEDGE &&
	    (h.syndrome & ROXE_AETH_TYPE_MASK) == ROXE_AETH_ACK && fp->plain_acks < 16)
		fp->plain_ack_psn[fp->plain_acks++] = h.psn;
	if (h.opcode == ROXE_OP_RC_ACKNOWLEDGE &&
	    (h.syndrome & ROXE_AETH_TYPE_MASK) == ROXE_AETH_NAK) {
		fp->naks++;
		if (fp->dup_nak && !fp->nak_len && b->len <= sizeof(fp->nak)) {
			memcpy(fp->nak, b->data, b->len);
			fp->nak_len = b->len;
			fp->nak_psn = h.psn;
		}
	}
	if (fp->drop_psn >= 0 && h.psn == (uint32_t)fp->drop_psn &&
	    is_response(h.opcode) == (fp->drop_kind == 1)) {
		if (fp->drop_copies <= 1)
			fp->drop_psn = -1;
		else
			fp->drop_copies--;
		fp->dropped++;
		return false;
	}
	if (fp->drop_every && !is_response(h.opcode) && ++fp->nreq % fp->drop_every == 0) {
		fp->dropped++;
		return false;
	}
	return true;
}

/* The NAK's late copy goes after the first plain ACK past its PSN: by
 * then the requester has had that PSN acknowledged. */
static bool replay_due(struct fport *fp, const struct roxe_buf *b)
{
	struct roxe_frame_hdr h;
	struct roxe_pkt pkt;

	if (!fp->nak_len || fp->replayed ||
	    roxe_parse(b->data, b->data + b->len, b->len, &pkt) != ROXE_PKT_OK)
		return false;
	roxe_frame_hdr_get(b->data, &pkt, &h);
	return h.opcode == ROXE_OP_RC_ACKNOWLEDGE &&
	       (h.syndrome & ROXE_AETH_TYPE_MASK) == ROXE_AETH_ACK &&
	       roxe_psn_diff(h.psn, fp->nak_psn) >= 0;
}

static struct fport *fp_of(struct roxe_port *p)
{
	return (struct fport *)p;
}

#define HOLD_MAX	64
#define HOLD_FRAME	(4096 + 256)

static unsigned f_rx(struct roxe_port *p, struct roxe_buf *b, unsigned n)
{
	struct fport *fp = fp_of(p);
	unsigned got, k;

	if (roxe_now_ns() < __atomic_load_n(&fp->rx_hold_until, __ATOMIC_ACQUIRE)) {
		got = roxe_port_rx(fp->in, b, n < HOLD_MAX - fp->nheld ? n : HOLD_MAX - fp->nheld);
		for (k = 0; k < got; k++, fp->nheld++) {
			memcpy(fp->held + (size_t)fp->nheld * HOLD_FRAME, b[k].data, b[k].len);
			fp->held_len[fp->nheld] = b[k].len;
		}
		roxe_port_rx_release(fp->in, b, got);
		return 0;
	}
	if (fp->held_next == fp->nheld) {
		got = roxe_port_rx(fp->in, b, n);
		if (got && fp->copies_due) {
			struct roxe_buf c[COPIES];
			unsigned m = roxe_port_tx_alloc(fp->in, c, COPIES);

			for (k = 0; k < m; k++) {
				memcpy(c[k].data, fp->copy[k], fp->copy_len[k]);
				c[k].len = fp->copy_len[k];
				__atomic_store_n(&fp->last_req, fp->copy_lo + k + 1,
						 __ATOMIC_RELEASE);
			}
			roxe_port_tx(fp->in, c, m);
			roxe_port_flush(fp->in);
			fp->copied += m;
			fp->copies_due = false;
		}
		return got;
	}
	/* the held frames first, in the port's own buffers */
	got = roxe_port_tx_alloc(fp->in, b, n < fp->nheld - fp->held_next ?
					    n : fp->nheld - fp->held_next);
	for (k = 0; k < got; k++, fp->held_next++) {
		memcpy(b[k].data, fp->held + (size_t)fp->held_next * HOLD_FRAME,
		       fp->held_len[fp->held_next]);
		b[k].len = fp->held_len[fp->held_next];
	}
	if (fp->held_next == fp->nheld)
		fp->nheld = fp->held_next = 0;
	return got;
}

static void f_rx_release(struct roxe_port *p, const struct roxe_buf *b, unsigned n)
{
	roxe_port_rx_release(fp_of(p)->in, b, n);
}

static unsigned f_tx_alloc(struct roxe_port *p, struct roxe_buf *b, unsigned n)
{
	return roxe_port_tx_alloc(fp_of(p)->in, b, n);
}

static void f_tx_free(struct roxe_port *p, const struct roxe_buf *b, unsigned n)
{
	roxe_port_tx_free(fp_of(p)->in, b, n);
}

static void f_tx_submit(struct roxe_port *p, struct roxe_buf *b, unsigned n)
{
	struct fport *fp = fp_of(p);
	struct roxe_buf keep[ROXE_RX_BURST + 1];
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++) {
		if (!filter(fp, &b[i])) {
			roxe_port_tx_free(fp->in, &b[i], 1);
			continue;
		}
		keep[k++] = b[i];
		if (replay_due(fp, &b[i]) && k < ROXE_RX_BURST + 1 &&
		    roxe_port_tx_alloc(fp->in, &keep[k], 1) == 1) {
			memcpy(keep[k].data, fp->nak, fp->nak_len);
			keep[k++].len = fp->nak_len;
			fp->replayed++;
		}
	}
	if (k)
		roxe_port_tx(fp->in, keep, k);
}

static void f_tx_flush(struct roxe_port *p)
{
	roxe_port_flush(fp_of(p)->in);
}

static void f_destroy(struct roxe_port *p)
{
	(void)p;	/* the test owns it */
}

static const struct roxe_port_ops fops = {
	.name = "filter", .rx_burst = f_rx, .rx_release = f_rx_release, .tx_alloc = f_tx_alloc,
	.tx_submit = f_tx_submit, .tx_free = f_tx_free, .tx_flush = f_tx_flush,
	.destroy = f_destroy,
};

#define BUF	(1u << 20)
#define PSN_A	0x100
#define PSN_B	0x200

FIXTURE(rec) {
	struct pair p;
	struct fport f[2];
	unsigned steps;		/* times the test moved the clock to a deadline */
};

/* As pair_open_polled, each device on a filtering port. Set gbn_peer for
 * a responder that keeps nothing past a gap (b's device opens with
 * no_ooo_stash): IBA's go-back-N responder, as kernel rxe's. */
static bool gbn_peer;

static int fpair_open(struct pair *p, struct fport *f, unsigned polled)
{
	memset(p, 0, sizeof(*p));
	p->buf_len = BUF;
	p->wire = roxe_loop_wire_new(4096 + 256, 1024);
	if (!p->wire)
		return -ENOMEM;
	for (int i = 0; i < 2; i++) {
		struct roxe_port *in = roxe_loop_port(p->wire, i);
		int err;

		memset(&f[i], 0, sizeof(f[i]));
		f[i].port = *in;
		f[i].port.ops = &fops;
		f[i].in = in;
		f[i].drop_psn = -1;
		f[i].base = i ? PSN_B : PSN_A;
		f[i].held = malloc((size_t)HOLD_MAX * HOLD_FRAME);
		if (!f[i].held)
			return -ENOMEM;
		p->no_ooo_stash[i] = i && gbn_peer;
		err = pair_side_open(p, i, &f[i].port, 1024, polled & (1u << i));
		if (err)
			return err;
	}
	f[0].peer = &f[1];
	f[1].peer = &f[0];
	return 0;
}

/* Every case runs on the virtual clock: no timer fires unless the case
 * moves the clock (vc_poll's steps, vc_advance), so what it counts is
 * exact however slow the host. */
FIXTURE_SETUP(rec)
{
	memset(&self->p, 0, sizeof(self->p));
	memset(self->f, 0, sizeof(self->f));
	self->steps = 0;
	gbn_peer = false;
	vc_start();
}

FIXTURE_TEARDOWN(rec)
{
	pair_close(&self->p);
	free(self->f[0].held);
	free(self->f[1].held);
	EXPECT_EQ(0, leak_check());
}

static struct roxe_qp_stats *qstats(struct side *s)
{
	return &s->dev->qp_stats[roxe_qp_num(s->qp)];
}

static int write1(struct pair *p, uint64_t id, uint32_t off, uint32_t len)
{
	return post_send1(p->s[0].qp, IBV_WR_RDMA_WRITE, id, p->s[0].buf + off, len,
			  p->s[0].mr->lkey, (uintptr_t)p->s[1].buf + off, p->s[1].mr->rkey,
			  IBV_SEND_SIGNALED);
}

/* One WRITE of len bytes (pattern seed) from a to b through the filters as
 * the test set them, completed with its data intact: the requests a sent
 * for its PSNs. Whenever the pair settles short of the completion, the
 * clock moves to the next deadline, max_steps times at most (self->steps
 * counts them): each is a timer the exchange could not go on without. */
static unsigned write_through(struct __test_metadata *_metadata, FIXTURE_DATA(rec) *self,
			      uint32_t len, uint32_t seed, unsigned max_steps)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
	unsigned total = 0;

	fill_pattern(a->buf, len, seed);
	EXPECT_EQ(0, write1(&self->p, 1, 0, len));
	EXPECT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, max_steps, &self->steps));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(a->buf, b->buf, len));
	for (unsigned i = 0; i < len / 1024 && i < NPSN; i++)
		total += self->f[0].sent[i];
	TH_LOG("%u requests for %u PSNs, %u dropped, %llu retransmissions, %llu timer expiries "
	       "(%u clock steps)", total, len / 1024, self->f[0].dropped,
	       (unsigned long long)qstats(a)->retransmits, (unsigned long long)qstats(a)->timeouts,
	       self->steps);
	return total;
}

/* An RC pair behind the filters, timeout 16 (268 ms): NAKs and probes,
 * not the timer, bring the resends. */
static int rc_open(FIXTURE_DATA(rec) *self)
{
	return fpair_open(&self->p, self->f, 0) ?:
	       pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, PSN_A, PSN_B, 16, 7, 7);
}

/* Frequent losses (every 128th request frame, first copy or not) against a
 * go-back-N peer (rxe's responder): each one sends go-back-N back, and
 * what it resends is what was in flight behind the loss. The window follows the loss interval (about 15 PSNs; its
 * floor, 16) and bounds that; IBA's 512 alone lets the requester run on
 * past each loss as far as it gets before the NAK stops it. */
TEST_F(rec, frequent_losses_resend_a_window_not_the_message)
{
	enum { LEN = 1024 * 1024, EVERY = 128 };	/* 1024 packets */
	const unsigned win = EVERY / ROXE_LOSS_SHARE > ROXE_CWND_FLOOR ?
			     EVERY / ROXE_LOSS_SHARE : ROXE_CWND_FLOOR;
	struct side *a = &self->p.s[0];
	unsigned total;

	gbn_peer = true;
	ASSERT_EQ(0, rc_open(self));
	self->f[0].drop_every = EVERY;
	/* a lost resend of the NAKed PSN or a lost tail waits for a probe */
	total = write_through(_metadata, self, LEN, 3, 64);
	/* every expiry is one the test brought: none came early */
	EXPECT_EQ(self->steps, qstats(a)->timeouts);
	/* Each go-back (NAK, probe or timer) resends at most what the window
	 * let out: half the loss interval or the floor (64), given 1.5 x
	 * that; but the first loss comes with the IBA limit out (512: no
	 * loss was seen), and a loss among its resends goes back over them
	 * again: twice that. (On this loop wire ACKs come back within a
	 * turn, so even without the window little is in flight: measured
	 * 1575 to 3231 requests without it, 1354 to 2847 with it. This
	 * bounds the resends of a lossy run end to end; the window's
	 * arithmetic is pinned by the cwnd_ tests above.) */
	EXPECT_LE(total, LEN / 1024 + 2 * ROXE_MAX_INFLIGHT +
			 (unsigned)(qstats(a)->retransmits + qstats(a)->timeouts) *
			 (win + win / 2));
}

/* Checks common to the NAK tests: every PSN of the message went once or
 * twice, lost_at exactly twice, and the twice-sent ones are one run from
 * lost_at: the window resent once from the NAKed PSN. */
static void check_one_resend(struct __test_metadata *_metadata, const struct fport *f,
			     unsigned npsn, unsigned lost_at, unsigned max_resent)
{
	unsigned resent = 0;

	EXPECT_EQ(2u, f->sent[lost_at]);
	for (unsigned i = 0; i < npsn; i++) {
		EXPECT_GE(f->sent[i], 1u) TH_LOG("PSN +%u never sent", i);
		EXPECT_LE(f->sent[i], 2u) TH_LOG("PSN +%u sent %u times", i, f->sent[i]);
		if (f->sent[i] >= 2) {
			EXPECT_TRUE(i >= lost_at && i < lost_at + max_resent)
				TH_LOG("PSN +%u resent, outside the window from +%u", i, lost_at);
			resent++;
		}
	}
	TH_LOG("%u PSNs resent from +%u", resent, lost_at);
}

/* Against a go-back-N responder (rxe's): the selective repair finds the
 * PSN after the NAKed one missing and goes back to it. */
static void nak_case(struct __test_metadata *_metadata, FIXTURE_DATA(rec) *self, bool dup)
{
	enum { LEN = 256 * 1024, LOST = 40 };	/* 256 packets: the WRITE is still
						 * outstanding when the late NAK comes */
	struct side *a = &self->p.s[0];

	/* The clock stands still: NAKs and the repair alone (a timer here
	 * would mean the exchange stalled, and it would not complete). */
	gbn_peer = true;
	ASSERT_EQ(0, rc_open(self));
	self->f[0].drop_psn = PSN_A + LOST;
	self->f[1].dup_nak = dup;
	write_through(_metadata, self, LEN, 5, 0);
	EXPECT_EQ(0u, qstats(a)->timeouts);
	EXPECT_EQ(1u, self->f[0].dropped);
	/* The NAK of the gap; then the peer answers the repair with an ACK
	 * of it alone, and NAKs the next PSN too if new ones reach it
	 * (the requester goes on after a repair). */
	EXPECT_GE(self->f[1].naks, 1u);
	EXPECT_LE(self->f[1].naks, 2u);
	/* the repair, then one go-back-N from the next PSN (the ACK or the
	 * second NAK, whichever came first) */
	EXPECT_EQ(2u, qstats(a)->retransmits);
	EXPECT_FALSE(a->qp->comp.repair.kept);
	EXPECT_EQ(1u, a->qp->comp.repair.misses);
	if (dup) {
		EXPECT_EQ(1u, self->f[1].replayed);
		/* both copies came */
		EXPECT_EQ(self->f[1].naks + 1, qstats(a)->nak_seq_err_rcvd);
	} else {
		EXPECT_EQ(self->f[1].naks, qstats(a)->nak_seq_err_rcvd);
	}
	/* What was in flight when the NAK came is at most the window (no
	 * loss before: the IBA limit, more than the message). */
	check_one_resend(_metadata, &self->f[0], LEN / 1024, LOST, LEN / 1024 - LOST);
}

TEST_F(rec, seq_nak_against_a_go_back_n_peer_resends_the_window_once)
{
	nak_case(_metadata, self, false);
}

/* A NAK replayed after the PSN it names was acknowledged (a duplicate or a
 * late copy on the wire) must not send the requester back again. */
TEST_F(rec, late_duplicate_nak_resends_nothing)
{
	nak_case(_metadata, self, true);
}

/* A peer that keeps what follows a gap (roxe's responder, stash.c): the
 * NAKed PSN goes again alone and nothing else does; go-back-N sent the
 * 215 PSNs behind it again. */
TEST_F(rec, seq_nak_repairs_one_psn_when_the_peer_keeps)
{
	enum { LEN = 256 * 1024, LOST = 40 };
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	unsigned twice = 0;

	ASSERT_EQ(0, rc_open(self));
	self->f[0].drop_psn = PSN_A + LOST;
	write_through(_metadata, self, LEN, 6, 0);
	EXPECT_EQ(0u, qstats(a)->timeouts);
	EXPECT_EQ(1u, self->f[0].dropped);
	EXPECT_EQ(1u, self->f[1].naks);
	EXPECT_TRUE(a->qp->comp.repair.kept);
	/* what came behind the gap before the repair was kept */
	EXPECT_GE(qstats(b)->out_of_sequence, 1u);
	EXPECT_LE(qstats(b)->out_of_sequence, LEN / 1024 - LOST - 1);
	EXPECT_EQ(0u, b->qp->resp.stashed);
	EXPECT_EQ(1u, qstats(a)->retransmits);
	for (unsigned i = 0; i < LEN / 1024; i++) {
		EXPECT_GE(self->f[0].sent[i], 1u);
		twice += self->f[0].sent[i] > 1;
	}
	EXPECT_EQ(2u, self->f[0].sent[LOST]);
	EXPECT_EQ(1u, twice);
}

/* Every 128th request frame lost, first copy or not, a peer that keeps:
 * each loss costs the lost packet and nothing more (what a stalled
 * host's timer expiry resends aside). */
TEST_F(rec, frequent_losses_cost_one_packet_each_when_the_peer_keeps)
{
	enum { LEN = 1024 * 1024, EVERY = 128 };
	struct side *a = &self->p.s[0];
	unsigned total;

	ASSERT_EQ(0, rc_open(self));
	self->f[0].drop_every = EVERY;
	total = write_through(_metadata, self, LEN, 7, 64);
	EXPECT_TRUE(a->qp->comp.repair.kept);
	EXPECT_EQ(self->steps, qstats(a)->timeouts);
	/* Each loss costs its one resend. Only a lost repair (when the
	 * interleaving makes a repair a 128th frame) waits for a probe, which
	 * sends the last PSN as well: one more copy for each such step. */
	EXPECT_GE(total, LEN / 1024 + self->f[0].dropped);
	EXPECT_LE(total, LEN / 1024 + self->f[0].dropped + self->steps);
}

/* Against a go-back-N peer the repair is tried ROXE_REPAIR_TRIES times,
 * each found wanting, then never again: later losses go back at once. */
TEST_F(rec, repair_stops_trying_a_go_back_n_peer)
{
	enum { LEN = 1024 * 1024, EVERY = 128 };
	struct side *a = &self->p.s[0], *b = &self->p.s[1];

	gbn_peer = true;
	ASSERT_EQ(0, rc_open(self));
	self->f[0].drop_every = EVERY;
	write_through(_metadata, self, LEN, 8, 64);
	EXPECT_EQ(self->steps, qstats(a)->timeouts);
	EXPECT_GE(self->f[0].dropped, 4u);
	EXPECT_FALSE(a->qp->comp.repair.kept);
	EXPECT_EQ((unsigned)ROXE_REPAIR_TRIES, a->qp->comp.repair.misses);
	EXPECT_EQ(0u, b->qp->resp.stashed);
}

/* A requester that, after a loss, sends again everything from the lost
 * PSN on whatever comes back meanwhile, as kernel rxe's go-back-N does:
 * roxe's (its selective repair resends the lost PSN alone) plus the
 * filter's copies of what followed the loss, sent once the answer to that
 * resend is in. Against a responder that keeps, the first stash run's ACK
 * covers what the requester has not sent again yet (the responder cannot
 * know), and the copies show it the requester goes back (responder.c:
 * rc_duplicate_ack); their ACKs repeat the one that ran ahead. From then
 * on no ACK names a PSN the requester has not sent in its current pass:
 * kernel rxe 6.12 takes an ACK of a message's last PSN that comes while
 * it resends the message as progress without completing the WQE, arms no
 * timer, and hangs if the one later ACK of that PSN is lost
 * (interop_faults on 6.12). Both WRITEs complete, without a timer. The
 * counts do not depend on how the engines' turns fall: the copies go only
 * after the answer to the repair. */
TEST_F(rec, a_go_back_requester_gets_no_ack_ahead_of_its_resends)
{
	enum { LEN = 8 * 1024, LOST = 2 };	/* 8 packets, the third lost */
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
	unsigned ahead[2], n0 = 0;

	ASSERT_EQ(0, fpair_open(&self->p, self->f, 0));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, PSN_A, PSN_B, 16, 7, 7));
	for (unsigned round = 0; round < 2; round++) {
		fill_pattern(a->buf, LEN, 10 + round);
		self->f[0].drop_psn = PSN_A + round * (LEN / 1024) + LOST;
		self->f[0].copy_lo = round * (LEN / 1024) + LOST + 1;
		self->f[1].acks_ahead = 0;
		ASSERT_EQ(0, write1(&self->p, round, 0, LEN));
		ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
		ASSERT_EQ(0, vc_settle(&self->p));	/* the copies too */
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(0, memcmp(a->buf, b->buf, LEN));
		EXPECT_EQ((round + 1) * COPIES, self->f[0].copied);
		EXPECT_TRUE(b->qp->resp.goes_back);
		ahead[round] = self->f[1].acks_ahead;
		if (!round)
			n0 = self->f[1].plain_acks;
		TH_LOG("round %u: %u ACKs ahead of the requester's resend", round, ahead[round]);
	}
	EXPECT_EQ(1u, ahead[0]);	/* the first run's, before the copies */
	/* The copies' ACKs repeat that one, each in a frame of its own (rxe
	 * 6.12, which took it while resending, completes the WRITE on another
	 * ACK of exactly its last PSN; coalesced, one loss would take them
	 * all): none names less. The last copy's own ACK is that PSN too. */
	TH_LOG("round 0: %u ACKs", n0);
	ASSERT_GE(n0, (unsigned)COPIES);
	for (unsigned i = 0; i < n0; i++)
		EXPECT_EQ(PSN_A + LEN / 1024 - 1, self->f[1].plain_ack_psn[i]);
	EXPECT_EQ(0u, ahead[1]);
	EXPECT_EQ(0u, qstats(a)->timeouts);
	EXPECT_EQ(0u, b->qp->resp.stashed);
}

/* SENDs run from the stash in order: each receive WQE gets its own
 * message, complete, in posting order, though the packets behind the
 * loss came before the one that filled it. */
TEST_F(rec, stashed_sends_complete_in_order)
{
	enum { MSG = 4096, N = 8, LOST = 5 };	/* MTU 1024: 4 packets a message */
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc[N];

	ASSERT_EQ(0, fpair_open(&self->p, self->f, 0));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, PSN_A, PSN_B, 16, 7, 7));
	fill_pattern(a->buf, N * MSG, 9);
	memset(b->buf, 0, N * MSG);
	for (unsigned i = 0; i < N; i++)
		ASSERT_EQ(0, post_recv1(b->qp, 100 + i, b->buf + i * MSG, MSG, b->mr->lkey));
	self->f[0].drop_psn = PSN_A + LOST;
	for (unsigned i = 0; i < N; i++)
		ASSERT_EQ(0, post_send1(a->qp, IBV_WR_SEND, i, a->buf + i * MSG, MSG, a->mr->lkey,
					0, 0, IBV_SEND_SIGNALED));
	ASSERT_EQ(N, vc_poll(&self->p, a->cq, wc, N, 0, NULL));
	for (unsigned i = 0; i < N; i++)
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
	ASSERT_EQ(N, vc_poll(&self->p, b->cq, wc, N, 0, NULL));
	for (unsigned i = 0; i < N; i++) {
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
		EXPECT_EQ(100u + i, wc[i].wr_id);
		EXPECT_EQ((uint32_t)MSG, wc[i].byte_len);
	}
	EXPECT_EQ(0, memcmp(a->buf, b->buf, N * MSG));
	EXPECT_GE(qstats(b)->out_of_sequence, 1u);
	EXPECT_EQ(2u, self->f[0].sent[LOST]);
	EXPECT_EQ(1u, self->f[0].sent[LOST + 1]);
	EXPECT_EQ(0u, qstats(a)->timeouts);
}

/* Eight messages of len bytes (pattern seed) from a to b, each completed
 * before the next (RTT samples: the clock stands still, so 1 ns each);
 * drop_off >= 0: PSN_A + drop_off is lost once on the way (f: a's filter),
 * a mid-message loss the NAK repairs. 0 or the failure. */
static int warm_up(struct pair *p, struct fport *f, uint32_t len, uint32_t seed, int drop_off)
{
	struct side *a = &p->s[0];
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };

	fill_pattern(a->buf, 16 * len, seed);
	for (uint32_t i = 0; i < 8; i++) {
		if (drop_off >= 0 && i == (uint32_t)drop_off / (len / 1024))
			f->drop_psn = PSN_A + drop_off;
		if (write1(p, i, i * len, len))
			return -EIO;
		if (vc_poll(p, a->cq, &wc, 1, 0, NULL) != 1 || wc.status != IBV_WC_SUCCESS)
			return -EIO;
	}
	if (a->dev->qp_stats[roxe_qp_num(a->qp)].timeouts)
		return -ETIME;		/* the clock never moved: it cannot */
	return __atomic_load_n(&a->qp->comp.rto.srtt, __ATOMIC_RELAXED) ? 0 : -EAGAIN;
}

/* The last packet of a message lost on a path that has lost nothing: no
 * later packet makes the responder NAK, no probe is armed (a clean QP runs
 * the configured timeout, 14: 67 ms, as rxe): the timer's go-back sends
 * the whole message again. */
TEST_F(rec, tail_loss_on_a_clean_path_goes_back_on_the_configured_timer)
{
	enum { LEN = 4096 };	/* 4 packets */
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
	uint64_t t0;

	ASSERT_EQ(0, fpair_open(&self->p, self->f, 0));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, PSN_A, PSN_B, 14, 7, 7));
	ASSERT_EQ(0, warm_up(&self->p, &self->f[0], LEN, 7, -1));
	self->f[0].drop_psn = PSN_A + 8 * 4 + 3;	/* the next message's last */
	t0 = vc_now();
	ASSERT_EQ(0, write1(&self->p, 8, 8 * LEN, LEN));
	ASSERT_EQ(0, vc_settle(&self->p));
	ASSERT_EQ(0, roxe_poll_cq(a->cq, 1, &wc));	/* stuck on the lost tail */
	/* one timer: the configured timeout from the send, no probe */
	EXPECT_FALSE(a->qp->comp.probe_due);
	EXPECT_EQ(t0 + a->qp->timeout_ns, a->qp->comp.deadline);
	/* a nanosecond short of it: nothing */
	ASSERT_EQ(0, vc_advance(&self->p, a->qp->timeout_ns - 1));
	EXPECT_EQ(0u, qstats(a)->timeouts);
	EXPECT_EQ(1u, self->f[0].sent[8 * 4]);
	ASSERT_EQ(0, roxe_poll_cq(a->cq, 1, &wc));
	/* on it: the go-back */
	ASSERT_EQ(0, vc_advance(&self->p, 1));
	EXPECT_EQ(1u, qstats(a)->timeouts);
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(a->buf, b->buf, 9 * LEN));
	EXPECT_EQ(1u, self->f[0].dropped);
	EXPECT_EQ(1u, qstats(a)->timeouts);
	EXPECT_EQ(2u, self->f[0].sent[8 * 4]);		/* a go-back, not a probe */
	EXPECT_EQ(2u, self->f[0].sent[8 * 4 + 3]);
}

/* The go-back's ACK lost too: the last PSN's first ACK is lost, the
 * requester's timer sends the message again, and the ACK of that resend is
 * lost as well. The responder sends it again ROXE_REACK_NS after the last
 * duplicate, and the requester completes on that, long before its next
 * timeout. Kernel rxe 6.12's requester, which can be left with no timer at
 * all there, depends on that repeat (responder.c: reack_arm). */
TEST_F(rec, the_go_backs_lost_ack_is_sent_again_while_the_requester_is_quiet)
{
	enum { LEN = 4096 };	/* 4 packets */
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
	uint64_t t_back;

	ASSERT_EQ(0, fpair_open(&self->p, self->f, 0));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, PSN_A, PSN_B, 14, 7, 7));
	ASSERT_EQ(0, warm_up(&self->p, &self->f[0], LEN, 7, -1));
	self->f[1].drop_psn = PSN_A + 8 * 4 + 3;	/* the next message's ACK */
	self->f[1].drop_kind = 1;
	self->f[1].drop_copies = 2;			/* and its go-back's */
	ASSERT_EQ(0, write1(&self->p, 8, 8 * LEN, LEN));
	ASSERT_EQ(0, vc_settle(&self->p));
	ASSERT_EQ(0, roxe_poll_cq(a->cq, 1, &wc));
	/* the timer's go-back: four duplicates at b, their ACK lost */
	ASSERT_EQ(0, vc_advance(&self->p, a->qp->comp.deadline - vc_now()));
	ASSERT_EQ(0, vc_settle(&self->p));
	t_back = vc_now();
	EXPECT_EQ(1u, qstats(a)->timeouts);
	EXPECT_EQ(2u, self->f[0].sent[8 * 4 + 3]);
	EXPECT_EQ(2u, self->f[1].dropped);
	ASSERT_EQ(0, roxe_poll_cq(a->cq, 1, &wc));
	/* a nanosecond short of the repeat: nothing */
	ASSERT_EQ(0, vc_advance(&self->p, ROXE_REACK_NS - 1));
	ASSERT_EQ(0, roxe_poll_cq(a->cq, 1, &wc));
	/* on it: the ACK again, and the WRITE completes on it */
	ASSERT_EQ(0, vc_advance(&self->p, 1));
	ASSERT_EQ(1, roxe_poll_cq(a->cq, 1, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(t_back + ROXE_REACK_NS, vc_now());
	EXPECT_EQ(0, memcmp(a->buf, b->buf, 9 * LEN));
	EXPECT_EQ(1u, qstats(a)->timeouts);
	EXPECT_EQ(2u, self->f[0].sent[8 * 4 + 3]);
	/* the repeats end when the requester moves on: a request in
	 * sequence, and no ACK of the old PSN follows it */
	ASSERT_EQ(0, write1(&self->p, 9, 9 * LEN, LEN));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0u, b->qp->resp.reack_left);
}

/* A host that stalls (a scheduler holding the engine, a loaded guest) for
 * longer than twice the RTT, on a path that has lost nothing: the ACK comes
 * late, and neither a probe nor a go-back may go out for it (the
 * responder would count duplicates): a clean QP runs the configured
 * timeout (20: 4.3 s), not the estimate's 10 ms floor nor a probe at two
 * SRTTs (a nanosecond here), both shorter than the stall (30 ms). */
TEST_F(rec, stalled_ack_on_a_clean_path_sends_nothing_twice)
{
	enum { LEN = 4096 };
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
	uint64_t t0;

	ASSERT_EQ(0, fpair_open(&self->p, self->f, 0));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, PSN_A, PSN_B, 20, 7, 7));
	ASSERT_EQ(0, warm_up(&self->p, &self->f[0], LEN, 3, -1));
	t0 = vc_now();
	__atomic_store_n(&self->f[0].rx_hold_until, t0 + 30 * MS, __ATOMIC_RELEASE);
	ASSERT_EQ(0, write1(&self->p, 8, 8 * LEN, LEN));
	ASSERT_EQ(0, vc_settle(&self->p));
	ASSERT_EQ(0, roxe_poll_cq(a->cq, 1, &wc));	/* the ACK is held */
	EXPECT_EQ(t0 + a->qp->timeout_ns, a->qp->comp.deadline);
	EXPECT_FALSE(a->qp->comp.probe_due);
	/* the stall ends: the ACK comes, 30 ms late */
	ASSERT_EQ(0, vc_advance(&self->p, 30 * MS));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(a->buf, b->buf, 9 * LEN));
	EXPECT_EQ(0u, qstats(a)->timeouts);
	EXPECT_EQ(0u, qstats(a)->retransmits);
	EXPECT_EQ(0u, qstats(b)->duplicates);
	for (unsigned k = 0; k < 9 * 4; k++) {
		unsigned n = self->f[0].sent[k];

		EXPECT_EQ(1u, n) TH_LOG("PSN +%u sent %u times", k, n);
	}
}

/* After a go-back (a NAK), the probe is armed: a lost tail goes again in
 * the probe (the oldest PSN unacknowledged, which the responder holds and
 * answers as a duplicate, and the last one, the lost tail), not as the
 * whole message from the RTO's go-back. */
TEST_F(rec, tail_loss_after_a_loss_is_probed)
{
	enum { LEN = 4096 };	/* 4 packets */
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
	struct roxe_rto *rto;
	uint64_t t0, pto;

	ASSERT_EQ(0, fpair_open(&self->p, self->f, 0));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, PSN_A, PSN_B, 20, 7, 7));
	/* a middle packet of the fifth lost: the NAK's go-back */
	ASSERT_EQ(0, warm_up(&self->p, &self->f[0], LEN, 9, 4 * 4 + 1));
	ASSERT_EQ(1u, self->f[0].dropped);
	ASSERT_EQ(1u, qstats(a)->nak_seq_err_rcvd);
	self->f[0].drop_psn = PSN_A + 8 * 4 + 3;	/* the next message's last */
	t0 = vc_now();
	ASSERT_EQ(0, write1(&self->p, 8, 8 * LEN, LEN));
	ASSERT_EQ(0, vc_settle(&self->p));
	ASSERT_EQ(0, roxe_poll_cq(a->cq, 1, &wc));	/* stuck on the lost tail */
	/* the tail probe is armed, before the RTO (a lossy QP's: the
	 * estimate's, far below the configured 4.3 s) */
	rto = &a->qp->comp.rto;
	ASSERT_TRUE(a->qp->comp.probe_due);
	pto = a->qp->comp.deadline - t0;
	EXPECT_EQ(roxe_pto_ns(rto, roxe_rto_timer_ns(rto, a->qp->timeout_ns, t0), t0), pto);
	EXPECT_LT(pto, roxe_rto_timer_ns(rto, a->qp->timeout_ns, t0));
	ASSERT_EQ(0, vc_advance(&self->p, pto - 1));
	EXPECT_EQ(0u, qstats(a)->timeouts);
	EXPECT_EQ(1u, self->f[0].sent[8 * 4 + 3]);
	ASSERT_EQ(0, vc_advance(&self->p, 1));	/* the probe */
	EXPECT_EQ(1u, qstats(a)->timeouts);
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(1u, qstats(a)->timeouts);
	EXPECT_EQ(0, memcmp(a->buf, b->buf, 9 * LEN));
	EXPECT_EQ(2u, self->f[0].dropped);
	/* no go-back: the middle of the message went once */
	EXPECT_EQ(1u, self->f[0].sent[8 * 4 + 1]) TH_LOG("the message went again: an RTO, no probe");
	EXPECT_EQ(1u, self->f[0].sent[8 * 4 + 2]);
	EXPECT_EQ(2u, self->f[0].sent[8 * 4 + 3]);
}

/* The nth copy of PSN + off in f's record: its index in the order sent,
 * or NPSN if fewer went. */
static unsigned nth_sent(const struct fport *f, uint32_t off, unsigned nth)
{
	for (unsigned i = 0; i < f->norder; i++)
		if (f->order[i] == off && --nth == 0)
			return i;
	return NPSN;
}

/* A loss whose resend is lost too: the responder NAKed the gap once and
 * drops what follows in silence until the missing PSN comes. A probe of
 * the last PSN sent would find nothing (and leave the QP to the RTO's
 * go-back from the gap); the probe sends the missing one first, then the
 * last (a NAK for what still lacks). Measured before: the last PSN's third
 * copy went first, the gap's only with the RTO. */
TEST_F(rec, lost_resend_after_a_nak_is_probed)
{
	enum { LEN = 4096, GAP = 8 * 4 + 1, LAST = 8 * 4 + 3 };
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
	unsigned gap3, last3;
	uint64_t d;

	gbn_peer = true;	/* rxe's responder: silent after its NAK */
	ASSERT_EQ(0, fpair_open(&self->p, self->f, 0));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, PSN_A, PSN_B, 20, 7, 7));
	ASSERT_EQ(0, warm_up(&self->p, &self->f[0], LEN, 11, 4 * 4 + 1));
	self->f[0].drop_psn = PSN_A + GAP;
	self->f[0].drop_copies = 2;		/* the first and the NAK's resend */
	ASSERT_EQ(0, write1(&self->p, 8, 8 * LEN, LEN));
	ASSERT_EQ(0, vc_settle(&self->p));
	ASSERT_EQ(0, roxe_poll_cq(a->cq, 1, &wc));	/* the responder is silent */
	ASSERT_TRUE(a->qp->comp.probe_due);
	d = a->qp->comp.deadline - vc_now();
	EXPECT_LT(d, roxe_rto_timer_ns(&a->qp->comp.rto, a->qp->timeout_ns, vc_now()));
	ASSERT_EQ(0, vc_advance(&self->p, d));	/* the probe, and no more timers */
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(1u, qstats(a)->timeouts);
	EXPECT_EQ(0, memcmp(a->buf, b->buf, 9 * LEN));
	EXPECT_EQ(3u, self->f[0].dropped);	/* the warm-up's and the two */
	EXPECT_EQ(3u, qstats(a)->nak_seq_err_rcvd);	/* the warm-up's, the gap's, the probe's */
	gap3 = nth_sent(&self->f[0], GAP, 3);
	last3 = nth_sent(&self->f[0], LAST, 3);
	ASSERT_NE(NPSN, gap3) TH_LOG("the gap went %u times", self->f[0].sent[GAP]);
	EXPECT_LT(gap3, last3) TH_LOG("the last PSN probed first: the gap waited for the RTO");
}

/*
 * A repair lost on a full window (recovery.h: the stall probe). The
 * requester's smoothed RTT is tens of milliseconds (three exchanges whose
 * answers a's port held 20 ms), its min RTT microseconds. A WRITE of 640
 * PSNs loses its first packet and then the repair: the responder keeps the
 * rest and says nothing more, the window (512) fills, and nothing comes
 * back. The tail probe would wait 2 SRTTs from the NAK; the stall probe
 * sends the gap within a few min RTTs of the stall. Measured before it:
 * the third copy went 40 ms after the window's last packet.
 */
TEST_F(rec, lost_repair_on_a_full_window_is_probed_at_once)
{
	enum { LEN = 640 * 1024, GAP = 16 };	/* the WRITE's 17th packet */
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct roxe_rto *rto;
	uint32_t off = 8 * 4096, gap;
	unsigned third, before;
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
	uint64_t d;

	ASSERT_EQ(0, fpair_open(&self->p, self->f, 0));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, PSN_A, PSN_B, 20, 7, 7));
	ASSERT_EQ(0, warm_up(&self->p, &self->f[0], 4096, 5, -1));	/* 32 PSNs, min RTT */
	rto = &a->qp->comp.rto;
	for (uint32_t i = 0; i < 3; i++, off += 1024) {	/* SRTT: held answers */
		__atomic_store_n(&self->f[0].rx_hold_until, vc_now() + 20 * MS, __ATOMIC_RELEASE);
		ASSERT_EQ(0, write1(&self->p, 10 + i, off, 1024));
		ASSERT_EQ(0, vc_settle(&self->p));
		ASSERT_EQ(0, vc_advance(&self->p, 20 * MS));
		ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	}
	ASSERT_EQ(0u, qstats(a)->timeouts);
	/* a loss (NAK, repair, verdict: kept) arms the probes */
	self->f[0].drop_psn = PSN_A + 32 + 3 + 1;
	ASSERT_EQ(0, write1(&self->p, 13, off, 4096));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_TRUE(__atomic_load_n(&a->qp->comp.repair.kept, __ATOMIC_RELAXED));
	off += 4096;
	gap = 32 + 3 + 4 + GAP;
	/* the timer from the NAK on: the RTO's, or a tail probe's before it */
	ASSERT_GE(roxe_rto_timer_ns(rto, a->qp->timeout_ns, roxe_now_ns()), 20 * MS);
	ASSERT_TRUE(!roxe_pto_ns(rto, UINT64_MAX, roxe_now_ns()) ||
		    roxe_pto_ns(rto, UINT64_MAX, roxe_now_ns()) >= 20 * MS)
		TH_LOG("SRTT %llu us: the tail probe would come too soon to tell",
		       (unsigned long long)rto->srtt / 1000);
	self->f[0].drop_psn = PSN_A + gap;
	self->f[0].drop_copies = 2;		/* the first and the repair */
	fill_pattern(a->buf + off, LEN, 17);
	ASSERT_EQ(0, write1(&self->p, 14, off, LEN));
	ASSERT_EQ(0, vc_settle(&self->p));
	ASSERT_EQ(0, roxe_poll_cq(a->cq, 1, &wc));	/* the window is full, nothing comes */
	/* the stall probe, long before the tail probe's 2 SRTTs (40 ms) */
	ASSERT_TRUE(a->qp->comp.probe_due);
	d = a->qp->comp.deadline - vc_now();
	EXPECT_LT(d, roxe_pto_ns(rto, UINT64_MAX, vc_now()));
	EXPECT_LT(d, 10 * MS);
	ASSERT_EQ(0, vc_advance(&self->p, d));
	EXPECT_EQ(1u, qstats(a)->timeouts);
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(a->buf + off, b->buf + off, LEN));
	EXPECT_EQ(3u, self->f[0].dropped);
	EXPECT_EQ(1u, qstats(a)->timeouts);
	third = nth_sent(&self->f[0], gap, 3);
	ASSERT_NE(NPSN, third) TH_LOG("the gap went %u times", self->f[0].sent[gap]);
	ASSERT_GT(third, 0u);
	before = third - 1;
	/* the gap's third copy went on the stall probe's timer, after the
	 * window's last packet: exactly that much later */
	EXPECT_EQ(d, self->f[0].order_ns[third] - self->f[0].order_ns[before])
		TH_LOG("the gap's third copy %llu us after the packet before it",
		       (unsigned long long)(self->f[0].order_ns[third] - self->f[0].order_ns[before]) / 1000);
}

/*
 * A repair is one packet: it goes even when the turn has spent its
 * transmit budget (ROXE_TURN_TX_BUDGET, which keeps a turn of many QPs from
 * pouring a window into the peer's ring). Refused, the NAK that asked for
 * it fell back on go-back-N, which resends the whole window: measured at
 * 0.1 % loss through faultwire, 400 go-backs in 3 s after an ACK's new
 * packets had spent the turn, 50,000 to 120,000 frames dropped at the
 * receiver's ring, 0.87 of the clean goodput.
 */
TEST_F(rec, a_repair_goes_when_the_turn_budget_is_spent)
{
	enum { LEN = 4096 };
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };

	ASSERT_EQ(0, fpair_open(&self->p, self->f, 1));	/* a polled: no turn but ours */
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, PSN_A, PSN_B, 16, 7, 7));
	fill_pattern(a->buf, LEN, 21);
	__atomic_store_n(&self->f[0].rx_hold_until, UINT64_MAX, __ATOMIC_RELEASE);
	ASSERT_EQ(0, write1(&self->p, 1, 0, LEN));
	ASSERT_EQ(0, vc_settle(&self->p));		/* the turns send all 4 */
	ASSERT_EQ(0, roxe_poll_cq(a->cq, 1, &wc));
	for (unsigned i = 0; i < LEN / 1024; i++)
		ASSERT_EQ(1u, self->f[0].sent[i]);
	a->qp->eng->tx_left = 0;			/* as after a burst of new packets */
	EXPECT_TRUE(roxe_requester_repair(a->qp, PSN_A + 1));
	roxe_engine_tx_flush(a->qp->eng);
	EXPECT_EQ(2u, self->f[0].sent[1]);
	EXPECT_EQ(1u, self->f[0].sent[2]);		/* it alone */
	__atomic_store_n(&self->f[0].rx_hold_until, 0, __ATOMIC_RELEASE);
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(a->buf, b->buf, LEN));
	EXPECT_EQ(0u, qstats(a)->timeouts);
}

/*
 * A READ kept past a gap and run once the gap is filled is answered by its
 * READ response alone: a plain ACK bearing the READ's PSN is no IBA answer
 * to a READ. Kernel rxe, whose READ response was lost on the way, took such
 * an ACK for the READ's and failed the QP (interop_faults, read_bw_hsrv:
 * "Failed status 5"). Before: the drain acknowledged whatever it ran.
 */
TEST_F(rec, a_drained_read_gets_no_plain_ack)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc[2];

	ASSERT_EQ(0, rc_open(self));
	fill_pattern(a->buf, 1024, 23);
	fill_pattern(b->buf + 8192, 1024, 29);
	self->f[0].drop_psn = PSN_A;			/* the WRITE: the READ comes first */
	ASSERT_EQ(0, write1(&self->p, 1, 0, 1024));
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_READ, 2, a->buf + 4096, 1024, a->mr->lkey,
				(uintptr_t)b->buf + 8192, b->mr->rkey, IBV_SEND_SIGNALED));
	ASSERT_EQ(2, vc_poll(&self->p, a->cq, wc, 2, 0, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
	EXPECT_EQ(IBV_WC_SUCCESS, wc[1].status);
	EXPECT_EQ(0u, qstats(a)->timeouts);
	EXPECT_EQ(0, memcmp(a->buf, b->buf, 1024));
	EXPECT_EQ(0, memcmp(a->buf + 4096, b->buf + 8192, 1024));
	EXPECT_EQ(1u, self->f[0].dropped);
	EXPECT_GE(qstats(b)->out_of_sequence, 1u);	/* the READ was kept */
	for (unsigned i = 0; i < self->f[1].plain_acks; i++)
		EXPECT_NE((uint32_t)PSN_A + 1, self->f[1].plain_ack_psn[i])
			TH_LOG("a plain ACK of the READ's PSN");
}

/* Karn's rule: the only ACK of a message whose one packet was resent
 * answers either copy: no RTT sample. The next message gives one: the
 * time the test held its ACK. */
TEST_F(rec, karn_no_sample_from_a_resent_psn)
{
	struct side *a = &self->p.s[0];
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
	uint64_t t0;

	ASSERT_EQ(0, fpair_open(&self->p, self->f, 0));
	/* timeout 12 (16.8 ms): the first expiry, before any sample */
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, PSN_A, PSN_B, 12, 7, 7));
	self->f[0].drop_psn = PSN_A;
	t0 = vc_now();
	ASSERT_EQ(0, write1(&self->p, 1, 0, 512));
	ASSERT_EQ(0, vc_settle(&self->p));
	ASSERT_EQ(0, roxe_poll_cq(a->cq, 1, &wc));
	EXPECT_EQ(t0 + a->qp->timeout_ns, a->qp->comp.deadline);
	ASSERT_EQ(0, vc_advance(&self->p, a->qp->timeout_ns));	/* the go-back */
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(1u, qstats(a)->timeouts);
	EXPECT_EQ(2u, self->f[0].sent[0]);
	EXPECT_EQ(0u, __atomic_load_n(&a->qp->comp.rto.srtt, __ATOMIC_RELAXED));
	/* the next message's ACK, held 5 ms: a sample of 5 ms */
	__atomic_store_n(&self->f[0].rx_hold_until, vc_now() + 5 * MS, __ATOMIC_RELEASE);
	ASSERT_EQ(0, write1(&self->p, 2, 512, 512));
	ASSERT_EQ(0, vc_settle(&self->p));
	ASSERT_EQ(0, vc_advance(&self->p, 5 * MS));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(1u, qstats(a)->timeouts);
	EXPECT_EQ(5 * MS, __atomic_load_n(&a->qp->comp.rto.srtt, __ATOMIC_RELAXED));
}

/* A READ of 16 responses loses its sixth: the requester asks again for
 * the rest only, with a new READ request at that response's PSN. */
TEST_F(rec, read_restarts_from_the_first_missing_response)
{
	enum { LEN = 16 * 1024, LOST = 5 };
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	const struct roxe_frame_hdr *r;
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };

	ASSERT_EQ(0, fpair_open(&self->p, self->f, 0));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, PSN_A, PSN_B, 16, 7, 7));
	fill_pattern(b->buf, LEN, 9);
	self->f[1].drop_psn = PSN_A + LOST;
	self->f[1].drop_kind = 1;
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_READ, 1, a->buf, LEN, a->mr->lkey,
				(uintptr_t)b->buf, b->mr->rkey, IBV_SEND_SIGNALED));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(a->buf, b->buf, LEN));
	EXPECT_EQ(1u, self->f[1].dropped);
	/* the gap asks again once, and only once */
	EXPECT_EQ(0u, qstats(a)->timeouts);
	ASSERT_EQ(2u, self->f[0].nreads);
	r = &self->f[0].reads[0];
	EXPECT_EQ((uint32_t)PSN_A, r->psn);
	EXPECT_EQ((uint64_t)(uintptr_t)b->buf, r->va);
	EXPECT_EQ((uint32_t)LEN, r->dma_len);
	r = &self->f[0].reads[1];
	EXPECT_EQ((uint32_t)PSN_A + LOST, r->psn);
	EXPECT_EQ((uint64_t)(uintptr_t)b->buf + LOST * 1024, r->va);
	EXPECT_EQ((uint32_t)LEN - LOST * 1024, r->dma_len);
	EXPECT_EQ(b->mr->rkey, r->rkey);
}

TEST_HARNESS_MAIN
