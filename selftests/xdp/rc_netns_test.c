// SPDX-License-Identifier: GPL-2.0-only
/*
 * The whole stack between two network namespaces: XDP steering, AF_XDP
 * ports (two engines, two queues) or the UDP backend, and the RC transport
 * on top. Several QPs (so both engines carry traffic) exchange SENDs,
 * WRITEs, READs and atomics, checked byte for byte; the per-QP counters in
 * roxe_qp_stats match the traffic. The engines run on the virtual clock
 * (engine.h): nothing here needs a timer, and none fires behind the
 * test's back (a retransmission a loaded host's late ACK would bring).
 */
#include <sched.h>
#include "kselftest_harness.h"
#include "host.h"
#include "roxe/verbs.h"
#include "roxe/maps.h"
#include "roxe/xdp.h"
#include "transport/transport.h"
#include "transport/engine.h"

#define NQP	4
/* The virtual clock's start: far past 0, which the timers read as "never". */
#define VC_START_NS	(1000ull * 1000000000ull)
#define BUF	(1u << 20)
_Static_assert(NQP <= HOST_MAX_QP, "host.h holds HOST_MAX_QP QPs");

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

FIXTURE_SETUP(stack)
{
	struct host_attr ha = {
		.backend = variant->backend, .engines = variant->engines, .nqp = NQP,
		.cqe = 1024, .max_wr = 64, .buf_len = BUF,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
		.rd_atomic = 4,
	};
	int err;

	roxe_clock_virtual(VC_START_NS);	/* before any engine starts */
	ASSERT_EQ(0, topo_up(&self->t, "s", 2, 1500));
	self->up = true;
	err = host_pair_open(&self->t, self->h, &ha);
	if (err) {
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
		ASSERT_EQ(0, host_post(a->qp[i], IBV_WR_SEND, src, len, a->mr->lkey, 0, 0));
		ASSERT_EQ(1, wait_wc(b->cq, &wc, 5000)) TH_LOG("qp %d: no receive", i);
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(len, wc.byte_len);
		ASSERT_EQ(roxe_qp_num(b->qp[i]), wc.qp_num);
		ASSERT_EQ(0, memcmp(src, dst, len));
		ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		/* WRITE, then READ it back */
		memset(dst, 0, len);
		ASSERT_EQ(0, host_post(a->qp[i], IBV_WR_RDMA_WRITE, src, len, a->mr->lkey,
				  (uintptr_t)dst, b->mr->rkey));
		ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(0, memcmp(src, dst, len));
		ASSERT_EQ(0, host_post(a->qp[i], IBV_WR_RDMA_READ, back, len, a->mr->lkey,
				  (uintptr_t)dst, b->mr->rkey));
		ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", roxe_wc_status_str(wc.status));
		ASSERT_EQ(0, memcmp(src, back, len));
		/* FETCH_ADD */
		*ctr = 41;
		ASSERT_EQ(0, host_post(a->qp[i], IBV_WR_ATOMIC_FETCH_AND_ADD, back, 8, a->mr->lkey,
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
	/* 20 single-packet WRITEs, each asking for an ACK. Each completion
	 * is b's ACK, counted by b's engine as it made it, of a WRITE that
	 * b's XDP counted on its way in; the next WRITE goes after it, and
	 * the clock stands still (no retransmission): the counts are final
	 * once the last completes. */
	for (int k = 0; k < 20; k++) {
		ASSERT_EQ(0, host_post(a->qp[1], IBV_WR_RDMA_WRITE, a->buf, 100, a->mr->lkey,
				  (uintptr_t)b->buf, b->mr->rkey));
		ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	}
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
