// SPDX-License-Identifier: GPL-2.0-only
/*
 * UC and UD over the loop backend, and shared receive queues: data
 * verified byte for byte, UC losing whole messages (never delivering a
 * damaged one) under loss, UD's GRH, source QP and Q_Key checks, SRQ limit
 * events.
 */
#include <arpa/inet.h>
#include "kselftest_harness.h"
#include "pair.h"
#include "roxe/queue.h"
#include "transport/transport.h"
#include "transport/engine.h"

#define BUF (4u << 20)

FIXTURE(uc) {
	struct pair p;
};

FIXTURE_SETUP(uc)
{
	ASSERT_EQ(0, pair_open(&self->p, 1024, BUF));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_UC, IBV_MTU_1024, 0xfffffe, 77, 0, 0, 0));
}

FIXTURE_TEARDOWN(uc)
{
	pair_close(&self->p);
	EXPECT_EQ(0, leak_check());
}

TEST_F(uc, send_write_write_imm)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_sge sge = { (uintptr_t)a->buf, 3000, a->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_wc wc;

	fill_pattern(a->buf, 3000, 5);
	ASSERT_EQ(0, post_recv1(b->qp, 1, b->buf, 4096, b->mr->lkey));
	wr.opcode = IBV_WR_SEND;
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr, &bad));
	ASSERT_EQ(1, poll_n(b->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(3000u, wc.byte_len);
	EXPECT_EQ(0, memcmp(a->buf, b->buf, 3000));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));	/* UC completes when sent */
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);

	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)b->buf + 8192;
	wr.wr.rdma.rkey = b->mr->rkey;
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr, &bad));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
	ASSERT_EQ(0, post_recv1(b->qp, 2, b->buf, 16, b->mr->lkey));
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htonl(0x1234);
	wr.wr.rdma.remote_addr = (uintptr_t)b->buf + 16384;
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr, &bad));
	ASSERT_EQ(1, poll_n(b->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc.opcode);
	EXPECT_EQ(htonl(0x1234), wc.imm_data);
	/* Both writes landed (the second completion orders after the first). */
	EXPECT_EQ(0, memcmp(a->buf, b->buf + 8192, 3000));
	EXPECT_EQ(0, memcmp(a->buf, b->buf + 16384, 3000));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
}

/* The wire's counts, read while an engine may write them. */
static uint64_t port_count(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/* Everything side `from` sent is on the wire (two turns after its send
 * completions), side !from has received all the wire carried, and turned
 * twice since: what it will ever make of those frames, it has. Counts, not
 * a wait long enough on a quick host; 0 or -ETIMEDOUT (a hang guard of
 * 10 s, not a number of yields a quick host runs through sooner). */
static int wire_drained(struct pair *p, int from)
{
	struct roxe_port *tx = roxe_loop_port(p->wire, from);
	struct roxe_port *rx = roxe_loop_port(p->wire, !from);

	roxe_dev_quiesce(p->s[from].dev);
	wait_until(port_count(&rx->stats.rx_frames) >= port_count(&tx->stats.tx_frames), 10000);
	if (port_count(&rx->stats.rx_frames) != port_count(&tx->stats.tx_frames))
		return -ETIMEDOUT;
	roxe_dev_quiesce(p->s[!from].dev);
	return 0;
}

TEST_F(uc, loss_drops_whole_messages)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct roxe_port *pa = roxe_loop_port(self->p.wire, 0);
	struct roxe_port *pb = roxe_loop_port(self->p.wire, 1);
	struct roxe_loop_faults f = { .drop_ppm = 50000, .seed = 9 };
	const int n = 200;
	struct ibv_wc wc[16] = { { .status = IBV_WC_GENERAL_ERR } };
	int got = 0, last = -1, lost;

	roxe_loop_set_faults(self->p.wire, 0, &f);
	for (int i = 0; i < n; i++)
		ASSERT_EQ(0, post_recv1(b->qp, (uint64_t)i, b->buf + (size_t)i * 8192, 8192,
					b->mr->lkey));
	for (int i = 0; i < n; i++) {
		/* Message i: 5 packets whose bytes all say i. */
		memset(a->buf + (size_t)i * 5000, i & 0xff, 5000);
		ASSERT_EQ(0, post_send1(a->qp, IBV_WR_SEND, (uint64_t)i, a->buf + (size_t)i * 5000,
					5000, a->mr->lkey, 0, 0,
					i == n - 1 ? IBV_SEND_SIGNALED : 0));
	}
	/* Not a wait of so long that all should be there: counts. The last
	 * message's completion says all were sent (UC completes when sent);
	 * two turns later its frames are on the wire; once b has received
	 * every frame the wire carried and turned twice more, every message
	 * that will ever complete has. */
	ASSERT_EQ(1, poll_n(a->cq, wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
	ASSERT_EQ(0, wire_drained(&self->p, 0));
	EXPECT_EQ(port_count(&pa->stats.tx_frames), pb->stats.rx_frames);
	EXPECT_EQ(0u, pa->stats.tx_dropped);	/* only the faults dropped frames */
	EXPECT_EQ(5u * n, a->dev->qp_stats[roxe_qp_num(a->qp)].tx_packets);
	lost = 5 * n - (int)pa->stats.tx_frames;
	for (;;) {
		int r = roxe_poll_cq(b->cq, 16, wc);

		if (r <= 0)
			break;
		for (int k = 0; k < r; k++, got++) {
			/* Receive WQEs are used in order: the k-th delivered
			 * message is in buffer k and is one whole message. */
			uint8_t v = b->buf[(size_t)wc[k].wr_id * 8192];

			ASSERT_EQ(IBV_WC_SUCCESS, wc[k].status);
			ASSERT_EQ(5000u, wc[k].byte_len);
			for (int j = 1; j < 5000; j++)
				ASSERT_EQ(v, b->buf[(size_t)wc[k].wr_id * 8192 + j]);
			ASSERT_GT((int)v, last);	/* in order, no duplicates */
			last = v;
		}
	}
	/* Each lost frame costs its message, no other: at most one message
	 * each, at least one per 5 (a message's frames). ~23% of 5-packet
	 * messages lose a packet at 5% loss. */
	TH_LOG("%d frames lost, %d of %d messages whole", lost, got, n);
	EXPECT_GT(lost, 0);
	EXPECT_GE(got, n - lost);
	EXPECT_LE(got, n - (lost + 4) / 5);
	EXPECT_GT(got, n / 2);
	EXPECT_LT(got, n);
}

FIXTURE(ud) {
	struct pair p;
	struct ibv_ah *ah;
};

FIXTURE_SETUP(ud)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh = { .hop_limit = 64 } };

	ASSERT_EQ(0, pair_open(&self->p, 1024, BUF));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_UD, IBV_MTU_1024, 1, 2, 0, 0, 0));
	roxe_query_gid(self->p.s[1].dev, 0, &aa.grh.dgid);
	ASSERT_EQ(0, roxe_create_ah(self->p.s[0].pd, &aa, &self->ah));
}

FIXTURE_TEARDOWN(ud)
{
	roxe_destroy_ah(self->ah);
	pair_close(&self->p);
	EXPECT_EQ(0, leak_check());
}

static int ud_send(struct roxe_qp *qp, struct ibv_ah *ah, uint32_t rqpn, uint32_t qkey,
		   void *addr, uint32_t len, uint32_t lkey, bool imm)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(99) }, *bad;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = rqpn;
	wr.wr.ud.remote_qkey = qkey;
	return roxe_post_send(qp, &wr, &bad);
}

TEST_F(ud, datagram_with_grh)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc;

	fill_pattern(a->buf, 1024, 3);
	ASSERT_EQ(0, post_recv1(b->qp, 1, b->buf, 40 + 1024, b->mr->lkey));
	ASSERT_EQ(0, ud_send(a->qp, self->ah, roxe_qp_num(b->qp), 0x11111111, a->buf, 1024,
			     a->mr->lkey, true));
	ASSERT_EQ(1, poll_n(b->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(40u + 1024u, wc.byte_len);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_GRH);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(htonl(99), wc.imm_data);
	EXPECT_EQ(roxe_qp_num(a->qp), wc.src_qp);
	/* the packet type, as mlx5 reports it: RoCE v2 (UDP) over IPv4; UCX's
	 * ud_verbs drops the datagram otherwise */
	EXPECT_EQ(ROXE_UWC_SL_ROCE_V2 | ROXE_UWC_SL_IPV4, wc.sl);
	EXPECT_EQ(0, memcmp(a->buf, b->buf + 40, 1024));
	/* IPv4: the GRH's last 20 bytes are the IPv4 header, source 10.99.0.1. */
	EXPECT_EQ(0x45, b->buf[20]);
	EXPECT_EQ(0, memcmp(b->buf + 20 + 12, "\x0a\x63\x00\x01", 4));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
}

TEST_F(ud, wrong_qkey_and_too_long_are_refused)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc;

	ASSERT_EQ(0, post_recv1(b->qp, 1, b->buf, 40 + 100, b->mr->lkey));
	/* Wrong Q_Key: silently dropped at b, once b has seen it. */
	ASSERT_EQ(0, ud_send(a->qp, self->ah, roxe_qp_num(b->qp), 0x22222222, a->buf, 10,
			     a->mr->lkey, false));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
	ASSERT_EQ(0, wire_drained(&self->p, 0));
	EXPECT_EQ(1u, roxe_loop_port(self->p.wire, 1)->stats.rx_frames);
	EXPECT_EQ(0, roxe_poll_cq(b->cq, 1, &wc));
	/* Longer than the MTU: refused at post time. */
	EXPECT_EQ(-EINVAL, ud_send(a->qp, self->ah, roxe_qp_num(b->qp), 0x11111111, a->buf,
				   2000, a->mr->lkey, false));
	/* A datagram larger than the receive buffer: LOC_LEN_ERR at b. */
	ASSERT_EQ(0, ud_send(a->qp, self->ah, roxe_qp_num(b->qp), 0x11111111, a->buf, 500,
			     a->mr->lkey, false));
	ASSERT_EQ(1, poll_n(b->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, wc.status);
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
}

TEST_F(ud, srq_shared_by_two_qps_with_limit_event)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 16, .max_sge = 1, .srq_limit = 0 } };
	struct roxe_qp_init_attr ia = { .qp_type = IBV_QPT_UD,
					.cap = { .max_send_wr = 16, .max_send_sge = 1 } };
	struct ibv_srq_attr lim = { .srq_limit = 4 };
	struct roxe_async_event ev;
	struct roxe_srq *srq;
	struct roxe_qp *q[2];
	struct ibv_wc wc[8];
	int got = 0;

	ASSERT_EQ(0, roxe_create_srq(b->pd, &sia, &srq));
	ia.send_cq = ia.recv_cq = b->cq;
	ia.srq = srq;
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, roxe_create_qp(b->pd, &ia, &q[i]));
		ASSERT_EQ(0, qp_connect(q[i], a->dev, 0, IBV_QPT_UD, IBV_MTU_1024, 1, 1, 0, 0, 0));
	}
	for (int i = 0; i < 6; i++) {
		struct ibv_sge sge = { (uintptr_t)b->buf + (size_t)i * 2048, 2048, b->mr->lkey };
		struct ibv_recv_wr rwr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 },
				   *rbad;

		ASSERT_EQ(0, roxe_post_srq_recv(srq, &rwr, &rbad));
	}
	ASSERT_EQ(0, roxe_modify_srq(srq, &lim, IBV_SRQ_LIMIT));
	EXPECT_EQ(-EAGAIN, roxe_get_async_event(b->dev, &ev));
	/* Three datagrams to each QP: both draw from the one SRQ. */
	for (int i = 0; i < 6; i++) {
		ASSERT_EQ(0, ud_send(a->qp, self->ah, roxe_qp_num(q[i % 2]), 0x11111111, a->buf,
				     100, a->mr->lkey, false));
		ASSERT_EQ(1, poll_n(a->cq, wc, 1, 5000));
	}
	while (got < 6) {
		int r = poll_n(b->cq, wc, 6 - got, 5000);

		ASSERT_GT(r, 0);
		for (int k = 0; k < r; k++)
			EXPECT_EQ(IBV_WC_SUCCESS, wc[k].status);
		got += r;
	}
	/* Fewer than 4 left after the third one: the limit fired, once. */
	ASSERT_EQ(0, roxe_get_async_event(b->dev, &ev));
	EXPECT_EQ(IBV_EVENT_SRQ_LIMIT_REACHED, ev.type);
	EXPECT_EQ(srq, ev.element.srq);
	EXPECT_EQ(-EAGAIN, roxe_get_async_event(b->dev, &ev));
	EXPECT_EQ(-EBUSY, roxe_destroy_srq(srq));
	roxe_destroy_qp(q[0]);
	roxe_destroy_qp(q[1]);
	EXPECT_EQ(0, roxe_destroy_srq(srq));
}

/* A resize counts the completions of the sends posted before it: UD
 * SENDs complete in the turn that sends them, and rxe's post_send has
 * made them before it returns, so pyverbs' test_resize_cq posts 6 and at
 * once wants a CQ of 1 refused. On a polled device nobody turns the
 * engine but the resize itself (roxe_dev_quiesce); without that turn it
 * counted none of them and shrank the CQ below what was coming. */
TEST(ud_sends_count_in_a_resize_that_follows_them)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh = { .hop_limit = 64 } };
	struct pair p;
	struct side *a = &p.s[0], *b = &p.s[1];
	struct ibv_ah *ah;
	struct ibv_wc wc[6];

	ASSERT_EQ(0, pair_open_polled(&p, 1024, BUF, 3));
	ASSERT_EQ(0, pair_connect(&p, IBV_QPT_UD, IBV_MTU_1024, 1, 2, 0, 0, 0));
	roxe_query_gid(b->dev, 0, &aa.grh.dgid);
	ASSERT_EQ(0, roxe_create_ah(a->pd, &aa, &ah));
	for (unsigned i = 0; i < 6; i++)
		ASSERT_EQ(0, ud_send(a->qp, ah, roxe_qp_num(b->qp), 0x11111111, a->buf, 64,
				     a->mr->lkey, false));
	EXPECT_EQ(-EINVAL, roxe_resize_cq(a->cq, 3));
	ASSERT_EQ(6, roxe_poll_cq(a->cq, 6, wc));
	for (unsigned i = 0; i < 6; i++) {
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
		EXPECT_EQ(IBV_WC_SEND, wc[i].opcode);
	}
	EXPECT_EQ(0, roxe_destroy_ah(ah));
	pair_close(&p);
	EXPECT_EQ(0, leak_check());
}

TEST_HARNESS_MAIN
