// SPDX-License-Identifier: GPL-2.0-only
/*
 * A third host on the link (issue #15, finding 4). Hosts a and b run roxe
 * (XDP + AF_XDP) with a live RC QP between them; namespace m, the bridge
 * joining them, plays a host on the same link that knows the QP's number,
 * its next PSN and an rkey, and forges RoCE v2 frames (ICRC valid) into b:
 *   - from its own address to b's: the engine drops it (not the QP's path),
 *     counted in the QP's rx_drop_addr and the engines' roxe_eng_stats;
 *   - from a's address to an address that is not b's (b's MAC, as a host
 *     routing or bridging through b sees it): the XDP program passes it to
 *     the kernel, counted in not_local_passed, and the engine never sees it.
 * Then a's real WRITE at that PSN lands: the victim's data is intact.
 */
#include <sched.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include "kselftest_harness.h"
#include "host.h"
#include "roxe/verbs.h"
#include "roxe/maps.h"
#include "roxe/xdp.h"

#define BUF	(1u << 16)
#define PSN_A	500u		/* a's first PSN: b expects it */
#define FORGED	0xee

FIXTURE(forge) {
	struct topo	t;
	struct host	h[2];
	bool		up;
};

FIXTURE_SETUP(forge)
{
	struct host_attr ha = {
		.backend = ROXE_BACKEND_AFXDP, .engines = 1, .nqp = 1, .cqe = 64, .max_wr = 16,
		.buf_len = BUF, .access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		.rd_atomic = 1, .psn_a = PSN_A, .psn_b = 700,
	};
	int err;

	ASSERT_EQ(0, topo_up_middle(&self->t, "f", 1, 1500, true));
	self->up = true;
	err = host_pair_open(&self->t, self->h, &ha);
	if (err) {
		topo_down(&self->t);
		ASSERT_EQ(0, err) TH_LOG("setup: %s", strerror(-err));
	}
}

FIXTURE_TEARDOWN(forge)
{
	host_close(&self->h[0]);
	host_close(&self->h[1]);
	if (self->up)
		topo_down(&self->t);
}

static int write_to(struct host *a, struct host *b, uint32_t off, uint32_t len)
{
	return host_post(a->qp[0], IBV_WR_RDMA_WRITE, a->buf + off, len, a->mr->lkey,
			 (uintptr_t)b->buf + off, b->mr->rkey);
}

/* From namespace m, onto the bridge port towards b: one RoCE v2 RDMA
 * WRITE ONLY from src to dst, to b's MAC, ICRC valid. */
static int forge_write(const struct topo *t, const char *src, const char *dst, uint32_t dqpn,
		       uint32_t psn, uint64_t va, uint32_t rkey)
{
	struct roxe_frame_addr a = { .sport = 0xc0de, .hop_limit = 64 };
	struct roxe_frame_hdr h = { .opcode = ROXE_OP_RC_RDMA_WRITE_ONLY,
				    .pkey = ROXE_DEFAULT_PKEY, .dqpn = dqpn, .psn = psn,
				    .ackreq = true, .va = va, .rkey = rkey, .dma_len = 64 };
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP),
				  .sll_halen = 6 };
	uint8_t frame[256], payload[64];
	struct roxe_pkt pkt;
	char ifname[IF_NAMESIZE];
	int fd, n, err = 0;

	memset(payload, FORGED, sizeof(payload));
	memcpy(a.smac, "\x02\x00\x00\x00\x00\x66", 6);
	memcpy(a.dmac, t->mac_b, 6);
	roxe_gid_from_v4(a.sgid, inet_addr(src));
	roxe_gid_from_v4(a.dgid, inet_addr(dst));
	n = roxe_frame_build(frame, sizeof(frame), &a, &h, payload, sizeof(payload), &pkt);
	if (n < 0)
		return n;
	if (topo_enter(t->ns_m))
		return -errno;
	snprintf(ifname, sizeof(ifname), "%s-mb", t->name);
	ll.sll_ifindex = (int)if_nametoindex(ifname);
	memcpy(ll.sll_addr, t->mac_b, 6);
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0 || !ll.sll_ifindex)
		return -errno;
	if (sendto(fd, frame, (size_t)n, 0, (struct sockaddr *)&ll, sizeof(ll)) != n)
		err = -errno;
	close(fd);
	return err;
}

/* What b's XDP program and engine counted of the forged frames, read in
 * b's namespace: frames passed to the kernel as not b's (not_local_passed),
 * frames the engine dropped as not the QP's path (the QP's rx_drop_addr,
 * and the engines' in eng_drops if asked). */
static int b_counters(const struct topo *t, uint32_t qpn, uint64_t *not_local,
		      uint64_t *qp_drops, uint64_t *eng_drops)
{
	struct roxe_engine_stats es;
	struct roxe_qp_stats qs;
	struct roxe_stats gs;
	struct roxe_xdp *x;
	char ifb[16];
	int err;

	topo_enter(t->ns_b);
	topo_ifname(t, 'b', ifb, sizeof(ifb));
	err = roxe_xdp_open(ifb, &x, NULL);
	if (err)
		return err;
	err = roxe_xdp_read_qp_stats(x, qpn, &qs);
	if (!err)
		err = roxe_xdp_read_stats(x, &gs);
	if (!err && eng_drops)
		err = roxe_xdp_read_eng_stats(x, &es);
	if (!err) {
		*not_local = gs.not_local_passed;
		*qp_drops = qs.rx_drop_addr;
		if (eng_drops)
			*eng_drops = es.rx_drop_addr;
	}
	roxe_xdp_close(x);
	return err;
}

/* Is addr (dotted quad) in dev's GID table? The device's address thread
 * rewrites the table, the XDP program's local addresses and the engines'
 * set in one hold of the device's address lock, which reading the table
 * takes (verbs/device.c: addrs_update): once the table shows a change,
 * the rest shows it too. */
static bool has_gid(struct roxe_device *dev, const char *addr)
{
	uint8_t want[16];
	union ibv_gid g;

	roxe_gid_from_v4(want, inet_addr(addr));
	for (int i = 0; roxe_query_gid(dev, i, &g) == 0; i++)
		if (!memcmp(g.raw, want, 16))
			return true;
	return false;
}

TEST_F(forge, third_host_frames_never_reach_the_qp)
{
	struct host *a = &self->h[0], *b = &self->h[1];
	static const uint8_t zero[128];
	uint64_t nl = 0, dr = 0, edr = 0;
	struct ibv_wc wc;
	uint32_t bqpn = roxe_qp_num(b->qp[0]);

	/* the connection works: a's PSN_A is taken */
	for (int i = 0; i < 4096; i++)
		a->buf[4096 + i] = (uint8_t)(i * 7 + 3);
	topo_enter(self->t.ns_a);
	ASSERT_EQ(0, write_to(a, b, 4096, 4096));
	ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(0, memcmp(a->buf + 4096, b->buf + 4096, 4096));

	/* b now expects PSN_A + 4 (four 1024-byte packets) */
	ASSERT_EQ(0, forge_write(&self->t, "10.99.0.66", "10.99.0.2", bqpn, PSN_A + 4,
				 (uintptr_t)b->buf, b->mr->rkey));
	ASSERT_EQ(0, forge_write(&self->t, "10.99.0.1", "10.99.0.77", bqpn, PSN_A + 4,
				 (uintptr_t)b->buf + 64, b->mr->rkey));
	/* each frame is counted where it ends: the first as b's engine drops
	 * it, the second as b's XDP program passes it to the kernel */
	wait_until(b_counters(&self->t, bqpn, &nl, &dr, &edr) ||
		   (dr >= 1 && edr >= 1 && nl >= 1), 5000);
	ASSERT_EQ(0, b_counters(&self->t, bqpn, &nl, &dr, &edr));
	EXPECT_EQ(1u, dr);
	EXPECT_EQ(1u, edr);
	EXPECT_EQ(1u, nl);
	EXPECT_EQ(0, memcmp(b->buf, zero, sizeof(zero)));

	/* the victim's own WRITE at that PSN lands */
	for (int i = 0; i < 128; i++)
		a->buf[i] = (uint8_t)(i + 1);
	topo_enter(self->t.ns_a);
	ASSERT_EQ(0, write_to(a, b, 0, 128));
	ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(a->buf, b->buf, 128));
}

/* An address added to b's interface after the device opened is b's as
 * soon as the kernel announces it (rtnetlink; the application calls
 * nothing): frames to it reach the engine (whose RC check still drops
 * them: not the QP's path); once removed, they go to the kernel again. */
TEST_F(forge, address_changes_are_followed)
{
	struct host *b = &self->h[1];
	uint32_t bqpn = roxe_qp_num(b->qp[0]);
	uint64_t nl0, nl, dr0, dr;
	char cmd[160];

	ASSERT_EQ(0, b_counters(&self->t, bqpn, &nl0, &dr0, NULL));
	snprintf(cmd, sizeof(cmd), "ip -n %s-b addr add 10.99.0.12/24 dev %s-b", self->t.name,
		 self->t.name);
	ASSERT_EQ(0, system(cmd));
	/* the event reached the device's thread, which published the address */
	ASSERT_TRUE(wait_until(has_gid(b->dev, "10.99.0.12"), 5000));
	ASSERT_EQ(0, forge_write(&self->t, "10.99.0.1", "10.99.0.12", bqpn, PSN_A,
				 (uintptr_t)b->buf, b->mr->rkey));
	/* counted where it ended, the engine or the kernel: then look which */
	nl = nl0;
	dr = dr0;
	wait_until(b_counters(&self->t, bqpn, &nl, &dr, NULL) || nl != nl0 || dr != dr0, 5000);
	ASSERT_EQ(0, b_counters(&self->t, bqpn, &nl, &dr, NULL));
	EXPECT_EQ(nl0, nl);
	EXPECT_EQ(dr0 + 1, dr);
	topo_enter(self->t.ns_b);
	EXPECT_EQ(0, roxe_device_refresh_addrs(b->dev));	/* nothing left to read */

	snprintf(cmd, sizeof(cmd), "ip -n %s-b addr del 10.99.0.12/24 dev %s-b", self->t.name,
		 self->t.name);
	ASSERT_EQ(0, system(cmd));
	ASSERT_TRUE(wait_until(!has_gid(b->dev, "10.99.0.12"), 5000));
	ASSERT_EQ(0, forge_write(&self->t, "10.99.0.1", "10.99.0.12", bqpn, PSN_A,
				 (uintptr_t)b->buf, b->mr->rkey));
	nl = nl0;
	dr = dr0 + 1;
	wait_until(b_counters(&self->t, bqpn, &nl, &dr, NULL) || nl != nl0 || dr != dr0 + 1,
		   5000);
	ASSERT_EQ(0, b_counters(&self->t, bqpn, &nl, &dr, NULL));
	EXPECT_EQ(nl0 + 1, nl);
	EXPECT_EQ(dr0 + 1, dr);
	EXPECT_EQ(0, b->buf[0]);
}

TEST_HARNESS_MAIN
