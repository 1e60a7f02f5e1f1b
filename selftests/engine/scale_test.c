// SPDX-License-Identifier: GPL-2.0-only
/*
 * 16K RC QPs on one device: all created, connected pairwise across the
 * loop wire, traffic on a spread of them (the QPN lookup is an array index,
 * so the last QP costs what the first does), all destroyed without a leak.
 * Prints what one QP costs in memory.
 */
#include <arpa/inet.h>
#include "kselftest_harness.h"
#include "pair.h"
#include "transport/transport.h"
#include "vclock.h"

#define NQP 16384

FIXTURE(scale) {
	struct pair p;
	struct roxe_qp **qa, **qb;
};

FIXTURE_SETUP(scale)
{
	/* The virtual clock stands still: the wire loses nothing, so no QP
	 * needs its timer, and none fires because the host was slow. */
	vc_start();
	ASSERT_EQ(0, pair_open(&self->p, 1024, 1u << 20));
	self->qa = calloc(NQP, sizeof(*self->qa));
	self->qb = calloc(NQP, sizeof(*self->qb));
	ASSERT_NE(NULL, self->qa);
	ASSERT_NE(NULL, self->qb);
}

FIXTURE_TEARDOWN(scale)
{
	for (int i = 0; i < NQP; i++) {
		if (self->qa[i])
			roxe_destroy_qp(self->qa[i]);
		if (self->qb[i])
			roxe_destroy_qp(self->qb[i]);
	}
	free(self->qa);
	free(self->qb);
	pair_close(&self->p);
	EXPECT_EQ(0, leak_check());
}

TEST_F(scale, sixteen_k_qps)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc;
	size_t per_qp;

	for (int i = 0; i < NQP; i++) {
		ASSERT_EQ(0, qp_create_cap(a, IBV_QPT_RC, 1, 1, &self->qa[i])) TH_LOG("QP %d", i);
	}
	/* What a QP allocates: itself, its two rings, the engine's copies of
	 * its send WQEs, its READ/ATOMIC slots. */
	per_qp = sizeof(struct roxe_qp) +
		 ROXE_MAX_RD_ATOMIC * sizeof(struct roxe_rd_res) +
		 (self->qa[0]->sq.mask + 1) * sizeof(struct rxe_send_wqe) +
		 roxe_queue_bytes(__builtin_ctz(self->qa[0]->sq_buf->index_mask + 1),
				  self->qa[0]->sq_buf->log2_elem_size) +
		 roxe_queue_bytes(__builtin_ctz(self->qa[0]->rq_buf->index_mask + 1),
				  self->qa[0]->rq_buf->log2_elem_size);
	for (int i = 0; i < NQP; i++) {
		ASSERT_EQ(0, qp_create_cap(b, IBV_QPT_RC, 1, 1, &self->qb[i])) TH_LOG("QP %d", i);
	}
	ksft_print_msg("%d QPs per device; one RC QP with 1-entry queues: %zu bytes\n",
		       NQP, per_qp);
	fflush(stdout);	/* the harness ends the test with _exit() */
	for (int i = 0; i < NQP; i += 1021) {
		ASSERT_EQ(0, qp_connect(self->qa[i], b->dev, roxe_qp_num(self->qb[i]), IBV_QPT_RC,
					IBV_MTU_1024, 1, 2, 14, 7, 7));
		ASSERT_EQ(0, qp_connect(self->qb[i], a->dev, roxe_qp_num(self->qa[i]), IBV_QPT_RC,
					IBV_MTU_1024, 2, 1, 14, 7, 7));
		fill_pattern(a->buf, 2000, (uint32_t)i);
		ASSERT_EQ(0, post_recv1(self->qb[i], (uint64_t)i, b->buf, 4096, b->mr->lkey));
		ASSERT_EQ(0, post_send1(self->qa[i], IBV_WR_SEND, (uint64_t)i, a->buf, 2000,
					a->mr->lkey, 0, 0, IBV_SEND_SIGNALED));
		ASSERT_EQ(1, poll_n(b->cq, &wc, 1, 5000)) TH_LOG("QP %d", i);
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(roxe_qp_num(self->qb[i]), wc.qp_num);
		ASSERT_EQ(0, memcmp(a->buf, b->buf, 2000));
		ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	}
}

TEST_HARNESS_MAIN
