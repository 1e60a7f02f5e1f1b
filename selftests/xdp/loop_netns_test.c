// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loopback on real interfaces (issue #16): in namespace a of topo.h's
 * topology, QPs of one roxe device (AF_XDP with one and two engines, or
 * the UDP backend) reach each other through their own address, and two
 * devices on two interfaces of that namespace reach each other: RC
 * SEND/WRITE/READ/atomics byte for byte, UD to the own address. Nothing
 * of it goes to the port (its tx counters stay 0 with AF_XDP); the
 * engines count the frames in `loopback`, and the per-QP rx counters
 * count them though XDP never saw them.
 *
 * The second interface (NAME-c, 10.98.0.1) is a veth whose peer sits
 * unconfigured in namespace b: a frame sent on it reaches nobody.
 */
#include <sched.h>
#include "kselftest_harness.h"
#include "host.h"
#include "roxe/verbs.h"
#include "roxe/maps.h"
#include "transport/transport.h"

#define NQP	4
#define BUF	(1u << 20)

FIXTURE(loop) {
	struct topo	t;
	struct host	h[2];
	struct host_attr ha;
	bool		up;
};

FIXTURE_VARIANT(loop) {
	enum roxe_backend backend;
	unsigned	engines;
};

FIXTURE_VARIANT_ADD(loop, afxdp_2_engines) { .backend = ROXE_BACKEND_AFXDP, .engines = 2 };
FIXTURE_VARIANT_ADD(loop, afxdp_1_engine) { .backend = ROXE_BACKEND_AFXDP, .engines = 1 };
FIXTURE_VARIANT_ADD(loop, udp) { .backend = ROXE_BACKEND_UDP, .engines = 1 };

FIXTURE_SETUP(loop)
{
	char ifa[16];
	int err;

	self->ha = (struct host_attr){
		.backend = variant->backend, .engines = variant->engines, .nqp = NQP,
		.cqe = 1024, .max_wr = 64, .buf_len = BUF,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
		.rd_atomic = 4, .psn_a = 100, .psn_b = 7000,
	};
	ASSERT_EQ(0, topo_up(&self->t, "lp", 2, 1500));
	self->up = true;
	topo_enter(self->t.ns_a);
	topo_ifname(&self->t, 'a', ifa, sizeof(ifa));
	err = host_open(&self->h[0], ifa, &self->ha);
	ASSERT_EQ(0, err) TH_LOG("device on %s: %s", ifa, strerror(-err));
}

FIXTURE_TEARDOWN(loop)
{
	host_close(&self->h[0]);
	if (self->h[1].dev)
		host_close(&self->h[1]);
	if (self->up)
		topo_down(&self->t);
}

/* Connect a's QP i to b's QP j (a and b may be one device). */
static int qp_link(struct host *a, int i, struct host *b, int j, const struct host_attr *ha)
{
	struct host peer = *b;

	peer.qp[i] = b->qp[j];	/* host_qp_up connects to the peer's QP of the same index */
	return host_qp_up(a, &peer, i, ha->psn_a + (uint32_t)i, ha->psn_b + (uint32_t)j, ha);
}

static int qp_pair(struct host *a, int i, struct host *b, int j, const struct host_attr *ha)
{
	int err = qp_link(a, i, b, j, ha);
	struct host_attr hb = *ha;

	hb.psn_a = ha->psn_b;
	hb.psn_b = ha->psn_a;
	return err ? err : qp_link(b, j, a, i, &hb);
}

/* SEND, WRITE, READ, FETCH_ADD from a's QP i to b's QP j, checked. */
static void rc_ops(struct __test_metadata *_metadata, struct host *a, int i, struct host *b,
		   int j)
{
	uint32_t len = 10000;	/* 10 packets at MTU 1024 */
	uint8_t *src = a->buf, *dst = b->buf + 65536 * (1 + j), *back = a->buf + BUF / 2;
	uint64_t *ctr = (uint64_t *)(b->buf + BUF - 8 * (j + 1));
	struct ibv_sge rsge = { (uintptr_t)dst, len, b->mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 77, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_wc wc;

	for (uint32_t k = 0; k < len; k++)
		src[k] = (uint8_t)(k * 7 + i + 3 * j);
	ASSERT_EQ(0, roxe_post_recv(b->qp[j], &rwr, &rbad));
	ASSERT_EQ(0, host_post(a->qp[i], IBV_WR_SEND, src, len, a->mr->lkey, 0, 0));
	/* a and b may share one CQ: two completions, either order */
	for (int n = 0; n < 2; n++) {
		struct roxe_cq *cq = a->cq == b->cq ? a->cq : n ? a->cq : b->cq;

		ASSERT_EQ(1, wait_wc(cq, &wc, 5000)) TH_LOG("SEND %d -> %d: no completion", i, j);
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", roxe_wc_status_str(wc.status));
		if (wc.wr_id == 77) {
			ASSERT_EQ(len, wc.byte_len);
			ASSERT_EQ(roxe_qp_num(b->qp[j]), wc.qp_num);
		}
	}
	ASSERT_EQ(0, memcmp(src, dst, len));
	memset(dst, 0, len);
	ASSERT_EQ(0, host_post(a->qp[i], IBV_WR_RDMA_WRITE, src, len, a->mr->lkey,
			       (uintptr_t)dst, b->mr->rkey));
	ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(0, memcmp(src, dst, len));
	memset(back, 0, len);
	ASSERT_EQ(0, host_post(a->qp[i], IBV_WR_RDMA_READ, back, len, a->mr->lkey,
			       (uintptr_t)dst, b->mr->rkey));
	ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", roxe_wc_status_str(wc.status));
	ASSERT_EQ(0, memcmp(src, back, len));
	*ctr = 41;
	ASSERT_EQ(0, host_post(a->qp[i], IBV_WR_ATOMIC_FETCH_AND_ADD, back, 8, a->mr->lkey,
			       (uintptr_t)ctr, b->mr->rkey));
	ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(41u, *(uint64_t *)back);
	ASSERT_EQ(42u, *ctr);
}

static uint64_t eng_sum(const struct roxe_device *dev, bool drops)
{
	uint64_t n = 0;

	for (unsigned e = 0; e < dev->nengines; e++)
		n += __atomic_load_n(drops ? &dev->engines[e].stats->loopback_drop :
				     &dev->engines[e].stats->loopback, __ATOMIC_RELAXED);
	return n;
}

/* Nothing went to the wire: every frame looped. (The UDP port counts
 * its socket's traffic: looped frames never reach it either.) */
static void expect_no_wire(struct __test_metadata *_metadata, const struct roxe_device *dev)
{
	for (unsigned e = 0; e < dev->nengines; e++)
		EXPECT_EQ(0u, dev->engines[e].port->stats.tx_frames);
}

static void one_device(struct __test_metadata *_metadata, FIXTURE_DATA(loop) *self, int i, int j)
{
	struct host *h = &self->h[0];
	uint32_t qb = roxe_qp_num(h->qp[j]);

	ASSERT_EQ(0, qp_pair(h, i, h, j, &self->ha));
	rc_ops(_metadata, h, i, h, j);
	rc_ops(_metadata, h, j, h, i);
	EXPECT_GT(eng_sum(h->dev, false), 40u);
	EXPECT_EQ(0u, eng_sum(h->dev, true));
	EXPECT_GT(__atomic_load_n(&h->dev->qp_stats[qb].rx_packets, __ATOMIC_RELAXED), 20u);
	EXPECT_EQ(0u, h->dev->qp_stats[qb].retransmits);
	expect_no_wire(_metadata, h->dev);
}

TEST_F(loop, same_engine)
{
	/* QPNs 2..5: QP 0 and QP 2 are on one engine whatever the count */
	one_device(_metadata, self, 0, 2);
}

TEST_F(loop, two_engines)
{
	if (variant->engines < 2)
		SKIP(return, "one engine");
	one_device(_metadata, self, 0, 1);
	EXPECT_GT(self->h[0].dev->engines[0].stats->loopback, 0u);
	EXPECT_GT(self->h[0].dev->engines[1].stats->loopback, 0u);
}

TEST_F(loop, ud_own_address)
{
	struct host *h = &self->h[0];
	struct roxe_qp_init_attr ia = {
		.send_cq = h->cq, .recv_cq = h->cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh = { .hop_limit = 64 } };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x1234 };
	struct ibv_sge sge = { (uintptr_t)h->buf, 1000, h->mr->lkey };
	struct ibv_sge rsge = { (uintptr_t)h->buf + 65536, 1040, h->mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 5, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr wr = { .wr_id = 6, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct roxe_qp *ud[2] = { 0 };
	struct ibv_ah *ah;
	struct ibv_wc wc;

	for (int k = 0; k < 2; k++) {
		ASSERT_EQ(0, roxe_create_qp(h->pd, &ia, &ud[k]));
		qa.qp_state = IBV_QPS_INIT;
		ASSERT_EQ(0, roxe_modify_qp(ud[k], &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					    IBV_QP_PORT | IBV_QP_QKEY));
		qa.qp_state = IBV_QPS_RTR;
		ASSERT_EQ(0, roxe_modify_qp(ud[k], &qa, IBV_QP_STATE));
		qa.qp_state = IBV_QPS_RTS;
		ASSERT_EQ(0, roxe_modify_qp(ud[k], &qa, IBV_QP_STATE | IBV_QP_SQ_PSN));
	}
	ASSERT_LE(0, roxe_device_gid_index(h->dev));
	aa.grh.sgid_index = (uint8_t)roxe_device_gid_index(h->dev);
	roxe_query_gid(h->dev, aa.grh.sgid_index, &aa.grh.dgid);
	ASSERT_EQ(0, roxe_create_ah(h->pd, &aa, &ah));
	for (uint32_t k = 0; k < 1000; k++)
		h->buf[k] = (uint8_t)(k * 13);
	ASSERT_EQ(0, roxe_post_recv(ud[1], &rwr, &rbad));
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = roxe_qp_num(ud[1]);
	wr.wr.ud.remote_qkey = 0x1234;
	ASSERT_EQ(0, roxe_post_send(ud[0], &wr, &bad));
	for (int n = 0; n < 2; n++) {
		ASSERT_EQ(1, wait_wc(h->cq, &wc, 5000)) TH_LOG("UD to the own address: no completion");
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		if (wc.wr_id == 5) {
			EXPECT_EQ(roxe_qp_num(ud[0]), wc.src_qp);
			EXPECT_EQ(1040u, wc.byte_len);
		}
	}
	EXPECT_EQ(0, memcmp(h->buf, h->buf + 65536 + 40, 1000));
	EXPECT_EQ(1u, eng_sum(h->dev, false));
	expect_no_wire(_metadata, h->dev);
	roxe_destroy_ah(ah);
	roxe_destroy_qp(ud[0]);
	roxe_destroy_qp(ud[1]);
}

TEST_F(loop, two_devices_one_namespace)
{
	char cmd[512], ifc[16];
	const char *n = self->t.name;
	struct host *a = &self->h[0], *c = &self->h[1];
	int err;

	snprintf(ifc, sizeof(ifc), "%s-c", n);
	snprintf(cmd, sizeof(cmd),
		 "ip -n %s-a link add %s-c numtxqueues 2 numrxqueues 2 type veth peer name %s-d "
		 "numtxqueues 2 numrxqueues 2 netns %s-b && ip -n %s-a addr add 10.98.0.1/24 dev %s-c "
		 "&& ip -n %s-a link set %s-c up && ip -n %s-b link set %s-d up",
		 n, n, n, n, n, n, n, n, n, n);
	ASSERT_EQ(0, system(cmd));
	err = host_open(c, ifc, &self->ha);
	ASSERT_EQ(0, err) TH_LOG("device on %s: %s", ifc, strerror(-err));
	for (int i = 0; i < 2; i++) {
		err = qp_pair(a, i, c, i, &self->ha);
		ASSERT_EQ(0, err) TH_LOG("connect: %s", strerror(-err));
		rc_ops(_metadata, a, i, c, i);
		rc_ops(_metadata, c, i, a, i);
	}
	EXPECT_GT(eng_sum(a->dev, false), 20u);
	EXPECT_GT(eng_sum(c->dev, false), 20u);
	expect_no_wire(_metadata, a->dev);
	expect_no_wire(_metadata, c->dev);
}

TEST_HARNESS_MAIN
