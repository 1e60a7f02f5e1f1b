// SPDX-License-Identifier: GPL-2.0-only
/*
 * The engine's timer bound (sched.c): an engine walks its armed timers
 * only once its next_timer is due, not on every busy turn (with 4096 QPs
 * armed the walk cost more than the turn's packets). That is right only
 * if next_timer is never later than any armed deadline: roxe_timer_arm
 * must lower it for a new, earlier deadline, for a QP already armed, for
 * an RNR wait, for a pacer's hold (DCQCN) and for a stall probe, and
 * leave 0 ("walk now") alone. The pacer's and the stall probe's deadlines
 * are fine ones: a sleeping engine wakes for them to the nanosecond.
 *
 * And its ACK hold: a plain ACK waits to be coalesced, but leaves right
 * after the reply of a ping-pong.
 *
 * And its idle spin (spin.h): it doubles while a longer spin would have
 * caught the work a sleep waited for, halves to none while no spin would
 * have, and stays while it catches the work.
 *
 * And its clock (core/mono_clock.c): CLOCK_MONOTONIC, from the TSC where
 * the kernel keeps time by it; never back, never apart from
 * CLOCK_MONOTONIC by more than the rate's error over an interval.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <time.h>
#include "kselftest_harness.h"
#include "pair.h"
#include "transport/transport.h"
#include "transport/sched.h"
#include "transport/spin.h"
#include "transport/sendctl.h"
#include "core/core.h"

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
TEST_F(sched, a_pacer_hold_lowers_next_timer_and_next_fine)
{
	struct roxe_engine *e = &self->e;

	e->next_timer = 10000000;		/* an RTO 10 ms on */
	self->q[0].req.pace_wait = true;
	self->q[0].req.pace_deadline = 50000;	/* the next frame in 50 us */
	roxe_timer_arm(&self->q[0]);
	EXPECT_EQ(50000, e->next_timer);
	EXPECT_EQ(50000, e->next_fine);
	self->q[1].req.pace_wait = true;
	self->q[1].req.pace_deadline = 80000;
	roxe_timer_arm(&self->q[1]);
	EXPECT_EQ(50000, e->next_timer);
	EXPECT_EQ(50000, e->next_fine);		/* the earliest */
}

/* The stall probe (recovery.h): the first full window after progress, on a
 * lossy QP (an RTT sample, a loss within the last second), brings the
 * deadline in to the stall probe's and makes it a fine one; once per
 * progress; never on a clean path (it runs the configured timeout). */
TEST_F(sched, a_full_window_brings_the_probe_in)
{
	struct roxe_engine *e = &self->e;
	struct roxe_qp *qp = &self->q[0];
	uint64_t stall = ROXE_STALL_PTO_MIN_NS;	/* no min RTT, no usual wait yet */

	e->now = 1000000;
	e->next_timer = e->now + 30000000;	/* the walk: the tail probe, 30 ms on */
	qp->comp.deadline = e->now + 30000000;
	qp->comp.probe_due = true;
	roxe_rto_sample(&qp->comp.rto, 50000);	/* an RTT sample, a loss: lossy */
	roxe_rto_loss(&qp->comp.rto, e->now);
	roxe_timer_arm(qp);
	EXPECT_EQ(0, e->next_fine);		/* a tail probe keeps the millisecond */
	roxe_retrans_stalled(qp);
	EXPECT_EQ(e->now + stall, qp->comp.deadline);
	EXPECT_EQ(e->now + stall, e->next_timer);
	EXPECT_EQ(e->now + stall, e->next_fine);
	EXPECT_EQ(e->now, qp->comp.stall.at);
	e->now += 100000;			/* the window blocks again: once */
	roxe_retrans_stalled(qp);
	EXPECT_EQ(e->now - 100000 + stall, qp->comp.deadline);

	/* an RTO, no tail probe (2 SRTTs past it): the probe comes all the same */
	qp = &self->q[1];
	qp->comp.deadline = e->now + 30000000;
	roxe_rto_sample(&qp->comp.rto, 50000);
	roxe_rto_loss(&qp->comp.rto, e->now);
	roxe_timer_arm(qp);
	roxe_retrans_stalled(qp);
	EXPECT_EQ(e->now + stall, qp->comp.deadline);
	EXPECT_TRUE(qp->comp.probe_due);

	/* a clean path (no loss): the configured timeout, untouched */
	qp = &self->q[2];
	qp->comp.deadline = e->now + 30000000;
	roxe_rto_sample(&qp->comp.rto, 50000);
	roxe_timer_arm(qp);
	roxe_retrans_stalled(qp);
	EXPECT_EQ(e->now + 30000000, qp->comp.deadline);
	EXPECT_EQ(0, qp->comp.stall.at);
	EXPECT_FALSE(qp->comp.probe_due);
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
 * the responder's held ACK leaves with its reply, in the same kick (one
 * system call), behind it, so the requester gets both completions in its
 * next turn, the reply's first. Before, the ACK waited out the hold
 * (10 us) on every message: perftest-style send latency 6.7 us one way on
 * this machine, 3.5 after; 5.45 with the ACK in a kick of its own, 4.37
 * in the reply's. Both devices polled: the test steps each turn. */
TEST(held_ack_leaves_with_the_reply)
{
	struct ibv_wc wc[4];
	struct roxe_port *port1;
	uint64_t kicks, frames;
	struct pair p;
	int n, sends, recvs;

	ASSERT_EQ(0, pair_open_polled(&p, 1024, 4096, 3));
	port1 = roxe_loop_port(p.wire, 1);
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
		kicks = port1->stats.tx_kicks;
		frames = port1->stats.tx_frames;
		EXPECT_EQ(0, roxe_poll_cq(p.s[1].cq, 4, wc));	/* the reply and the ACK */
		EXPECT_EQ(2u, port1->stats.tx_frames - frames);
		EXPECT_EQ(1u, port1->stats.tx_kicks - kicks) TH_LOG("exchange %d", i);
		n = roxe_poll_cq(p.s[0].cq, 4, wc);
		sends = recvs = 0;
		for (int j = 0; j < n; j++) {
			EXPECT_EQ(IBV_WC_SUCCESS, wc[j].status);
			sends += wc[j].opcode == IBV_WC_SEND;
			recvs += wc[j].opcode == IBV_WC_RECV;
		}
		EXPECT_EQ(1, recvs) TH_LOG("exchange %d: no reply", i);
		ASSERT_EQ(1, sends) TH_LOG("exchange %d: the reply came without the ACK", i);
		/* the reply first: the peer's completer handles the ACK after it */
		EXPECT_EQ(IBV_WC_RECV, wc[0].opcode) TH_LOG("exchange %d: the ACK came first", i);
	}
	pair_close(&p);
	EXPECT_EQ(0, leak_check());
}

TEST(spin_grows_while_a_longer_spin_would_have_caught_the_work)
{
	EXPECT_EQ(ROXE_SPIN_GROW_NS, roxe_spin_next(0, 8000));
	EXPECT_EQ(ROXE_SPIN_GROW_NS, roxe_spin_next(3000, 4000));
	EXPECT_EQ(10000u, roxe_spin_next(ROXE_SPIN_GROW_NS, 8000));
	EXPECT_EQ(40000u, roxe_spin_next(20000, 21000));
	EXPECT_EQ(ROXE_SPIN_MAX_NS, roxe_spin_next(40000, 45000));	/* at most the most */
	EXPECT_EQ(ROXE_SPIN_MAX_NS, roxe_spin_next(40000, ROXE_SPIN_MAX_NS));
}

TEST(spin_halves_to_none_while_no_spin_would_have_caught_the_work)
{
	uint64_t spin = ROXE_SPIN_MAX_NS;
	const uint64_t want[] = { 25000, 12500, 6250, 0, 0 };

	for (unsigned i = 0; i < 5; i++) {
		spin = roxe_spin_next(spin, ROXE_SPIN_MAX_NS + 1);
		EXPECT_EQ(want[i], spin) TH_LOG("sleep %u", i);
	}
}

TEST(spin_stays_while_it_catches_the_work)
{
	EXPECT_EQ(20000u, roxe_spin_next(20000, 15000));
	EXPECT_EQ(20000u, roxe_spin_next(20000, 20000));
	EXPECT_EQ(0u, roxe_spin_next(0, 0));
}

/* A ping-pong whose round trip is longer than the most an engine spins (a
 * TCG guest: 100 us and more) stops the spin after four sleeps; once its
 * round trip is 12 us, three sleeps bring the spin to 20 us, and from then
 * on the spin catches every reply. */
TEST(spin_follows_the_round_trip)
{
	uint64_t spin = ROXE_SPIN_MAX_NS;
	unsigned sleeps = 0;

	while (spin && sleeps < 10) {
		spin = roxe_spin_next(spin, 120000);
		sleeps++;
	}
	EXPECT_EQ(4u, sleeps);
	for (sleeps = 0; spin < 12000 && sleeps < 10; sleeps++)
		spin = roxe_spin_next(spin, 12000);
	EXPECT_EQ(3u, sleeps);
	EXPECT_EQ(20000u, spin);
	EXPECT_EQ(20000u, roxe_spin_next(spin, 12000));
}

/* The engine thread adapts its spin from the gaps it sees: a receiver whose
 * SENDs come 2 ms apart (its application posts nothing) sleeps through
 * every gap, and each halves its spin: after eight, none is left. Before,
 * every engine spun 50 us after its last work whatever came. */
TEST(engine_whose_work_comes_later_stops_spinning)
{
	struct pair p = { 0 };
	struct roxe_engine *rx_eng;
	struct ibv_wc wc[4];

	ASSERT_EQ(0, pair_open(&p, 1024, 4096));
	ASSERT_EQ(0, pair_connect(&p, IBV_QPT_RC, IBV_MTU_1024, 100, 200, 14, 7, 7));
	rx_eng = &p.s[1].dev->engines[0];
	for (int i = 0; i < 8; i++)	/* (a post may ring the receiver's engine) */
		ASSERT_EQ(0, post_recv1(p.s[1].qp, i, p.s[1].buf, 64, p.s[1].mr->lkey));
	for (int i = 0; i < 8; i++) {
		struct timespec gap = { .tv_nsec = 2000000 };

		ASSERT_EQ(0, post_send1(p.s[0].qp, IBV_WR_SEND, i, p.s[0].buf, 8, p.s[0].mr->lkey,
					0, 0, IBV_SEND_SIGNALED));
		ASSERT_EQ(1, poll_n(p.s[1].cq, wc, 1, 2000));
		EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
		ASSERT_EQ(1, poll_n(p.s[0].cq, wc, 1, 2000));
		EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
		nanosleep(&gap, NULL);
	}
	EXPECT_EQ(0u, atomic_load(&rx_eng->spin_ns));
	pair_close(&p);
	EXPECT_EQ(0, leak_check());
}

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Every reading lies between CLOCK_MONOTONIC read just before and just
 * after it, give or take 20 us (the rate is measured over each interval
 * of 1 ms or more, to a few ns: its error there is below 1 us), and none is below the one before;
 * over 300 ms, so that intervals of both lengths and their re-basing are
 * crossed, and with the thread put to sleep now and then (a preempted
 * reader only widens the bracket). */
static void *clock_follows_monotonic(void *arg)
{
	uint64_t *bad = arg, last = 0, end = mono() + 300000000ull;
	unsigned long n = 0;

	while (mono() < end) {
		uint64_t before = mono(), t = roxe_mono_ns(), after = mono();

		if (t + 20000 < before || t > after + 20000 || t < last)
			(*bad)++;
		last = t;
		if (!(++n % 100000))
			usleep(1000);
	}
	return NULL;
}

TEST(clock_is_monotonic_and_never_apart)
{
	pthread_t th[2];
	uint64_t bad[2] = { 0, 0 };

	TH_LOG("clock: %s", roxe_mono_tsc() ? "TSC (the kernel's clocksource)" :
	       "clock_gettime (no TSC clocksource)");
	/* two threads: each scales the TSC on its own */
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, clock_follows_monotonic, &bad[i]));
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	EXPECT_EQ(0, bad[0]);
	EXPECT_EQ(0, bad[1]);
}

TEST_HARNESS_MAIN
