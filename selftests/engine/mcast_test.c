// SPDX-License-Identifier: GPL-2.0-only
/*
 * UD multicast over the loop backend: attach and detach with rxe's errors
 * and limits, a datagram to a group reaching every attached QP of the
 * receiving device across its two engines (one takes the frame, the other
 * gets its copy through its hand-off ring), Q_Key mismatches dropped, detach and
 * destroy stopping delivery, forged frames (bad ICRC, RC opcode, a group
 * nobody joined, a unicast DGID, a DQPN not 0xFFFFFF) reaching no one, and
 * the sending device's own attached QPs getting their copy (loopback).
 *
 * Device A (10.99.0.1 or fd99::1, one engine) and device B (10.99.0.2 or
 * fd99::2, two engines), groups 239.1.2.3 and ff0e::1:2 (by variant),
 * share wire 1, so everything A sends arrives on B's engine 0; B's second
 * engine has wire 2 of its own, where forged_frames injects. They run on
 * the virtual clock (UD has no timer): "reaches no one" is read once both
 * devices are settled (vclock.h), not after a wait long enough.
 */
#include <arpa/inet.h>
#include "kselftest_harness.h"
#include "pair.h"
#include "roxe/limits.h"
#include "transport/transport.h"	/* white box: the engine stats */
#include "transport/engine.h"
#include "transport/mcast.h"
#include "vclock.h"

#define QKEY	0x11111111u
#define NQ	4			/* B's QPs attached to the group */
#define SLOT	2048

struct mdev {
	struct roxe_device	*dev;
	struct roxe_pd		*pd;
	uint8_t			*buf;
	struct roxe_mr		*mr;
};

struct mqp {
	struct roxe_cq		*cq;
	struct roxe_qp		*qp;
};

static int mdev_open_polled(struct mdev *d, struct roxe_port **ports, unsigned n, uint32_t ip,
			    bool v6, bool polled)
{
	struct roxe_device_attr da = {
		.backend = ROXE_BACKEND_PORTS, .engines = n, .mtu = 1024, .ports = ports,
		.polled = polled,
	};
	int err;

	roxe_gid_from_v4(da.gid, htonl(ip));
	if (v6) {				/* fd99::N */
		memset(da.gid, 0, 16);
		da.gid[0] = 0xfd;
		da.gid[1] = 0x99;
		da.gid[15] = (uint8_t)ip;
	}
	da.mac[0] = 0x02;
	da.mac[5] = (uint8_t)ip;
	err = roxe_device_open(&da, &d->dev);
	if (!err)
		err = roxe_alloc_pd(d->dev, &d->pd);
	if (err)
		return err;
	d->buf = aligned_alloc(4096, 64 * SLOT);
	if (!d->buf)
		return -ENOMEM;
	memset(d->buf, 0, 64 * SLOT);
	return roxe_reg_mr(d->pd, d->buf, 64 * SLOT, IBV_ACCESS_LOCAL_WRITE, &d->mr);
}

static int mdev_open(struct mdev *d, struct roxe_port **ports, unsigned n, uint32_t ip, bool v6)
{
	return mdev_open_polled(d, ports, n, ip, v6, false);
}

static void mdev_close(struct mdev *d)
{
	if (d->mr)
		roxe_dereg_mr(d->mr);
	if (d->pd)
		roxe_dealloc_pd(d->pd);
	if (d->dev)
		roxe_device_close(d->dev);
	free(d->buf);
}

/* A UD QP at RTS with its own CQ and Q_Key qkey. */
static int mqp_make(struct mdev *d, struct mqp *q, uint32_t qkey)
{
	struct roxe_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey };
	int err = roxe_create_cq(d->dev, 256, NULL, NULL, &q->cq);

	if (err)
		return err;
	ia.send_cq = ia.recv_cq = q->cq;
	err = roxe_create_qp(d->pd, &ia, &q->qp);
	if (!err)
		err = roxe_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				     IBV_QP_QKEY);
	a.qp_state = IBV_QPS_RTR;
	if (!err)
		err = roxe_modify_qp(q->qp, &a, IBV_QP_STATE);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 1;
	if (!err)
		err = roxe_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	return err;
}

static void mqp_free(struct mqp *q)
{
	if (q->qp)
		roxe_destroy_qp(q->qp);
	if (q->cq)
		roxe_destroy_cq(q->cq);
	q->qp = NULL;
	q->cq = NULL;
}

static void group_gid(union ibv_gid *g, uint32_t ip)
{
	roxe_gid_from_v4(g->raw, htonl(ip));
}

FIXTURE(mc) {
	struct roxe_loop_wire	*w1, *w2;
	struct mdev		a, b;
	struct mqp		tx, rx[NQ], other, any;
	union ibv_gid		grp;
	struct ibv_ah		*ah;
};

FIXTURE_VARIANT(mc) {
	bool	v6;
};

FIXTURE_VARIANT_ADD(mc, ipv4) { .v6 = false };
FIXTURE_VARIANT_ADD(mc, ipv6) { .v6 = true };

FIXTURE_SETUP(mc)
{
	struct roxe_port *pa[1], *pb[2];
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh = { .hop_limit = 1 } };

	vc_start();
	self->w1 = roxe_loop_wire_new(4096 + 256, 1024);
	self->w2 = roxe_loop_wire_new(4096 + 256, 1024);
	ASSERT_TRUE(self->w1 && self->w2);
	pa[0] = roxe_loop_port(self->w1, 0);
	pb[0] = roxe_loop_port(self->w1, 1);
	pb[1] = roxe_loop_port(self->w2, 1);
	ASSERT_EQ(0, mdev_open(&self->a, pa, 1, 0x0a630001, variant->v6));
	ASSERT_EQ(0, mdev_open(&self->b, pb, 2, 0x0a630002, variant->v6));
	ASSERT_EQ(0, mqp_make(&self->a, &self->tx, QKEY));
	for (int i = 0; i < NQ; i++)
		ASSERT_EQ(0, mqp_make(&self->b, &self->rx[i], QKEY));
	ASSERT_EQ(0, mqp_make(&self->b, &self->other, 0x22222222));
	ASSERT_EQ(0, mqp_make(&self->b, &self->any, QKEY));
	group_gid(&self->grp, 0xef010203);		/* 239.1.2.3 */
	if (variant->v6) {				/* ff0e::1:2 */
		memset(self->grp.raw, 0, 16);
		self->grp.raw[0] = 0xff;
		self->grp.raw[1] = 0x0e;
		self->grp.raw[13] = 1;
		self->grp.raw[15] = 2;
	}
	aa.grh.dgid = self->grp;
	aa.grh.sgid_index = (uint8_t)roxe_device_gid_index(self->a.dev);
	ASSERT_EQ(0, roxe_create_ah(self->a.pd, &aa, &self->ah));
}

FIXTURE_TEARDOWN(mc)
{
	roxe_destroy_ah(self->ah);
	mqp_free(&self->tx);
	for (int i = 0; i < NQ; i++)
		mqp_free(&self->rx[i]);
	mqp_free(&self->other);
	mqp_free(&self->any);
	mdev_close(&self->a);
	mdev_close(&self->b);
	roxe_loop_wire_free(self->w1);
	roxe_loop_wire_free(self->w2);
	EXPECT_EQ(0, leak_check());
}

static int post_rx(struct mdev *d, struct mqp *q, int slot)
{
	return post_recv1(q->qp, (uint64_t)slot, d->buf + (size_t)slot * SLOT, SLOT, d->mr->lkey);
}

/* A datagram of len bytes (pattern seed) from tx to the group. */
static int mc_send(FIXTURE_DATA(mc) *self, uint32_t len, uint32_t seed, uint32_t qkey)
{
	struct ibv_sge sge = { (uintptr_t)self->a.buf, len, self->a.mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	fill_pattern(self->a.buf, len, seed);
	wr.wr.ud.ah = self->ah;
	wr.wr.ud.remote_qpn = 0xffffff;
	wr.wr.ud.remote_qkey = qkey;
	if (roxe_post_send(self->tx.qp, &wr, &bad))
		return -1;
	if (poll_n(self->tx.cq, &wc, 1, 2000) != 1 || wc.status != IBV_WC_SUCCESS)
		return -2;
	return 0;
}

/* q got the datagram: one completion, GRH then the pattern. */
static int got(struct mdev *d, struct mqp *q, uint32_t len, uint32_t seed)
{
	uint8_t want[SLOT];
	struct ibv_wc wc;

	if (poll_n(q->cq, &wc, 1, 2000) != 1)
		return -1;
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV || wc.byte_len != 40 + len ||
	    !(wc.wc_flags & IBV_WC_GRH) || wc.qp_num != roxe_qp_num(q->qp))
		return -2;
	fill_pattern(want, len, seed);
	return memcmp(d->buf + wc.wr_id * SLOT + 40, want, len) ? -3 : 0;
}

/* q got nothing: every engine of the n devices has done all it can, and
 * its CQ is empty. */
static bool none_of(struct roxe_device *const *devs, unsigned n, struct mqp *q)
{
	struct ibv_wc wc;

	return !vc_settle_devs(devs, n) && roxe_poll_cq(q->cq, 1, &wc) == 0;
}

static bool none(FIXTURE_DATA(mc) *self, struct mqp *q)
{
	return none_of((struct roxe_device *[]){ self->a.dev, self->b.dev }, 2, q);
}

TEST_F(mc, device_reports_limits)
{
	struct ibv_device_attr da;

	ASSERT_EQ(0, roxe_query_device(self->b.dev, &da));
	EXPECT_EQ(ROXE_MAX_MCAST_GRP, da.max_mcast_grp);
	EXPECT_EQ(ROXE_MAX_MCAST_QP_ATTACH, da.max_mcast_qp_attach);
	EXPECT_EQ(ROXE_MAX_TOT_MCAST_QP_ATTACH, da.max_total_mcast_qp_attach);
}

TEST_F(mc, attach_detach_errors)
{
	struct roxe_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
					.cap = { .max_send_wr = 4, .max_recv_wr = 4,
						 .max_send_sge = 1, .max_recv_sge = 1 } };
	union ibv_gid uni, v6 = { .raw = { 0xff, 0x0e, [15] = 0x42 } };
	struct roxe_qp *rc;
	struct mqp q = { 0 };

	ia.send_cq = ia.recv_cq = self->rx[0].cq;
	ASSERT_EQ(0, roxe_create_qp(self->b.pd, &ia, &rc));
	EXPECT_EQ(-EINVAL, roxe_attach_mcast(rc, &self->grp));	/* not UD */
	roxe_destroy_qp(rc);
	group_gid(&uni, 0x0a630009);
	EXPECT_EQ(-EINVAL, roxe_attach_mcast(self->rx[0].qp, &uni));	/* not multicast */
	EXPECT_EQ(-EINVAL, roxe_attach_mcast(NULL, &self->grp));
	EXPECT_EQ(-EINVAL, roxe_detach_mcast(self->rx[0].qp, &self->grp));	/* no group */
	ASSERT_EQ(0, roxe_attach_mcast(self->rx[0].qp, &self->grp));
	EXPECT_EQ(0, roxe_attach_mcast(self->rx[0].qp, &self->grp));	/* twice: no error */
	EXPECT_EQ(-EINVAL, roxe_detach_mcast(self->rx[1].qp, &self->grp));	/* not in it */
	EXPECT_EQ(0, roxe_attach_mcast(self->rx[0].qp, &v6));		/* IPv6 group */
	EXPECT_EQ(0, roxe_detach_mcast(self->rx[0].qp, &v6));
	EXPECT_EQ(0, roxe_detach_mcast(self->rx[0].qp, &self->grp));
	EXPECT_EQ(-EINVAL, roxe_detach_mcast(self->rx[0].qp, &self->grp));

	/* max_mcast_qp_attach QPs per group; destroying one frees its place. */
	struct mqp many[ROXE_MAX_MCAST_QP_ATTACH];

	memset(many, 0, sizeof(many));
	for (int i = 0; i < ROXE_MAX_MCAST_QP_ATTACH; i++) {
		ASSERT_EQ(0, mqp_make(&self->b, &many[i], QKEY));
		ASSERT_EQ(0, roxe_attach_mcast(many[i].qp, &self->grp));
	}
	EXPECT_EQ(-ENOMEM, roxe_attach_mcast(self->rx[0].qp, &self->grp));
	mqp_free(&many[0]);
	EXPECT_EQ(0, roxe_attach_mcast(self->rx[0].qp, &self->grp));
	for (int i = 1; i < ROXE_MAX_MCAST_QP_ATTACH; i++)
		mqp_free(&many[i]);

	/* max_mcast_grp groups. */
	ASSERT_EQ(0, mqp_make(&self->b, &q, QKEY));
	for (uint32_t i = 1; i < ROXE_MAX_MCAST_GRP; i++) {
		union ibv_gid g;

		group_gid(&g, 0xe8000000 + i);
		ASSERT_EQ(0, roxe_attach_mcast(q.qp, &g));
	}
	{
		union ibv_gid g;

		group_gid(&g, 0xe8000000 + ROXE_MAX_MCAST_GRP);
		EXPECT_EQ(-ENOMEM, roxe_attach_mcast(q.qp, &g));
		EXPECT_EQ(0, roxe_detach_mcast(self->rx[0].qp, &self->grp));
		EXPECT_EQ(0, roxe_attach_mcast(q.qp, &g));	/* a group went */
	}
	mqp_free(&q);				/* destroy detaches from them all */
	EXPECT_EQ(0, roxe_attach_mcast(self->rx[0].qp, &self->grp));
}

/* Hand-off drops (handoff.c) of all of d's engines, as roxectl stats sums
 * them. */
static uint64_t handoff_drops(const struct mdev *d)
{
	uint64_t n = 0;

	for (unsigned e = 0; e < d->dev->nengines; e++)
		n += __atomic_load_n(&d->dev->engines[e].stats->loopback_drop, __ATOMIC_RELAXED);
	return n;
}

TEST_F(mc, fan_out_across_engines)
{
	bool eng[2] = { false, false };

	for (int i = 0; i < NQ; i++) {
		eng[roxe_qp_num(self->rx[i].qp) % 2] = true;
		ASSERT_EQ(0, post_rx(&self->b, &self->rx[i], i));
		ASSERT_EQ(0, post_rx(&self->b, &self->rx[i], 8 + i));
		ASSERT_EQ(0, roxe_attach_mcast(self->rx[i].qp, &self->grp));
	}
	ASSERT_TRUE(eng[0] && eng[1]);		/* QPs on both of B's engines */
	ASSERT_EQ(0, post_rx(&self->b, &self->other, 20));
	ASSERT_EQ(0, roxe_attach_mcast(self->other.qp, &self->grp));
	ASSERT_EQ(0, post_rx(&self->b, &self->any, 21));	/* not attached */

	ASSERT_EQ(0, mc_send(self, 700, 1, QKEY));
	for (int i = 0; i < NQ; i++)
		EXPECT_EQ(0, got(&self->b, &self->rx[i], 700, 1));
	EXPECT_TRUE(none(self, &self->other));	/* another Q_Key */
	EXPECT_TRUE(none(self, &self->any));

	/* Detached: no more. */
	ASSERT_EQ(0, roxe_detach_mcast(self->rx[0].qp, &self->grp));
	ASSERT_EQ(0, mc_send(self, 300, 2, QKEY));
	for (int i = 1; i < NQ; i++)
		EXPECT_EQ(0, got(&self->b, &self->rx[i], 300, 2));
	EXPECT_TRUE(none(self, &self->rx[0]));
	EXPECT_TRUE(none(self, &self->other));
	EXPECT_EQ(0u, handoff_drops(&self->b));	/* no hand-off ring overflowed */
}

TEST_F(mc, wrong_qkey_reaches_no_one)
{
	for (int i = 0; i < NQ; i++) {
		ASSERT_EQ(0, post_rx(&self->b, &self->rx[i], i));
		ASSERT_EQ(0, roxe_attach_mcast(self->rx[i].qp, &self->grp));
	}
	ASSERT_EQ(0, mc_send(self, 100, 3, 0x33333333));
	for (int i = 0; i < NQ; i++)
		EXPECT_TRUE(none(self, &self->rx[i]));
}

TEST_F(mc, loopback_to_senders_host)
{
	struct mqp mine = { 0 };

	ASSERT_EQ(0, mqp_make(&self->a, &mine, QKEY));
	ASSERT_EQ(0, post_rx(&self->a, &mine, 40));
	ASSERT_EQ(0, roxe_attach_mcast(mine.qp, &self->grp));
	ASSERT_EQ(0, post_rx(&self->b, &self->rx[0], 0));
	ASSERT_EQ(0, roxe_attach_mcast(self->rx[0].qp, &self->grp));
	ASSERT_EQ(0, mc_send(self, 256, 4, QKEY));
	EXPECT_EQ(0, got(&self->a, &mine, 256, 4));	/* the sender's host */
	EXPECT_EQ(0, got(&self->b, &self->rx[0], 256, 4));
	mqp_free(&mine);
}

/* Inject one frame into B's second engine (wire 2, whose far end no
 * device holds): from sgid (NULL: A's address) to dgid, opcode op, DQPN
 * dqpn; bad_icrc spoils it. */
static int inject_from(FIXTURE_DATA(mc) *self, const uint8_t *sgid, const uint8_t dgid[16],
		       uint8_t op, uint32_t dqpn, uint32_t qkey, uint32_t seed, bool bad_icrc)
{
	struct roxe_port *p = roxe_loop_port(self->w2, 0);
	struct roxe_frame_hdr h = { .opcode = op, .pkey = ROXE_DEFAULT_PKEY, .dqpn = dqpn,
				    .psn = 1, .qkey = qkey, .src_qpn = 77 };
	struct roxe_frame_addr a = { .sport = 0xc001, .hop_limit = 1 };
	uint8_t payload[300];
	struct roxe_pkt pkt;
	struct roxe_buf b;
	int len;

	fill_pattern(payload, sizeof(payload), seed);
	if (sgid)
		memcpy(a.sgid, sgid, 16);
	else
		roxe_query_gid(self->a.dev, roxe_device_gid_index(self->a.dev),
			       (union ibv_gid *)a.sgid);
	memcpy(a.dgid, dgid, 16);
	roxe_gid_mcast_mac(dgid, a.dmac);
	a.smac[0] = 0x02;
	if (roxe_port_tx_alloc(p, &b, 1) != 1)
		return -1;
	len = roxe_frame_build(b.data, b.cap, &a, &h, payload, sizeof(payload), &pkt);
	if (len <= 0) {
		roxe_port_tx_free(p, &b, 1);
		return -1;
	}
	if (bad_icrc)
		b.data[len - 1] ^= 0x5a;
	b.len = (uint32_t)len;
	roxe_port_tx(p, &b, 1);
	roxe_port_flush(p);
	return 0;
}

static int inject(FIXTURE_DATA(mc) *self, const uint8_t dgid[16], uint8_t op, uint32_t dqpn,
		  uint32_t qkey, uint32_t seed, bool bad_icrc)
{
	return inject_from(self, NULL, dgid, op, dqpn, qkey, seed, bad_icrc);
}

/* A group's datagram from the port with B's own address as its source: a
 * third host posing as B (B's own datagrams reach its members through
 * loopback, never through the port). Dropped and counted, as unicast. */
TEST_F(mc, wire_datagram_from_own_address_dropped)
{
	uint8_t self_gid[16];
	uint64_t drops = 0;
	int i;

	roxe_query_gid(self->b.dev, roxe_device_gid_index(self->b.dev), (union ibv_gid *)self_gid);
	for (i = 0; i < NQ; i++) {
		ASSERT_EQ(0, post_rx(&self->b, &self->rx[i], i));
		ASSERT_EQ(0, roxe_attach_mcast(self->rx[i].qp, &self->grp));
	}
	ASSERT_EQ(0, inject_from(self, self_gid, self->grp.raw, ROXE_OP_UD_SEND_ONLY, 0xffffff,
				 QKEY, 5, false));
	ASSERT_EQ(0, vc_settle_devs((struct roxe_device *[]){ self->a.dev, self->b.dev }, 2));
	drops = __atomic_load_n(&self->b.dev->engines[1].stats->rx_drop_addr, __ATOMIC_RELAXED);
	EXPECT_EQ(1u, drops);
	for (i = 0; i < NQ; i++)
		EXPECT_TRUE(none(self, &self->rx[i]));
	/* from A, the same datagram reaches every member */
	ASSERT_EQ(0, inject(self, self->grp.raw, ROXE_OP_UD_SEND_ONLY, 0xffffff, QKEY, 6, false));
	for (i = 0; i < NQ; i++)
		EXPECT_EQ(0, got(&self->b, &self->rx[i], 300, 6));
}

/* Frames from a peer are hostile: only a UD request to a joined group,
 * with its ICRC right and the QP's Q_Key, reaches attached QPs; here it
 * arrives on B's engine 1, which hands engine 0's QPs their copies. */
TEST_F(mc, forged_frames)
{
	uint8_t other[16], self_gid[16];
	int i;

	memcpy(other, self->grp.raw, 16);
	other[15] ^= 0x40;				/* a group nobody joined */
	roxe_query_gid(self->b.dev, roxe_device_gid_index(self->b.dev), (union ibv_gid *)self_gid);
	for (i = 0; i < NQ; i++) {
		ASSERT_EQ(0, post_rx(&self->b, &self->rx[i], i));
		ASSERT_EQ(0, post_rx(&self->b, &self->rx[i], 8 + i));
		ASSERT_EQ(0, roxe_attach_mcast(self->rx[i].qp, &self->grp));
	}
	ASSERT_EQ(0, inject(self, self->grp.raw, ROXE_OP_UD_SEND_ONLY, 0xffffff, QKEY, 5, true));
	ASSERT_EQ(0, inject(self, self->grp.raw, ROXE_OP_RC_SEND_ONLY, 0xffffff, QKEY, 5, false));
	ASSERT_EQ(0, inject(self, other, ROXE_OP_UD_SEND_ONLY, 0xffffff, QKEY, 5, false));
	ASSERT_EQ(0, inject(self, self_gid, ROXE_OP_UD_SEND_ONLY, 0xffffff, QKEY, 5, false));
	ASSERT_EQ(0, inject(self, self->grp.raw, ROXE_OP_UD_SEND_ONLY, 0xfffffe, QKEY, 5, false));
	for (i = 0; i < NQ; i++)
		EXPECT_TRUE(none(self, &self->rx[i]));
	/* The QPs still work: the real thing reaches every one. */
	ASSERT_EQ(0, inject(self, self->grp.raw, ROXE_OP_UD_SEND_ONLY, 0xffffff, QKEY, 6, false));
	for (i = 0; i < NQ; i++)
		EXPECT_EQ(0, got(&self->b, &self->rx[i], 300, 6));
	EXPECT_EQ(0u, handoff_drops(&self->b));
}

/* What goes on the wire, read straight off a loop port: the group's
 * Ethernet address (no neighbour lookup), DQPN 0xFFFFFF, the group as the
 * destination IP, and a valid ICRC; as rxe sends it. */
TEST(frame_on_the_wire)
{
	struct roxe_loop_wire *w = roxe_loop_wire_new(4096 + 256, 64);
	struct roxe_port *pa, *peer;
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh = { .hop_limit = 1 } };
	static const uint8_t mac4[6] = { 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 };
	static const uint8_t mac6[6] = { 0x33, 0x33, 0x00, 0x01, 0x00, 0x02 };
	struct mdev a = { 0 };
	struct mqp q = { 0 };
	struct ibv_ah *ah;

	ASSERT_TRUE(w != NULL);
	pa = roxe_loop_port(w, 0);
	peer = roxe_loop_port(w, 1);
	for (int v6 = 0; v6 < 2; v6++) {
		struct ibv_sge sge;
		struct ibv_send_wr wr = { .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;
		uint8_t sgid[16], dgid[16];
		struct roxe_pkt pkt;
		struct roxe_buf b;
		struct ibv_wc wc;
		unsigned n = 0;

		ASSERT_EQ(0, mdev_open(&a, &pa, 1, 0x0a630001, v6));
		ASSERT_EQ(0, mqp_make(&a, &q, QKEY));
		if (v6) {
			memset(aa.grh.dgid.raw, 0, 16);
			aa.grh.dgid.raw[0] = 0xff;
			aa.grh.dgid.raw[1] = 0x0e;
			aa.grh.dgid.raw[13] = 1;
			aa.grh.dgid.raw[15] = 2;
		} else {
			group_gid(&aa.grh.dgid, 0xef010203);
		}
		aa.grh.sgid_index = (uint8_t)roxe_device_gid_index(a.dev);
		ASSERT_EQ(0, roxe_create_ah(a.pd, &aa, &ah));
		sge = (struct ibv_sge){ (uintptr_t)a.buf, 64, a.mr->lkey };
		wr.sg_list = &sge;
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = 0xffffff;
		wr.wr.ud.remote_qkey = QKEY;
		ASSERT_EQ(0, roxe_post_send(q.qp, &wr, &bad));
		ASSERT_EQ(1, poll_n(q.cq, &wc, 1, 2000));
		for (int t = 0; t < 2000 && !n; t++) {
			n = roxe_port_rx(peer, &b, 1);
			if (!n)
				usleep(1000);
		}
		ASSERT_EQ(1u, n);
		EXPECT_EQ(0, memcmp(b.data, v6 ? mac6 : mac4, 6));
		ASSERT_EQ(ROXE_PKT_OK, roxe_parse(b.data, b.data + b.len, b.len, &pkt));
		EXPECT_EQ(ROXE_PKT_OK, roxe_icrc_check(b.data, &pkt));
		EXPECT_EQ(0xffffffu, roxe_bth_qpn((const struct roxe_bth *)(b.data + pkt.bth_off)));
		ASSERT_EQ(0, roxe_pkt_gids(b.data, b.data + b.len, &pkt, sgid, dgid));
		EXPECT_EQ(0, memcmp(dgid, aa.grh.dgid.raw, 16));
		roxe_port_rx_release(peer, &b, 1);
		roxe_destroy_ah(ah);
		mqp_free(&q);
		mdev_close(&a);
		memset(&a, 0, sizeof(a));
	}
	roxe_loop_wire_free(w);
	EXPECT_EQ(0, leak_check());
}

/*
 * Copies handed to an engine whose hand-off ring holds their share of it
 * (ROXE_HANDOFF_MCAST_SLOTS: all multicast copies together) are dropped
 * and show in the engine stats (loopback_drop, what roxectl stats sums),
 * not only inside the library. A polled device with two engines: engine 0
 * takes a group datagram ROXE_HANDOFF_MCAST_SLOTS + 10 times while nobody
 * turns engine 1, whose attached QP needs every copy handed over; then
 * engine 1 turns, delivers what its ring held and counts the 10 it could
 * not take.
 */
TEST(fan_out_drops_counted)
{
	struct roxe_loop_wire *w1 = roxe_loop_wire_new(4096 + 256, 64);
	struct roxe_loop_wire *w2 = roxe_loop_wire_new(4096 + 256, 64);
	struct roxe_frame_hdr h = { .opcode = ROXE_OP_UD_SEND_ONLY, .pkey = ROXE_DEFAULT_PKEY,
				    .dqpn = 0xffffff, .psn = 1, .qkey = QKEY, .src_qpn = 77 };
	struct roxe_frame_addr fa = { .sport = 0xc001, .hop_limit = 1 };
	const unsigned n = ROXE_HANDOFF_MCAST_SLOTS + 10;
	struct mqp q[2] = { 0 }, *mine = NULL;
	uint8_t frame[512], payload[100];
	struct roxe_port *pb[2];
	struct mdev b = { 0 };
	union ibv_gid grp;
	struct roxe_pkt pkt;
	uint64_t drops = 0, looped = 0;
	int len;

	ASSERT_TRUE(w1 && w2);
	pb[0] = roxe_loop_port(w1, 1);
	pb[1] = roxe_loop_port(w2, 1);
	ASSERT_EQ(0, mdev_open_polled(&b, pb, 2, 0x0a630002, false, true));
	for (int i = 0; i < 2; i++) {			/* QPNs follow each other */
		ASSERT_EQ(0, mqp_make(&b, &q[i], QKEY));
		if (roxe_qp_num(q[i].qp) % 2 == 1)
			mine = &q[i];			/* engine 1's */
	}
	ASSERT_TRUE(mine != NULL);
	group_gid(&grp, 0xef010203);
	ASSERT_EQ(0, roxe_attach_mcast(mine->qp, &grp));
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(0, post_rx(&b, mine, i));

	fill_pattern(payload, sizeof(payload), 9);
	roxe_gid_from_v4(fa.sgid, htonl(0x0a630001));
	memcpy(fa.dgid, grp.raw, 16);
	roxe_gid_mcast_mac(grp.raw, fa.dmac);
	fa.smac[0] = 0x02;
	len = roxe_frame_build(frame, sizeof(frame), &fa, &h, payload, sizeof(payload), &pkt);
	ASSERT_GT(len, 0);
	/* As engine 0 does with a frame from its port; nobody turns it. */
	for (unsigned i = 0; i < n; i++)
		roxe_mcast_rx(&b.dev->engines[0], frame, (uint32_t)len, &pkt);
	for (int i = 0; i < 1000; i++)			/* bounded: 4 * 16 copies a turn */
		roxe_engine_poll(&b.dev->engines[1]);
	for (unsigned e = 0; e < b.dev->nengines; e++) {
		drops += __atomic_load_n(&b.dev->engines[e].stats->loopback_drop, __ATOMIC_RELAXED);
		looped += __atomic_load_n(&b.dev->engines[e].stats->loopback, __ATOMIC_RELAXED);
	}
	EXPECT_EQ(10u, drops);
	EXPECT_EQ(0u, looped);		/* copies from the wire: not looped frames */
	for (int i = 0; i < 8; i++)			/* the copies engine 1 held */
		EXPECT_EQ(0, got(&b, mine, sizeof(payload), 9));
	EXPECT_TRUE(none_of(&b.dev, 1, &q[mine == &q[0] ? 1 : 0]));
	mqp_free(&q[0]);
	mqp_free(&q[1]);
	mdev_close(&b);
	roxe_loop_wire_free(w1);
	roxe_loop_wire_free(w2);
	EXPECT_EQ(0, leak_check());
}

TEST_HARNESS_MAIN
