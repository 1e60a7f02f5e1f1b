// SPDX-License-Identifier: GPL-2.0-only
/*
 * In-place frames (roxe_alloc_umem_mr) complete only once the port is done
 * with them. An ACK may come before the kernel gives a frame's descriptors
 * back (a retransmitted frame's first copy acknowledged while the second
 * is still queued; a driver that cleans its ring late): the application
 * must not see the WR complete, nor get its slot back, before, and the WRs
 * behind it complete after it, in order.
 *
 * A stand-in wraps side 0's loop port as AF_XDP's would be with a UMEM
 * reserve: its in-place region is a buffer registered as a UMEM MR (white
 * box: the flag set by hand, the loop has no UMEM), it copies each
 * in-place frame whole onto the wire as the kernel's copy mode would, and
 * says it is done with them (port.inplace_done) only as far as the test
 * lets it.
 */
#include <arpa/inet.h>
#include "kselftest_harness.h"
#include "pair.h"
#include "transport/transport.h"
#include "transport/engine.h"

#define REGION		(64u * 1024)

struct hold_port {
	struct roxe_port	port;
	struct roxe_port	*in;		/* the loop port below */
	uint64_t		submitted;	/* in-place frames given */
	_Atomic uint64_t	release;	/* the test lets it be done with these */
	uint64_t		bad;		/* in-place frames it could not make whole */
};

static struct hold_port *hp_of(struct roxe_port *p)
{
	return (struct hold_port *)p;
}

static unsigned hold_rx_burst(struct roxe_port *p, struct roxe_buf *bufs, unsigned n)
{
	return roxe_port_rx(hp_of(p)->in, bufs, n);
}

static void hold_rx_release(struct roxe_port *p, const struct roxe_buf *bufs, unsigned n)
{
	roxe_port_rx_release(hp_of(p)->in, bufs, n);
}

static unsigned hold_tx_alloc(struct roxe_port *p, struct roxe_buf *bufs, unsigned n)
{
	unsigned got = roxe_port_tx_alloc(hp_of(p)->in, bufs, n);

	for (unsigned i = 0; i < got; i++)
		bufs[i].ext_len = 0;
	return got;
}

static void hold_tx_free(struct roxe_port *p, const struct roxe_buf *bufs, unsigned n)
{
	roxe_port_tx_free(hp_of(p)->in, bufs, n);
}

static void hold_tx_submit(struct roxe_port *p, struct roxe_buf *bufs, unsigned n)
{
	struct hold_port *h = hp_of(p);

	for (unsigned i = 0; i < n; i++) {
		if (!bufs[i].ext_len)
			continue;
		h->submitted++;
		if (!roxe_buf_linearize(p, &bufs[i]))
			h->bad++;
	}
	roxe_port_tx(h->in, bufs, n);
}

static void hold_tx_flush(struct roxe_port *p)
{
	roxe_port_flush(hp_of(p)->in);
}

static void hold_tx_reap(struct roxe_port *p)
{
	struct hold_port *h = hp_of(p);
	uint64_t r = atomic_load(&h->release);

	p->inplace_done = r < h->submitted ? r : h->submitted;
}

static void hold_destroy(struct roxe_port *p)
{
	free(hp_of(p));
}

static const struct roxe_port_ops hold_ops = {
	.name		= "hold",
	.rx_burst	= hold_rx_burst,
	.rx_release	= hold_rx_release,
	.tx_alloc	= hold_tx_alloc,
	.tx_submit	= hold_tx_submit,
	.tx_free	= hold_tx_free,
	.tx_flush	= hold_tx_flush,
	.tx_reap	= hold_tx_reap,
	.destroy	= hold_destroy,
};

FIXTURE(inplace) {
	struct pair	p;
	struct hold_port *hold;
	uint8_t		*region;
	struct roxe_mr	*umr;
};

FIXTURE_SETUP(inplace)
{
	struct pair *p = &self->p;
	struct roxe_port *in;

	memset(p, 0, sizeof(*p));
	p->buf_len = REGION;
	p->wire = roxe_loop_wire_new(4096 + 256, 1024);
	ASSERT_TRUE(p->wire != NULL);
	self->region = aligned_alloc(4096, REGION);
	self->hold = calloc(1, sizeof(*self->hold));
	ASSERT_TRUE(self->region && self->hold);
	in = roxe_loop_port(p->wire, 0);
	self->hold->in = in;
	self->hold->port.ops = &hold_ops;
	self->hold->port.frame_size = in->frame_size;
	self->hold->port.wait_fd = in->wait_fd;
	self->hold->port.rx_frames = in->rx_frames;
	self->hold->port.inplace_base = self->region;
	self->hold->port.inplace_len = REGION;
	ASSERT_EQ(0, pair_side_open(p, 0, &self->hold->port, 1024, false));
	ASSERT_EQ(0, pair_side_open(p, 1, roxe_loop_port(p->wire, 1), 1024, false));
	/* a device with a reserve: its QPs keep WQE numbers (white box) */
	p->s[0].dev->umem_mr_bytes = REGION;
	ASSERT_EQ(0, roxe_reg_mr(p->s[0].pd, self->region, REGION, IBV_ACCESS_LOCAL_WRITE,
				 &self->umr));
	((struct roxe_mr_priv *)self->umr)->umem = true;
	/* timeout 0: nothing is sent again behind the test's back */
	ASSERT_EQ(0, pair_connect(p, IBV_QPT_RC, IBV_MTU_1024, 100, 200, 0, 7, 7));
}

FIXTURE_TEARDOWN(inplace)
{
	atomic_store(&self->hold->release, UINT64_MAX);
	if (self->umr) {
		((struct roxe_mr_priv *)self->umr)->umem = false;
		roxe_dereg_mr(self->umr);
	}
	pair_close(&self->p);	/* closes side 0's device, which frees the stand-in */
	free(self->region);
	EXPECT_EQ(0, leak_check());
}

/* Every PSN the QP sent acknowledged (white box), within 5 s; then a
 * moment for the engine to act on the last ACK. */
static bool all_acked(struct roxe_qp *qp)
{
	for (int t = 0; t < 5000; t++) {
		if (__atomic_load_n(&qp->req.psn, __ATOMIC_RELAXED) != 100 &&
		    __atomic_load_n(&qp->comp.psn, __ATOMIC_RELAXED) ==
		    __atomic_load_n(&qp->req.psn, __ATOMIC_RELAXED)) {
			usleep(20000);
			return true;
		}
		usleep(1000);
	}
	return false;
}

/* A WRITE of three frames from the region, then one from an ordinary MR:
 * both acknowledged, neither completes until the port is done with all
 * three in-place frames; then both, in order. */
TEST_F_TIMEOUT(inplace, completion_waits_for_the_port, 60)
{
	struct side *s0 = &self->p.s[0], *s1 = &self->p.s[1];
	struct ibv_wc wc[2];

	fill_pattern(self->region, REGION, 3);
	fill_pattern(s0->buf, 4096, 4);
	ASSERT_EQ(0, post_send1(s0->qp, IBV_WR_RDMA_WRITE, 1, self->region + 777, 3000,
				self->umr->lkey, (uintptr_t)s1->buf, s1->mr->rkey,
				IBV_SEND_SIGNALED));
	ASSERT_EQ(0, post_send1(s0->qp, IBV_WR_RDMA_WRITE, 2, s0->buf, 1000, s0->mr->lkey,
				(uintptr_t)s1->buf + 8192, s1->mr->rkey, IBV_SEND_SIGNALED));
	ASSERT_TRUE(all_acked(s0->qp));
	EXPECT_EQ(0, memcmp(self->region + 777, s1->buf, 3000));
	EXPECT_EQ(0, memcmp(s0->buf, s1->buf + 8192, 1000));
	EXPECT_EQ(3u, self->hold->submitted);
	EXPECT_EQ(0u, self->hold->bad);
	/* acknowledged, but the port holds the frames: no completion */
	EXPECT_EQ(2u, __atomic_load_n(&s0->qp->held_n, __ATOMIC_RELAXED));
	EXPECT_EQ(0, poll_n(s0->cq, wc, 2, 100));
	atomic_store(&self->hold->release, 2);	/* not the last of them yet */
	EXPECT_EQ(0, poll_n(s0->cq, wc, 2, 100));
	atomic_store(&self->hold->release, 3);
	ASSERT_EQ(2, poll_n(s0->cq, wc, 2, 5000));
	EXPECT_EQ(1u, wc[0].wr_id);
	EXPECT_EQ(2u, wc[1].wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
	EXPECT_EQ(IBV_WC_SUCCESS, wc[1].status);
	EXPECT_EQ(3u, s0->dev->eng_stats[0].tx_umem_inplace);
	EXPECT_EQ(0u, s0->dev->eng_stats[0].tx_umem_copied);
}

/* Frames the port never gives back (a chain the kernel dropped): the ACK
 * said the peer has the data, so the completion goes after
 * ROXE_HELD_MAX_NS (2 s), counted. */
TEST_F_TIMEOUT(inplace, held_completion_expires, 60)
{
	struct side *s0 = &self->p.s[0], *s1 = &self->p.s[1];
	struct ibv_wc wc;

	fill_pattern(self->region, 4096, 7);
	ASSERT_EQ(0, post_send1(s0->qp, IBV_WR_RDMA_WRITE, 5, self->region, 500,
				self->umr->lkey, (uintptr_t)s1->buf, s1->mr->rkey,
				IBV_SEND_SIGNALED));
	ASSERT_TRUE(all_acked(s0->qp));
	EXPECT_EQ(0, memcmp(self->region, s1->buf, 500));
	EXPECT_EQ(0, poll_n(s0->cq, &wc, 1, 1000));	/* held, well within 2 s */
	ASSERT_EQ(1, poll_n(s0->cq, &wc, 1, 5000));
	EXPECT_EQ(5u, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(1u, s0->dev->eng_stats[0].tx_umem_held_expired);
}

/* A QP destroyed while it holds completions: they are dropped with it. */
TEST_F_TIMEOUT(inplace, destroy_while_held, 60)
{
	struct side *s0 = &self->p.s[0], *s1 = &self->p.s[1];

	ASSERT_EQ(0, post_send1(s0->qp, IBV_WR_RDMA_WRITE, 1, self->region, 100,
				self->umr->lkey, (uintptr_t)s1->buf, s1->mr->rkey,
				IBV_SEND_SIGNALED));
	ASSERT_EQ(0, post_send1(s0->qp, IBV_WR_RDMA_WRITE, 2, self->region, 100,
				self->umr->lkey, (uintptr_t)s1->buf, s1->mr->rkey,
				IBV_SEND_SIGNALED));
	ASSERT_TRUE(all_acked(s0->qp));
	EXPECT_EQ(2u, __atomic_load_n(&s0->qp->held_n, __ATOMIC_RELAXED));
	EXPECT_EQ(0, roxe_destroy_qp(s0->qp));
	s0->qp = NULL;
}

TEST_HARNESS_MAIN
