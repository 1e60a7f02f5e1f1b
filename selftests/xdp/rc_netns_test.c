// SPDX-License-Identifier: GPL-2.0-only
/*
 * The whole stack between two network namespaces: XDP steering, AF_XDP
 * ports (two engines, two queues) or the UDP backend, and the RC transport
 * on top. Several QPs (so both engines carry traffic) exchange SENDs,
 * WRITEs, READs and atomics, checked byte for byte; the per-QP counters in
 * roxe_qp_stats match the traffic.
 */
#include <sched.h>
#include "kselftest_harness.h"
#include "topo.h"
#include "roxe/verbs.h"
#include "roxe/maps.h"
#include "roxe/xdp.h"

#define NQP	4
#define BUF	(1u << 20)

struct host {
	struct roxe_device	*dev;
	struct roxe_pd		*pd;
	struct roxe_cq		*cq;
	struct roxe_qp		*qp[NQP];
	struct roxe_mr		*mr;
	uint8_t			*buf;
	int			ns;
};

FIXTURE(stack) {
	struct topo	t;
	struct host	h[2];
	bool		up;
};

FIXTURE_VARIANT(stack) {
	enum roxe_backend backend;
	unsigned	engines;
};

FIXTURE_VARIANT_ADD(stack, afxdp_2_engines) { .backend = ROXE_BACKEND_AFXDP, .engines = 2 };
FIXTURE_VARIANT_ADD(stack, afxdp_1_engine) { .backend = ROXE_BACKEND_AFXDP, .engines = 1 };
FIXTURE_VARIANT_ADD(stack, udp) { .backend = ROXE_BACKEND_UDP, .engines = 1 };

static int host_open(struct host *h, const char *ifname, const FIXTURE_VARIANT(stack) *v)
{
	struct roxe_device_attr da = { .ifname = ifname, .backend = v->backend,
				       .engines = v->engines };
	int err;

	err = roxe_device_open(&da, &h->dev);
	if (!err)
		err = roxe_alloc_pd(h->dev, &h->pd);
	if (!err)
		err = roxe_create_cq(h->dev, 1024, NULL, NULL, &h->cq);
	if (err)
		return err;
	h->buf = aligned_alloc(4096, BUF);
	if (!h->buf)
		return -ENOMEM;
	memset(h->buf, 0, BUF);
	err = roxe_reg_mr(h->pd, h->buf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC, &h->mr);
	for (int i = 0; !err && i < NQP; i++) {
		struct roxe_qp_init_attr ia = {
			.send_cq = h->cq, .recv_cq = h->cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};

		err = roxe_create_qp(h->pd, &ia, &h->qp[i]);
	}
	return err;
}

/* Bring h's QP i up towards peer's QP i (called inside h's namespace: the
 * peer's MAC comes from that namespace's neighbour table). */
static int qp_up(struct host *h, struct host *peer, int i)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC };
	int err = roxe_modify_qp(h->qp[i], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				 IBV_QP_ACCESS_FLAGS);

	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = roxe_qp_num(peer->qp[i]);
	a.rq_psn = 1000u * (uint32_t)i;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	roxe_query_gid(peer->dev, 0, &a.ah_attr.grh.dgid);
	err = roxe_modify_qp(h->qp[i], &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 1000u * (uint32_t)i;
	a.timeout = 12;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return roxe_modify_qp(h->qp[i], &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static void host_close(struct host *h)
{
	for (int i = 0; i < NQP; i++)
		if (h->qp[i])
			roxe_destroy_qp(h->qp[i]);
	if (h->mr)
		roxe_dereg_mr(h->mr);
	if (h->cq)
		roxe_destroy_cq(h->cq);
	if (h->pd)
		roxe_dealloc_pd(h->pd);
	roxe_device_close(h->dev);
	free(h->buf);
}

FIXTURE_SETUP(stack)
{
	char ifa[16], ifb[16];
	int err;

	ASSERT_EQ(0, topo_up(&self->t, "s", 2, 1500));
	self->up = true;
	self->h[0].ns = self->t.ns_a;
	self->h[1].ns = self->t.ns_b;
	topo_ifname(&self->t, 'a', ifa, sizeof(ifa));
	topo_ifname(&self->t, 'b', ifb, sizeof(ifb));
	topo_enter(self->t.ns_a);
	err = host_open(&self->h[0], ifa, variant);
	if (!err) {
		topo_enter(self->t.ns_b);
		err = host_open(&self->h[1], ifb, variant);
	}
	for (int i = 0; !err && i < NQP; i++) {
		topo_enter(self->t.ns_a);
		err = qp_up(&self->h[0], &self->h[1], i);
		if (!err) {
			topo_enter(self->t.ns_b);
			err = qp_up(&self->h[1], &self->h[0], i);
		}
	}
	if (err) {
		/* The harness skips teardown after a failed setup. */
		host_close(&self->h[0]);
		host_close(&self->h[1]);
		topo_down(&self->t);
		ASSERT_EQ(0, err) TH_LOG("setup: %s", strerror(-err));
	}
}

FIXTURE_TEARDOWN(stack)
{
	host_close(&self->h[0]);
	host_close(&self->h[1]);
	if (self->up)
		topo_down(&self->t);
}

static int wait_wc(struct roxe_cq *cq, struct ibv_wc *wc, int timeout_ms)
{
	for (int t = 0; t < timeout_ms * 10; t++) {
		int r = roxe_poll_cq(cq, 1, wc);

		if (r)
			return r;
		usleep(100);
	}
	return 0;
}

static int post(struct roxe_qp *qp, enum ibv_wr_opcode op, void *addr, uint32_t len,
		uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return roxe_post_send(qp, &wr, &bad);
}

TEST_F(stack, every_qp_every_operation)
{
	struct host *a = &self->h[0], *b = &self->h[1];
	uint32_t len = 10000;	/* 10 packets at MTU 1024 */
	struct ibv_wc wc;

	for (int i = 0; i < NQP; i++) {
		uint8_t *src = a->buf + (size_t)i * 65536, *dst = b->buf + (size_t)i * 65536;
		uint8_t *back = a->buf + BUF / 2 + (size_t)i * 65536;
		uint64_t *ctr = (uint64_t *)(b->buf + BUF - 8 * (i + 1));
		struct ibv_sge rsge = { (uintptr_t)dst, len, b->mr->lkey };
		struct ibv_recv_wr rwr = { .wr_id = 77, .sg_list = &rsge, .num_sge = 1 }, *rbad;

		for (uint32_t k = 0; k < len; k++)
			src[k] = (uint8_t)(k * 7 + i);
		/* SEND */
		ASSERT_EQ(0, roxe_post_recv(b->qp[i], &rwr, &rbad));
		ASSERT_EQ(0, post(a->qp[i], IBV_WR_SEND, src, len, a->mr->lkey, 0, 0));
		ASSERT_EQ(1, wait_wc(b->cq, &wc, 5000)) TH_LOG("qp %d: no receive", i);
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(len, wc.byte_len);
		ASSERT_EQ(roxe_qp_num(b->qp[i]), wc.qp_num);
		ASSERT_EQ(0, memcmp(src, dst, len));
		ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		/* WRITE, then READ it back */
		memset(dst, 0, len);
		ASSERT_EQ(0, post(a->qp[i], IBV_WR_RDMA_WRITE, src, len, a->mr->lkey,
				  (uintptr_t)dst, b->mr->rkey));
		ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(0, memcmp(src, dst, len));
		ASSERT_EQ(0, post(a->qp[i], IBV_WR_RDMA_READ, back, len, a->mr->lkey,
				  (uintptr_t)dst, b->mr->rkey));
		ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", roxe_wc_status_str(wc.status));
		ASSERT_EQ(0, memcmp(src, back, len));
		/* FETCH_ADD */
		*ctr = 41;
		ASSERT_EQ(0, post(a->qp[i], IBV_WR_ATOMIC_FETCH_AND_ADD, back, 8, a->mr->lkey,
				  (uintptr_t)ctr, b->mr->rkey));
		ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(41u, *(uint64_t *)back);
		ASSERT_EQ(42u, *ctr);
	}
}

TEST_F(stack, counters_match_traffic)
{
	struct host *a = &self->h[0], *b = &self->h[1];
	struct roxe_xdp *xb = NULL;
	struct roxe_qp_stats qs;
	struct ibv_wc wc;
	char ifb[16];

	if (variant->backend != ROXE_BACKEND_AFXDP)
		SKIP(return, "per-QP XDP counters need the AF_XDP backend");
	/* 20 single-packet WRITEs, each asking for an ACK. */
	for (int k = 0; k < 20; k++) {
		ASSERT_EQ(0, post(a->qp[1], IBV_WR_RDMA_WRITE, a->buf, 100, a->mr->lkey,
				  (uintptr_t)b->buf, b->mr->rkey));
		ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	}
	usleep(100000);	/* the last ACKs leave b */
	topo_enter(self->t.ns_b);
	topo_ifname(&self->t, 'b', ifb, sizeof(ifb));
	ASSERT_EQ(0, roxe_xdp_open(ifb, &xb, NULL));
	ASSERT_EQ(0, roxe_xdp_read_qp_stats(xb, roxe_qp_num(b->qp[1]), &qs));
	roxe_xdp_close(xb);
	EXPECT_EQ(20u, qs.rx_packets);		/* counted by XDP */
	EXPECT_EQ(20u, qs.tx_packets);		/* ACKs, counted by the engine */
	EXPECT_EQ(0u, qs.retransmits);
	EXPECT_EQ(0u, qs.icrc_errors);
}

TEST_HARNESS_MAIN
