// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loopback (issue #16): two QPs of one device reach each other. The device
 * has one or two engines, each on a loop wire whose far end nobody reads:
 * a frame that went to the port would be lost, so every completion here
 * proves local delivery (transport/loopback.c). QPs on the same engine and
 * on two engines, IPv4 and IPv6, RC SEND/WRITE/READ/atomics and UD to the
 * own address, byte for byte, and a burst of WRITEs; the per-QP rx
 * counters and the engines' `loopback` counters count the frames. An
 * engine's hand-off ring is bounded: frames for an engine that does not
 * turn fill it, then are dropped and counted, and one sender has only its
 * share of it. A frame from the port that claims the own address as its
 * source (a third host posing as a looped frame) is dropped and counted.
 *
 * On the virtual clock: a timer fires only when the test moves time to it
 * with the device settled (each wait says how many steps it may take), so
 * a host slow to answer never brings a retransmission (rc_same_engine
 * counts none).
 */
#include <arpa/inet.h>
#include "kselftest_harness.h"
#include "pair.h"
#include "transport/transport.h"
#include "transport/handoff.h"
#include "transport/loopback.h"
#include "vclock.h"

#define BUF	(4u << 20)

FIXTURE(loop) {
	struct roxe_loop_wire	*wire[2];
	struct side		s;
	struct roxe_qp		*qp[4];
	unsigned		nqp;
};

FIXTURE_VARIANT(loop) {
	unsigned	engines;
	bool		polled;
	bool		ipv6;		/* the device's address: fd99::1, else 10.99.0.1 */
};

FIXTURE_VARIANT_ADD(loop, one_engine) { .engines = 1 };
FIXTURE_VARIANT_ADD(loop, two_engines) { .engines = 2 };
FIXTURE_VARIANT_ADD(loop, polled) { .engines = 1, .polled = true };
FIXTURE_VARIANT_ADD(loop, ipv6_two_engines) { .engines = 2, .ipv6 = true };

FIXTURE_SETUP(loop)
{
	struct roxe_port *ports[2];
	struct roxe_device_attr da = { .backend = ROXE_BACKEND_PORTS, .engines = variant->engines,
				       .mtu = 1024, .polled = variant->polled, .ports = ports };
	struct side *s = &self->s;

	vc_start();
	for (unsigned i = 0; i < variant->engines; i++) {
		self->wire[i] = roxe_loop_wire_new(4096 + 256, 1024);
		ASSERT_NE(NULL, self->wire[i]);
		ports[i] = roxe_loop_port(self->wire[i], 0);
	}
	if (variant->ipv6) {
		ASSERT_EQ(1, inet_pton(AF_INET6, "fd99::1", da.gid));
	} else {
		roxe_gid_from_v4(da.gid, htonl(0x0a630001));
	}
	da.mac[0] = 0x02;
	da.mac[5] = 1;
	ASSERT_EQ(0, roxe_device_open(&da, &s->dev));
	ASSERT_EQ(0, roxe_alloc_pd(s->dev, &s->pd));
	ASSERT_EQ(0, roxe_create_cq(s->dev, 4096, NULL, NULL, &s->cq));
	s->buf = aligned_alloc(4096, BUF);
	ASSERT_NE(NULL, s->buf);
	memset(s->buf, 0, BUF);
	ASSERT_EQ(0, roxe_reg_mr(s->pd, s->buf, BUF, IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				 IBV_ACCESS_REMOTE_ATOMIC, &s->mr));
}

FIXTURE_TEARDOWN(loop)
{
	for (unsigned i = 0; i < self->nqp; i++)
		roxe_destroy_qp(self->qp[i]);
	if (self->s.mr)
		roxe_dereg_mr(self->s.mr);
	if (self->s.cq)
		roxe_destroy_cq(self->s.cq);
	if (self->s.pd)
		roxe_dealloc_pd(self->s.pd);
	roxe_device_close(self->s.dev);
	free(self->s.buf);
	for (unsigned i = 0; i < 2; i++)
		if (self->wire[i])
			roxe_loop_wire_free(self->wire[i]);
	EXPECT_EQ(0, leak_check());
}

/* Two QPs of type t, the second on the same engine as the first
 * (same_engine) or on the next one; connected to each other for RC. */
static int qp_pair(FIXTURE_DATA(loop) *self, enum ibv_qp_type t, bool same_engine,
		   struct roxe_qp **a, struct roxe_qp **b)
{
	unsigned n = self->s.dev->nengines;
	int err;

	/* QPNs are handed out in order; the QPN modulo the engine count is
	 * the engine: make QPs until one lands where wanted. */
	err = qp_create(&self->s, t, &self->qp[self->nqp]);
	if (err)
		return err;
	*a = self->qp[self->nqp++];
	for (;;) {
		if (self->nqp == 4)
			return -ENOSPC;
		err = qp_create(&self->s, t, &self->qp[self->nqp]);
		if (err)
			return err;
		*b = self->qp[self->nqp++];
		if ((roxe_qp_num(*a) % n == roxe_qp_num(*b) % n) == same_engine)
			break;
	}
	err = qp_connect(*a, self->s.dev, roxe_qp_num(*b), t, IBV_MTU_1024, 100, 9000, 12, 7, 7);
	if (!err)
		err = qp_connect(*b, self->s.dev, roxe_qp_num(*a), t, IBV_MTU_1024, 9000, 100, 12,
				 7, 7);
	return err;
}

static int post_atomic1(struct roxe_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id, void *addr,
			uint32_t lkey, uint64_t raddr, uint32_t rkey, uint64_t add_swap,
			uint64_t compare)
{
	struct ibv_sge sge = { (uintptr_t)addr, 8, lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.compare_add = compare;
		wr.wr.atomic.swap = add_swap;
	} else {
		wr.wr.atomic.compare_add = add_swap;
	}
	return roxe_post_send(qp, &wr, &bad);
}

/* n completions of the device's, once it is settled (vclock.h's
 * vc_poll), the clock moved to its next deadline at most steps times. */
static int poll_dev(struct side *s, struct ibv_wc *wc, int n, unsigned steps)
{
	return vc_poll_devs(&s->dev, 1, s->cq, wc, n, steps, NULL);
}

static uint64_t loopback_frames(struct roxe_device *dev, bool drops)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < dev->nengines; i++)
		n += __atomic_load_n(drops ? &dev->engines[i].stats->loopback_drop :
				     &dev->engines[i].stats->loopback, __ATOMIC_RELAXED);
	return n;
}

/* Frames qp's engine dropped as not from its path (or a forged source). */
static uint64_t drop_addr(struct roxe_device *dev, struct roxe_qp *qp)
{
	return __atomic_load_n(&dev->qp_stats[roxe_qp_num(qp)].rx_drop_addr, __ATOMIC_RELAXED);
}

/* SEND, WRITE, READ, FETCH_ADD, CMP_SWP from a to b, each checked. */
static void rc_ops(struct __test_metadata *_metadata, struct side *s, struct roxe_qp *a,
		   struct roxe_qp *b)
{
	const uint32_t len = 10000;	/* 10 packets at MTU 1024 */
	uint8_t *src = s->buf, *dst = s->buf + 65536, *back = s->buf + 131072;
	uint64_t *ctr = (uint64_t *)(s->buf + 196608), *old = ctr + 1;
	struct ibv_wc wc[2];

	fill_pattern(src, len, roxe_qp_num(a));
	ASSERT_EQ(0, post_recv1(b, 1, dst, len, s->mr->lkey));
	ASSERT_EQ(0, post_send1(a, IBV_WR_SEND, 2, src, len, s->mr->lkey, 0, 0, IBV_SEND_SIGNALED));
	ASSERT_EQ(2, poll_dev(s, wc, 2, 0)) TH_LOG("SEND to the own address: no completion");
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status);
		if (wc[i].wr_id == 1) {
			EXPECT_EQ(len, wc[i].byte_len);
			EXPECT_EQ(roxe_qp_num(b), wc[i].qp_num);
		}
	}
	ASSERT_EQ(0, memcmp(src, dst, len));

	memset(dst, 0, len);
	fill_pattern(src, len, 99);
	ASSERT_EQ(0, post_send1(a, IBV_WR_RDMA_WRITE, 3, src, len, s->mr->lkey, (uintptr_t)dst,
				s->mr->rkey, IBV_SEND_SIGNALED));
	ASSERT_EQ(1, poll_dev(s, wc, 1, 0));
	ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status);
	ASSERT_EQ(0, memcmp(src, dst, len));

	ASSERT_EQ(0, post_send1(a, IBV_WR_RDMA_READ, 4, back, len, s->mr->lkey, (uintptr_t)dst,
				s->mr->rkey, IBV_SEND_SIGNALED));
	ASSERT_EQ(1, poll_dev(s, wc, 1, 0));
	ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status);
	ASSERT_EQ(0, memcmp(src, back, len));

	*ctr = 41;
	ASSERT_EQ(0, post_atomic1(a, IBV_WR_ATOMIC_FETCH_AND_ADD, 5, old, s->mr->lkey,
				  (uintptr_t)ctr, s->mr->rkey, 1, 0));
	ASSERT_EQ(1, poll_dev(s, wc, 1, 0));
	ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status);
	EXPECT_EQ(41u, *old);
	EXPECT_EQ(42u, *ctr);
	ASSERT_EQ(0, post_atomic1(a, IBV_WR_ATOMIC_CMP_AND_SWP, 6, old, s->mr->lkey,
				  (uintptr_t)ctr, s->mr->rkey, 7, 42));
	ASSERT_EQ(1, poll_dev(s, wc, 1, 0));
	ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status);
	EXPECT_EQ(42u, *old);
	EXPECT_EQ(7u, *ctr);
}

TEST_F(loop, rc_same_engine)
{
	struct roxe_qp *a, *b;

	ASSERT_EQ(0, qp_pair(self, IBV_QPT_RC, true, &a, &b));
	rc_ops(_metadata, &self->s, a, b);
	rc_ops(_metadata, &self->s, b, a);
	EXPECT_GT(loopback_frames(self->s.dev, false), 40u);
	EXPECT_EQ(0u, loopback_frames(self->s.dev, true));
	/* Looped frames never pass XDP: the engine counts them per QP. */
	EXPECT_GT(__atomic_load_n(&self->s.dev->qp_stats[roxe_qp_num(b)].rx_packets,
				  __ATOMIC_RELAXED), 20u);
	EXPECT_EQ(0u, self->s.dev->qp_stats[roxe_qp_num(b)].retransmits);
}

TEST_F(loop, rc_two_engines)
{
	struct roxe_qp *a, *b;

	if (variant->engines < 2)
		SKIP(return, "one engine");
	ASSERT_EQ(0, qp_pair(self, IBV_QPT_RC, false, &a, &b));
	ASSERT_NE(roxe_qp_num(a) % 2, roxe_qp_num(b) % 2);
	rc_ops(_metadata, &self->s, a, b);
	rc_ops(_metadata, &self->s, b, a);
	EXPECT_GT(__atomic_load_n(&self->s.dev->engines[0].stats->loopback, __ATOMIC_RELAXED), 0u);
	EXPECT_GT(__atomic_load_n(&self->s.dev->engines[1].stats->loopback, __ATOMIC_RELAXED), 0u);
}

TEST_F(loop, ud_to_own_address)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh = { .hop_limit = 64 } };
	struct side *s = &self->s;
	struct roxe_qp *a, *b;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge = { (uintptr_t)s->buf, 1000, s->mr->lkey };
	struct ibv_ah *ah;
	struct ibv_wc wc[2];

	ASSERT_EQ(0, qp_pair(self, IBV_QPT_UD, variant->engines == 1, &a, &b));
	roxe_query_gid(s->dev, 0, &aa.grh.dgid);
	ASSERT_EQ(0, roxe_create_ah(s->pd, &aa, &ah));
	fill_pattern(s->buf, 1000, 5);
	/* UD receive buffers start with the 40-byte GRH */
	ASSERT_EQ(0, post_recv1(b, 1, s->buf + 65536, 1040, s->mr->lkey));
	wr.wr_id = 2;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = roxe_qp_num(b);
	wr.wr.ud.remote_qkey = 0x11111111;
	ASSERT_EQ(0, roxe_post_send(a, &wr, &bad));
	ASSERT_EQ(2, poll_dev(s, wc, 2, 0)) TH_LOG("UD to the own address: no completion");
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status);
		if (wc[i].wr_id == 1) {
			EXPECT_EQ(1040u, wc[i].byte_len);
			EXPECT_EQ(roxe_qp_num(a), wc[i].src_qp);
		}
	}
	EXPECT_EQ(0, memcmp(s->buf, s->buf + 65536 + 40, 1000));
	EXPECT_EQ(1u, loopback_frames(s->dev, false));
	roxe_destroy_ah(ah);
}

/* A wire frame posing as looped: a third host on the link sends, ICRC
 * valid, a WRITE from the device's own address to a QP connected to its
 * own device, with the right PSN. Only loopback brings frames from the own
 * address: this one is dropped and counted, the memory stays as it was. */
TEST_F(loop, wire_frame_from_own_address_dropped)
{
	struct side *s = &self->s;
	struct roxe_port *far = roxe_loop_port(self->wire[0], 1);
	struct roxe_frame_addr fa = { .hop_limit = 64, .sport = 0xc123 };
	struct roxe_frame_hdr h = { .opcode = ROXE_OP_RC_RDMA_WRITE_ONLY, .pkey = 0xffff,
				    .psn = 100, .ackreq = true, .dma_len = 64 };
	uint8_t pay[64];
	struct roxe_qp *a, *b;
	struct roxe_pkt pkt;
	struct roxe_buf buf;
	int n;

	if (variant->polled)
		SKIP(return, "the engine must run by itself");
	ASSERT_EQ(0, qp_pair(self, IBV_QPT_RC, true, &a, &b));
	/* engine 0's wire (QPN 2 is engine 0's whatever the count) */
	ASSERT_EQ(0u, roxe_qp_num(b) % s->dev->nengines);
	memset(pay, 0xee, sizeof(pay));
	memcpy(fa.sgid, s->dev->gid, 16);
	memcpy(fa.dgid, s->dev->gid, 16);
	fa.dmac[0] = 0x02;
	fa.dmac[5] = 1;
	h.dqpn = roxe_qp_num(b);
	h.va = (uintptr_t)(s->buf + 8192);
	h.rkey = s->mr->rkey;
	ASSERT_EQ(1u, roxe_port_tx_alloc(far, &buf, 1));
	n = roxe_frame_build(buf.data, buf.cap, &fa, &h, pay, sizeof(pay), &pkt);
	ASSERT_GT(n, 0);
	buf.len = (uint32_t)n;
	roxe_port_tx(far, &buf, 1);
	roxe_port_flush(far);
	/* counted as the engine drops it: done with it */
	wait_until(drop_addr(s->dev, b) >= 1, 5000);
	EXPECT_EQ(1u, drop_addr(s->dev, b));
	EXPECT_EQ(0, s->buf[8192]);
	/* the pair still works through loopback, PSN 100 unused */
	rc_ops(_metadata, s, a, b);
}

/*
 * Another QP of the same device (another tenant of one roxed) poses as a
 * looped peer: connected to b's QPN, at b's expected PSN, it WRITEs into
 * b's memory. Addresses cannot tell it from a: both are the device's own.
 * The hand-off names the sending QP, and b takes looped frames only from
 * a: the WRITE is dropped and counted, b's memory stays as it was, and a
 * UD frame whose DETH names another source QP than the one that sent it
 * is dropped too.
 */
TEST_F(loop, forged_looped_frames_are_dropped)
{
	struct side *s = &self->s;
	struct roxe_qp *a, *b, *x;
	struct ibv_wc wc;

	if (variant->polled)
		SKIP(return, "the engine must run by itself");
	ASSERT_EQ(0, qp_pair(self, IBV_QPT_RC, true, &a, &b));
	ASSERT_EQ(0, qp_create(s, IBV_QPT_RC, &self->qp[self->nqp]));
	x = self->qp[self->nqp++];
	/* b expects PSN 100 from a; x sends it, once, with a 1 ms timer */
	ASSERT_EQ(0, qp_connect(x, s->dev, roxe_qp_num(b), IBV_QPT_RC, IBV_MTU_1024, 100, 7777,
				8, 0, 0));
	memset(s->buf + 8192, 0, 64);
	fill_pattern(s->buf, 64, 3);
	ASSERT_EQ(0, post_send1(x, IBV_WR_RDMA_WRITE, 66, s->buf, 64, s->mr->lkey,
				(uintptr_t)s->buf + 8192, s->mr->rkey, IBV_SEND_SIGNALED));
	ASSERT_EQ(1, poll_dev(s, &wc, 1, 1));	/* x's one expiry */
	EXPECT_EQ(66u, wc.wr_id);
	EXPECT_EQ(IBV_WC_RETRY_EXC_ERR, wc.status);	/* nobody answered x */
	wait_until(drop_addr(s->dev, b) >= 1, 5000);
	EXPECT_EQ(1u, drop_addr(s->dev, b));
	EXPECT_EQ(0, s->buf[8192]);
	/* a and b go on, PSN 100 still theirs */
	rc_ops(_metadata, s, a, b);

	/* UD: a datagram to QP b' claiming source QP 1 (the CM's), handed
	 * over as sent by QP 1001 */
	{
		struct roxe_frame_addr fa = { .hop_limit = 64, .sport = 0xc000 };
		struct roxe_frame_hdr h = { .opcode = ROXE_OP_UD_SEND_ONLY, .pkey = 0xffff,
					    .qkey = 0x11111111, .src_qpn = 1 };
		struct roxe_qp *u, *v;
		struct roxe_pkt pkt;
		uint8_t frame[512], pay[64] = { 0 };
		int len;

		self->nqp = 0;		/* the RC QPs go now: room for two more */
		for (int i = 0; i < 3; i++)
			roxe_destroy_qp(self->qp[i]);
		ASSERT_EQ(0, qp_pair(self, IBV_QPT_UD, true, &u, &v));
		ASSERT_EQ(0, post_recv1(v, 9, s->buf + 65536, 1040, s->mr->lkey));
		memcpy(fa.sgid, s->dev->gid, 16);
		memcpy(fa.dgid, s->dev->gid, 16);
		h.dqpn = roxe_qp_num(v);
		len = roxe_frame_build(frame, sizeof(frame), &fa, &h, pay, sizeof(pay), &pkt);
		ASSERT_GT(len, 0);
		ASSERT_EQ(0, roxe_loop_deliver(s->dev, frame, (uint32_t)len, h.dqpn, 1001));
		wait_until(drop_addr(s->dev, v) >= 1, 5000);
		EXPECT_EQ(1u, drop_addr(s->dev, v));
		EXPECT_EQ(0, roxe_poll_cq(s->cq, 1, &wc));
		/* the same datagram from QP 1 itself is taken */
		ASSERT_EQ(0, roxe_loop_deliver(s->dev, frame, (uint32_t)len, h.dqpn, 1));
		ASSERT_EQ(1, poll_dev(s, &wc, 1, 0));
		EXPECT_EQ(9u, wc.wr_id);
		EXPECT_EQ(1u, wc.src_qp);
	}
}

/* Many WRITEs posted at once, several QPs' worth of frames looping through
 * one engine: every byte arrives. */
TEST_F(loop, burst)
{
	struct side *s = &self->s;
	const uint32_t len = 4096, n = 512;
	struct roxe_qp *a, *b;
	struct ibv_wc wc[1];
	unsigned steps = 0;	/* a frame the ring dropped may need a timer */

	ASSERT_EQ(0, qp_pair(self, IBV_QPT_RC, true, &a, &b));
	fill_pattern(s->buf, len * 16, 3);
	for (uint32_t i = 0; i < n; i++)
		ASSERT_EQ(0, post_send1(a, IBV_WR_RDMA_WRITE, i, s->buf + (i % 16) * len, len,
					s->mr->lkey, (uintptr_t)(s->buf + (1u << 20) + i * len),
					s->mr->rkey, IBV_SEND_SIGNALED));
	for (uint32_t got = 0; got < n; got++) {
		ASSERT_EQ(1, vc_poll_devs(&s->dev, 1, s->cq, wc, 1, n, &steps))
			TH_LOG("%u of %u WRITEs completed, %u clock steps", got, n, steps);
		ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status);
	}
	for (uint32_t i = 0; i < n; i++)
		ASSERT_EQ(0, memcmp(s->buf + (i % 16) * len, s->buf + (1u << 20) + i * len, len));
}

/* Two engines looping to each other at once, each with a window of WRITEs
 * in flight towards the other: neither waits for the other's ring (a full
 * ring drops, the transport resends), so both finish. */
TEST_F(loop, both_ways_at_once)
{
	struct side *s = &self->s;
	const uint32_t len = 4096, n = 256;
	uint8_t *dst[2] = { s->buf + (1u << 20), s->buf + (2u << 20) };
	struct roxe_qp *q[2];
	struct ibv_wc wc[1];
	unsigned steps = 0;	/* a frame the ring dropped may need a timer */

	if (variant->engines < 2)
		SKIP(return, "one engine");
	ASSERT_EQ(0, qp_pair(self, IBV_QPT_RC, false, &q[0], &q[1]));
	fill_pattern(s->buf, len * 16, 11);
	for (uint32_t i = 0; i < n; i++)
		for (int k = 0; k < 2; k++)
			ASSERT_EQ(0, post_send1(q[k], IBV_WR_RDMA_WRITE, i, s->buf + (i % 16) * len,
						len, s->mr->lkey,
						(uintptr_t)(dst[k] + (i % 64) * len), s->mr->rkey,
						IBV_SEND_SIGNALED));
	for (uint32_t got = 0; got < 2 * n; got++) {
		ASSERT_EQ(1, vc_poll_devs(&s->dev, 1, s->cq, wc, 1, 2 * n, &steps))
			TH_LOG("%u of %u WRITEs completed, %u clock steps", got, 2 * n, steps);
		ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status);
	}
	for (uint32_t i = n - 64; i < n; i++)
		for (int k = 0; k < 2; k++)
			ASSERT_EQ(0, memcmp(s->buf + (i % 16) * len, dst[k] + (i % 64) * len, len));
	TH_LOG("loopback: %llu frames, %llu dropped (ring full), %u clock steps",
	       (unsigned long long)loopback_frames(s->dev, false),
	       (unsigned long long)loopback_frames(s->dev, true), steps);
}

/* The ring is bounded: frames handed to an engine that does not turn (a
 * polled device nobody polls) by eight senders (none past its share) fill
 * it, then each further one is dropped and counted, never waited for; once
 * the engine turns it takes what the ring held. */
TEST_F(loop, full_ring_drops_and_counts)
{
	struct side *s = &self->s;
	struct roxe_frame_addr fa = { .hop_limit = 64, .sport = 0xc000 };
	struct roxe_frame_hdr h = { .opcode = ROXE_OP_UD_SEND_ONLY, .pkey = 0xffff, .dqpn = 1000,
				    .qkey = 0x11111111, .src_qpn = 1001 };
	struct roxe_pkt pkt;
	uint8_t frame[512], pay[64] = { 0 };
	unsigned ok = 0, full = 0;
	struct ibv_wc wc;
	int len;

	if (!variant->polled)
		SKIP(return, "needs an engine that turns only when polled");
	memcpy(fa.sgid, s->dev->gid, 16);
	memcpy(fa.dgid, s->dev->gid, 16);
	len = roxe_frame_build(frame, sizeof(frame), &fa, &h, pay, sizeof(pay), &pkt);
	ASSERT_GT(len, 0);
	for (int i = 0; i < ROXE_HANDOFF_SLOTS + 44; i++) {
		int r = roxe_loop_deliver(s->dev, frame, (uint32_t)len, h.dqpn, 1001 + i % 8);

		if (r == 0)
			ok++;
		else if (r == -ENOBUFS)
			full++;
	}
	EXPECT_EQ((unsigned)ROXE_HANDOFF_SLOTS, ok);
	EXPECT_EQ(44u, full);
	EXPECT_EQ(-EINVAL, roxe_loop_deliver(s->dev, frame, 20, h.dqpn, 1001));	/* not a whole frame */
	EXPECT_TRUE(roxe_handoff_pending(&s->dev->engines[0]));
	/* The engine's stats have one writer: it counts the ring's drops on
	 * its next turn. */
	for (int i = 0; i < 100 && loopback_frames(s->dev, false) < ok; i++)
		roxe_poll_cq(s->cq, 1, &wc);		/* turns the engine */
	EXPECT_EQ(ok, loopback_frames(s->dev, false));
	EXPECT_EQ(full, loopback_frames(s->dev, true));
	EXPECT_FALSE(roxe_handoff_pending(&s->dev->engines[0]));
}

/*
 * Fairness (#33): one sender floods an engine that does not turn (a
 * polled device nobody polls): a QP looping frames to a QP of another
 * tenant, and copies no QP sent (as multicast copies). Each has only its
 * share of the ring queued, the rest dropped and counted; a datagram of
 * another QP still gets in and is delivered. Once the engine took the
 * flood, the flooder may queue again.
 */
TEST_F(loop, a_flooding_sender_leaves_room_for_others)
{
	struct side *s = &self->s;
	struct roxe_frame_addr fa = { .hop_limit = 64, .sport = 0xc000 };
	struct roxe_frame_hdr h = { .opcode = ROXE_OP_UD_SEND_ONLY, .pkey = 0xffff, .dqpn = 1000,
				    .qkey = 0x11111111, .src_qpn = 1001 };
	const uint32_t flooders[2] = { 1001, ROXE_LOOP_NO_QPN };
	uint8_t flood[512], frame[512], pay[64] = { 0 };
	unsigned ok[2] = { 0 }, full = 0;
	struct roxe_qp *u, *v;
	struct roxe_pkt pkt;
	struct ibv_wc wc;
	int flen, len;

	if (!variant->polled)
		SKIP(return, "needs an engine that turns only when polled");
	ASSERT_EQ(0, qp_pair(self, IBV_QPT_UD, true, &u, &v));
	ASSERT_EQ(0, post_recv1(v, 9, s->buf + 65536, 1040, s->mr->lkey));
	memcpy(fa.sgid, s->dev->gid, 16);
	memcpy(fa.dgid, s->dev->gid, 16);
	flen = roxe_frame_build(flood, sizeof(flood), &fa, &h, pay, sizeof(pay), &pkt);
	ASSERT_GT(flen, 0);
	h.dqpn = roxe_qp_num(v);
	h.src_qpn = roxe_qp_num(u);
	len = roxe_frame_build(frame, sizeof(frame), &fa, &h, pay, sizeof(pay), &pkt);
	ASSERT_GT(len, 0);

	for (int f = 0; f < 2; f++)
		for (int i = 0; i < ROXE_HANDOFF_SLOTS + 44; i++) {
			int r = roxe_loop_deliver(s->dev, flood, (uint32_t)flen, 1000, flooders[f]);

			if (r == 0)
				ok[f]++;
			else if (r == -ENOBUFS)
				full++;
		}
	ASSERT_EQ(0, roxe_loop_deliver(s->dev, frame, (uint32_t)len, h.dqpn, roxe_qp_num(u)))
		TH_LOG("u's datagram found no room: %u and %u flood frames queued", ok[0], ok[1]);
	EXPECT_EQ((unsigned)ROXE_HANDOFF_QP_SLOTS, ok[0]);
	EXPECT_EQ((unsigned)ROXE_HANDOFF_MCAST_SLOTS, ok[1]);
	ASSERT_EQ(1, poll_n(s->cq, &wc, 1, 5000));	/* turns the engine */
	EXPECT_EQ(9u, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(roxe_qp_num(u), wc.src_qp);
	EXPECT_EQ(full, loopback_frames(s->dev, true));
	/* the flood was taken: the flooder's share is its own again */
	for (int i = 0; i < 100 && roxe_handoff_pending(&s->dev->engines[0]); i++)
		roxe_poll_cq(s->cq, 1, &wc);
	EXPECT_FALSE(roxe_handoff_pending(&s->dev->engines[0]));
	EXPECT_EQ(0, roxe_loop_deliver(s->dev, flood, (uint32_t)flen, 1000, flooders[0]));
}

TEST_HARNESS_MAIN
