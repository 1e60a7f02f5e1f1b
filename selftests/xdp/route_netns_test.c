// SPDX-License-Identifier: GPL-2.0-only
/*
 * Routed RoCE v2: hosts a and b in different subnets, a router namespace
 * between them (tools/scripts/netns.sh --routed), over IPv4 and IPv6 GIDs,
 * with the AF_XDP and the UDP backends (and one of each). RC SEND, WRITE, READ and both
 * atomics between them, checked byte for byte: the QPs reach the peer
 * through the kernel's route (the router's MAC as next hop). A capture on
 * the router's interfaces checks the TTL / hop limit each host sent is the
 * AV's, as rxe sends it (rxe_net.c prepare4/prepare6 copy grh.hop_limit),
 * and that a route's MTU metric caps the path MTU.
 */
#include <sched.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include "kselftest_harness.h"
#include "host.h"
#include "roxe/verbs.h"
#include "core/core.h"		/* the QPs' counters */

#define NQP	2
#define BUF	(1u << 20)
#define HOPS	7	/* neither 64 (a default) nor 1 (dies at the router) */

FIXTURE(routed) {
	struct topo	t;
	struct host	h[2];
	bool		up;
	int		cap[2];		/* AF_PACKET on the router: towards a, b */
};

FIXTURE_VARIANT(routed) {
	enum roxe_backend backend;
	bool		ipv6;
	bool		b_udp;		/* b on the UDP backend */
	int		route_mtu;	/* the hosts' routes' MTU metric; 0: none */
};

FIXTURE_VARIANT_ADD(routed, afxdp_v4) { .backend = ROXE_BACKEND_AFXDP };
FIXTURE_VARIANT_ADD(routed, afxdp_v6) { .backend = ROXE_BACKEND_AFXDP, .ipv6 = true };
FIXTURE_VARIANT_ADD(routed, udp_v4) { .backend = ROXE_BACKEND_UDP };
FIXTURE_VARIANT_ADD(routed, udp_v6) { .backend = ROXE_BACKEND_UDP, .ipv6 = true };
/* a's AF_XDP frames carry a zero UDP checksum (as rxe's): b's UDP socket
 * must take them over IPv6 too. */
FIXTURE_VARIANT_ADD(routed, afxdp_to_udp_v4) { .backend = ROXE_BACKEND_AFXDP, .b_udp = true };
FIXTURE_VARIANT_ADD(routed, afxdp_to_udp_v6) { .backend = ROXE_BACKEND_AFXDP, .ipv6 = true,
					       .b_udp = true };
/* Links of MTU 3000 (IB MTU 2048), routes of MTU 1500, and the router's
 * link to b of 1500: 2048-byte packets would not get through. */
FIXTURE_VARIANT_ADD(routed, afxdp_v4_route_mtu) { .backend = ROXE_BACKEND_AFXDP,
						  .route_mtu = 1500 };
FIXTURE_VARIANT_ADD(routed, afxdp_v6_route_mtu) { .backend = ROXE_BACKEND_AFXDP, .ipv6 = true,
						  .route_mtu = 1500 };

static int sh(const char *fmt, const char *name, int mtu)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), fmt, name, mtu);
	return system(cmd);
}

/* A capture of every frame the router's interface ifname sees. */
static int capture_open(const char *ifname)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, htons(ETH_P_ALL));
	int buf = 16 << 20;

	if (fd < 0)
		return -1;
	sll.sll_ifindex = (int)if_nametoindex(ifname);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf));
	if (!sll.sll_ifindex || bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		close(fd);
		return -1;
	}
	return fd;
}

struct seen {
	unsigned	frames;		/* RoCE v2 frames arriving from the host */
	unsigned	bad_ttl;	/* whose TTL / hop limit was not HOPS */
	unsigned	last_ttl;
	unsigned	max_ip_len;
};

/* The RoCE v2 frames that arrived at the router (not the ones it sent)
 * since the last read, added to s. */
static void capture_read(int fd, struct seen *s)
{
	uint8_t f[9216];

	for (;;) {
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(fd, f, sizeof(f), 0, (struct sockaddr *)&from, &fl);
		const uint8_t *ip = f + 14, *udp;
		unsigned ttl, len;

		if (n < 0)
			break;
		if (from.sll_pkttype == PACKET_OUTGOING || n < 14 + 40 + 8)
			continue;
		if (f[12] == 0x08 && f[13] == 0x00 && ip[9] == 17) {
			udp = ip + (ip[0] & 15) * 4;
			ttl = ip[8];
			len = (unsigned)ip[2] << 8 | ip[3];
		} else if (f[12] == 0x86 && f[13] == 0xdd && ip[6] == 17) {
			udp = ip + 40;
			ttl = ip[7];
			len = 40 + ((unsigned)ip[4] << 8 | ip[5]);
		} else {
			continue;
		}
		if (udp + 4 > f + n || (udp[2] << 8 | udp[3]) != ROXE_UDP_PORT)
			continue;
		s->frames++;
		s->last_ttl = ttl;
		if (ttl != HOPS)
			s->bad_ttl++;
		if (len > s->max_ip_len)
			s->max_ip_len = len;
	}
}

/* The frames h's QPs have sent: each engine counts a frame as it makes it
 * (a held ACK leaves once the engine idles). */
static uint64_t host_sent(const struct host *h)
{
	uint64_t n = 0;

	for (int i = 0; i < NQP; i++)
		n += __atomic_load_n(&h->dev->qp_stats[roxe_qp_num(h->qp[i])].tx_packets,
				     __ATOMIC_RELAXED);
	return n;
}

FIXTURE_SETUP(routed)
{
	struct host_attr ha = {
		.backend = variant->backend, .engines = 1, .nqp = NQP,
		.cqe = 256, .max_wr = 64, .buf_len = BUF,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
		.rd_atomic = 4, .ipv6 = variant->ipv6, .hop_limit = HOPS, .b_udp = variant->b_udp,
		.path_mtu = variant->route_mtu ? IBV_MTU_2048 : IBV_MTU_1024,
	};
	char ifn[24];
	int err;

	self->cap[0] = self->cap[1] = -1;
	ASSERT_EQ(0, topo_up_routed(&self->t, "r", 1, variant->route_mtu ? 3000 : 1500));
	self->up = true;
	/* The harness skips teardown after a failed setup: undo it here. */
	if (variant->route_mtu &&
	    sh("ip -n %1$s-a route change default via 10.99.1.254 mtu %2$d && "
	       "ip -n %1$s-a -6 route change default via fd99:1::fe mtu %2$d && "
	       "ip -n %1$s-b route change default via 10.99.2.254 mtu %2$d && "
	       "ip -n %1$s-b -6 route change default via fd99:2::fe mtu %2$d && "
	       "ip -n %1$s-r link set %1$s-rb mtu %2$d", self->t.name, variant->route_mtu)) {
		topo_down(&self->t);
		ASSERT_TRUE(0) TH_LOG("setup: route MTUs");
	}
	topo_enter(self->t.ns_m);
	snprintf(ifn, sizeof(ifn), "%s-ra", self->t.name);
	self->cap[0] = capture_open(ifn);
	snprintf(ifn, sizeof(ifn), "%s-rb", self->t.name);
	self->cap[1] = capture_open(ifn);
	err = self->cap[0] < 0 || self->cap[1] < 0 ? -EIO : host_pair_open(&self->t, self->h, &ha);
	if (err) {
		for (int i = 0; i < 2; i++)
			if (self->cap[i] >= 0)
				close(self->cap[i]);
		topo_down(&self->t);
		ASSERT_EQ(0, err) TH_LOG("setup: %s", strerror(-err));
	}
}

FIXTURE_TEARDOWN(routed)
{
	host_close(&self->h[0]);
	host_close(&self->h[1]);
	for (int i = 0; i < 2; i++)
		if (self->cap[i] >= 0)
			close(self->cap[i]);
	if (self->up)
		topo_down(&self->t);
}

TEST_F(routed, every_operation_through_the_router)
{
	struct host *a = &self->h[0], *b = &self->h[1];
	uint32_t len = 10000;
	struct seen sa = { 0 }, sb = { 0 };
	struct ibv_wc wc;
	uint8_t ga[16], gb[16];

	/* The GIDs are of the family asked for, in different subnets. */
	roxe_query_gid(a->dev, roxe_device_gid_index(a->dev), (union ibv_gid *)ga);
	roxe_query_gid(b->dev, roxe_device_gid_index(b->dev), (union ibv_gid *)gb);
	ASSERT_EQ(!variant->ipv6, roxe_gid_is_v4(ga));
	ASSERT_EQ(!variant->ipv6, roxe_gid_is_v4(gb));
	for (int i = 0; i < NQP; i++) {
		uint8_t *src = a->buf + (size_t)i * 65536, *dst = b->buf + (size_t)i * 65536;
		uint8_t *back = a->buf + BUF / 2 + (size_t)i * 65536;
		uint64_t *ctr = (uint64_t *)(b->buf + BUF - 8 * (i + 1));
		struct ibv_sge rsge = { (uintptr_t)dst, len, b->mr->lkey };
		struct ibv_recv_wr rwr = { .wr_id = 77, .sg_list = &rsge, .num_sge = 1 }, *rbad;
		struct ibv_sge csge = { (uintptr_t)back, 8, a->mr->lkey };
		struct ibv_send_wr cwr = { .sg_list = &csge, .num_sge = 1,
					   .opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
					   .send_flags = IBV_SEND_SIGNALED }, *cbad;

		for (uint32_t k = 0; k < len; k++)
			src[k] = (uint8_t)(k * 13 + i);
		/* SEND */
		ASSERT_EQ(0, roxe_post_recv(b->qp[i], &rwr, &rbad));
		ASSERT_EQ(0, host_post(a->qp[i], IBV_WR_SEND, src, len, a->mr->lkey, 0, 0));
		ASSERT_EQ(1, wait_wc(b->cq, &wc, 5000)) TH_LOG("qp %d: no receive", i);
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(len, wc.byte_len);
		ASSERT_EQ(0, memcmp(src, dst, len));
		ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", roxe_wc_status_str(wc.status));
		/* WRITE, then READ it back */
		memset(dst, 0, len);
		ASSERT_EQ(0, host_post(a->qp[i], IBV_WR_RDMA_WRITE, src, len, a->mr->lkey,
				       (uintptr_t)dst, b->mr->rkey));
		ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", roxe_wc_status_str(wc.status));
		ASSERT_EQ(0, memcmp(src, dst, len));
		ASSERT_EQ(0, host_post(a->qp[i], IBV_WR_RDMA_READ, back, len, a->mr->lkey,
				       (uintptr_t)dst, b->mr->rkey));
		ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", roxe_wc_status_str(wc.status));
		ASSERT_EQ(0, memcmp(src, back, len));
		/* FETCH_ADD, then CMP_SWP */
		*ctr = 41;
		ASSERT_EQ(0, host_post(a->qp[i], IBV_WR_ATOMIC_FETCH_AND_ADD, back, 8, a->mr->lkey,
				       (uintptr_t)ctr, b->mr->rkey));
		ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(41u, *(uint64_t *)back);
		ASSERT_EQ(42u, *ctr);
		cwr.wr.atomic.remote_addr = (uintptr_t)ctr;
		cwr.wr.atomic.rkey = b->mr->rkey;
		cwr.wr.atomic.compare_add = 42;
		cwr.wr.atomic.swap = 0x5eed;
		ASSERT_EQ(0, roxe_post_send(a->qp[i], &cwr, &cbad));
		ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(42u, *(uint64_t *)back);
		ASSERT_EQ(0x5eedu, *ctr);
	}
	/* Every frame either host sent has reached the router and been
	 * looked at: the captures, read first, saw as many as the hosts
	 * count (a frame is counted before it leaves: never more). */
	ASSERT_TRUE(wait_until((capture_read(self->cap[0], &sa), capture_read(self->cap[1], &sb),
				sa.frames >= host_sent(a) && sb.frames >= host_sent(b)), 5000))
		TH_LOG("the router saw %u of a's %llu frames, %u of b's %llu", sa.frames,
		       (unsigned long long)host_sent(a), sb.frames,
		       (unsigned long long)host_sent(b));
	ASSERT_LT(0u, sa.frames);
	ASSERT_LT(0u, sb.frames);
	EXPECT_EQ(0u, sa.bad_ttl) TH_LOG("a sent TTL %u, the AV says %d", sa.last_ttl, HOPS);
	EXPECT_EQ(0u, sb.bad_ttl) TH_LOG("b sent TTL %u, the AV says %d", sb.last_ttl, HOPS);
	if (variant->route_mtu) {
		/* Capped to IB MTU 1024: 1024 + headers fit 1500. */
		EXPECT_GE((unsigned)variant->route_mtu, sa.max_ip_len);
		EXPECT_GE((unsigned)variant->route_mtu, sb.max_ip_len);
		EXPECT_LT(1024u, sa.max_ip_len);
	}
}

TEST_HARNESS_MAIN
