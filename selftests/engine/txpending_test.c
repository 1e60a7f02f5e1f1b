// SPDX-License-Identifier: GPL-2.0-only
/*
 * A port whose kernel takes only some of the frames a kick offers (AF_XDP
 * copy mode: 32 a call, none while the socket's send buffer or the
 * device's queue is full) leaves tx_pending set, and only another kick
 * sends the rest: nothing else wakes the engine for them. The engine must
 * kick again every turn, and nap only briefly while frames wait.
 *
 * Here a stand-in wraps side 0's loop port: the frames it is given wait in
 * it, and a kick (tx_flush) hands the loop wire one of them, at most one
 * per GAP_NS, as a link that drains slowly would. Nothing but the engine's
 * own kicks moves them: the RC QP has no retransmission timer (timeout 0),
 * and the peer's ACKs stop once the frames do.
 */
#include <arpa/inet.h>
#include "kselftest_harness.h"
#include "pair.h"

#define GAP_NS		200000u
#define QCAP		256

struct slow_port {
	struct roxe_port	port;
	struct roxe_port	*in;		/* the loop port below */
	struct roxe_buf		q[QCAP];	/* given, not yet on the wire */
	unsigned		head, n;
	uint64_t		next_ns;	/* the next frame may go from then */
	uint64_t		kicks, dropped;
};

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static struct slow_port *sp_of(struct roxe_port *p)
{
	return (struct slow_port *)p;
}

static unsigned slow_rx_burst(struct roxe_port *p, struct roxe_buf *bufs, unsigned n)
{
	return roxe_port_rx(sp_of(p)->in, bufs, n);
}

static void slow_rx_release(struct roxe_port *p, const struct roxe_buf *bufs, unsigned n)
{
	roxe_port_rx_release(sp_of(p)->in, bufs, n);
}

static unsigned slow_tx_alloc(struct roxe_port *p, struct roxe_buf *bufs, unsigned n)
{
	return roxe_port_tx_alloc(sp_of(p)->in, bufs, n);
}

static void slow_tx_free(struct roxe_port *p, const struct roxe_buf *bufs, unsigned n)
{
	roxe_port_tx_free(sp_of(p)->in, bufs, n);
}

static void slow_tx_submit(struct roxe_port *p, struct roxe_buf *bufs, unsigned n)
{
	struct slow_port *s = sp_of(p);

	for (unsigned i = 0; i < n; i++) {
		if (s->n == QCAP) {
			roxe_port_tx_free(s->in, &bufs[i], 1);
			s->dropped++;
			continue;
		}
		s->q[(s->head + s->n++) % QCAP] = bufs[i];
	}
	p->tx_pending = s->n != 0;
}

/* A kick: one frame onto the wire if the link has drained since the last. */
static void slow_tx_flush(struct roxe_port *p)
{
	struct slow_port *s = sp_of(p);
	uint64_t now = now_ns();

	s->kicks++;
	if (s->n && now >= s->next_ns) {
		roxe_port_tx(s->in, &s->q[s->head], 1);
		roxe_port_flush(s->in);
		s->head = (s->head + 1) % QCAP;
		s->n--;
		s->next_ns = now + GAP_NS;
	}
	p->tx_pending = s->n != 0;
}

static void slow_destroy(struct roxe_port *p)
{
	struct slow_port *s = sp_of(p);

	for (; s->n; s->n--, s->head = (s->head + 1) % QCAP)
		roxe_port_tx_free(s->in, &s->q[s->head], 1);
	free(s);
}

static const struct roxe_port_ops slow_ops = {
	.name		= "slow",
	.rx_burst	= slow_rx_burst,
	.rx_release	= slow_rx_release,
	.tx_alloc	= slow_tx_alloc,
	.tx_submit	= slow_tx_submit,
	.tx_free	= slow_tx_free,
	.tx_flush	= slow_tx_flush,
	.destroy	= slow_destroy,
};

static struct slow_port *slow_port_new(struct roxe_port *in)
{
	struct slow_port *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->port.ops = &slow_ops;
	s->port.frame_size = in->frame_size;
	s->port.wait_fd = in->wait_fd;
	s->port.rx_frames = in->rx_frames;
	s->in = in;
	return s;
}

#define MSGS		4
#define MSG_BYTES	4096	/* 4 frames each at MTU 1024 */

FIXTURE(txpending) {
	struct pair p;
	struct slow_port *slow;
};

FIXTURE_SETUP(txpending)
{
	struct pair *p = &self->p;

	memset(p, 0, sizeof(*p));
	p->buf_len = 2 * MSGS * MSG_BYTES;
	p->wire = roxe_loop_wire_new(4096 + 256, 1024);
	ASSERT_TRUE(p->wire != NULL);
	self->slow = slow_port_new(roxe_loop_port(p->wire, 0));
	ASSERT_TRUE(self->slow != NULL);
	ASSERT_EQ(0, pair_side_open(p, 0, &self->slow->port, 1024, false));
	ASSERT_EQ(0, pair_side_open(p, 1, roxe_loop_port(p->wire, 1), 1024, false));
	/* timeout 0: no retransmission timer wakes the sender */
	ASSERT_EQ(0, pair_connect(p, IBV_QPT_RC, IBV_MTU_1024, 100, 200, 0, 7, 7));
}

FIXTURE_TEARDOWN(txpending)
{
	pair_close(&self->p);	/* closes side 0's device, which frees the stand-in */
	EXPECT_EQ(0, leak_check());
}

/* Sixteen frames through a link that takes one per 200 us: every one
 * leaves on a kick of the sender's engine, asleep or not. */
TEST_F_TIMEOUT(txpending, frames_the_port_holds_leave_without_a_wakeup, 60)
{
	struct side *s0 = &self->p.s[0], *s1 = &self->p.s[1];
	struct ibv_wc wc[MSGS];

	fill_pattern(s0->buf, MSGS * MSG_BYTES, 5);
	for (int i = 0; i < MSGS; i++)
		ASSERT_EQ(0, post_recv1(s1->qp, 10 + i, s1->buf + i * MSG_BYTES, MSG_BYTES,
					s1->mr->lkey));
	for (int i = 0; i < MSGS; i++)
		ASSERT_EQ(0, post_send1(s0->qp, IBV_WR_SEND, 20 + i, s0->buf + i * MSG_BYTES,
					MSG_BYTES, s0->mr->lkey, 0, 0, IBV_SEND_SIGNALED));
	ASSERT_EQ(MSGS, poll_n(s1->cq, wc, MSGS, 10000));
	for (int i = 0; i < MSGS; i++) {
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
		EXPECT_EQ(MSG_BYTES, wc[i].byte_len);
	}
	EXPECT_EQ(0, memcmp(s0->buf, s1->buf, MSGS * MSG_BYTES));
	ASSERT_EQ(MSGS, poll_n(s0->cq, wc, MSGS, 10000));
	for (int i = 0; i < MSGS; i++)
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
	EXPECT_EQ(0, self->slow->dropped);
	EXPECT_FALSE(self->slow->port.tx_pending);
}

TEST_HARNESS_MAIN
