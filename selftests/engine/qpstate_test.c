// SPDX-License-Identifier: GPL-2.0-only
/*
 * The send queue states and the async events: SQE after a local send error
 * on UC and UD (ERR with IBV_EVENT_QP_FATAL on RC), SQD with sends in
 * flight and IBV_EVENT_SQ_DRAINED, the events of responder errors, and the
 * attribute masks of SQE -> RTS and SQD -> SQD.
 */
#include <arpa/inet.h>
#include "kselftest_harness.h"
#include "pair.h"
#include "transport/transport.h"	/* a QP's transport counters, to see an RNR stall */
#include "transport/engine.h"
#include "vclock.h"

#define BUF	(1u << 20)
#define QKEY	0x11111111u

static enum ibv_qp_state qp_state(struct roxe_qp *qp)
{
	struct ibv_qp_attr a;

	roxe_query_qp(qp, &a, IBV_QP_STATE, NULL);
	return a.qp_state;
}

static int sq_draining(struct roxe_qp *qp)
{
	struct ibv_qp_attr a;

	roxe_query_qp(qp, &a, IBV_QP_STATE, NULL);
	return a.sq_draining;
}

/* dev's next async event once the pair is settled (vclock.h: every
 * engine has done all it can at this instant): 0, or -EAGAIN when none
 * was raised, an absence that no wait could make surer. */
static int settled_event(struct pair *p, struct roxe_device *dev, struct roxe_async_event *ev)
{
	int err = vc_settle(p);

	return err ? err : roxe_get_async_event(dev, ev);
}

static int modify_state(struct roxe_qp *qp, enum ibv_qp_state st, int extra_mask)
{
	struct ibv_qp_attr a = { .qp_state = st };

	return roxe_modify_qp(qp, &a, IBV_QP_STATE | extra_mask);
}

/* A signalled SEND of one SGE; UD when ah is set. */
static void send_wr(struct ibv_send_wr *wr, struct ibv_sge *sge, uint64_t id, void *addr,
		    uint32_t len, uint32_t lkey, struct ibv_ah *ah, uint32_t rqpn)
{
	*sge = (struct ibv_sge){ (uintptr_t)addr, len, lkey };
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = id;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = IBV_WR_SEND;
	wr->send_flags = IBV_SEND_SIGNALED;
	wr->wr.ud.ah = ah;
	wr->wr.ud.remote_qpn = rqpn;
	wr->wr.ud.remote_qkey = QKEY;
}

/* --- UC and UD: SQE, and SQD on an idle send queue ---------------------------- */
FIXTURE(ucud) {
	struct pair p;
	struct ibv_ah *ah[2];		/* UD: ah[i] leads from side i to the other */
	uint32_t len, grh;		/* message length; UD's 40-byte GRH */
};

FIXTURE_VARIANT(ucud) {
	enum ibv_qp_type type;
};

FIXTURE_VARIANT_ADD(ucud, uc) { .type = IBV_QPT_UC };
FIXTURE_VARIANT_ADD(ucud, ud) { .type = IBV_QPT_UD };

/* Every fixture here runs on the virtual clock: no timer fires behind a
 * case's back, and "nothing came" is read off a settled pair. */
FIXTURE_SETUP(ucud)
{
	vc_start();
	ASSERT_EQ(0, pair_open(&self->p, 1024, BUF));
	ASSERT_EQ(0, pair_connect(&self->p, variant->type, IBV_MTU_1024, 1, 2, 0, 0, 0));
	/* UC: three packets a message; UD: one datagram of 1000 bytes. */
	self->len = variant->type == IBV_QPT_UD ? 1000 : 3000;
	self->grh = variant->type == IBV_QPT_UD ? 40 : 0;
	if (variant->type != IBV_QPT_UD)
		return;
	for (int i = 0; i < 2; i++) {
		struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
					  .grh = { .hop_limit = 64 } };

		roxe_query_gid(self->p.s[!i].dev, 0, &aa.grh.dgid);
		ASSERT_EQ(0, roxe_create_ah(self->p.s[i].pd, &aa, &self->ah[i]));
	}
}

FIXTURE_TEARDOWN(ucud)
{
	for (int i = 0; i < 2; i++)
		if (self->ah[i])
			roxe_destroy_ah(self->ah[i]);
	pair_close(&self->p);
	EXPECT_EQ(0, leak_check());
}

TEST_F(ucud, local_error_enters_sqe_then_rts)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	uint32_t len = self->len, grh = self->grh, bqpn = roxe_qp_num(b->qp);
	struct ibv_send_wr wr[4], *bad = NULL;
	struct ibv_sge sge[4], bad_sge[2];
	struct roxe_async_event ev;
	struct ibv_qp_attr attr = { 0 };
	struct ibv_wc wc[8];

	fill_pattern(a->buf, len, 1);
	fill_pattern(a->buf + 65536, len, 2);
	fill_pattern(b->buf + 131072, len, 3);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, post_recv1(b->qp, 100 + (uint64_t)i, b->buf + i * 8192, 8192,
					b->mr->lkey));
	/* 0 good, 1 fails locally, 2 and 3 good: posted in one go. */
	for (int i = 0; i < 4; i++) {
		send_wr(&wr[i], &sge[i], (uint64_t)i, a->buf, len, a->mr->lkey, self->ah[0], bqpn);
		if (i)
			wr[i - 1].next = &wr[i];
	}
	if (variant->type == IBV_QPT_UC) {
		/* Two good packets leave before the third finds no MR: the
		 * receiver is left with half a message it must drop. */
		bad_sge[0] = (struct ibv_sge){ (uintptr_t)a->buf, 2048, a->mr->lkey };
		bad_sge[1] = (struct ibv_sge){ (uintptr_t)a->buf + 2048, len - 2048,
					       a->mr->lkey + 0x100 };
		wr[1].sg_list = bad_sge;
		wr[1].num_sge = 2;
	} else {
		sge[1].lkey = a->mr->lkey + 0x100;	/* names no MR */
	}
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr[0], &bad));

	ASSERT_EQ(4, vc_poll(&self->p, a->cq, wc, 4, 0, NULL));
	EXPECT_EQ(0u, wc[0].wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
	EXPECT_EQ(1u, wc[1].wr_id);
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR, wc[1].status);
	for (int i = 2; i < 4; i++) {
		EXPECT_EQ((uint64_t)i, wc[i].wr_id);
		EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc[i].status);
		EXPECT_EQ(IBV_WC_SEND, wc[i].opcode);
	}
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(roxe_qp_num(a->qp), wc[i].qp_num);
	EXPECT_EQ(0, vc_poll(&self->p, a->cq, wc, 1, 0, NULL));
	EXPECT_EQ(IBV_QPS_SQE, qp_state(a->qp));
	/* SQE is no fatal error: no async event. */
	EXPECT_EQ(-EAGAIN, settled_event(&self->p, a->dev, &ev));

	/* b got message 0 only; the failed one completed nothing there. */
	ASSERT_EQ(1, vc_poll(&self->p, b->cq, wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
	EXPECT_EQ(100u, wc[0].wr_id);
	EXPECT_EQ(grh + len, wc[0].byte_len);
	EXPECT_EQ(0, memcmp(a->buf, b->buf + grh, len));
	EXPECT_EQ(0, vc_poll(&self->p, b->cq, wc, 1, 0, NULL));

	/* Sends are refused in SQE. */
	send_wr(&wr[0], &sge[0], 9, a->buf, len, a->mr->lkey, self->ah[0], bqpn);
	EXPECT_EQ(-EINVAL, roxe_post_send(a->qp, &wr[0], &bad));
	EXPECT_EQ(&wr[0], bad);

	/* The receive side goes on: b -> a. */
	ASSERT_EQ(0, post_recv1(a->qp, 200, a->buf + 196608, 8192, a->mr->lkey));
	send_wr(&wr[0], &sge[0], 300, b->buf + 131072, len, b->mr->lkey, self->ah[1],
		roxe_qp_num(a->qp));
	ASSERT_EQ(0, roxe_post_send(b->qp, &wr[0], &bad));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
	EXPECT_EQ(IBV_WC_RECV, wc[0].opcode);
	EXPECT_EQ(200u, wc[0].wr_id);
	EXPECT_EQ(grh + len, wc[0].byte_len);
	EXPECT_EQ(0, memcmp(b->buf + 131072, a->buf + 196608 + grh, len));
	ASSERT_EQ(1, vc_poll(&self->p, b->cq, wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
	EXPECT_EQ(300u, wc[0].wr_id);

	/* SQE -> RTS with what table 91 does not allow there: refused. */
	attr.qp_state = IBV_QPS_RTS;
	attr.cur_qp_state = IBV_QPS_SQE;
	attr.qkey = QKEY;
	attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	EXPECT_EQ(-EINVAL, roxe_modify_qp(a->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN));
	EXPECT_EQ(-EINVAL, roxe_modify_qp(a->qp, &attr, IBV_QP_STATE | IBV_QP_CUR_STATE |
					  (variant->type == IBV_QPT_UD ? IBV_QP_ACCESS_FLAGS :
					   IBV_QP_QKEY)));
	EXPECT_EQ(-EINVAL, modify_state(a->qp, IBV_QPS_SQD, 0));
	attr.cur_qp_state = IBV_QPS_INIT;	/* not what the QP is in */
	EXPECT_EQ(-EINVAL, roxe_modify_qp(a->qp, &attr, IBV_QP_STATE | IBV_QP_CUR_STATE));
	EXPECT_EQ(IBV_QPS_SQE, qp_state(a->qp));
	/* The right mask. */
	attr.cur_qp_state = IBV_QPS_SQE;
	ASSERT_EQ(0, roxe_modify_qp(a->qp, &attr, IBV_QP_STATE | IBV_QP_CUR_STATE |
				    (variant->type == IBV_QPT_UD ? IBV_QP_QKEY :
				     IBV_QP_ACCESS_FLAGS)));
	EXPECT_EQ(IBV_QPS_RTS, qp_state(a->qp));

	/* Sends flow again, end to end, into the receive WQE the failed
	 * message did not use. */
	send_wr(&wr[0], &sge[0], 10, a->buf + 65536, len, a->mr->lkey, self->ah[0], bqpn);
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr[0], &bad));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, wc, 1, 0, NULL));
	EXPECT_EQ(10u, wc[0].wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
	ASSERT_EQ(1, vc_poll(&self->p, b->cq, wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
	EXPECT_EQ(101u, wc[0].wr_id);
	EXPECT_EQ(grh + len, wc[0].byte_len);
	EXPECT_EQ(0, memcmp(a->buf + 65536, b->buf + 8192 + grh, len));
	EXPECT_EQ(0, vc_poll(&self->p, b->cq, wc, 1, 0, NULL));
	EXPECT_EQ(-EAGAIN, settled_event(&self->p, a->dev, &ev));
	EXPECT_EQ(-EAGAIN, settled_event(&self->p, b->dev, &ev));
}

TEST_F(ucud, sqd_holds_new_sends_until_rts)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	uint32_t len = self->len, grh = self->grh;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_SQD, .en_sqd_async_notify = 1 };
	struct ibv_send_wr wr, *bad;
	struct roxe_async_event ev;
	struct ibv_sge sge;
	struct ibv_wc wc;

	fill_pattern(a->buf, len, 4);
	ASSERT_EQ(0, post_recv1(b->qp, 1, b->buf, 8192, b->mr->lkey));
	/* Nothing in progress: drained at once, the event comes once. */
	ASSERT_EQ(0, roxe_modify_qp(a->qp, &attr, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY));
	ASSERT_EQ(0, settled_event(&self->p, a->dev, &ev));
	EXPECT_EQ(IBV_EVENT_SQ_DRAINED, ev.type);
	EXPECT_EQ(a->qp, ev.element.qp);
	EXPECT_EQ(IBV_QPS_SQD, qp_state(a->qp));
	EXPECT_EQ(0, sq_draining(a->qp));

	/* Posting in SQD is allowed; the send waits for RTS. */
	send_wr(&wr, &sge, 5, a->buf, len, a->mr->lkey, self->ah[0], roxe_qp_num(b->qp));
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr, &bad));
	EXPECT_EQ(0, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(0, vc_poll(&self->p, b->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(-EAGAIN, settled_event(&self->p, a->dev, &ev));
	/* Something table 91 does not allow in SQD -> SQD. */
	attr.sq_psn = 7;
	EXPECT_EQ(-EINVAL, roxe_modify_qp(a->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN));
	ASSERT_EQ(0, modify_state(a->qp, IBV_QPS_RTS, 0));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(5u, wc.wr_id);
	ASSERT_EQ(1, vc_poll(&self->p, b->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(grh + len, wc.byte_len);
	EXPECT_EQ(0, memcmp(a->buf, b->buf + grh, len));
	EXPECT_EQ(-EAGAIN, settled_event(&self->p, a->dev, &ev));
}

/* --- RC: ERR and its events, SQD left before the drain ends -------------------- */
FIXTURE(rc) {
	struct pair p;
};

FIXTURE_SETUP(rc)
{
	vc_start();
	ASSERT_EQ(0, pair_open(&self->p, 1024, BUF));
	/* rnr_retry 7: an RNR stall lasts until the receiver posts. */
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, 10, 20, 14, 7, 7));
}

FIXTURE_TEARDOWN(rc)
{
	pair_close(&self->p);
	EXPECT_EQ(0, leak_check());
}

TEST_F(rc, local_error_is_fatal)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_send_wr wr[2], *bad;
	struct roxe_async_event ev;
	struct ibv_sge sge[2];
	struct ibv_wc wc[4];

	ASSERT_EQ(0, post_recv1(b->qp, 100, b->buf, 8192, b->mr->lkey));
	ASSERT_EQ(0, post_recv1(b->qp, 101, b->buf, 8192, b->mr->lkey));
	send_wr(&wr[0], &sge[0], 0, a->buf, 3000, a->mr->lkey + 0x100, NULL, 0);
	send_wr(&wr[1], &sge[1], 1, a->buf, 3000, a->mr->lkey, NULL, 0);
	wr[0].next = &wr[1];
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr[0], &bad));
	ASSERT_EQ(2, vc_poll(&self->p, a->cq, wc, 2, 0, NULL));
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR, wc[0].status);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc[1].status);
	/* Not SQE: RC errors are fatal. */
	EXPECT_EQ(IBV_QPS_ERR, qp_state(a->qp));
	ASSERT_EQ(0, settled_event(&self->p, a->dev, &ev));
	EXPECT_EQ(IBV_EVENT_QP_FATAL, ev.type);
	EXPECT_EQ(a->qp, ev.element.qp);
	EXPECT_EQ(-EAGAIN, settled_event(&self->p, a->dev, &ev));	/* once */
	EXPECT_EQ(-EAGAIN, settled_event(&self->p, b->dev, &ev));
	EXPECT_EQ(IBV_QPS_RTS, qp_state(b->qp));
	/* The application's own move to ERR flushes but raises nothing. */
	ASSERT_EQ(0, modify_state(b->qp, IBV_QPS_ERR, 0));
	ASSERT_EQ(2, vc_poll(&self->p, b->cq, wc, 2, 0, NULL));
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc[0].status);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc[1].status);
	EXPECT_EQ(-EAGAIN, settled_event(&self->p, b->dev, &ev));
}

TEST_F(rc, responder_errors_raise_their_events)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct roxe_async_event ev;
	struct ibv_wc wc;

	/* A WRITE with a wrong rkey: the requester's QP dies (QP_FATAL), the
	 * responder's with a local access violation (QP_ACCESS_ERR). */
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_WRITE, 1, a->buf, 64, a->mr->lkey,
				(uintptr_t)b->buf, b->mr->rkey ^ 0x100, IBV_SEND_SIGNALED));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wc.status);
	ASSERT_EQ(0, settled_event(&self->p, a->dev, &ev));
	EXPECT_EQ(IBV_EVENT_QP_FATAL, ev.type);
	EXPECT_EQ(a->qp, ev.element.qp);
	ASSERT_EQ(0, settled_event(&self->p, b->dev, &ev));
	EXPECT_EQ(IBV_EVENT_QP_ACCESS_ERR, ev.type);
	EXPECT_EQ(b->qp, ev.element.qp);
	EXPECT_EQ(IBV_QPS_ERR, qp_state(b->qp));
	EXPECT_EQ(-EAGAIN, settled_event(&self->p, a->dev, &ev));
	EXPECT_EQ(-EAGAIN, settled_event(&self->p, b->dev, &ev));
}

/* A QP takes the access flags the verbs define for MRs too, as rxe and
 * mlx5 do (pyverbs' ODP tests give their QPs the MR's flags, ON_DEMAND
 * included): only the remote ones (and FLUSH's) mean anything for a QP.
 * A bit no verbs header defines is refused.
 */
TEST_F(rc, qp_takes_the_mr_access_flags)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_qp_attr at;
	struct ibv_wc wc;

	at.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			     IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED | IBV_ACCESS_ON_DEMAND |
			     IBV_ACCESS_HUGETLB | IBV_ACCESS_RELAXED_ORDERING;
	ASSERT_EQ(0, roxe_modify_qp(b->qp, &at, IBV_QP_ACCESS_FLAGS));
	at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | (1u << 15);
	EXPECT_EQ(-EINVAL, roxe_modify_qp(b->qp, &at, IBV_QP_ACCESS_FLAGS));
	at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | (1u << 30);
	EXPECT_EQ(-EINVAL, roxe_modify_qp(b->qp, &at, IBV_QP_ACCESS_FLAGS));
	ASSERT_EQ(0, roxe_query_qp(b->qp, &at, IBV_QP_ACCESS_FLAGS, NULL));
	EXPECT_TRUE(at.qp_access_flags & IBV_ACCESS_ON_DEMAND);
	EXPECT_FALSE(at.qp_access_flags & IBV_ACCESS_REMOTE_WRITE);
	memset(a->buf, 0x5a, 64);
	/* READ is open, WRITE still not, whatever else the flags say */
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_READ, 1, a->buf + 4096, 64, a->mr->lkey,
				(uintptr_t)b->buf, b->mr->rkey, IBV_SEND_SIGNALED));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_WRITE, 2, a->buf, 64, a->mr->lkey,
				(uintptr_t)b->buf, b->mr->rkey, IBV_SEND_SIGNALED));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wc.status);
	EXPECT_NE(0x5a, ((uint8_t *)b->buf)[0]);
}

static uint64_t rnr_naks(struct roxe_qp *qp)
{
	return __atomic_load_n(&qp->stats->rnr_nak_rcvd, __ATOMIC_RELAXED);
}

TEST_F(rc, sqd_without_notify_and_back_before_drained)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct roxe_async_event ev;
	struct ibv_wc wc;

	/* A send stalled by RNR; SQD without asking for the event. */
	fill_pattern(a->buf, 5000, 7);
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_SEND, 1, a->buf, 5000, a->mr->lkey, 0, 0,
				IBV_SEND_SIGNALED));
	/* The peer refuses it with an RNR NAK (no receive posted), and
	 * again when the RNR wait is over: started, and stalled. */
	ASSERT_EQ(0, vc_settle(&self->p));
	EXPECT_EQ(1u, rnr_naks(a->qp));
	ASSERT_NE(0u, vc_step(&self->p));
	EXPECT_EQ(2u, rnr_naks(a->qp));
	ASSERT_EQ(0, modify_state(a->qp, IBV_QPS_SQD, 0));
	EXPECT_EQ(1, sq_draining(a->qp));
	/* SQD -> RTS does not wait for the drain. */
	ASSERT_EQ(0, modify_state(a->qp, IBV_QPS_RTS, 0));
	EXPECT_EQ(0, sq_draining(a->qp));
	ASSERT_EQ(0, post_recv1(b->qp, 2, b->buf, 8192, b->mr->lkey));
	/* the RNR wait's end: one step of the clock */
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 1, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(1, vc_poll(&self->p, b->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(0, memcmp(a->buf, b->buf, 5000));

	/* Idle now: SQD drains at once, silently. */
	ASSERT_EQ(0, modify_state(a->qp, IBV_QPS_SQD, 0));
	EXPECT_EQ(-EAGAIN, settled_event(&self->p, a->dev, &ev));
	EXPECT_EQ(0, sq_draining(a->qp));
	ASSERT_EQ(0, modify_state(a->qp, IBV_QPS_RTS, 0));
	EXPECT_EQ(IBV_QPS_RTS, qp_state(a->qp));
}

/* --- RC, SQD with sends in flight, the receiver stepped turn by turn ---------- */
FIXTURE(rcstep) {
	struct pair p;
};

FIXTURE_SETUP(rcstep)
{
	/* b is polled: it acknowledges only when the test runs its turns.
	 * The virtual clock stands still: a does not retransmit while b is
	 * held, however long that takes. */
	vc_start();
	ASSERT_EQ(0, pair_open_polled(&self->p, 1024, BUF, 1u << 1));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, 10, 20, 16, 7, 7));
}

FIXTURE_TEARDOWN(rcstep)
{
	pair_close(&self->p);
	EXPECT_EQ(0, leak_check());
}

/* Between two turns of b, virtual time enough for the ACK b holds from
 * one turn to leave in the next (sched.c's ACK hold: 10 us); a's
 * retransmit timer (268 ms) is never reached this way. */
#define B_TURN_NS	(100 * 1000ull)

/* One turn of b's engine; its receive completions are appended to wc. */
static int step_b(struct side *b, struct ibv_wc *wc, int *got, int max)
{
	int r;

	roxe_clock_advance(B_TURN_NS);
	r = roxe_poll_cq(b->cq, max - *got, wc + *got);

	if (r > 0)
		*got += r;
	return r;
}

/* a's engine thread has done all it can with what it has (b's frames, the
 * posts), b's turns left to the test (vc_settle would run them). */
static int settle_a(struct side *a)
{
	return vc_settle_devs(&a->dev, 1);
}

/* a's send completions, up to max in all, once a is settled. */
static int poll_a(struct side *a, struct ibv_wc *wc, int *got, int max)
{
	int r = settle_a(a);

	if (!r)
		r = roxe_poll_cq(a->cq, max - *got, wc + *got);
	if (r > 0)
		*got += r;
	return r;
}

/* A RESET drops the receives posted before it (as rxe), also when the
 * engine never saw the QP leave RESET: INIT, a receive and RESET again
 * between two of its turns (b turns only when polled). */
TEST_F(rcstep, reset_drops_receives_posted_in_init)
{
	struct side *b = &self->p.s[1];
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_wc wc[2];
	struct roxe_qp *qp;
	int got = 0;

	ASSERT_EQ(0, qp_create(b, IBV_QPT_RC, &qp));
	ASSERT_EQ(0, roxe_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_ACCESS_FLAGS));
	ASSERT_EQ(0, post_recv1(qp, 0x7ec0, b->buf, 64, b->mr->lkey));
	ASSERT_EQ(0, modify_state(qp, IBV_QPS_RESET, 0));
	ASSERT_EQ(0, roxe_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_ACCESS_FLAGS));
	ASSERT_EQ(0, modify_state(qp, IBV_QPS_ERR, 0));
	/* ERR flushes what is posted: nothing, the receive went with RESET */
	for (int turn = 0; turn < 4; turn++) {
		int r = roxe_poll_cq(b->cq, 2 - got, wc + got);

		ASSERT_LE(0, r);
		got += r;
	}
	EXPECT_EQ(0, got);
	if (got)
		TH_LOG("completion wr_id 0x%llx status %d", (unsigned long long)wc[0].wr_id,
		       wc[0].status);
	EXPECT_EQ(0, roxe_destroy_qp(qp));
}

TEST_F(rcstep, sqd_drains_sends_in_flight)
{
	/* 64 packets a message: one turn of b (a burst of 64 frames)
	 * acknowledges one message, so the completions come one by one. */
	enum { N = 4, LEN = 65536, PKTS = N * LEN / 1024 };
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct roxe_port *port_a = roxe_loop_port(self->p.wire, 0);
	struct ibv_wc wc[N + 2], bwc[N + 2];
	struct ibv_qp_attr attr = { 0 };
	struct ibv_send_wr wr[N + 2], *bad;
	struct ibv_sge sge[N + 2];
	struct roxe_async_event ev;
	int got = 0, bgot = 0, steps_with_progress = 0, step, r;
	uint64_t base;

	/* The send window (user/transport/recovery.h) opens as ACKs come
	 * back: 8 messages first grow it past PKTS, so that all N messages
	 * below are in flight at once. */
	{
		struct ibv_wc ww[8];
		int wa = 0, wb = 0;

		for (int i = 0; i < 8; i++) {
			ASSERT_EQ(0, post_recv1(b->qp, 200 + (uint64_t)i, b->buf, LEN, b->mr->lkey));
			ASSERT_EQ(0, post_send1(a->qp, IBV_WR_SEND, 200 + (uint64_t)i, a->buf, LEN,
						a->mr->lkey, 0, 0, IBV_SEND_SIGNALED));
		}
		/* a turn of b, a settled: each moves the exchange on (the
		 * bound is met only by one that stopped) */
		for (int t = 0; wa < 8 || wb < 8; t++) {
			ASSERT_LT(t, 1000);
			ASSERT_GE(step_b(b, ww, &wb, 8), 0);
			ASSERT_EQ(0, settle_a(a));
			r = roxe_poll_cq(a->cq, 8 - wa, ww);
			ASSERT_GE(r, 0);
			for (int k = 0; k < r; k++)
				ASSERT_EQ(IBV_WC_SUCCESS, ww[k].status);
			wa += r;
			wb = wb > 8 ? 8 : wb;
		}
	}
	for (int i = 0; i < N + 2; i++) {
		fill_pattern(a->buf + i * LEN, LEN, 10 + (uint32_t)i);
		send_wr(&wr[i], &sge[i], (uint64_t)i, a->buf + i * LEN, LEN, a->mr->lkey, NULL, 0);
		ASSERT_EQ(0, post_recv1(b->qp, 100 + (uint64_t)i, b->buf + i * LEN, LEN,
					b->mr->lkey));
	}
	ASSERT_EQ(0, step_b(b, bwc, &bgot, N + 2));	/* b takes in its QP's state */
	for (int i = 0; i < N - 1; i++)
		wr[i].next = &wr[i + 1];
	base = __atomic_load_n(&port_a->stats.tx_frames, __ATOMIC_RELAXED);
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr[0], &bad));
	/* Every packet sent, none acknowledged: all N are in flight. */
	ASSERT_EQ(0, settle_a(a));
	ASSERT_EQ((uint64_t)PKTS, __atomic_load_n(&port_a->stats.tx_frames, __ATOMIC_RELAXED) - base);

	attr.qp_state = IBV_QPS_SQD;
	attr.en_sqd_async_notify = 1;
	ASSERT_EQ(0, roxe_modify_qp(a->qp, &attr, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY));
	EXPECT_EQ(IBV_QPS_SQD, qp_state(a->qp));
	EXPECT_EQ(1, sq_draining(a->qp));
	/* Attributes wait for the drain. */
	attr.timeout = 15;
	EXPECT_EQ(-EBUSY, roxe_modify_qp(a->qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT));
	/* Posted during SQD: accepted, not started. */
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr[N], &bad));
	ASSERT_EQ(0, settle_a(a));
	EXPECT_EQ((uint64_t)PKTS, __atomic_load_n(&port_a->stats.tx_frames, __ATOMIC_RELAXED) - base);
	EXPECT_EQ(0, roxe_poll_cq(a->cq, N + 2, wc));
	EXPECT_EQ(-EAGAIN, roxe_get_async_event(a->dev, &ev));
	EXPECT_EQ(1, sq_draining(a->qp));

	/* b acknowledges a message a turn. The event must not come before
	 * the last of the N completions, and must come with it: a settled
	 * with all N has raised it. */
	for (step = 0; ; step++) {
		int before = got;

		ASSERT_LT(step, 4 * N);
		ASSERT_GE(step_b(b, bwc, &bgot, N + 2), 0);
		ASSERT_GE(poll_a(a, wc, &got, got + 1), 0);
		ASSERT_LE(got, N);
		steps_with_progress += got > before;
		if (roxe_get_async_event(a->dev, &ev) == 0)
			break;
		if (got == N) {
			ASSERT_EQ(0, roxe_get_async_event(a->dev, &ev));
			break;
		}
	}
	EXPECT_EQ(IBV_EVENT_SQ_DRAINED, ev.type);
	EXPECT_EQ(a->qp, ev.element.qp);
	/* What the CQ holds now was there when the event was read. */
	r = roxe_poll_cq(a->cq, N + 2 - got, wc + got);
	ASSERT_GE(r, 0);
	got += r;
	ASSERT_EQ(N, got);			/* all of them, before the event */
	EXPECT_GE(steps_with_progress, 2);	/* the test could have told */
	for (int i = 0; i < N; i++) {
		EXPECT_EQ((uint64_t)i, wc[i].wr_id);
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
		EXPECT_EQ(IBV_WC_SEND, wc[i].opcode);
		EXPECT_EQ((uint32_t)LEN, wc[i].byte_len);
	}
	EXPECT_EQ(0, sq_draining(a->qp));
	EXPECT_EQ(IBV_QPS_SQD, qp_state(a->qp));
	ASSERT_EQ(N, bgot);
	for (int i = 0; i < N; i++) {
		EXPECT_EQ(IBV_WC_SUCCESS, bwc[i].status);
		EXPECT_EQ(100u + (uint64_t)i, bwc[i].wr_id);
		EXPECT_EQ((uint32_t)LEN, bwc[i].byte_len);
		EXPECT_EQ(0, memcmp(a->buf + i * LEN, b->buf + i * LEN, LEN));
	}
	/* Exactly once; and the send posted in SQD has not left a. */
	ASSERT_EQ(0, settle_a(a));
	EXPECT_EQ(0, step_b(b, bwc, &bgot, N + 2));
	EXPECT_EQ(N, bgot);
	EXPECT_EQ(-EAGAIN, roxe_get_async_event(a->dev, &ev));
	EXPECT_EQ(0, roxe_poll_cq(a->cq, 1, wc));

	/* Drained: SQD -> SQD changes what table 91 allows, nothing else. */
	attr.timeout = 16;
	attr.retry_cnt = 6;
	attr.rnr_retry = 7;
	attr.min_rnr_timer = 2;
	attr.max_rd_atomic = 2;
	ASSERT_EQ(0, roxe_modify_qp(a->qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT |
				    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MIN_RNR_TIMER |
				    IBV_QP_MAX_QP_RD_ATOMIC));
	EXPECT_EQ(-EINVAL, roxe_modify_qp(a->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN));
	EXPECT_EQ(-EINVAL, roxe_modify_qp(a->qp, &attr, IBV_QP_STATE | IBV_QP_DEST_QPN));
	EXPECT_EQ(-EINVAL, roxe_modify_qp(a->qp, &attr, IBV_QP_STATE |
					  IBV_QP_EN_SQD_ASYNC_NOTIFY));
	roxe_query_qp(a->qp, &attr, IBV_QP_STATE, NULL);
	EXPECT_EQ(6, attr.retry_cnt);
	EXPECT_EQ(2, attr.max_rd_atomic);
	EXPECT_EQ(IBV_QPS_SQD, attr.qp_state);

	/* Back to RTS: the held send goes, and so does the next. */
	ASSERT_EQ(0, modify_state(a->qp, IBV_QPS_RTS, 0));
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr[N + 1], &bad));
	got = 0;
	for (int t = 0; got < 2 || bgot < N + 2; t++) {
		ASSERT_LT(t, 1000);
		ASSERT_GE(step_b(b, bwc, &bgot, N + 2), 0);
		ASSERT_GE(poll_a(a, wc, &got, 2), 0);
	}
	for (int i = 0; i < 2; i++) {
		EXPECT_EQ((uint64_t)(N + i), wc[i].wr_id);
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
		EXPECT_EQ(IBV_WC_SUCCESS, bwc[N + i].status);
		EXPECT_EQ(100u + (uint64_t)(N + i), bwc[N + i].wr_id);
		EXPECT_EQ(0, memcmp(a->buf + (N + i) * LEN, b->buf + (N + i) * LEN, LEN));
	}
	EXPECT_EQ(-EAGAIN, roxe_get_async_event(a->dev, &ev));
	EXPECT_EQ(-EAGAIN, roxe_get_async_event(b->dev, &ev));
}

TEST_HARNESS_MAIN
