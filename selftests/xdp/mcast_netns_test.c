// SPDX-License-Identifier: GPL-2.0-only
/*
 * UD multicast between two network namespaces over XDP and AF_XDP: host a
 * sends datagrams to group 239.1.2.3 (destination MAC 01:00:5e:01:02:03,
 * DQPN 0xFFFFFF), or with IPv6 GIDs (fd99::1, fd99::2) to ff0e::1:2
 * (33:33:00:01:00:02); host b has four UD QPs attached (on both of its engines:
 * XDP steers the group's frames to one, which hands the other its copies),
 * and each receives every datagram, checked byte for byte; b's interface
 * has the group's Ethernet address while a QP is attached, not after.
 */
#include <sched.h>
#include "kselftest_harness.h"
#include "host.h"
#include "roxe/verbs.h"

#define NQ	4
#define SLOT	2048
#define BUF	(64 * SLOT)
#define QKEY	0x11111111u

FIXTURE(mc) {
	struct topo	t;
	struct host	h[2];
	struct roxe_qp	*tx, *rx[NQ];
	struct roxe_cq	*rcq[NQ];
	struct ibv_ah	*ah;
	union ibv_gid	grp;
	bool		up;
};

static int ud_qp(struct host *h, struct roxe_cq *cq, struct roxe_qp **qp)
{
	struct roxe_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY };
	int err = roxe_create_qp(h->pd, &ia, qp);

	if (!err)
		err = roxe_modify_qp(*qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				     IBV_QP_QKEY);
	a.qp_state = IBV_QPS_RTR;
	if (!err)
		err = roxe_modify_qp(*qp, &a, IBV_QP_STATE);
	a.qp_state = IBV_QPS_RTS;
	if (!err)
		err = roxe_modify_qp(*qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	return err;
}

static int post_recv_slot(struct roxe_qp *qp, struct host *h, uint32_t slot)
{
	struct ibv_sge sge = { (uintptr_t)(h->buf + (size_t)slot * SLOT), SLOT, h->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return roxe_post_recv(qp, &wr, &bad);
}

/* Is mac on ifname's multicast list (/proc/net/dev_mcast, this namespace)? */
static bool if_has_mcast(const char *ifname, const char *mac_hex)
{
	char line[256], name[32], addr[64];
	FILE *f = fopen("/proc/net/dev_mcast", "r");
	bool found = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*d %31s %*d %*d %63s", name, addr) == 2 &&
		    !strcmp(name, ifname) && !strcmp(addr, mac_hex))
			found = true;
	fclose(f);
	return found;
}

FIXTURE_VARIANT(mc) {
	bool		v6;
	const char	*group, *mac;	/* the group, its MAC as /proc/net/dev_mcast has it */
};

FIXTURE_VARIANT_ADD(mc, ipv4) { .v6 = false, .group = "239.1.2.3", .mac = "01005e010203" };
FIXTURE_VARIANT_ADD(mc, ipv6) { .v6 = true, .group = "ff0e::1:2", .mac = "333300010002" };

/* A host on ifname whose GID is addr (IPv6), or the interface's IPv4 one. */
static int mhost_open(struct host *h, const char *ifname, const char *addr)
{
	struct roxe_device_attr da = { .ifname = ifname, .backend = ROXE_BACKEND_AFXDP,
				       .engines = 2 };
	int err;

	if (addr)
		inet_pton(AF_INET6, addr, da.gid);
	err = roxe_device_open(&da, &h->dev);
	if (!err)
		err = roxe_alloc_pd(h->dev, &h->pd);
	if (!err)
		err = roxe_create_cq(h->dev, 256, NULL, NULL, &h->cq);
	if (err)
		return err;
	h->buf = aligned_alloc(4096, BUF);
	if (!h->buf)
		return -ENOMEM;
	memset(h->buf, 0, BUF);
	return roxe_reg_mr(h->pd, h->buf, BUF, IBV_ACCESS_LOCAL_WRITE, &h->mr);
}

FIXTURE_SETUP(mc)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh = { .hop_limit = 1 } };
	char ifa[16], ifb[16];
	int err;

	ASSERT_EQ(0, topo_up(&self->t, "mc", 2, 1500));
	self->up = true;
	topo_ifname(&self->t, 'a', ifa, sizeof(ifa));
	topo_ifname(&self->t, 'b', ifb, sizeof(ifb));
	topo_enter(self->t.ns_a);
	err = mhost_open(&self->h[0], ifa, variant->v6 ? "fd99::1" : NULL);
	if (!err) {
		topo_enter(self->t.ns_b);
		err = mhost_open(&self->h[1], ifb, variant->v6 ? "fd99::2" : NULL);
	}
	if (err) {
		host_close(&self->h[0]);
		host_close(&self->h[1]);
		topo_down(&self->t);
		ASSERT_EQ(0, err) TH_LOG("setup: %s", strerror(-err));
	}
	if (variant->v6)
		inet_pton(AF_INET6, variant->group, self->grp.raw);
	else
		roxe_gid_from_v4(self->grp.raw, inet_addr(variant->group));
	topo_enter(self->t.ns_b);
	for (int i = 0; i < NQ; i++) {
		ASSERT_EQ(0, roxe_create_cq(self->h[1].dev, 64, NULL, NULL, &self->rcq[i]));
		ASSERT_EQ(0, ud_qp(&self->h[1], self->rcq[i], &self->rx[i]));
	}
	topo_enter(self->t.ns_a);
	ASSERT_EQ(0, ud_qp(&self->h[0], self->h[0].cq, &self->tx));
	aa.grh.dgid = self->grp;
	aa.grh.sgid_index = (uint8_t)roxe_device_gid_index(self->h[0].dev);	/* the device's GID */
	ASSERT_EQ(0, roxe_create_ah(self->h[0].pd, &aa, &self->ah));
}

FIXTURE_TEARDOWN(mc)
{
	if (self->ah)
		roxe_destroy_ah(self->ah);
	if (self->tx)
		roxe_destroy_qp(self->tx);
	for (int i = 0; i < NQ; i++) {
		if (self->rx[i])
			roxe_destroy_qp(self->rx[i]);
		if (self->rcq[i])
			roxe_destroy_cq(self->rcq[i]);
	}
	host_close(&self->h[0]);
	host_close(&self->h[1]);
	if (self->up)
		topo_down(&self->t);
}

static void pattern(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t k = 0; k < len; k++)
		p[k] = (uint8_t)(k * 13 + seed * 31);
}

TEST_F(mc, every_attached_qp_gets_every_datagram)
{
	struct host *a = &self->h[0], *b = &self->h[1];
	const uint32_t n = 8, len = 900;
	bool eng[2] = { false, false };
	char ifb[16];

	topo_ifname(&self->t, 'b', ifb, sizeof(ifb));
	topo_enter(self->t.ns_b);
	EXPECT_FALSE(if_has_mcast(ifb, variant->mac));
	for (int i = 0; i < NQ; i++) {
		eng[roxe_qp_num(self->rx[i]) % 2] = true;
		for (uint32_t k = 0; k < n; k++)
			ASSERT_EQ(0, post_recv_slot(self->rx[i], b, (uint32_t)i * n + k));
		ASSERT_EQ(0, roxe_attach_mcast(self->rx[i], &self->grp));
	}
	ASSERT_TRUE(eng[0] && eng[1]);
	EXPECT_TRUE(if_has_mcast(ifb, variant->mac));

	topo_enter(self->t.ns_a);
	for (uint32_t k = 0; k < n; k++) {
		struct ibv_sge sge = { (uintptr_t)a->buf, len, a->mr->lkey };
		struct ibv_send_wr wr = { .wr_id = k, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;
		struct ibv_wc wc;

		pattern(a->buf, len, k);
		wr.wr.ud.ah = self->ah;
		wr.wr.ud.remote_qpn = 0xffffff;
		wr.wr.ud.remote_qkey = QKEY;
		ASSERT_EQ(0, roxe_post_send(self->tx, &wr, &bad));
		ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		/* One at a time: the buffer is reused. */
		for (int i = 0; i < NQ; i++) {
			uint8_t want[SLOT];

			ASSERT_EQ(1, wait_wc(self->rcq[i], &wc, 5000)) TH_LOG("qp %d, datagram %u", i, k);
			ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
			ASSERT_EQ(40 + len, wc.byte_len);
			ASSERT_EQ(roxe_qp_num(self->rx[i]), wc.qp_num);
			ASSERT_EQ(roxe_qp_num(self->tx), wc.src_qp);
			pattern(want, len, k);
			ASSERT_EQ(0, memcmp(b->buf + wc.wr_id * SLOT + 40, want, len));
		}
	}
	topo_enter(self->t.ns_b);
	for (int i = 0; i < NQ; i++)
		ASSERT_EQ(0, roxe_detach_mcast(self->rx[i], &self->grp));
	EXPECT_FALSE(if_has_mcast(ifb, variant->mac));
}

TEST_HARNESS_MAIN
