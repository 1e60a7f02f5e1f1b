// SPDX-License-Identifier: GPL-2.0-only
/*
 * The engine's PSN credit (credit.c): the PSNs all its RC QPs have
 * outstanding (READ responses asked for, packets not acknowledged) stay
 * within half the port's receive ring. Two polled devices on a 64-frame
 * wire (a budget of 32), the test running each turn: many QPs' READs and
 * WRITEs wait their turn and complete without a frame lost to a full
 * ring; the count agrees with the QPs after every turn (through losses,
 * go-backs and READ restarts); a READ larger than the per-QP cap goes in
 * parts, and a QP that never hears back cannot keep the credit;
 * flush, reset and destroy give the credit back, and the QPs that waited
 * go on.
 *
 * On the virtual clock, run()'s turns TURN_NS apart: a timer or a credit
 * lapse comes after so many turns, never because the host was slow
 * between two of them.
 */
#include <arpa/inet.h>
#include "kselftest_harness.h"
#include "pair.h"
#include "transport/transport.h"
#include "transport/credit.h"
#include "transport/engine.h"
#include "vclock.h"

#define DEPTH	64		/* the wire's ring each way: a budget of 32 */
#define BUF	(1u << 20)
#define NQ	256
#define STEPS	2000000		/* turns, far more than any run takes */
/* Virtual time a turn: a plain ACK held in one turn leaves in the next
 * (sched.c holds one 10 us); a 67 ms timer is 6700 turns away. */
#define TURN_NS	10000

FIXTURE(credit) {
	struct pair p;
	struct roxe_qp *qa[NQ], *qb[NQ];
	unsigned nq;
};

FIXTURE_SETUP(credit)
{
	vc_start();
	ASSERT_EQ(0, pair_open_wire(&self->p, 1024, BUF, 3, DEPTH));
	self->nq = 0;
}

FIXTURE_TEARDOWN(credit)
{
	for (unsigned i = 0; i < self->nq; i++) {
		if (self->qa[i])
			roxe_destroy_qp(self->qa[i]);
		if (self->qb[i])
			roxe_destroy_qp(self->qb[i]);
	}
	pair_close(&self->p);
	EXPECT_EQ(0, leak_check());
}

static struct roxe_engine *eng(struct side *s)
{
	return &s->dev->engines[0];
}

/* n connected RC pairs; timeout: the QPs'. */
static int connect_n(FIXTURE_DATA(credit) *self, unsigned n, uint8_t timeout)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	int err = 0;

	for (unsigned i = 0; i < n && !err; i++, self->nq++) {
		err = qp_create_cap(a, IBV_QPT_RC, 8, 1, &self->qa[i]);
		if (!err)
			err = qp_create_cap(b, IBV_QPT_RC, 8, 1, &self->qb[i]);
		if (!err)
			err = qp_connect(self->qa[i], b->dev, roxe_qp_num(self->qb[i]), IBV_QPT_RC,
					 IBV_MTU_1024, 100 + i, 5000 + i, timeout, 7, 7);
		if (!err)
			err = qp_connect(self->qb[i], a->dev, roxe_qp_num(self->qa[i]), IBV_QPT_RC,
					 IBV_MTU_1024, 5000 + i, 100 + i, timeout, 7, 7);
	}
	return err;
}

/* READ len bytes of B's buffer at off into A's at off, on QP i. */
static int read1(FIXTURE_DATA(credit) *self, unsigned i, uint64_t id, uint32_t off, uint32_t len)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];

	return post_send1(self->qa[i], IBV_WR_RDMA_READ, id, a->buf + off, len,
			  a->mr->lkey, (uintptr_t)b->buf + off, b->mr->rkey,
			  IBV_SEND_SIGNALED);
}

/* Turn both ends, TURN_NS apart, until want completions came to A,
 * checking the count after each of A's turns; returns the completions
 * (errors: -1 - count). */
static int run(struct __test_metadata *_metadata, FIXTURE_DATA(credit) *self, int want,
	       uint32_t *most)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct roxe_engine *e = eng(a);
	int got = 0, errs = 0;

	for (long step = 0; step < STEPS && got < want; step++) {
		struct ibv_wc wc[64];
		int n;

		roxe_clock_advance(TURN_NS);
		n = roxe_poll_cq(a->cq, 64, wc);

		ASSERT_LE(0, n);
		for (int k = 0; k < n; k++)
			errs += wc[k].status != IBV_WC_SUCCESS;
		got += n;
		ASSERT_EQ(0u, roxe_credit_check(e)) TH_LOG("step %ld", step);
		if (e->credit_out > *most)
			*most = e->credit_out;
		ASSERT_EQ(0, roxe_poll_cq(b->cq, 0, NULL));
	}
	return errs ? -1 - got : got;
}

static uint64_t wire_drops(struct pair *p)
{
	return roxe_loop_port(p->wire, 0)->stats.tx_dropped +
	       roxe_loop_port(p->wire, 1)->stats.tx_dropped;
}

/*
 * 256 QPs, 4 one-response READs each: 1024 responses asked for, against a
 * 64-frame ring. Without the credit one turn sends 128 requests into it
 * (and the responses come back as many) and the wire drops what does not
 * fit; with it, at most 32 are awaited and nothing is lost.
 */
TEST_F(credit, many_qps_wait_for_credit_and_nothing_overflows)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct roxe_engine *e = eng(a);
	uint32_t most = 0;

	ASSERT_EQ(32u, e->credit_budget);
	ASSERT_EQ(0, connect_n(self, NQ, 14));
	fill_pattern(b->buf, BUF, 7);
	for (unsigned i = 0; i < NQ; i++)
		for (unsigned k = 0; k < 4; k++)
			ASSERT_EQ(0, read1(self, i, i * 4 + k, (i * 4 + k) * 64, 64));
	ASSERT_EQ(NQ * 4, run(_metadata, self, NQ * 4, &most));
	EXPECT_EQ(0, memcmp(a->buf, b->buf, NQ * 4 * 64));
	EXPECT_EQ(0u, wire_drops(&self->p));
	EXPECT_LE(most, e->credit_budget);
	EXPECT_LT(0u, e->stats->credit_waits);
	EXPECT_EQ(0u, e->credit_out);
	EXPECT_EQ(NULL, e->credit_wait_head);
}

/* The same with WRITEs of one and of three packets: the peer's ring. */
TEST_F(credit, many_qps_writes_wait_for_credit_and_nothing_overflows)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct roxe_engine *e = eng(a);
	uint32_t most = 0;

	ASSERT_EQ(0, connect_n(self, NQ, 14));
	fill_pattern(a->buf, BUF, 5);
	for (unsigned i = 0; i < NQ; i++) {
		uint32_t off = i * 4096;

		ASSERT_EQ(0, post_send1(self->qa[i], IBV_WR_RDMA_WRITE, i, a->buf + off, 64,
					a->mr->lkey, (uintptr_t)b->buf + off, b->mr->rkey,
					IBV_SEND_SIGNALED));
		ASSERT_EQ(0, post_send1(self->qa[i], IBV_WR_RDMA_WRITE, NQ + i, a->buf + off + 64,
					3000, a->mr->lkey, (uintptr_t)b->buf + off + 64,
					b->mr->rkey, IBV_SEND_SIGNALED));
	}
	ASSERT_EQ(2 * NQ, run(_metadata, self, 2 * NQ, &most));
	for (unsigned i = 0; i < NQ; i++)
		ASSERT_EQ(0, memcmp(a->buf + i * 4096, b->buf + i * 4096, 64 + 3000));
	EXPECT_EQ(0u, wire_drops(&self->p));
	EXPECT_LE(most, e->credit_budget);
	EXPECT_LT(0u, e->stats->credit_waits);
	EXPECT_EQ(0u, e->credit_out);
	EXPECT_EQ(NULL, e->credit_wait_head);
}

/* A READ of 64 responses (twice the budget) goes in parts of the per-QP
 * cap (16), the small READs of other QPs before, beside and after it. */
TEST_F(credit, read_larger_than_the_cap_goes_in_parts)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct roxe_engine *e = eng(a);
	uint32_t most = 0;

	ASSERT_EQ(0, connect_n(self, 8, 14));
	fill_pattern(b->buf, BUF, 9);
	for (unsigned i = 1; i < 8; i++)
		ASSERT_EQ(0, read1(self, i, i, i * 4096, 4096));	/* 4 each */
	ASSERT_EQ(0, read1(self, 0, 100, 65536, 65536));		/* 64 */
	for (unsigned i = 1; i < 8; i++)
		ASSERT_EQ(0, read1(self, i, 200 + i, 2 * 65536 + i * 4096, 4096));
	ASSERT_EQ(15, run(_metadata, self, 15, &most));
	EXPECT_EQ(0, memcmp(a->buf + 4096, b->buf + 4096, 7 * 4096));
	EXPECT_EQ(0, memcmp(a->buf + 65536, b->buf + 65536, 65536));
	EXPECT_EQ(0, memcmp(a->buf + 2 * 65536 + 4096, b->buf + 2 * 65536 + 4096, 7 * 4096));
	EXPECT_EQ(16u, e->credit_qp_cap);
	EXPECT_LE(most, e->credit_budget);	/* never alone past the budget */
	EXPECT_EQ(0u, e->credit_out);
}

/*
 * Two QPs with no timer (timeout 0) READ 64 KiB each from peers that never
 * answer (their QPs are gone): each holds at most the cap (16), and their
 * charges lapse after ROXE_CREDIT_HOLD_NS without an answer, so a third
 * QP's READ on the same engine, which found the credit spent, completes.
 * Without the cap the first READ went alone with all 64 of its PSNs
 * charged, forever; without the lapse the two held all 32 forever.
 */
TEST_F(credit, one_qp_cannot_hold_the_credit)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct roxe_engine *e = eng(a);
	uint32_t most = 0;
	struct ibv_wc wc;

	ASSERT_EQ(0, connect_n(self, 3, 0));
	for (unsigned i = 0; i < 2; i++) {
		ASSERT_EQ(0, roxe_destroy_qp(self->qb[i]));
		self->qb[i] = NULL;
	}
	fill_pattern(b->buf, BUF, 21);
	ASSERT_EQ(0, read1(self, 0, 1, 0, 65536));
	ASSERT_EQ(0, read1(self, 1, 2, 65536, 65536));
	for (int t = 0; t < 4; t++) {
		ASSERT_EQ(0, roxe_poll_cq(a->cq, 0, NULL));
		ASSERT_EQ(0, roxe_poll_cq(b->cq, 0, NULL));
	}
	ASSERT_EQ(0u, roxe_credit_check(e));
	EXPECT_EQ(16u, self->qa[0]->req.credit);
	EXPECT_EQ(16u, self->qa[1]->req.credit);
	ASSERT_EQ(32u, e->credit_out);
	/* the credit is spent: the third QP's READ waits for the lapse,
	 * a nanosecond short of the hold still */
	ASSERT_EQ(0, read1(self, 2, 3, 2 * 65536, 4096));
	for (int t = 0; t < 2; t++) {
		if (t)
			roxe_clock_advance(ROXE_CREDIT_HOLD_NS - 1);
		for (int k = 0; k < 4; k++) {
			ASSERT_EQ(0, roxe_poll_cq(a->cq, 1, &wc));
			ASSERT_EQ(0, roxe_poll_cq(b->cq, 0, NULL));
		}
		ASSERT_EQ(0u, roxe_credit_check(e));
		EXPECT_TRUE(self->qa[2]->credit_waiting);
		EXPECT_EQ(32u, e->credit_out);
		EXPECT_EQ(0u, e->stats->credit_lapses);
	}
	/* held the whole hold: the next walk of the charged QPs (a quarter
	 * hold after the last) lets both go */
	roxe_clock_advance(ROXE_CREDIT_HOLD_NS / 4);
	ASSERT_EQ(1, run(_metadata, self, 1, &most));
	EXPECT_EQ(0, memcmp(a->buf + 2 * 65536, b->buf + 2 * 65536, 4096));
	EXPECT_LE(2u, e->stats->credit_lapses);
	EXPECT_LE(most, e->credit_budget);
}

/*
 * A WRITE of 64 packets against a budget of 16, below the interval at
 * which a QP asks for ACKs anyway (ROXE_ACKREQ_EVERY): it is held
 * mid-message with all the credit out, which only an ACK brings back. The
 * packets sent with the credit low ask for one; without that the QP waits
 * for its timer, goes back, and does the same again until retry_cnt runs
 * out.
 */
TEST_F(credit, write_held_mid_message_asks_for_the_ack_that_frees_it)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct roxe_engine *e = eng(a);
	uint32_t most = 0;

	e->credit_budget = 16;		/* polled: no engine thread reads it now */
	ASSERT_EQ(0, connect_n(self, 2, 18));	/* 1 s */
	fill_pattern(a->buf, BUF, 13);
	ASSERT_EQ(0, post_send1(self->qa[0], IBV_WR_RDMA_WRITE, 1, a->buf, 65536, a->mr->lkey,
				(uintptr_t)b->buf, b->mr->rkey, IBV_SEND_SIGNALED));
	ASSERT_EQ(0, post_send1(self->qa[1], IBV_WR_RDMA_WRITE, 2, a->buf + 65536, 65536,
				a->mr->lkey, (uintptr_t)b->buf + 65536, b->mr->rkey,
				IBV_SEND_SIGNALED));
	ASSERT_EQ(2, run(_metadata, self, 2, &most));
	EXPECT_EQ(0, memcmp(a->buf, b->buf, 2 * 65536));
	EXPECT_EQ(16u, most);
	EXPECT_EQ(0u, a->dev->qp_stats[roxe_qp_num(self->qa[0])].timeouts);
	EXPECT_EQ(0u, a->dev->qp_stats[roxe_qp_num(self->qa[1])].timeouts);
	EXPECT_EQ(0u, e->credit_out);
}

/* Responses lost at random: go-backs, READ restarts from the first missing
 * response, timeouts; the count holds after every turn and ends at 0. */
TEST_F(credit, count_holds_through_losses)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct roxe_loop_faults f = { .drop_ppm = 30000, .seed = 11 };
	struct roxe_engine *e = eng(a);
	uint64_t resent = 0;
	uint32_t most = 0;

	ASSERT_EQ(0, connect_n(self, 32, 10));
	roxe_loop_set_faults(self->p.wire, 1, &f);	/* B's responses */
	fill_pattern(b->buf, BUF, 3);
	for (unsigned i = 0; i < 32; i++)
		for (unsigned k = 0; k < 4; k++)
			ASSERT_EQ(0, read1(self, i, i * 4 + k, (i * 4 + k) * 4096, 4096));
	ASSERT_EQ(128, run(_metadata, self, 128, &most));
	EXPECT_EQ(0, memcmp(a->buf, b->buf, 128 * 4096));
	for (unsigned i = 0; i < 32; i++)
		resent += a->dev->qp_stats[roxe_qp_num(self->qa[i])].retransmits;
	EXPECT_LT(0u, resent);		/* it went back */
	EXPECT_LE(most, e->credit_budget);
	EXPECT_EQ(0u, e->credit_out);
	EXPECT_EQ(NULL, e->credit_wait_head);
}

static int modify_state(struct roxe_qp *qp, enum ibv_qp_state st)
{
	struct ibv_qp_attr at = { .qp_state = st };

	return roxe_modify_qp(qp, &at, IBV_QP_STATE);
}

/* A QP of A's (from 0) holding PSN credit; -1: none. */
static int holder(FIXTURE_DATA(credit) *self, unsigned from)
{
	for (unsigned i = from; i < self->nq; i++)
		if (self->qa[i] && self->qa[i]->req.credit)
			return (int)i;
	return -1;
}

/*
 * Nothing answers (B never turns): the credit is spent and QPs wait. A QP
 * moved to ERR, one reset and one destroyed give back what they held,
 * and the QPs that waited longest take it.
 */
TEST_F(credit, flush_reset_and_destroy_give_credit_back)
{
	struct side *a = &self->p.s[0];
	struct roxe_engine *e = eng(a);
	struct roxe_qp *first;
	struct ibv_wc wc[64];
	int flushed = 0, h;

	ASSERT_EQ(0, connect_n(self, 64, 14));
	for (unsigned i = 0; i < 64; i++)
		for (unsigned k = 0; k < 2; k++)
			ASSERT_EQ(0, read1(self, i, i * 2 + k, (i * 2 + k) * 64, 64));
	for (int t = 0; t < 8; t++)
		ASSERT_EQ(0, roxe_poll_cq(a->cq, 0, NULL));
	ASSERT_EQ(32u, e->credit_out);
	ASSERT_EQ(0u, roxe_credit_check(e));
	first = e->credit_wait_head;
	ASSERT_NE(NULL, first);
	ASSERT_EQ(0u, first->req.credit);

	h = holder(self, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(2u, self->qa[h]->req.credit);
	ASSERT_EQ(0, modify_state(self->qa[h], IBV_QPS_ERR));
	for (int t = 0; t < 200 && flushed < 2; t++) {
		int n = roxe_poll_cq(a->cq, 64, wc);

		ASSERT_LE(0, n);
		for (int k = 0; k < n; k++)
			EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc[k].status);
		flushed += n;
		ASSERT_EQ(0u, roxe_credit_check(e));
	}
	ASSERT_EQ(2, flushed);
	EXPECT_EQ(0u, self->qa[h]->req.credit);
	for (int t = 0; t < 2; t++)	/* the waiters woken at a turn's end send */
		ASSERT_EQ(0, roxe_poll_cq(a->cq, 0, NULL));
	ASSERT_EQ(0u, roxe_credit_check(e));
	/* what was freed went to the QP that waited first: back at 32 */
	EXPECT_EQ(32u, e->credit_out);
	EXPECT_NE(0u, first->req.credit);

	h = holder(self, (unsigned)h + 1);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, modify_state(self->qa[h], IBV_QPS_RESET));
	ASSERT_EQ(0, roxe_poll_cq(a->cq, 0, NULL));
	ASSERT_EQ(0u, roxe_credit_check(e));
	EXPECT_EQ(0u, self->qa[h]->req.credit);

	h = holder(self, (unsigned)h + 1);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, roxe_destroy_qp(self->qa[h]));
	self->qa[h] = NULL;
	ASSERT_EQ(0u, roxe_credit_check(e));

	/* everyone gone: nothing held, nobody waits */
	for (unsigned i = 0; i < 64; i++) {
		if (!self->qa[i])
			continue;
		ASSERT_EQ(0, modify_state(self->qa[i], IBV_QPS_ERR));
		ASSERT_EQ(0, roxe_poll_cq(a->cq, 0, NULL));
		ASSERT_EQ(0u, roxe_credit_check(e));
	}
	while (roxe_poll_cq(a->cq, 64, wc) > 0)
		;
	EXPECT_EQ(0u, e->credit_out);
	EXPECT_EQ(NULL, e->credit_wait_head);
}

TEST_HARNESS_MAIN
