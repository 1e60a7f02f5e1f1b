// SPDX-License-Identifier: GPL-2.0-only
/*
 * The engine's timer bound (sched.c): an engine walks its armed timers
 * only once its next_timer is due, not on every busy turn (with 4096 QPs
 * armed the walk cost more than the turn's packets). That is right only
 * if next_timer is never later than any armed deadline: roxe_timer_arm
 * must lower it for a new, earlier deadline, for a QP already armed, for
 * an RNR wait and for a pacer's hold (DCQCN), and leave 0 ("walk now")
 * alone.
 *
 * And its ACK hold: a plain ACK waits to be coalesced, but leaves right
 * after the reply of a ping-pong.
 */
#include <arpa/inet.h>
#include "kselftest_harness.h"
#include "pair.h"
#include "transport/transport.h"

FIXTURE(sched) {
	struct roxe_engine e;
	struct roxe_qp q[3];
};

FIXTURE_SETUP(sched)
{
	memset(&self->e, 0, sizeof(self->e));
	memset(self->q, 0, sizeof(self->q));
	for (int i = 0; i < 3; i++)
		self->q[i].eng = &self->e;
}

FIXTURE_TEARDOWN(sched)
{
	for (int i = 0; i < 3; i++)
		roxe_timer_disarm(&self->q[i]);
}

TEST_F(sched, arm_lowers_next_timer)
{
	struct roxe_engine *e = &self->e;

	e->next_timer = 5000;
	self->q[0].comp.deadline = 9000;
	roxe_timer_arm(&self->q[0]);
	EXPECT_EQ(5000, e->next_timer);		/* later: the bound holds */
	self->q[1].comp.deadline = 3000;
	roxe_timer_arm(&self->q[1]);
	EXPECT_EQ(3000, e->next_timer);		/* a new, earlier deadline */
	self->q[0].comp.deadline = 1000;	/* armed already, moved earlier */
	roxe_timer_arm(&self->q[0]);
	EXPECT_EQ(1000, e->next_timer);
	self->q[2].req.rnr_wait = true;		/* an RNR wait, no ACK timer */
	self->q[2].req.rnr_deadline = 700;
	roxe_timer_arm(&self->q[2]);
	EXPECT_EQ(700, e->next_timer);
	/* every QP is on the list once */
	int n = 0;
	for (struct roxe_qp *qp = e->timers; qp && n < 10; qp = qp->timer_next)
		n++;
	EXPECT_EQ(3, n);
}

/* A QP the pacer holds waits for its deadline on the timer list: a walk
 * bound past it would hold the QP until some other timer came due (an RTO,
 * milliseconds on), and the engine would sleep past it too. */
TEST_F(sched, a_pacer_hold_lowers_next_timer_and_next_pace)
{
	struct roxe_engine *e = &self->e;

	e->next_timer = 10000000;		/* an RTO 10 ms on */
	self->q[0].req.pace_wait = true;
	self->q[0].req.pace_deadline = 50000;	/* the next frame in 50 us */
	roxe_timer_arm(&self->q[0]);
	EXPECT_EQ(50000, e->next_timer);
	EXPECT_EQ(50000, e->next_pace);
	self->q[1].req.pace_wait = true;
	self->q[1].req.pace_deadline = 80000;
	roxe_timer_arm(&self->q[1]);
	EXPECT_EQ(50000, e->next_timer);
	EXPECT_EQ(50000, e->next_pace);		/* the earliest */
}

TEST_F(sched, zero_means_walk)
{
	self->q[0].comp.deadline = 4000;
	roxe_timer_arm(&self->q[0]);
	EXPECT_EQ(0, self->e.next_timer);	/* the next turn walks and sets it */
	EXPECT_EQ(&self->q[0], self->e.timers);
}

/* A ping-pong whose requester waits for its send completion as well as for
 * the reply (perftest's latency tests: one send in flight, each signalled):
 * the responder's held ACK leaves right after its reply, in the same
 * turn, so the requester gets both completions in its next turn. Before,
 * the ACK waited out the hold (10 us) on every message: perftest-style
 * send latency 6.7 us one way on this machine, 3.5 after. Both devices
 * polled: the test steps each turn. */
TEST(held_ack_leaves_with_the_reply)
{
	struct ibv_wc wc[4];
	struct pair p;
	int n, sends, recvs;

	ASSERT_EQ(0, pair_open_polled(&p, 1024, 4096, 3));
	ASSERT_EQ(0, pair_connect(&p, IBV_QPT_RC, IBV_MTU_1024, 100, 200, 14, 7, 7));
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(0, post_recv1(p.s[0].qp, i, p.s[0].buf + 64, 64, p.s[0].mr->lkey));
		ASSERT_EQ(0, post_recv1(p.s[1].qp, i, p.s[1].buf, 64, p.s[1].mr->lkey));
		ASSERT_EQ(0, post_send1(p.s[0].qp, IBV_WR_SEND, i, p.s[0].buf, 8, p.s[0].mr->lkey,
					0, 0, IBV_SEND_SIGNALED));
		EXPECT_EQ(0, roxe_poll_cq(p.s[0].cq, 4, wc));	/* the SEND leaves */
		n = roxe_poll_cq(p.s[1].cq, 4, wc);		/* taken; its ACK held */
		recvs = 0;
		for (int j = 0; j < n; j++)	/* and the last reply's completion */
			recvs += wc[j].opcode == IBV_WC_RECV;
		ASSERT_EQ(1, recvs);
		ASSERT_EQ(0, post_send1(p.s[1].qp, IBV_WR_SEND, i, p.s[1].buf + 64, 8,
					p.s[1].mr->lkey, 0, 0, IBV_SEND_SIGNALED));
		EXPECT_EQ(0, roxe_poll_cq(p.s[1].cq, 4, wc));	/* the reply and the ACK */
		n = roxe_poll_cq(p.s[0].cq, 4, wc);
		sends = recvs = 0;
		for (int j = 0; j < n; j++) {
			EXPECT_EQ(IBV_WC_SUCCESS, wc[j].status);
			sends += wc[j].opcode == IBV_WC_SEND;
			recvs += wc[j].opcode == IBV_WC_RECV;
		}
		EXPECT_EQ(1, recvs) TH_LOG("exchange %d: no reply", i);
		ASSERT_EQ(1, sends) TH_LOG("exchange %d: the reply came without the ACK", i);
	}
	pair_close(&p);
	EXPECT_EQ(0, leak_check());
}

TEST_HARNESS_MAIN
