// SPDX-License-Identifier: GPL-2.0-only
/*
 * roxe(7)'s LIMITS at their boundary on an embedded device: query_device
 * reports each limit as include/roxe/limits.h defines it, each advertised
 * value is granted and used (SGEs, inline data, work requests, CQ entries,
 * READs in flight, MRs, QPs, engines), and one past it is refused with
 * rxe's error.
 */
#include <arpa/inet.h>
#include "kselftest_harness.h"
#include "pair.h"
#include "roxe/limits.h"
#include "roxe/kabi.h"
#include "transport/transport.h"
#include "verbs/served.h"
#include "vclock.h"

#define BUF (1u << 20)

FIXTURE(lim) {
	struct pair p;
};

/* On the virtual clock, side 0 (the requester throughout) polled: it
 * moves only when the test turns it, so its send queue can be filled
 * before anything is taken from it, and an inline source overwritten
 * before the engine could look. Side 1 has its engine thread, which
 * sends its held ACKs before it sleeps (a polled responder's wait
 * ACK_HOLD_NS of real time, a deadline the virtual clock does not see). */
FIXTURE_SETUP(lim)
{
	vc_start();
	ASSERT_EQ(0, pair_open_polled(&self->p, 1024, BUF, 1));
}

FIXTURE_TEARDOWN(lim)
{
	pair_close(&self->p);
	EXPECT_EQ(0, leak_check());
}

static struct ibv_qp_cap cap_of(uint32_t wr, uint32_t sge, uint32_t inl)
{
	return (struct ibv_qp_cap){ .max_send_wr = wr, .max_recv_wr = wr, .max_send_sge = sge,
				    .max_recv_sge = sge, .max_inline_data = inl };
}

static int create_cap(struct side *s, struct ibv_qp_cap *cap, struct roxe_qp **qp)
{
	struct roxe_qp_init_attr ia = { .send_cq = s->cq, .recv_cq = s->cq, .cap = *cap,
					.qp_type = IBV_QPT_RC };
	int err = roxe_create_qp(s->pd, &ia, qp);

	*cap = ia.cap;
	return err;
}

static int to_init(struct roxe_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ };

	return roxe_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			      IBV_QP_ACCESS_FLAGS);
}

static int to_rtr(struct roxe_qp *qp, struct roxe_device *peer, uint32_t peer_qpn, uint8_t rd)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
				 .dest_qp_num = peer_qpn, .rq_psn = 1, .max_dest_rd_atomic = rd,
				 .min_rnr_timer = 1 };

	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	roxe_query_gid(peer, 0, &a.ah_attr.grh.dgid);
	a.ah_attr.grh.hop_limit = 64;
	return roxe_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			      IBV_QP_MIN_RNR_TIMER);
}

static int to_rts(struct roxe_qp *qp, uint8_t rd)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS, .sq_psn = 1, .timeout = 14,
				 .retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = rd };

	return roxe_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* The pair's QPs, both with cap, connected with rd READs/atomics each way. */
static int connect_cap(struct pair *p, struct ibv_qp_cap cap, uint8_t rd)
{
	struct ibv_qp_cap c[2] = { cap, cap };
	int err = 0;

	for (int i = 0; i < 2 && !err; i++)
		err = create_cap(&p->s[i], &c[i], &p->s[i].qp);
	for (int i = 0; i < 2 && !err; i++)
		err = to_init(p->s[i].qp);
	for (int i = 0; i < 2 && !err; i++)
		err = to_rtr(p->s[i].qp, p->s[!i].dev, roxe_qp_num(p->s[!i].qp), rd);
	for (int i = 0; i < 2 && !err; i++)
		err = to_rts(p->s[i].qp, rd);
	return err;
}

/* Side s's CQ replaced by one of cqe entries (before any QP uses it). */
static int big_cq(struct side *s, int cqe)
{
	int err = roxe_destroy_cq(s->cq);

	s->cq = NULL;
	return err ? err : roxe_create_cq(s->dev, cqe, NULL, NULL, &s->cq);
}

/* n completions from cq with the clock standing still (no timer may
 * fire): nothing is lost, so neither QP of the pair resends anything,
 * which the counters confirm (-EPROTO otherwise). */
static int lim_poll(struct pair *p, struct roxe_cq *cq, struct ibv_wc *wc, int n)
{
	int got = vc_poll(p, cq, wc, n, 0, NULL);

	for (int i = 0; i < 2; i++) {
		struct roxe_qp_stats *st = &p->s[i].dev->qp_stats[roxe_qp_num(p->s[i].qp)];

		if (st->retransmits || st->timeouts)
			return -EPROTO;
	}
	return got;
}

TEST_F(lim, query_device_reports_limits_h)
{
	struct ibv_device_attr a;
	struct ibv_port_attr pa;

	ASSERT_EQ(0, roxe_query_device(self->p.s[0].dev, &a));
	/* QPNs 0 and 1 are never handed out (QP0 unused, QP1 the GSI QP) */
	EXPECT_EQ(ROXE_MAX_QPS - 2, a.max_qp);
	EXPECT_EQ(ROXE_MAX_WR, a.max_qp_wr);
	EXPECT_EQ(ROXE_MAX_SGE, a.max_sge);
	EXPECT_EQ(ROXE_MAX_SGE, a.max_sge_rd);
	EXPECT_EQ(ROXE_MAX_CQ_EMB, a.max_cq);
	EXPECT_EQ(ROXE_MAX_CQE, a.max_cqe);
	/* key index 0 is never handed out: a key of 0 names no MR */
	EXPECT_EQ(ROXE_MAX_MR - 1, a.max_mr);
	EXPECT_EQ(ROXE_MAX_MW, a.max_mw);
	EXPECT_EQ(ROXE_MAX_PD, a.max_pd);
	EXPECT_EQ(ROXE_MAX_RD_ATOMIC, a.max_qp_rd_atom);
	EXPECT_EQ(ROXE_MAX_RD_ATOMIC, a.max_qp_init_rd_atom);
	EXPECT_EQ(ROXE_MAX_RD_ATOMIC * (ROXE_MAX_QPS - 2), a.max_res_rd_atom);
	EXPECT_EQ(ROXE_MAX_AH, a.max_ah);
	EXPECT_EQ(ROXE_MAX_SRQ_EMB, a.max_srq);
	EXPECT_EQ(ROXE_MAX_WR, a.max_srq_wr);
	EXPECT_EQ(ROXE_MAX_SGE, a.max_srq_sge);
	EXPECT_EQ(ROXE_MAX_MCAST_GRP, a.max_mcast_grp);
	EXPECT_EQ(ROXE_MAX_MCAST_QP_ATTACH, a.max_mcast_qp_attach);
	EXPECT_EQ(ROXE_MAX_TOT_MCAST_QP_ATTACH, a.max_total_mcast_qp_attach);
	ASSERT_EQ(0, roxe_query_port(self->p.s[0].dev, &pa));
	EXPECT_EQ(ROXE_MAX_MSG_SZ, pa.max_msg_sz);
}

/* 32 SGEs a WR: granted, one more refused (EINVAL, as rxe), and a SEND and
 * an RDMA WRITE gathered from 32 SGEs and a READ scattered into 32 arrive
 * byte for byte, the SGEs' boundaries falling across packets. */
TEST_F(lim, sge)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_sge ss[ROXE_MAX_SGE + 1], rs[ROXE_MAX_SGE + 1];
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_recv_wr rwr = { 0 }, *rbad;
	struct ibv_qp_cap cap = cap_of(16, ROXE_MAX_SGE + 1, 0);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = ROXE_MAX_SGE + 1 } };
	struct roxe_srq *srq = NULL;
	struct roxe_qp *qp = NULL;
	uint8_t *expect = malloc(BUF);
	uint32_t total = 0, off;
	struct ibv_wc wc;

	ASSERT_NE(NULL, expect);
	EXPECT_EQ(-EINVAL, create_cap(a, &cap, &qp));
	cap = cap_of(16, ROXE_MAX_SGE, 0);
	cap.max_recv_sge = ROXE_MAX_SGE + 1;
	EXPECT_EQ(-EINVAL, create_cap(a, &cap, &qp));
	EXPECT_EQ(-EINVAL, roxe_create_srq(a->pd, &sa, &srq));
	sa.attr.max_sge = ROXE_MAX_SGE;
	ASSERT_EQ(0, roxe_create_srq(a->pd, &sa, &srq));
	EXPECT_EQ(ROXE_MAX_SGE, sa.attr.max_sge);
	EXPECT_EQ(0, roxe_destroy_srq(srq));
	ASSERT_EQ(0, connect_cap(&self->p, cap_of(16, ROXE_MAX_SGE, 0), 1));

	/* Sender's SGEs 37 + 53 i bytes, 100 bytes apart; receiver's the same
	 * bytes in other pieces, 64 bytes apart: 32 different boundaries. */
	for (int i = 0; i < ROXE_MAX_SGE; i++) {
		ss[i] = (struct ibv_sge){ (uintptr_t)a->buf + total + 100u * (unsigned)i,
					  37u + 53u * (unsigned)i, a->mr->lkey };
		total += ss[i].length;
	}
	fill_pattern(a->buf, BUF / 2, 5);
	for (int i = 0, o = 0; i < ROXE_MAX_SGE; o += ss[i].length, i++)
		memcpy(expect + o, (void *)(uintptr_t)ss[i].addr, ss[i].length);
	off = 0;
	for (int i = 0; i < ROXE_MAX_SGE; i++) {
		uint32_t len = i < ROXE_MAX_SGE - 1 ? total / ROXE_MAX_SGE - 7u + (unsigned)i % 11u :
			       total - off;

		rs[i] = (struct ibv_sge){ (uintptr_t)b->buf + off + 64u * (unsigned)i, len,
					  b->mr->lkey };
		off += len;
	}
	ss[ROXE_MAX_SGE] = ss[0];
	rs[ROXE_MAX_SGE] = rs[0];
	memset(b->buf, 0, BUF);

	/* one SGE too many: refused, nothing posted */
	rwr.sg_list = rs;
	rwr.num_sge = ROXE_MAX_SGE + 1;
	EXPECT_EQ(-EINVAL, roxe_post_recv(b->qp, &rwr, &rbad));
	wr.sg_list = ss;
	wr.num_sge = ROXE_MAX_SGE + 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	EXPECT_EQ(-EINVAL, roxe_post_send(a->qp, &wr, &bad));

	rwr.wr_id = 1;
	rwr.num_sge = ROXE_MAX_SGE;
	ASSERT_EQ(0, roxe_post_recv(b->qp, &rwr, &rbad));
	wr.wr_id = 2;
	wr.num_sge = ROXE_MAX_SGE;
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr, &bad));
	ASSERT_EQ(1, lim_poll(&self->p, b->cq, &wc, 1));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(1u, wc.wr_id);
	EXPECT_EQ(total, wc.byte_len);
	for (int i = 0, o = 0; i < ROXE_MAX_SGE; o += rs[i].length, i++) {
		EXPECT_EQ(0, memcmp(expect + o, (void *)(uintptr_t)rs[i].addr, rs[i].length))
			TH_LOG("receive SGE %d", i);
		/* the 64 bytes between the receiver's SGEs untouched */
		EXPECT_EQ(0, ((uint8_t *)(uintptr_t)rs[i].addr)[rs[i].length]);
	}
	ASSERT_EQ(1, lim_poll(&self->p, a->cq, &wc, 1));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);

	/* RDMA WRITE gathered from 32 SGEs into one range */
	wr.wr_id = 3;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)b->buf + BUF / 2;
	wr.wr.rdma.rkey = b->mr->rkey;
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr, &bad));
	ASSERT_EQ(1, lim_poll(&self->p, a->cq, &wc, 1));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(expect, b->buf + BUF / 2, total));
	EXPECT_EQ(0, b->buf[BUF / 2 + total]);

	/* and READ back, scattered into the receiver-shaped SGEs on a's side
	 * (max_sge_rd) */
	for (int i = 0; i < ROXE_MAX_SGE; i++) {
		rs[i].addr = rs[i].addr - (uintptr_t)b->buf + (uintptr_t)a->buf + BUF / 2;
		rs[i].lkey = a->mr->lkey;
	}
	memset(a->buf + BUF / 2, 0, BUF / 2);
	wr.wr_id = 4;
	wr.sg_list = rs;
	wr.opcode = IBV_WR_RDMA_READ;
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr, &bad));
	ASSERT_EQ(1, lim_poll(&self->p, a->cq, &wc, 1));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(total, wc.byte_len);
	for (int i = 0, o = 0; i < ROXE_MAX_SGE; o += rs[i].length, i++) {
		EXPECT_EQ(0, memcmp(expect + o, (void *)(uintptr_t)rs[i].addr, rs[i].length))
			TH_LOG("read SGE %d", i);
		EXPECT_EQ(0, ((uint8_t *)(uintptr_t)rs[i].addr)[rs[i].length]);
	}
	free(expect);
}

/* 512 inline bytes: granted, 513 refused at create and at post (EINVAL);
 * an inline SEND of 512 bytes from unregistered memory arrives as it was
 * at the post, though the source is overwritten before the engine runs. */
TEST_F(lim, inline_data)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_qp_cap cap = cap_of(16, 1, ROXE_MAX_INLINE + 1);
	uint8_t src[ROXE_MAX_INLINE + 1], sent[ROXE_MAX_INLINE];
	struct ibv_sge sge = { (uintptr_t)src, ROXE_MAX_INLINE + 1, 0 };
	struct ibv_send_wr wr = { 0 }, *bad;
	struct roxe_qp *qp = NULL;
	struct ibv_qp_attr qa;
	struct ibv_wc wc;

	EXPECT_EQ(-EINVAL, create_cap(a, &cap, &qp));
	cap = cap_of(16, 1, ROXE_MAX_INLINE);
	ASSERT_EQ(0, create_cap(a, &cap, &qp));
	EXPECT_EQ(ROXE_MAX_INLINE, cap.max_inline_data);
	EXPECT_EQ(0, roxe_destroy_qp(qp));
	ASSERT_EQ(0, connect_cap(&self->p, cap_of(16, 1, ROXE_MAX_INLINE), 1));
	ASSERT_EQ(0, roxe_query_qp(a->qp, &qa, 0, NULL));
	EXPECT_EQ(ROXE_MAX_INLINE, qa.cap.max_inline_data);

	fill_pattern(src, sizeof(src), 3);
	memcpy(sent, src, sizeof(sent));
	memset(b->buf, 0, 2 * ROXE_MAX_INLINE);
	ASSERT_EQ(0, post_recv1(b->qp, 1, b->buf, 2 * ROXE_MAX_INLINE, b->mr->lkey));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	EXPECT_EQ(-EINVAL, roxe_post_send(a->qp, &wr, &bad));
	sge.length = ROXE_MAX_INLINE;
	wr.wr_id = 2;
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr, &bad));
	memset(src, 0xa5, sizeof(src));	/* the engine has not run yet (polled) */
	ASSERT_EQ(1, lim_poll(&self->p, b->cq, &wc, 1));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ((uint32_t)ROXE_MAX_INLINE, wc.byte_len);
	EXPECT_EQ(0, memcmp(sent, b->buf, ROXE_MAX_INLINE));
	EXPECT_EQ(0, b->buf[ROXE_MAX_INLINE]);
	ASSERT_EQ(1, lim_poll(&self->p, a->cq, &wc, 1));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(2u, wc.wr_id);
}

/* 16383 WRs a queue: granted exactly, one more refused (EINVAL); a full
 * queue refuses the next post with ENOMEM (as rxe), naming it in bad_wr;
 * all 16383 then complete, in order, into CQs of 65535 entries. */
TEST_F(lim, work_requests)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_qp_cap cap = cap_of(ROXE_MAX_WR + 1, 1, 0);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = ROXE_MAX_WR + 1, .max_sge = 1 } };
	struct ibv_wc *wc = calloc(ROXE_MAX_WR, sizeof(*wc));
	struct ibv_sge sge = { (uintptr_t)a->buf, 8, a->mr->lkey };
	struct ibv_send_wr wr = { 0 }, *bad = NULL;
	struct ibv_recv_wr rwr = { 0 }, *rbad = NULL;
	struct roxe_srq *srq = NULL;
	struct roxe_qp *qp = NULL;

	ASSERT_NE(NULL, wc);
	EXPECT_EQ(-EINVAL, create_cap(a, &cap, &qp));
	cap = cap_of(ROXE_MAX_WR, 1, 0);
	cap.max_recv_wr = ROXE_MAX_WR + 1;
	EXPECT_EQ(-EINVAL, create_cap(a, &cap, &qp));
	EXPECT_EQ(-EINVAL, roxe_create_srq(a->pd, &sa, &srq));
	sa.attr.max_wr = ROXE_MAX_WR;
	ASSERT_EQ(0, roxe_create_srq(a->pd, &sa, &srq));
	EXPECT_EQ(ROXE_MAX_WR, sa.attr.max_wr);
	EXPECT_EQ(0, roxe_destroy_srq(srq));
	ASSERT_EQ(0, big_cq(a, ROXE_MAX_CQE));
	ASSERT_EQ(0, big_cq(b, ROXE_MAX_CQE));
	ASSERT_EQ(0, connect_cap(&self->p, cap_of(ROXE_MAX_WR, 1, 0), 1));
	for (int i = 0; i < 2; i++) {
		struct ibv_qp_attr qa;

		ASSERT_EQ(0, roxe_query_qp(self->p.s[i].qp, &qa, 0, NULL));
		EXPECT_EQ(ROXE_MAX_WR, qa.cap.max_send_wr);
		EXPECT_EQ(ROXE_MAX_WR, qa.cap.max_recv_wr);
	}

	/* Neither device runs until polled: nothing leaves the queues. */
	rwr.sg_list = &(struct ibv_sge){ (uintptr_t)b->buf, 8, b->mr->lkey };
	rwr.num_sge = 1;
	for (int i = 0; i < ROXE_MAX_WR; i++) {
		rwr.wr_id = (uint64_t)i;
		ASSERT_EQ(0, roxe_post_recv(b->qp, &rwr, &rbad)) TH_LOG("receive %d", i);
	}
	rwr.wr_id = ROXE_MAX_WR;
	EXPECT_EQ(-ENOMEM, roxe_post_recv(b->qp, &rwr, &rbad));
	EXPECT_EQ(&rwr, rbad);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	for (int i = 0; i < ROXE_MAX_WR; i++) {
		wr.wr_id = (uint64_t)i;
		ASSERT_EQ(0, roxe_post_send(a->qp, &wr, &bad)) TH_LOG("send %d", i);
	}
	wr.wr_id = ROXE_MAX_WR;
	EXPECT_EQ(-ENOMEM, roxe_post_send(a->qp, &wr, &bad));
	EXPECT_EQ(&wr, bad);

	/* The send window (ROXE_MAX_INFLIGHT) is within the wire's depth:
	 * nothing is lost. */
	ASSERT_EQ(ROXE_MAX_WR, lim_poll(&self->p, b->cq, wc, ROXE_MAX_WR));
	for (int i = 0; i < ROXE_MAX_WR; i++) {
		ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status) TH_LOG("receive %d", i);
		ASSERT_EQ((uint64_t)i, wc[i].wr_id);
	}
	ASSERT_EQ(ROXE_MAX_WR, lim_poll(&self->p, a->cq, wc, ROXE_MAX_WR));
	for (int i = 0; i < ROXE_MAX_WR; i++) {
		ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status) TH_LOG("send %d", i);
		ASSERT_EQ((uint64_t)i, wc[i].wr_id);
	}
	/* emptied: the queues take posts again */
	EXPECT_EQ(0, roxe_post_recv(b->qp, &rwr, &rbad));
	EXPECT_EQ(0, roxe_post_send(a->qp, &wr, &bad));
	EXPECT_EQ(1, lim_poll(&self->p, a->cq, wc, 1));
	free(wc);
}

/* 65535 entries a CQ: granted, one more refused (EINVAL, at create and at
 * resize); the CQ holds 65535 completions, and the 65536th overruns it
 * (-EOVERFLOW after the 65535, IBV_EVENT_CQ_ERR). The completions are
 * flushed receives: five QPs' receive queues moved to ERR. */
TEST_F(lim, cq_entries)
{
	struct side *a = &self->p.s[0];
	const int n = ROXE_MAX_CQE + 1;
	struct ibv_wc *wc = calloc((size_t)n, sizeof(*wc));
	struct roxe_qp *qp[5] = { 0 };
	struct roxe_async_event ev;
	struct roxe_cq *cq = NULL;
	int posted = 0;

	ASSERT_NE(NULL, wc);
	EXPECT_EQ(-EINVAL, roxe_create_cq(a->dev, ROXE_MAX_CQE + 1, NULL, NULL, &cq));
	ASSERT_EQ(0, roxe_create_cq(a->dev, 16, NULL, NULL, &cq));
	EXPECT_EQ(-EINVAL, roxe_resize_cq(cq, ROXE_MAX_CQE + 1));
	EXPECT_EQ(0, roxe_resize_cq(cq, ROXE_MAX_CQE));
	EXPECT_EQ(0, roxe_destroy_cq(cq));
	ASSERT_EQ(0, big_cq(a, ROXE_MAX_CQE));

	for (int q = 0; q < 5; q++) {
		struct ibv_qp_cap cap = cap_of(1, 1, 0);
		struct ibv_recv_wr rwr = { 0 }, *rbad;

		cap.max_recv_wr = ROXE_MAX_WR;
		ASSERT_EQ(0, create_cap(a, &cap, &qp[q]));
		ASSERT_EQ(0, to_init(qp[q]));
		/* 4 x 16383 + 4 = 65536: one past the CQ */
		for (int i = 0; i < (q < 4 ? ROXE_MAX_WR : n - 4 * ROXE_MAX_WR); i++) {
			rwr.wr_id = (uint64_t)posted++;
			ASSERT_EQ(0, roxe_post_recv(qp[q], &rwr, &rbad));
		}
	}
	ASSERT_EQ(n, posted);
	for (int q = 0; q < 5; q++)
		ASSERT_EQ(0, roxe_modify_qp(qp[q], &(struct ibv_qp_attr){ .qp_state = IBV_QPS_ERR },
					    IBV_QP_STATE));
	ASSERT_EQ(0, vc_settle(&self->p));
	EXPECT_EQ(ROXE_MAX_CQE, roxe_poll_cq(a->cq, n, wc));
	for (int i = 0; i < ROXE_MAX_CQE; i++) {
		ASSERT_EQ(IBV_WC_WR_FLUSH_ERR, wc[i].status) TH_LOG("completion %d", i);
	}
	EXPECT_EQ(-EOVERFLOW, roxe_poll_cq(a->cq, n, wc));
	ASSERT_EQ(0, roxe_get_async_event(a->dev, &ev));
	EXPECT_EQ(IBV_EVENT_CQ_ERR, ev.type);
	EXPECT_EQ(a->cq, ev.element.cq);
	for (int q = 0; q < 5; q++)
		EXPECT_EQ(0, roxe_destroy_qp(qp[q]));
	free(wc);
}

/* 16 READs/atomics in flight each way: 16 accepted for max_rd_atomic and
 * max_dest_rd_atomic, 17 refused (EINVAL, as rxe: its modify_qp checks
 * both against max_qp_rd_atom); 17 READs posted: 16 leave at once, the
 * 17th waits for room, and all arrive byte for byte with no
 * retransmission. */
TEST_F(lim, reads_in_flight)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_qp_cap c[2] = { cap_of(64, 1, 0), cap_of(64, 1, 0) };
	const uint32_t len = 3000;	/* 3 response packets each */
	struct ibv_wc wc[ROXE_MAX_RD_ATOMIC + 1];
	struct ibv_qp_attr qa;

	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, create_cap(&self->p.s[i], &c[i], &self->p.s[i].qp));
		ASSERT_EQ(0, to_init(self->p.s[i].qp));
	}
	for (int i = 0; i < 2; i++) {
		struct roxe_qp *qp = self->p.s[i].qp, *peer = self->p.s[!i].qp;

		EXPECT_EQ(-EINVAL, to_rtr(qp, self->p.s[!i].dev, roxe_qp_num(peer),
					  ROXE_MAX_RD_ATOMIC + 1));
		ASSERT_EQ(0, to_rtr(qp, self->p.s[!i].dev, roxe_qp_num(peer), ROXE_MAX_RD_ATOMIC));
	}
	for (int i = 0; i < 2; i++) {
		EXPECT_EQ(-EINVAL, to_rts(self->p.s[i].qp, ROXE_MAX_RD_ATOMIC + 1));
		ASSERT_EQ(0, to_rts(self->p.s[i].qp, ROXE_MAX_RD_ATOMIC));
		ASSERT_EQ(0, roxe_query_qp(self->p.s[i].qp, &qa, 0, NULL));
		EXPECT_EQ(ROXE_MAX_RD_ATOMIC, qa.max_rd_atomic);
		EXPECT_EQ(ROXE_MAX_RD_ATOMIC, qa.max_dest_rd_atomic);
	}

	fill_pattern(b->buf, (ROXE_MAX_RD_ATOMIC + 1) * len, 11);
	memset(a->buf, 0, (ROXE_MAX_RD_ATOMIC + 1) * len);
	for (uint32_t i = 0; i <= ROXE_MAX_RD_ATOMIC; i++)
		ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_READ, i, a->buf + i * len, len,
					a->mr->lkey, (uintptr_t)b->buf + i * len, b->mr->rkey,
					IBV_SEND_SIGNALED));
	/* one turn of a: its requests go out, no response is taken in yet */
	roxe_engine_poll(&a->dev->engines[0]);
	EXPECT_EQ((unsigned)ROXE_MAX_RD_ATOMIC, a->qp->req.rd_atomic);
	ASSERT_EQ(ROXE_MAX_RD_ATOMIC + 1,
		  lim_poll(&self->p, a->cq, wc, ROXE_MAX_RD_ATOMIC + 1));
	for (uint32_t i = 0; i <= ROXE_MAX_RD_ATOMIC; i++) {
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status) TH_LOG("READ %u", i);
		EXPECT_EQ(i, wc[i].wr_id);
		EXPECT_EQ(len, wc[i].byte_len);
	}
	EXPECT_EQ(0, memcmp(a->buf, b->buf, (ROXE_MAX_RD_ATOMIC + 1) * len));
}

/* MRs: exactly max_mr (65535: key index 0 is never used) registered, the
 * pair's own included, then ENOMEM; one deregistered, one more fits. All
 * over one 4 KiB buffer: an MR costs its record, not its memory. */
TEST_F(lim, memory_regions)
{
	struct side *a = &self->p.s[0];
	struct roxe_mr **mr = calloc(ROXE_MAX_MR, sizeof(*mr));
	uint8_t *seen = calloc(ROXE_MAX_MR, 1);
	struct ibv_device_attr da;
	struct roxe_mr *more;
	int n = 1, err;	/* the pair's MR */
	uint32_t idx;

	ASSERT_NE(NULL, mr);
	ASSERT_NE(NULL, seen);
	ASSERT_EQ(0, roxe_query_device(a->dev, &da));
	seen[a->mr->lkey >> 8] = 1;
	while (!(err = roxe_reg_mr(a->pd, a->buf, 4096, IBV_ACCESS_LOCAL_WRITE, &mr[n]))) {
		idx = mr[n]->lkey >> 8;
		/* every key a distinct index, none 0 */
		ASSERT_TRUE(idx > 0 && idx < ROXE_MAX_MR && !seen[idx]) TH_LOG("MR %d", n);
		seen[idx] = 1;
		if (++n > da.max_mr)
			break;
	}
	EXPECT_EQ(-ENOMEM, err);
	EXPECT_EQ(da.max_mr, n);
	idx = mr[n / 2]->lkey >> 8;
	ASSERT_EQ(0, roxe_dereg_mr(mr[n / 2]));
	ASSERT_EQ(0, roxe_reg_mr(a->pd, a->buf, 4096, IBV_ACCESS_LOCAL_WRITE, &mr[n / 2]));
	EXPECT_EQ(idx, mr[n / 2]->lkey >> 8);	/* the one free index */
	EXPECT_EQ(-ENOMEM, roxe_reg_mr(a->pd, a->buf, 4096, IBV_ACCESS_LOCAL_WRITE, &more));
	for (int i = 1; i < n && i < ROXE_MAX_MR; i++)
		if (mr[i])
			EXPECT_EQ(0, roxe_dereg_mr(mr[i]));
	free(mr);
	free(seen);
}

/* QPs: exactly max_qp (32766: QPNs 2..32767) created, then ENOMEM; one
 * destroyed, one more fits. Cheap on an embedded device (a QP with
 * 1-entry queues is some 5 KiB, see scale_test): all of them are made. */
TEST_F(lim, queue_pairs)
{
	struct side *a = &self->p.s[0];
	struct roxe_qp **qp = calloc(ROXE_MAX_QPS, sizeof(*qp));
	uint8_t *seen = calloc(ROXE_MAX_QPS, 1);
	struct ibv_device_attr da;
	struct roxe_qp *more;
	int n = 0, err;
	uint32_t qpn;

	ASSERT_NE(NULL, qp);
	ASSERT_NE(NULL, seen);
	ASSERT_EQ(0, roxe_query_device(a->dev, &da));
	while (!(err = qp_create_cap(a, IBV_QPT_UD, 1, 1, &qp[n]))) {
		qpn = roxe_qp_num(qp[n]);
		ASSERT_TRUE(qpn >= 2 && qpn < ROXE_MAX_QPS && !seen[qpn]) TH_LOG("QP %d", n);
		seen[qpn] = 1;
		if (++n > da.max_qp)
			break;
	}
	EXPECT_EQ(-ENOMEM, err);
	EXPECT_EQ(da.max_qp, n);
	qpn = roxe_qp_num(qp[n / 2]);
	ASSERT_EQ(0, roxe_destroy_qp(qp[n / 2]));
	ASSERT_EQ(0, qp_create_cap(a, IBV_QPT_UD, 1, 1, &qp[n / 2]));
	EXPECT_EQ(qpn, roxe_qp_num(qp[n / 2]));	/* the one free QPN */
	EXPECT_EQ(-ENOMEM, qp_create_cap(a, IBV_QPT_UD, 1, 1, &more));
	for (int i = 0; i < n && i < ROXE_MAX_QPS; i++)
		if (qp[i])
			EXPECT_EQ(0, roxe_destroy_qp(qp[i]));
	free(qp);
	free(seen);
}

/* Engines: a device runs up to ROXE_MAX_ENGINES (64, the XDP program's
 * engine table), one more is refused (EINVAL); a device roxed opens
 * (roxe_served_device_open with roxe.ko's ROXE_KABI_MAX_ENGINES, 16)
 * runs 16, not 17. Polled devices on small wires of their own: each
 * engine needs a port, and a thread would only cost time. */
TEST(engines)
{
	struct roxe_loop_wire *w[ROXE_MAX_ENGINES + 1];
	struct roxe_port *ports[ROXE_MAX_ENGINES + 1];
	struct roxe_device_attr da = { .backend = ROXE_BACKEND_PORTS, .mtu = 1024,
				       .polled = true, .ports = ports };
	struct roxe_afxdp_plan plan;
	struct roxe_if_queues q = { .rx = 256, .tx = 256 };
	struct roxe_open_report r;
	struct roxe_device *dev;

	for (int i = 0; i <= ROXE_MAX_ENGINES; i++) {
		w[i] = roxe_loop_wire_new(4096 + 256, 4);
		ASSERT_NE(NULL, w[i]);
		ports[i] = roxe_loop_port(w[i], 0);
	}
	roxe_gid_from_v4(da.gid, htonl(0x0a630001));
	da.mac[0] = 0x02;
	da.engines = ROXE_MAX_ENGINES;
	ASSERT_EQ(0, roxe_device_open(&da, &dev));
	EXPECT_EQ((unsigned)ROXE_MAX_ENGINES, dev->nengines);
	roxe_device_close(dev);
	da.engines = ROXE_MAX_ENGINES + 1;
	EXPECT_EQ(-EINVAL, roxe_device_open(&da, &dev));

	da.engines = ROXE_KABI_MAX_ENGINES;
	ASSERT_EQ(0, roxe_served_device_open(&da, ROXE_KABI_MAX_ENGINES, &dev, &r));
	EXPECT_EQ((unsigned)ROXE_KABI_MAX_ENGINES, r.engines);
	roxe_device_close(dev);
	da.engines = ROXE_KABI_MAX_ENGINES + 1;
	EXPECT_EQ(-EINVAL, roxe_served_device_open(&da, ROXE_KABI_MAX_ENGINES, &dev, &r));
	EXPECT_EQ(ROXE_OPEN_ATTR, r.step);

	/* On an interface the plan says so: 16 of 256 queues for roxed, 64
	 * (its XDP map's 16384 sockets over 256 queues) for a device of its
	 * own; one more engine is refused either way. */
	EXPECT_EQ(0, roxe_afxdp_plan(ROXE_KABI_MAX_ENGINES, 256, ROXE_KABI_MAX_ENGINES, &q,
				     ROXE_MAX_XSKS, &plan));
	EXPECT_EQ(-EINVAL, roxe_afxdp_plan(ROXE_KABI_MAX_ENGINES + 1, 256, ROXE_KABI_MAX_ENGINES,
					   &q, ROXE_MAX_XSKS, &plan));
	EXPECT_EQ(ROXE_PLAN_MAX, plan.limit);
	EXPECT_EQ(0, roxe_afxdp_plan(ROXE_MAX_ENGINES, 256, ROXE_MAX_ENGINES, &q, ROXE_MAX_XSKS,
				     &plan));
	EXPECT_EQ(-EINVAL, roxe_afxdp_plan(ROXE_MAX_ENGINES + 1, 256, ROXE_MAX_ENGINES, &q,
					   ROXE_MAX_XSKS, &plan));
	for (int i = 0; i <= ROXE_MAX_ENGINES; i++)
		roxe_loop_wire_free(w[i]);
	EXPECT_EQ(0, leak_check());
}

TEST_HARNESS_MAIN
