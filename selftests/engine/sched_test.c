// SPDX-License-Identifier: GPL-2.0-only
/*
 * The engine's timer bound (sched.c): an engine walks its armed timers
 * only once its next_timer is due, not on every busy turn (with 4096 QPs
 * armed the walk cost more than the turn's packets). That is right only
 * if next_timer is never later than any armed deadline: roxe_timer_arm
 * must lower it for a new, earlier deadline, for a QP already armed, for
 * an RNR wait and for a pacer's hold (DCQCN), and leave 0 ("walk now")
 * alone.
 */
#include "kselftest_harness.h"
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

TEST_HARNESS_MAIN
