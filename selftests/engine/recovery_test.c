// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loss recovery (user/transport/recovery.h, requester.c, completer.c).
 *
 * First the arithmetic: the RFC 6298 estimator (SRTT/RTTVAR, floor, backoff,
 * cap), the tail probe's timeout, and the send window (slow start, additive
 * increase, one halving per loss event, limits). Then the engine, on a loop wire with a filtering
 * port at each end that drops chosen frames, counts what the requester
 * sends, and can replay a NAK late:
 *   - the window caps the PSNs in flight before any ACK;
 *   - a sequence NAK resends once, from the NAKed PSN, the window only;
 *   - a late duplicate of that NAK resends nothing;
 *   - a lost tail goes again on the adaptive timer (the tail probe), long
 *     before the configured local ACK timeout;
 *   - Karn: an ACK of a resent PSN gives no RTT sample;
 *   - a READ whose response is lost restarts from that response (a new
 *     READ request for the rest: its PSN, address and length).
 */
#include <arpa/inet.h>
#include "kselftest_harness.h"
#include "pair.h"
#include "roxe/parse.h"
#include "roxe/psn.h"
#include "transport/transport.h"

static void nap_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&t, NULL);
}

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

	roxe_rto_init(&r);
	EXPECT_EQ(0u, roxe_pto_ns(&r, roxe_rto_ns(&r, 268 * MS)));	/* no sample: none */
	roxe_rto_sample(&r, 100 * US);
	EXPECT_EQ(ROXE_PTO_MIN_NS, roxe_pto_ns(&r, roxe_rto_ns(&r, 268 * MS)));
	roxe_rto_init(&r);
	roxe_rto_sample(&r, 3 * MS);			/* RTO: the 10 ms floor */
	EXPECT_EQ(6 * MS, roxe_pto_ns(&r, roxe_rto_ns(&r, 268 * MS)));	/* two SRTTs */
	roxe_rto_sample(&r, 3 * MS);
	EXPECT_EQ(0u, roxe_pto_ns(&r, 5 * MS));	/* never at or past the RTO */
}

/* --- the window -------------------------------------------------------------- */
TEST(cwnd_slow_start_then_additive_increase)
{
	struct roxe_cwnd w;

	roxe_cwnd_init(&w, ROXE_MAX_INFLIGHT);
	EXPECT_EQ((uint32_t)ROXE_CWND_INIT, w.cwnd);
	roxe_cwnd_ack(&w, 8, 8);
	EXPECT_EQ((uint32_t)ROXE_CWND_INIT + 8, w.cwnd);	/* slow start: + acked */
	/* a loss: ssthresh half the flight */
	EXPECT_TRUE(roxe_cwnd_loss(&w, 30, 40, 48));
	EXPECT_EQ(20u, w.ssthresh);
	EXPECT_EQ(20u, w.cwnd);
	/* congestion avoidance: one PSN per window acknowledged */
	roxe_cwnd_ack(&w, 19, 67);
	EXPECT_EQ(20u, w.cwnd);
	roxe_cwnd_ack(&w, 1, 68);
	EXPECT_EQ(21u, w.cwnd);
	roxe_cwnd_ack(&w, 42, 110);		/* 21 of them make +1, 21 carry */
	EXPECT_EQ(22u, w.cwnd);
	EXPECT_EQ(21u, w.acc);
	roxe_cwnd_ack(&w, 1, 111);
	EXPECT_EQ(23u, w.cwnd);
}

TEST(cwnd_halves_once_per_loss_event)
{
	struct roxe_cwnd w;

	roxe_cwnd_init(&w, ROXE_MAX_INFLIGHT);
	roxe_cwnd_ack(&w, 100, 100);
	EXPECT_EQ((uint32_t)ROXE_CWND_INIT + 100, w.cwnd);
	/* a loss at 100 with 116 in flight, 216 next: the event runs to 216 */
	EXPECT_TRUE(roxe_cwnd_loss(&w, 100, 116, 216));
	EXPECT_EQ(58u, w.cwnd);
	/* more losses below 216: the same event, no second halving */
	EXPECT_FALSE(roxe_cwnd_loss(&w, 100, 116, 216));
	EXPECT_FALSE(roxe_cwnd_loss(&w, 150, 60, 220));
	EXPECT_EQ(58u, w.cwnd);
	/* acknowledged past 216: the next loss is a new event */
	roxe_cwnd_ack(&w, 116, 216);
	EXPECT_FALSE(w.in_recovery);
	EXPECT_TRUE(roxe_cwnd_loss(&w, 230, 50, 280));
	EXPECT_EQ(25u, w.cwnd);
	/* recovery points across the 24-bit PSN wrap */
	roxe_cwnd_init(&w, ROXE_MAX_INFLIGHT);
	EXPECT_TRUE(roxe_cwnd_loss(&w, 0xfffff0, 16, 0x000008));
	EXPECT_FALSE(roxe_cwnd_loss(&w, 0x000002, 6, 0x00000a));
	roxe_cwnd_ack(&w, 8, 0x000008);
	EXPECT_TRUE(roxe_cwnd_loss(&w, 0x000009, 4, 0x00000c));
}

TEST(cwnd_never_beyond_its_limits)
{
	struct roxe_cwnd w;

	roxe_cwnd_init(&w, ROXE_MAX_INFLIGHT);
	for (uint32_t i = 0, una = 0; i < 10000; i++, una += 300)
		roxe_cwnd_ack(&w, 300, una & ROXE_PSN_MASK);
	EXPECT_EQ((uint32_t)ROXE_MAX_INFLIGHT, w.cwnd);
	roxe_cwnd_ack(&w, 0xffffffffu, 1);		/* absurd counts are bounded */
	EXPECT_EQ((uint32_t)ROXE_MAX_INFLIGHT, w.cwnd);
	/* a NAK with little in flight: never below the initial window */
	EXPECT_TRUE(roxe_cwnd_loss(&w, 10, 1, 11));
	EXPECT_EQ((uint32_t)ROXE_CWND_INIT, w.cwnd);
	EXPECT_EQ((uint32_t)ROXE_CWND_INIT, w.ssthresh);
	/* a timeout halves; a second one without progress: the minimum,
	 * ssthresh kept */
	roxe_cwnd_init(&w, ROXE_MAX_INFLIGHT);
	roxe_cwnd_ack(&w, 48, 48);
	roxe_cwnd_timeout(&w, 64, 112, false);
	EXPECT_EQ(32u, w.cwnd);
	EXPECT_EQ(32u, w.ssthresh);
	roxe_cwnd_timeout(&w, 2, 114, true);
	EXPECT_EQ((uint32_t)ROXE_CWND_MIN, w.cwnd);
	EXPECT_EQ(32u, w.ssthresh);
	/* a first timeout with little in flight: not below the initial window */
	roxe_cwnd_init(&w, ROXE_MAX_INFLIGHT);
	roxe_cwnd_timeout(&w, 2, 10, false);
	EXPECT_EQ((uint32_t)ROXE_CWND_INIT, w.cwnd);
	/* a small IBA limit caps the start too */
	roxe_cwnd_init(&w, 4);
	EXPECT_EQ(4u, w.cwnd);
	roxe_cwnd_ack(&w, 100, 100);
	EXPECT_EQ(4u, w.cwnd);
	EXPECT_TRUE(roxe_cwnd_loss(&w, 100, 4, 104));
	EXPECT_EQ(4u, w.cwnd);
}

/* --- the engine, behind filtering ports -------------------------------------------- */
#define NPSN	1024	/* PSNs a filter counts, from its base */

/* A port in front of a loop port: what the engine sends passes through
 * filter(), on the engine's thread; the test reads the record once the
 * exchange is over (a completion polled after the last frame). */
struct fport {
	struct roxe_port	port;		/* first: the engine's view */
	struct roxe_port	*in;
	uint32_t		base;		/* PSN counted as 0 */
	int64_t			drop_psn;	/* drop its first copy; -1: none */
	int			drop_kind;	/* 0: requests, 1: responses */
	bool			dup_nak;	/* replay the first NAK after the next ACK */
	/* record */
	unsigned		sent[NPSN];	/* requests by PSN - base */
	unsigned		dropped, naks, replayed;
	uint8_t			nak[256];
	uint32_t		nak_len, nak_psn;
	unsigned		nreads;
	struct roxe_frame_hdr	reads[8];	/* READ requests seen */
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
	if (h.opcode == ROXE_OP_RC_RDMA_READ_REQUEST && fp->nreads < 8)
		fp->reads[fp->nreads++] = h;
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
		fp->drop_psn = -1;
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

static unsigned f_rx(struct roxe_port *p, struct roxe_buf *b, unsigned n)
{
	return roxe_port_rx(fp_of(p)->in, b, n);
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
};

/* As pair_open_polled, each device on a filtering port. */
static int fpair_open(struct pair *p, struct fport *f, unsigned polled)
{
	memset(p, 0, sizeof(*p));
	p->buf_len = BUF;
	p->wire = roxe_loop_wire_new(4096 + 256, 1024);
	if (!p->wire)
		return -ENOMEM;
	for (int i = 0; i < 2; i++) {
		struct roxe_port *in = roxe_loop_port(p->wire, i);
		struct roxe_port *port = &f[i].port;
		struct roxe_device_attr da = {
			.backend = ROXE_BACKEND_PORTS,
			.engines = 1,
			.mtu = 1024,
			.polled = polled & (1u << i),
			.ports = &port,
		};
		struct side *s = &p->s[i];
		int err;

		memset(&f[i], 0, sizeof(f[i]));
		f[i].port = *in;
		f[i].port.ops = &fops;
		f[i].in = in;
		f[i].drop_psn = -1;
		f[i].base = i ? PSN_B : PSN_A;
		roxe_gid_from_v4(da.gid, htonl(0x0a630001 + i));
		da.mac[0] = 0x02;
		da.mac[5] = (uint8_t)(1 + i);
		err = roxe_device_open(&da, &s->dev);
		if (!err)
			err = roxe_alloc_pd(s->dev, &s->pd);
		if (!err)
			err = roxe_create_cq(s->dev, 4096, NULL, NULL, &s->cq);
		if (err)
			return err;
		s->buf = aligned_alloc(4096, BUF);
		if (!s->buf)
			return -ENOMEM;
		memset(s->buf, 0, BUF);
		err = roxe_reg_mr(s->pd, s->buf, BUF,
				  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_READ, &s->mr);
		if (err)
			return err;
	}
	return 0;
}

FIXTURE_SETUP(rec)
{
	memset(&self->p, 0, sizeof(self->p));
}

FIXTURE_TEARDOWN(rec)
{
	pair_close(&self->p);
	EXPECT_EQ(0, leak_check());
}

static struct roxe_qp_stats *qstats(struct side *s)
{
	return &s->dev->qp_stats[roxe_qp_num(s->qp)];
}

static uint64_t a_tx_frames(struct pair *p)
{
	return __atomic_load_n(&roxe_loop_port(p->wire, 0)->stats.tx_frames, __ATOMIC_ACQUIRE);
}

static int write1(struct pair *p, uint64_t id, uint32_t off, uint32_t len)
{
	return post_send1(p->s[0].qp, IBV_WR_RDMA_WRITE, id, p->s[0].buf + off, len,
			  p->s[0].mr->lkey, (uintptr_t)p->s[1].buf + off, p->s[1].mr->rkey,
			  IBV_SEND_SIGNALED);
}

/* Before any ACK, the requester sends the initial window and no more
 * (go-back-N would resend everything beyond it on a loss). */
TEST_F(rec, window_caps_what_is_in_flight)
{
	enum { LEN = 256 * 1024 };	/* 256 packets */
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc;
	uint64_t base;
	int got = 0;

	ASSERT_EQ(0, fpair_open(&self->p, self->f, 1u << 1));	/* b polled */
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, PSN_A, PSN_B, 16, 7, 7));
	ASSERT_EQ(0, roxe_poll_cq(b->cq, 1, &wc));	/* b takes in its QP's state */
	fill_pattern(a->buf, LEN, 3);
	base = a_tx_frames(&self->p);
	ASSERT_EQ(0, write1(&self->p, 1, 0, LEN));
	for (int ms = 0; a_tx_frames(&self->p) - base < ROXE_CWND_INIT; ms++) {
		ASSERT_LT(ms, 5000);
		nap_ms(1);
	}
	nap_ms(50);	/* time to send more, were it allowed */
	EXPECT_EQ((uint64_t)ROXE_CWND_INIT, a_tx_frames(&self->p) - base);
	/* b answers: the window opens, the WRITE completes intact */
	for (int ms = 0; !got; ms++) {
		ASSERT_LT(ms, 10000);
		ASSERT_GE(roxe_poll_cq(b->cq, 1, &wc), 0);
		got = roxe_poll_cq(a->cq, 1, &wc);
		ASSERT_GE(got, 0);
		if (!got)
			nap_ms(1);
	}
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(a->buf, b->buf, LEN));
	EXPECT_EQ(0u, qstats(a)->retransmits);
}

/* Checks common to the NAK tests: every PSN of the message went once or
 * twice, lost_at exactly twice, and the twice-sent ones are one run from
 * lost_at: the window resent once from the NAKed PSN. */
static void check_one_resend(struct __test_metadata *_metadata, const struct fport *f,
			     unsigned npsn, unsigned lost_at, unsigned max_resent,
			     unsigned timeouts)
{
	unsigned resent = 0;

	/* A loaded host may stall an engine past the retransmission timer:
	 * each expiry may send PSNs once more (counted, and allowed for). */
	EXPECT_GE(f->sent[lost_at], 2u);
	EXPECT_LE(f->sent[lost_at], 2u + timeouts);
	for (unsigned i = 0; i < npsn; i++) {
		EXPECT_GE(f->sent[i], 1u) TH_LOG("PSN +%u never sent", i);
		EXPECT_LE(f->sent[i], 2u + timeouts) TH_LOG("PSN +%u sent %u times", i, f->sent[i]);
		if (f->sent[i] >= 2 && !timeouts) {
			EXPECT_TRUE(i >= lost_at && i < lost_at + max_resent)
				TH_LOG("PSN +%u resent, outside the window from +%u", i, lost_at);
			resent++;
		}
	}
	TH_LOG("%u PSNs resent from +%u", resent, lost_at);
}

static void nak_case(struct __test_metadata *_metadata, FIXTURE_DATA(rec) *self, bool dup)
{
	enum { LEN = 256 * 1024, LOST = 40 };	/* 256 packets: the WRITE is still
						 * outstanding when the late NAK comes */
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc;

	ASSERT_EQ(0, fpair_open(&self->p, self->f, 0));
	/* timeout 16 (268 ms): only a NAK brings a resend in time */
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, PSN_A, PSN_B, 16, 7, 7));
	self->f[0].drop_psn = PSN_A + LOST;
	self->f[1].dup_nak = dup;
	fill_pattern(a->buf, LEN, 5);
	ASSERT_EQ(0, write1(&self->p, 1, 0, LEN));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 10000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(a->buf, b->buf, LEN));
	EXPECT_EQ(1u, self->f[0].dropped);
	EXPECT_EQ(1u, self->f[1].naks);
	/* one go-back-N for the NAK, and one per expiry of a stalled host */
	EXPECT_EQ(1u + qstats(a)->timeouts, qstats(a)->retransmits);
	if (qstats(a)->timeouts)
		TH_LOG("%llu timer expiries (a loaded host)",
		       (unsigned long long)qstats(a)->timeouts);
	if (dup) {
		EXPECT_EQ(1u, self->f[1].replayed);
		EXPECT_EQ(2u, qstats(a)->nak_seq_err_rcvd);	/* both came */
	} else {
		EXPECT_EQ(1u, qstats(a)->nak_seq_err_rcvd);
	}
	/* What was in flight when the NAK came is at most the window, which
	 * grew from ROXE_CWND_INIT by the 40 PSNs acknowledged before. */
	check_one_resend(_metadata, &self->f[0], LEN / 1024, LOST,
			 ROXE_CWND_INIT + LOST, (unsigned)qstats(a)->timeouts);
}

TEST_F(rec, seq_nak_resends_the_window_once)
{
	nak_case(_metadata, self, false);
}

/* A NAK replayed after the PSN it names was acknowledged (a duplicate or a
 * late copy on the wire) must not send the requester back again. */
TEST_F(rec, late_duplicate_nak_resends_nothing)
{
	nak_case(_metadata, self, true);
}

/* The last packet of a message lost: no later packet makes the responder
 * NAK, only the timer brings it back, on the RTT estimate (milliseconds),
 * not on the configured timeout (20: 4.3 s). */
TEST_F(rec, tail_loss_resent_on_the_adaptive_timer)
{
	enum { LEN = 4096 };	/* 4 packets */
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc;

	ASSERT_EQ(0, fpair_open(&self->p, self->f, 0));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, PSN_A, PSN_B, 20, 7, 7));
	fill_pattern(a->buf, 16 * LEN, 7);
	for (int i = 0; i < 8; i++) {	/* RTT samples */
		ASSERT_EQ(0, write1(&self->p, (uint64_t)i, (uint32_t)i * LEN, LEN));
		ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	}
	ASSERT_NE(0u, __atomic_load_n(&a->qp->comp.rto.srtt, __ATOMIC_RELAXED));
	self->f[0].drop_psn = PSN_A + 8 * 4 + 3;	/* the next message's last */
	ASSERT_EQ(0, write1(&self->p, 8, 8 * LEN, LEN));
	/* a quarter of the configured timeout: far more than the estimate */
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 1000)) TH_LOG("not resent before 1 s");
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(a->buf, b->buf, 9 * LEN));
	EXPECT_EQ(1u, self->f[0].dropped);
	EXPECT_GE(qstats(a)->timeouts, 1u);
	EXPECT_GE(self->f[0].sent[8 * 4 + 3], 2u);
}

/* Karn's rule: the only ACK of a message whose one packet was resent
 * answers either copy: no RTT sample. The next message gives one. */
TEST_F(rec, karn_no_sample_from_a_resent_psn)
{
	struct side *a = &self->p.s[0];
	struct ibv_wc wc;

	ASSERT_EQ(0, fpair_open(&self->p, self->f, 0));
	/* timeout 12 (16.8 ms): the first expiry, before any sample */
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, PSN_A, PSN_B, 12, 7, 7));
	self->f[0].drop_psn = PSN_A;
	ASSERT_EQ(0, write1(&self->p, 1, 0, 512));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_GE(qstats(a)->timeouts, 1u);
	EXPECT_EQ(0u, __atomic_load_n(&a->qp->comp.rto.srtt, __ATOMIC_RELAXED));
	ASSERT_EQ(0, write1(&self->p, 2, 512, 512));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_NE(0u, __atomic_load_n(&a->qp->comp.rto.srtt, __ATOMIC_RELAXED));
}

/* A READ of 16 responses loses its sixth: the requester asks again for
 * the rest only, with a new READ request at that response's PSN. */
TEST_F(rec, read_restarts_from_the_first_missing_response)
{
	enum { LEN = 16 * 1024, LOST = 5 };
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	const struct roxe_frame_hdr *r;
	struct ibv_wc wc;

	ASSERT_EQ(0, fpair_open(&self->p, self->f, 0));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, PSN_A, PSN_B, 16, 7, 7));
	fill_pattern(b->buf, LEN, 9);
	self->f[1].drop_psn = PSN_A + LOST;
	self->f[1].drop_kind = 1;
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_READ, 1, a->buf, LEN, a->mr->lkey,
				(uintptr_t)b->buf, b->mr->rkey, IBV_SEND_SIGNALED));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 10000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(a->buf, b->buf, LEN));
	EXPECT_EQ(1u, self->f[1].dropped);
	/* the gap asks again once; a stalled host's timer may add more */
	ASSERT_GE(self->f[0].nreads, 2u);
	EXPECT_LE(self->f[0].nreads, 2u + qstats(a)->timeouts);
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
