// SPDX-License-Identifier: GPL-2.0-only
/*
 * ECN and CNPs on the wire (issue #21). Hosts a and b run roxe (XDP +
 * AF_XDP) with a live RC QP between them through the bridge in namespace
 * m, which watches the port towards a (AF_PACKET: a's frames as a sent
 * them, b's as b sent them) and plays the congested switch: it injects
 * copies of a's last WRITE (a duplicate, so b only ACKs it again) marked
 * CE into b.
 *   - frames leave ECT(0), or Not-ECT with no_ecn, whatever the QP's
 *     traffic class says;
 *   - N CE frames back to back, within the CNP interval: b's XDP program
 *     counts N (ecn_marked), b sends a exactly 1 CNP (cnp_sent), a counts
 *     it (cnp_received); DCQCN is off here (the engines run on the
 *     virtual clock, where a paced QP would wait for good), so no CNP
 *     cuts a rate (cc_rate_cuts 0: dcqcn_test counts the cuts exactly,
 *     congestion_test.sh end to end); after the interval,
 *     the next mark makes another;
 *     marks further apart than the interval make one CNP each;
 *   - the CNP on the wire is ConnectX's: opcode 0x81 to a's QP, BECN, PSN
 *     0, 16 zero bytes, ICRC right, DSCP 48 and the device's ECN;
 *   - hostile CNPs (from a third address, a byte count that is not a
 *     CNP's, to an unknown QP) change no counter but the drop ones, and
 *     neither CE frames nor CNPs disturb the QPs: the traffic goes on,
 *     its data verified, no NAK, no timeout.
 * The engines run on the virtual clock (engine.h): "within the
 * interval" and "after it" are the test's to say, never the host's
 * speed. Marks injected together meet b at one instant; the clock moves
 * by the interval between batches. DCQCN's reaction is off: a frozen
 * clock would hold a paced QP for ever, and the reaction point is
 * dcqcn_test's and congestion_test.sh's; a still counts the CNPs.
 */
#include <poll.h>
#include <sched.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include "kselftest_harness.h"
#include "host.h"
#include "roxe/verbs.h"
#include "roxe/maps.h"
#include "roxe/xdp.h"
#include "transport/transport.h"
#include "transport/engine.h"

#define BUF	(1u << 16)
#define PSN_A	300u
#define MARKS	10
/* The virtual clock's start: far past 0, which the timers read as "never". */
#define VC_START_NS	(1000ull * 1000000000ull)

FIXTURE(ecn) {
	struct topo	t;
	struct host	h[2];
	bool		up;
	int		cap;	/* AF_PACKET on m's port towards a */
};

FIXTURE_VARIANT(ecn) {
	bool		no_ecn;
	unsigned	cnp_interval_us;	/* 0: the default, 50 */
};

FIXTURE_VARIANT_ADD(ecn, long_interval) { .cnp_interval_us = 300000 };
FIXTURE_VARIANT_ADD(ecn, default_interval) { .cnp_interval_us = 0 };
FIXTURE_VARIANT_ADD(ecn, ecn_off) { .no_ecn = true, .cnp_interval_us = 300000 };

static int capture_open(const struct topo *t)
{
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	char ifname[IF_NAMESIZE];
	int fd;

	if (topo_enter(t->ns_m))
		return -1;
	snprintf(ifname, sizeof(ifname), "%s-ma", t->name);
	ll.sll_ifindex = (int)if_nametoindex(ifname);
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, htons(ETH_P_ALL));
	if (fd < 0 || !ll.sll_ifindex || bind(fd, (struct sockaddr *)&ll, sizeof(ll))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

FIXTURE_SETUP(ecn)
{
	struct host_attr ha = {
		.backend = ROXE_BACKEND_AFXDP, .engines = 1, .nqp = 1, .cqe = 64, .max_wr = 16,
		.buf_len = BUF, .access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		.rd_atomic = 1, .psn_a = PSN_A, .psn_b = 900,
		.no_ecn = variant->no_ecn, .cnp_interval_us = variant->cnp_interval_us,
		.cc = "off",
	};
	int err;

	self->cap = -1;
	roxe_clock_virtual(VC_START_NS);	/* before any engine starts */
	ASSERT_EQ(0, topo_up_middle(&self->t, "e", 1, 1500, true));
	self->up = true;
	err = host_pair_open(&self->t, self->h, &ha);
	if (err) {
		topo_down(&self->t);
		ASSERT_EQ(0, err) TH_LOG("setup: %s", strerror(-err));
	}
	self->cap = capture_open(&self->t);
	ASSERT_LE(0, self->cap);
}

FIXTURE_TEARDOWN(ecn)
{
	if (self->cap >= 0)
		close(self->cap);
	host_close(&self->h[0]);
	host_close(&self->h[1]);
	if (self->up)
		topo_down(&self->t);
}

/* What m saw on its port towards a since the last call. */
struct seen {
	unsigned	from_a, from_b;		/* RoCE v2 frames */
	unsigned	a_ecn[4], b_ecn[4];	/* by ECN value, CNPs not counted */
	unsigned	cnps;			/* from b: valid CNPs to a's QP */
	unsigned	bad_cnps;		/* from b: CNPs not as ConnectX sends them */
	uint8_t		cnp_tclass;
};

static void capture_read(int fd, uint32_t a_qpn, struct seen *s)
{
	static const uint8_t zero[ROXE_CNP_PAYLOAD_LEN];
	uint8_t f[4096];
	ssize_t n;

	memset(s, 0, sizeof(*s));
	while ((n = recv(fd, f, sizeof(f), 0)) > 0) {
		struct roxe_frame_addr a;
		struct roxe_frame_hdr h;
		struct roxe_pkt pkt;
		bool from_b;
		int ecn;

		if (roxe_parse(f, f + n, (uint32_t)n, &pkt) != ROXE_PKT_OK)
			continue;
		roxe_frame_addr_get(f, &pkt, &a);
		roxe_frame_hdr_get(f, &pkt, &h);
		from_b = a.sgid[15] == 2;	/* 10.99.0.2 */
		ecn = roxe_pkt_ecn(f, f + n, &pkt);
		if (ecn < 0)
			continue;
		if (from_b)
			s->from_b++;
		else
			s->from_a++;
		if (pkt.opcode == ROXE_OP_CNP) {
			if (from_b && h.dqpn == a_qpn && h.becn && !h.fecn && !h.ackreq &&
			    h.psn == 0 && h.pkey == 0xffff &&
			    !memcmp(f + pkt.payload_off, zero, sizeof(zero)) &&
			    roxe_icrc_check(f, &pkt) == ROXE_PKT_OK) {
				s->cnps++;
				s->cnp_tclass = a.tclass;
			} else {
				s->bad_cnps++;
			}
			continue;
		}
		(from_b ? s->b_ecn : s->a_ecn)[ecn]++;
	}
}

/* From namespace m onto the port towards b, as if from a: count copies of
 * one RoCE v2 frame (ICRC valid) from src to b with the given tclass,
 * opcode, destination QP and PSN, back to back; a WRITE_ONLY carries 64
 * bytes of a's buffer to the same place again. */
static int inject(const struct topo *t, const char *src, uint8_t tclass, uint8_t opcode,
		  uint32_t dqpn, uint32_t psn, const void *payload, uint32_t len, uint64_t va,
		  uint32_t rkey, int count)
{
	struct roxe_frame_addr a = { .sport = 0xc0de, .hop_limit = 64, .tclass = tclass };
	struct roxe_frame_hdr h = { .opcode = opcode, .pkey = ROXE_DEFAULT_PKEY, .dqpn = dqpn,
				    .psn = psn, .va = va, .rkey = rkey, .dma_len = len,
				    .qkey = 0x11111111, .src_qpn = 2 };
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP),
				  .sll_halen = 6 };
	char ifname[IF_NAMESIZE];
	uint8_t frame[512];
	struct roxe_pkt pkt;
	int fd, n, err = 0;

	if (opcode == ROXE_OP_CNP)
		h.becn = true;
	memcpy(a.smac, t->mac_a, 6);
	memcpy(a.dmac, t->mac_b, 6);
	roxe_gid_from_v4(a.sgid, inet_addr(src));
	roxe_gid_from_v4(a.dgid, inet_addr("10.99.0.2"));
	n = roxe_frame_build(frame, sizeof(frame), &a, &h, payload, len, &pkt);
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
	for (int i = 0; i < count && !err; i++)
		if (sendto(fd, frame, (size_t)n, 0, (struct sockaddr *)&ll, sizeof(ll)) != n)
			err = -errno;
	close(fd);
	return err;
}

/* h's QP counters (XDP program and engine), read in h's namespace. */
static struct roxe_qp_stats qp_stats(const struct topo *t, char host, struct roxe_qp *qp)
{
	struct roxe_qp_stats qs = { 0 };
	struct roxe_xdp *x;
	char ifname[16];

	topo_enter(host == 'a' ? t->ns_a : t->ns_b);
	topo_ifname(t, host, ifname, sizeof(ifname));
	if (roxe_xdp_open(ifname, &x, NULL) == 0) {
		roxe_xdp_read_qp_stats(x, roxe_qp_num(qp), &qs);
		roxe_xdp_close(x);
	}
	return qs;
}

static struct roxe_stats xdp_stats(const struct topo *t)
{
	struct roxe_stats gs = { 0 };
	struct roxe_xdp *x;
	char ifname[16];

	topo_enter(t->ns_b);
	topo_ifname(t, 'b', ifname, sizeof(ifname));
	if (roxe_xdp_open(ifname, &x, NULL) == 0) {
		roxe_xdp_read_stats(x, &gs);
		roxe_xdp_close(x);
	}
	return gs;
}

/* a WRITEs len bytes at off into b, waits for it and checks the data;
 * a lives in namespace ns. */
static int write_ns(struct host *a, struct host *b, int ns, uint32_t off, uint32_t len,
		    uint8_t seed)
{
	struct ibv_wc wc;

	for (uint32_t i = 0; i < len; i++)
		a->buf[off + i] = (uint8_t)(i * 13 + seed);
	topo_enter(ns);
	if (host_post(a->qp[0], IBV_WR_RDMA_WRITE, a->buf + off, len, a->mr->lkey,
		      (uintptr_t)b->buf + off, b->mr->rkey))
		return -1;
	if (wait_wc(a->cq, &wc, 5000) != 1 || wc.status != IBV_WC_SUCCESS)
		return -2;
	return memcmp(a->buf + off, b->buf + off, len) ? -3 : 0;
}

static int write_ab(struct host *a, struct host *b, const struct topo *t, uint32_t off,
		    uint32_t len, uint8_t seed)
{
	return write_ns(a, b, t->ns_a, off, len, seed);
}

/* The virtual clock moves by ns, and every engine of both hosts has parked
 * (waits for work) since: each turn from then on begins at the new time,
 * so a frame injected next meets it (a turn begun before the move could
 * still take it, at the old time). */
static bool clock_advance(struct host h[2], uint64_t ns)
{
	roxe_clock_advance(ns);
	for (int i = 0; i < 2; i++)
		for (unsigned k = 0; k < h[i].dev->nengines; k++)
			if (!wait_until(roxe_engine_parked(&h[i].dev->engines[k]), 5000))
				return false;
	return true;
}

/* Until b's engine has taken dups duplicates of a's WRITE in all (a mark
 * is one: its CE is counted, and its CNP made, before its duplicate is,
 * rx_frame), then until a has counted every CNP b had sent by then: what
 * the marks made is all there, at b, at a, and at m (on its way to a). */
static bool marks_taken(const struct topo *t, struct host h[2], uint64_t dups)
{
	uint64_t sent;

	if (!wait_until(qp_stats(t, 'b', h[1].qp[0]).duplicates >= dups, 5000))
		return false;
	sent = qp_stats(t, 'b', h[1].qp[0]).cnp_sent;
	return wait_until(qp_stats(t, 'a', h[0].qp[0]).cnp_received >= sent, 5000);
}

static uint64_t naks_rcvd(const struct roxe_qp_stats *s)
{
	return s->nak_seq_err_rcvd + s->nak_inv_req_rcvd + s->nak_rem_access_rcvd +
	       s->nak_rem_op_rcvd + s->rnr_nak_rcvd;
}

static uint64_t naks_sent(const struct roxe_qp_stats *s)
{
	return s->nak_seq_err_sent + s->nak_inv_req_sent + s->nak_rem_access_sent +
	       s->nak_rem_op_sent + s->rnr_nak_sent;
}

TEST_F(ecn, marks_make_cnps)
{
	struct host *a = &self->h[0], *b = &self->h[1];
	uint32_t aqpn = roxe_qp_num(a->qp[0]), bqpn = roxe_qp_num(b->qp[0]);
	uint8_t ecn = variant->no_ecn ? ROXE_ECN_NOT_ECT : ROXE_ECN_ECT0;
	struct roxe_qp_stats qa, qb;
	struct seen s;
	uint64_t dup0;
	unsigned cnps;

	/* Traffic, unmarked: every frame leaves with the device's ECN bits,
	 * whatever the traffic class (host.h's AV: 0). m saw each of a's
	 * frames before b took it, and b's last ACK before a completed: the
	 * completions say the capture holds them all. */
	ASSERT_EQ(0, write_ab(a, b, &self->t, 0, 64, 1));	/* PSN_A, one packet */
	ASSERT_EQ(0, write_ab(a, b, &self->t, 4096, 8192, 2));	/* 8 more */
	capture_read(self->cap, aqpn, &s);
	EXPECT_EQ(9u, s.a_ecn[ecn]);
	EXPECT_EQ(s.from_a, s.a_ecn[ecn]);
	EXPECT_LE(1u, s.b_ecn[ecn]);			/* b's ACKs */
	EXPECT_EQ(s.from_b, s.b_ecn[ecn]);
	EXPECT_EQ(0u, s.cnps + s.bad_cnps);
	qb = qp_stats(&self->t, 'b', b->qp[0]);
	EXPECT_EQ(0u, qb.ecn_marked);
	EXPECT_EQ(0u, qb.cnp_sent);
	dup0 = qb.duplicates;

	/* MARKS CE copies of a's first WRITE (PSN_A: a duplicate now) */
	if (variant->cnp_interval_us) {
		/* back to back, at one instant: one CNP */
		ASSERT_EQ(0, inject(&self->t, "10.99.0.1", 0xb8 | ROXE_ECN_CE,
				    ROXE_OP_RC_RDMA_WRITE_ONLY, bqpn, PSN_A, a->buf, 64,
				    (uintptr_t)b->buf, b->mr->rkey, MARKS));
		cnps = 1;
	} else {
		/* 5 ms apart, a hundred intervals: one CNP each */
		for (int i = 0; i < MARKS; i++) {
			if (i)
				ASSERT_TRUE(clock_advance(self->h, 5000000));
			ASSERT_EQ(0, inject(&self->t, "10.99.0.1", 0xb8 | ROXE_ECN_CE,
					    ROXE_OP_RC_RDMA_WRITE_ONLY, bqpn, PSN_A, a->buf, 64,
					    (uintptr_t)b->buf, b->mr->rkey, 1));
			ASSERT_TRUE(marks_taken(&self->t, self->h, dup0 + (uint64_t)i + 1))
				TH_LOG("mark %d: b sent %llu CNPs, a counted %llu", i,
				       (unsigned long long)qp_stats(&self->t, 'b', b->qp[0]).cnp_sent,
				       (unsigned long long)qp_stats(&self->t, 'a', a->qp[0]).cnp_received);
		}
		cnps = MARKS;
	}
	marks_taken(&self->t, self->h, dup0 + MARKS);	/* the counts below tell */
	qb = qp_stats(&self->t, 'b', b->qp[0]);
	qa = qp_stats(&self->t, 'a', a->qp[0]);
	EXPECT_EQ((uint64_t)MARKS, qb.ecn_marked);
	EXPECT_EQ(cnps, qb.cnp_sent);
	EXPECT_EQ(cnps, qa.cnp_received);
	/* counted, but DCQCN is off here: no cut */
	EXPECT_EQ(0u, qa.cc_rate_cuts);
	EXPECT_EQ(0u, qa.ecn_marked);
	EXPECT_EQ(0u, qa.cnp_sent);
	capture_read(self->cap, aqpn, &s);
	EXPECT_EQ(cnps, s.cnps);
	EXPECT_EQ(0u, s.bad_cnps);
	EXPECT_EQ(ROXE_CNP_DSCP << 2 | ecn, s.cnp_tclass);

	if (variant->cnp_interval_us) {
		/* the interval over (to the nanosecond), the next marks make
		 * one more */
		ASSERT_TRUE(clock_advance(self->h, variant->cnp_interval_us * 1000ull));
		ASSERT_EQ(0, inject(&self->t, "10.99.0.1", ROXE_ECN_CE,
				    ROXE_OP_RC_RDMA_WRITE_ONLY, bqpn, PSN_A, a->buf, 64,
				    (uintptr_t)b->buf, b->mr->rkey, MARKS));
		marks_taken(&self->t, self->h, dup0 + 2 * MARKS);
		qb = qp_stats(&self->t, 'b', b->qp[0]);
		qa = qp_stats(&self->t, 'a', a->qp[0]);
		EXPECT_EQ(2u * MARKS, qb.ecn_marked);
		EXPECT_EQ(2u, qb.cnp_sent);
		EXPECT_EQ(2u, qa.cnp_received);
		EXPECT_EQ(0u, qa.cc_rate_cuts);
		capture_read(self->cap, aqpn, &s);
		EXPECT_EQ(1u, s.cnps);
	}

	/* Neither the marks nor the CNPs disturbed the QPs */
	ASSERT_EQ(0, write_ab(a, b, &self->t, 16384, 4096, 3));
	qb = qp_stats(&self->t, 'b', b->qp[0]);
	qa = qp_stats(&self->t, 'a', a->qp[0]);
	EXPECT_EQ(0u, naks_rcvd(&qa) + naks_sent(&qa) + naks_rcvd(&qb) + naks_sent(&qb));
	EXPECT_EQ(0u, qa.timeouts + qa.retransmits + qb.timeouts + qb.icrc_errors);
	EXPECT_EQ(0, memcmp(a->buf, b->buf, 64));
}

/* Have b's engine and XDP program counted each of the frames below? */
static bool hostile_counted(const struct topo *t, struct roxe_qp *qp,
			    const struct roxe_stats *g0)
{
	struct roxe_qp_stats qb = qp_stats(t, 'b', qp);
	struct roxe_stats g = xdp_stats(t);

	return qb.cnp_received >= 3 && qb.rx_drop_addr >= 1 && qb.rx_drop_malformed >= 1 &&
	       g.bad_payload - g0->bad_payload >= 1 && g.unknown_qp - g0->unknown_qp >= 1;
}

/* CNPs into b: one from a's address counts; one from a third host, one a
 * byte count off, one to a QP nobody owns count only where drops count. */
TEST_F(ecn, cnps_received_and_hostile)
{
	struct host *a = &self->h[0], *b = &self->h[1];
	uint32_t bqpn = roxe_qp_num(b->qp[0]);
	static const uint8_t zero[ROXE_CNP_PAYLOAD_LEN];
	struct roxe_qp_stats qb;
	struct roxe_stats g0, g;
	struct ibv_qp_attr qa;
	struct roxe_qp_init_attr ia;
	uint8_t frame[128];
	int n;

	if (variant->cnp_interval_us != 300000)
		SKIP(return, "one variant is enough");
	ASSERT_EQ(0, write_ab(a, b, &self->t, 0, 64, 1));
	g0 = xdp_stats(&self->t);

	/* from a: valid */
	ASSERT_EQ(0, inject(&self->t, "10.99.0.1", 0, ROXE_OP_CNP, bqpn, 0, zero, sizeof(zero),
			    0, 0, 3));
	/* from a third host on the link: not the QP's path */
	ASSERT_EQ(0, inject(&self->t, "10.99.0.66", 0, ROXE_OP_CNP, bqpn, 0, zero, sizeof(zero),
			    0, 0, 1));
	/* to a QP nobody owns */
	ASSERT_EQ(0, inject(&self->t, "10.99.0.1", 0, ROXE_OP_CNP, bqpn + 100, 0, zero,
			    sizeof(zero), 0, 0, 1));
	/* 4 bytes too many: a UD SEND of 12 bytes (DETH + 12 = 20) made a CNP */
	{
		struct roxe_frame_addr fa = { .sport = 0xc0de, .hop_limit = 64 };
		struct roxe_frame_hdr fh = { .opcode = ROXE_OP_UD_SEND_ONLY,
					     .pkey = ROXE_DEFAULT_PKEY, .dqpn = bqpn };
		struct sockaddr_ll ll = { .sll_family = AF_PACKET,
					  .sll_protocol = htons(ETH_P_IP), .sll_halen = 6 };
		struct roxe_pkt pkt;
		char ifname[IF_NAMESIZE];
		int fd;

		memcpy(fa.smac, self->t.mac_a, 6);
		memcpy(fa.dmac, self->t.mac_b, 6);
		roxe_gid_from_v4(fa.sgid, inet_addr("10.99.0.1"));
		roxe_gid_from_v4(fa.dgid, inet_addr("10.99.0.2"));
		n = roxe_frame_build(frame, sizeof(frame), &fa, &fh, zero, 12, &pkt);
		ASSERT_LT(0, n);
		frame[pkt.bth_off] = ROXE_OP_CNP;
		ASSERT_EQ(0, topo_enter(self->t.ns_m));
		snprintf(ifname, sizeof(ifname), "%s-mb", self->t.name);
		ll.sll_ifindex = (int)if_nametoindex(ifname);
		memcpy(ll.sll_addr, self->t.mac_b, 6);
		fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
		ASSERT_LE(0, fd);
		EXPECT_EQ(n, sendto(fd, frame, (size_t)n, 0, (struct sockaddr *)&ll, sizeof(ll)));
		close(fd);
	}
	/* each frame counted where it ended: b's engine (the CNPs, the third
	 * host's), b's XDP program (the unknown QP, the malformed one) */
	wait_until(hostile_counted(&self->t, b->qp[0], &g0), 5000);

	qb = qp_stats(&self->t, 'b', b->qp[0]);
	g = xdp_stats(&self->t);
	EXPECT_EQ(3u, qb.cnp_received);
	EXPECT_EQ(0u, qb.cc_rate_cuts);	/* DCQCN off */
	EXPECT_EQ(1u, qb.rx_drop_addr);
	EXPECT_EQ(1u, qb.rx_drop_malformed);
	EXPECT_EQ(1u, g.bad_payload - g0.bad_payload);
	EXPECT_EQ(1u, g.unknown_qp - g0.unknown_qp);
	EXPECT_EQ(0u, qb.cnp_sent);
	EXPECT_EQ(0u, naks_sent(&qb));

	/* b's QP is as it was: RTS, and both ways still carry data */
	topo_enter(self->t.ns_b);
	ASSERT_EQ(0, roxe_query_qp(b->qp[0], &qa, IBV_QP_STATE, &ia));
	EXPECT_EQ(IBV_QPS_RTS, qa.qp_state);
	ASSERT_EQ(0, write_ab(a, b, &self->t, 4096, 4096, 5));
	EXPECT_EQ(0, write_ns(b, a, self->t.ns_b, 8192, 2048, 6));
}

TEST_HARNESS_MAIN
