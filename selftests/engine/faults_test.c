// SPDX-License-Identifier: GPL-2.0-only
/*
 * RC under loss, duplication, reordering and corruption on the loop wire
 * (both directions): every message is delivered exactly once, in order,
 * intact, and every WRITE and READ lands byte for byte.
 *
 * On the virtual clock: a timer fires only when the pair is settled (all
 * it sent received, all it received acted on) and the test moves time to
 * it, so only a loss brings a resend, never a window that a slow host had
 * not drained yet. Each case's bound is a number of such clock steps.
 */
#include <arpa/inet.h>
#include "kselftest_harness.h"
#include "pair.h"
#include "core/core.h"	/* a QP's transport counters: its RNR NAKs */
#include "vclock.h"

#define BUF (8u << 20)
#define MSGS 300
/* Clock steps (timer expiries) a case may take: at 10% loss runs take
 * under 30, 50 and 130. */
#define SEND_STEPS	MSGS		/* one a message */
#define RDMA_STEPS	(40 * 3)	/* one a WR */
#define PING_STEPS	(100 * 3)	/* a round's RNR wait, a resend each way */

FIXTURE(faults) {
	struct pair p;
	unsigned steps;		/* times the test moved the clock to a deadline */
};

FIXTURE_VARIANT(faults) {
	struct roxe_loop_faults f;
};

FIXTURE_VARIANT_ADD(faults, loss_1pct) { .f = { .drop_ppm = 10000, .seed = 1 } };
FIXTURE_VARIANT_ADD(faults, loss_10pct) { .f = { .drop_ppm = 100000, .seed = 2 } };
FIXTURE_VARIANT_ADD(faults, duplicate_5pct) { .f = { .dup_ppm = 50000, .seed = 3 } };
FIXTURE_VARIANT_ADD(faults, reorder_5pct) { .f = { .reorder_ppm = 50000, .seed = 4 } };
FIXTURE_VARIANT_ADD(faults, corrupt_2pct) { .f = { .corrupt_ppm = 20000, .seed = 5 } };
FIXTURE_VARIANT_ADD(faults, everything) {
	.f = { .drop_ppm = 30000, .dup_ppm = 20000, .reorder_ppm = 20000, .corrupt_ppm = 10000,
	       .seed = 6 }
};

FIXTURE_SETUP(faults)
{
	self->steps = 0;
	vc_start();
	ASSERT_EQ(0, pair_open(&self->p, 1024, BUF));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, 0xffff00, 0x7fff00, 12, 7, 7));
	roxe_loop_set_faults(self->p.wire, 0, &variant->f);
	roxe_loop_set_faults(self->p.wire, 1, &variant->f);
}

FIXTURE_TEARDOWN(faults)
{
	pair_close(&self->p);
	EXPECT_EQ(0, leak_check());
}

static uint32_t msg_len(int i)
{
	static const uint32_t lens[] = { 1, 100, 1024, 3000, 8192, 20000 };

	return lens[i % 6];
}

TEST_F(faults, sends_exactly_once_in_order)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc[32];
	int got = 0, acked = 0;

	for (int i = 0; i < MSGS; i++)
		ASSERT_EQ(0, post_recv1(b->qp, (uint64_t)i, b->buf + (size_t)i * 20480, 20480,
					b->mr->lkey));
	fill_pattern(a->buf, BUF / 2, 11);
	for (int i = 0; i < MSGS; i++)
		ASSERT_EQ(0, post_send1(a->qp, IBV_WR_SEND, (uint64_t)i,
					a->buf + (size_t)i * 7919 % (BUF / 2 - 20480), msg_len(i),
					a->mr->lkey, 0, 0, IBV_SEND_SIGNALED));
	while (got < MSGS) {
		int r = vc_poll(&self->p, b->cq, wc, MSGS - got < 32 ? MSGS - got : 32,
				SEND_STEPS, &self->steps);

		ASSERT_GT(r, 0) TH_LOG("received %d of %d, %u clock steps", got, MSGS, self->steps);
		for (int k = 0; k < r; k++, got++) {
			size_t src = (size_t)got * 7919 % (BUF / 2 - 20480);

			ASSERT_EQ(IBV_WC_SUCCESS, wc[k].status);
			ASSERT_EQ((uint64_t)got, wc[k].wr_id);
			ASSERT_EQ(msg_len(got), wc[k].byte_len);
			ASSERT_EQ(0, memcmp(b->buf + (size_t)got * 20480, a->buf + src, msg_len(got)));
		}
	}
	while (acked < MSGS) {
		int r = vc_poll(&self->p, a->cq, wc, MSGS - acked < 32 ? MSGS - acked : 32,
				SEND_STEPS, &self->steps);

		ASSERT_GT(r, 0) TH_LOG("acknowledged %d of %d, %u clock steps", acked, MSGS,
				       self->steps);
		for (int k = 0; k < r; k++, acked++) {
			ASSERT_EQ(IBV_WC_SUCCESS, wc[k].status);
			ASSERT_EQ((uint64_t)acked, wc[k].wr_id);
		}
	}
	/* Nothing extra, once all in flight has landed: duplicates were not
	 * delivered twice. */
	ASSERT_EQ(0, vc_settle(&self->p));
	EXPECT_EQ(0, roxe_poll_cq(b->cq, 32, wc));
	TH_LOG("%u clock steps", self->steps);
}

TEST_F(faults, writes_reads_atomics)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	uint64_t *counter = (uint64_t *)(b->buf + BUF - 64);
	struct ibv_wc wc;

	*counter = 0;
	for (int i = 0; i < 40; i++) {
		uint32_t len = msg_len(i) * 3;
		uint8_t *src = a->buf + (size_t)i * 65536, *dst = b->buf + (size_t)i * 65536;
		uint8_t *back = a->buf + BUF / 2 + (size_t)i * 65536;
		struct ibv_sge sge = { (uintptr_t)(a->buf + BUF - 64), 8, a->mr->lkey };
		struct ibv_send_wr wr = { 0 }, *bad;

		fill_pattern(src, len, (uint32_t)i);
		ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_WRITE, 1, src, len, a->mr->lkey,
					(uintptr_t)dst, b->mr->rkey, 0));
		ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_READ, 2, back, len, a->mr->lkey,
					(uintptr_t)dst, b->mr->rkey, IBV_SEND_SIGNALED));
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.atomic.remote_addr = (uintptr_t)counter;
		wr.wr.atomic.rkey = b->mr->rkey;
		wr.wr.atomic.compare_add = 1;
		ASSERT_EQ(0, roxe_post_send(a->qp, &wr, &bad));

		ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, RDMA_STEPS, &self->steps))
			TH_LOG("round %d, %u clock steps", i, self->steps);
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", roxe_wc_status_str(wc.status));
		ASSERT_EQ(IBV_WC_RDMA_READ, wc.opcode);
		ASSERT_EQ(0, memcmp(src, back, len)) TH_LOG("round %d", i);
		ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, RDMA_STEPS, &self->steps))
			TH_LOG("round %d, %u clock steps", i, self->steps);
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(IBV_WC_FETCH_ADD, wc.opcode);
		/* A retried atomic must not run twice. */
		ASSERT_EQ((uint64_t)i, *(uint64_t *)(a->buf + BUF - 64));
	}
	EXPECT_EQ(40u, *counter);
	TH_LOG("%u clock steps", self->steps);
}

/*
 * Ping-pong with one-entry send and receive queues (ibv_rc_pingpong's
 * shape): go-back-N must find the one WQE in a ring that is always full,
 * and RNR NAKs (the peer's receive is not posted yet) must be retried.
 */
TEST_F(faults, one_entry_queues_ping_pong)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct roxe_qp *qa, *qb;
	struct ibv_wc wc;

	ASSERT_EQ(0, qp_create_cap(a, IBV_QPT_RC, 1, 1, &qa));
	ASSERT_EQ(0, qp_create_cap(b, IBV_QPT_RC, 1, 1, &qb));
	ASSERT_EQ(0, qp_connect(qa, b->dev, roxe_qp_num(qb), IBV_QPT_RC, IBV_MTU_1024, 0xfffff0,
				0x10, 12, 7, 7));
	ASSERT_EQ(0, qp_connect(qb, a->dev, roxe_qp_num(qa), IBV_QPT_RC, IBV_MTU_1024, 0x10,
				0xfffff0, 12, 7, 7));
	const __u64 *rnr = &a->dev->qp_stats[roxe_qp_num(qa)].rnr_nak_rcvd;

	for (int i = 0; i < 100; i++) {
		uint8_t *out = a->buf + (size_t)(i % 64) * 4096;
		uint64_t naks = __atomic_load_n(rnr, __ATOMIC_RELAXED);

		fill_pattern(out, 4000, (uint32_t)i);
		/* The send may beat the receive: RNR NAK, then retry. Every
		 * third one surely does: its receive waits for the NAK. */
		ASSERT_EQ(0, post_send1(qa, IBV_WR_SEND, (uint64_t)i, out, 4000, a->mr->lkey, 0, 0,
					IBV_SEND_SIGNALED));
		if (i % 3 == 0)
			ASSERT_TRUE(vc_wait(&self->p, __atomic_load_n(rnr, __ATOMIC_RELAXED) > naks,
					    PING_STEPS, &self->steps))
				TH_LOG("message %d: no RNR NAK, %u clock steps", i, self->steps);
		ASSERT_EQ(0, post_recv1(qb, (uint64_t)i, b->buf, 4096, b->mr->lkey));
		ASSERT_EQ(1, vc_poll(&self->p, b->cq, &wc, 1, PING_STEPS, &self->steps))
			TH_LOG("message %d, %u clock steps", i, self->steps);
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(0, memcmp(out, b->buf, 4000)) TH_LOG("message %d", i);
		ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, PING_STEPS, &self->steps))
			TH_LOG("message %d, %u clock steps", i, self->steps);
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", roxe_wc_status_str(wc.status));
		ASSERT_EQ((uint64_t)i, wc.wr_id);
	}
	TH_LOG("%u clock steps", self->steps);
	roxe_destroy_qp(qa);
	roxe_destroy_qp(qb);
}

TEST_HARNESS_MAIN
