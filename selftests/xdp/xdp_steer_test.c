// SPDX-License-Identifier: GPL-2.0-only
/*
 * The XDP program and the AF_XDP backend between two network namespaces:
 * frames reach the engine that owns their QP whatever queue they arrive
 * on, malformed and unknown-QP frames are dropped and counted exactly,
 * per-QP counters match what was sent, and attach/detach behave.
 */
#include <poll.h>
#include <time.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kselftest_harness.h"
#include "host.h"		/* wait_until */
#include "roxe/xdp.h"
#include "roxe/port.h"
#include "transport/transport.h"	/* ROXE_MAX_INFLIGHT */
#include "roxe_pass.skel.h"

#define ENGINES		2
#define QP_E0		0x10
#define QP_E1		0x11
#define QP_UNKNOWN	0x21
/* How long a wait for frames may take: met only by a run that fails (the
 * frames never come), never a guess at how long veth takes. */
#define WAIT_S		10.0

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct rx_tally {
	unsigned frames[ENGINES];
	unsigned qp_frames[ENGINES][0x40];	/* by engine, QPN < 0x40 */
	unsigned bad;				/* wrong engine, bad parse or ICRC */
	uint64_t bytes[0x40];
	unsigned big;				/* frames over 3840 bytes */
};

/* One receive on port e of ports, tallied; returns the frames. */
static unsigned rx_tallied(struct roxe_port **ports, unsigned e, struct rx_tally *t,
			   const uint32_t *owner)
{
	struct roxe_buf b[32];
	unsigned n = roxe_port_rx(ports[e], b, 32);

	for (unsigned i = 0; i < n; i++) {
		struct roxe_pkt pkt;
		int v = roxe_parse(b[i].data, b[i].data + b[i].len, b[i].len, &pkt);
		uint32_t q;

		t->frames[e]++;
		if (v != ROXE_PKT_OK || roxe_icrc_check(b[i].data, &pkt)) {
			t->bad++;
			continue;
		}
		q = roxe_bth_qpn((const void *)(b[i].data + pkt.bth_off));
		if (q >= 0x40 || (owner && owner[q] != e)) {
			t->bad++;
			continue;
		}
		t->qp_frames[e][q]++;
		t->bytes[q] += b[i].len;
		if (b[i].len > 3840)
			t->big++;
	}
	if (n)
		roxe_port_rx_release(ports[e], b, n);
	return n;
}

/* Receive on every port until `want` frames in all or `secs` pass. */
static void drain(struct roxe_port **ports, unsigned nports, unsigned want,
		  double secs, struct rx_tally *t, const uint32_t *owner)
{
	double end = now_s() + secs;
	unsigned total = 0;

	while (total < want && now_s() < end)
		for (unsigned e = 0; e < nports; e++)
			total += rx_tallied(ports, e, t, owner);
}

/* Receive on port e what its rings hold now, until a receive finds none. */
static void drain_held(struct roxe_port **ports, unsigned e, struct rx_tally *t,
		       const uint32_t *owner)
{
	while (rx_tallied(ports, e, t, owner))
		;
}

/* Send `count` frames for qpn from an AF_XDP port; returns bytes sent. */
static uint64_t xsk_send(struct topo *t, struct roxe_port *p, uint32_t qpn, unsigned count,
			 uint32_t payload_len, uint16_t sport)
{
	static uint8_t payload[8192];
	uint64_t bytes = 0;

	for (unsigned i = 0; i < count; i++) {
		struct roxe_buf b;
		int len;

		while (roxe_port_tx_alloc(p, &b, 1) != 1)
			roxe_port_flush(p);
		memset(payload, (int)i, payload_len);
		len = topo_frame(t, b.data, b.cap, false, ROXE_OP_RC_SEND_ONLY, qpn, i,
				 payload, payload_len, sport);
		if (len < 0) {
			roxe_port_tx_free(p, &b, 1);
			return 0;
		}
		b.len = len;
		bytes += len;
		roxe_port_tx(p, &b, 1);
		if (i % 16 == 15)
			roxe_port_flush(p);
	}
	roxe_port_flush(p);
	return bytes;
}

static int packet_socket(struct topo *t)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_ifindex = t->ifindex_a,
		.sll_protocol = htons(ETH_P_ALL),
	};
	int fd;

	topo_enter(t->ns_a);
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		close(fd);
		fd = -1;
	}
	topo_enter(t->ns_b);
	return fd;
}

FIXTURE(xdp) {
	struct topo t;
	struct roxe_xdp *xb;
	struct roxe_afxdp *gb;
	struct roxe_port *pb[ENGINES];
	char ifb[16], ifa[16];
};

static void xdp_cleanup(FIXTURE_DATA(xdp) *self)
{
	for (unsigned e = 0; e < ENGINES; e++)
		roxe_port_destroy(self->pb[e]);
	roxe_afxdp_close(self->gb);
	if (self->xb) {
		roxe_xdp_close(self->xb);
		topo_enter(self->t.ns_b);
		roxe_xdp_detach(self->ifb, NULL);
	}
	topo_down(&self->t);
	memset(self->pb, 0, sizeof(self->pb));
	self->gb = NULL;
	self->xb = NULL;
}

/* The harness skips teardown when setup fails: clean up before failing. */
#define SETUP_ASSERT(cond) do {						\
		if (!(cond)) {						\
			TH_LOG("setup: %s: %s", #cond, strerror(errno));\
			xdp_cleanup(self);				\
			ASSERT_TRUE(0);					\
		}							\
	} while (0)

FIXTURE_SETUP(xdp)
{
	struct roxe_xdp_attach_opts o = { .mode = ROXE_XDP_NATIVE, .engines = ENGINES,
					  .no_pin = true };
	struct roxe_afxdp_config c = { .engines = ENGINES };
	uint32_t other = 0;

	libbpf_set_print(NULL);
	SETUP_ASSERT(topo_up(&self->t, "x", ENGINES, 4200) == 0);
	topo_ifname(&self->t, 'b', self->ifb, sizeof(self->ifb));
	topo_ifname(&self->t, 'a', self->ifa, sizeof(self->ifa));
	SETUP_ASSERT(roxe_xdp_attach(self->ifb, &o, &self->xb, &other) == 0);
	c.ifname = self->ifb;
	c.xsks_map_fd = self->xb->xsks_fd;
	self->gb = roxe_afxdp_open(&c);
	SETUP_ASSERT(self->gb);
	for (unsigned e = 0; e < ENGINES; e++)
		SETUP_ASSERT((self->pb[e] = roxe_afxdp_port(self->gb, e)));
	SETUP_ASSERT(roxe_xdp_set_qp(self->xb, QP_E0, 0) == 0);
	SETUP_ASSERT(roxe_xdp_set_qp(self->xb, QP_E1, 1) == 0);
	SETUP_ASSERT(roxe_xdp_set_qp(self->xb, ROXE_QPN_GSI, 1) == 0);
}

FIXTURE_TEARDOWN(xdp)
{
	xdp_cleanup(self);
}

/* roxe on host a too, as a sender: its program and AF_XDP group (NULL on
 * failure); the caller is back in namespace b. */
static struct roxe_afxdp *sender_up(FIXTURE_DATA(xdp) *self, struct roxe_xdp **xa)
{
	struct roxe_xdp_attach_opts o = { .mode = ROXE_XDP_NATIVE, .engines = ENGINES,
					  .no_pin = true };
	struct roxe_afxdp_config c = { .engines = ENGINES };
	struct roxe_afxdp *ga = NULL;

	topo_enter(self->t.ns_a);
	if (!roxe_xdp_attach(self->ifa, &o, xa, NULL)) {
		c.ifname = self->ifa;
		c.xsks_map_fd = (*xa)->xsks_fd;
		ga = roxe_afxdp_open(&c);
	}
	topo_enter(self->t.ns_b);
	return ga;
}

/* sender_up's undone: 0 or the detach's error. */
static int sender_down(FIXTURE_DATA(xdp) *self, struct roxe_afxdp *ga, struct roxe_xdp *xa)
{
	int err;

	roxe_afxdp_close(ga);
	topo_enter(self->t.ns_a);
	roxe_xdp_close(xa);
	err = roxe_xdp_detach(self->ifa, NULL);
	topo_enter(self->t.ns_b);
	return err;
}

/* sender_up with its engine 0's port (NULL on failure). */
static struct roxe_port *sender_port(FIXTURE_DATA(xdp) *self, struct roxe_afxdp **ga,
				     struct roxe_xdp **xa)
{
	*ga = sender_up(self, xa);
	return *ga ? roxe_afxdp_port(*ga, 0) : NULL;
}

static const uint32_t owner_b[0x40] = {
	[QP_E0] = 0, [QP_E1] = 1, [ROXE_QPN_GSI] = 1,
};

/* roxe on both hosts; each of a's engines sends from its own queue, so
 * frames reach b on both queues, and must land at the owner on b. */
TEST_F(xdp, steer_by_qp_across_queues)
{
	struct roxe_xdp *xa;
	struct roxe_afxdp *ga = sender_up(self, &xa);
	struct roxe_port *pa[ENGINES];
	struct rx_tally tally = { 0 };
	uint64_t bytes[0x40] = { 0 };
	struct roxe_qp_stats qs;
	struct roxe_stats st;
	const unsigned n = 200;

	ASSERT_NE(NULL, ga);
	for (unsigned e = 0; e < ENGINES; e++)
		pa[e] = roxe_afxdp_port(ga, e);

	for (unsigned e = 0; e < ENGINES; e++) {
		bytes[QP_E0] += xsk_send(&self->t, pa[e], QP_E0, n, 64, 0xc000 + e);
		bytes[QP_E1] += xsk_send(&self->t, pa[e], QP_E1, n, 256, 0xc100 + e);
		bytes[ROXE_QPN_GSI] += xsk_send(&self->t, pa[e], ROXE_QPN_GSI, 10, 256, 0xc200);
		/* multi-buffer: 4058 B (one TX descriptor, an RX chain) and
		 * 4154 B (two TX descriptors, an RX chain) */
		bytes[QP_E1] += xsk_send(&self->t, pa[e], QP_E1, 5, 4000, 0xc300);
		bytes[QP_E0] += xsk_send(&self->t, pa[e], QP_E0, 5, 4096, 0xc300);
		/* what was sent, counted as it comes (extra frames show in
		 * the program's counts below) */
		drain(self->pb, ENGINES, 2 * n + 20, WAIT_S, &tally, owner_b);
	}

	EXPECT_EQ(0, tally.bad);
	EXPECT_EQ(ENGINES * (n + 5), tally.qp_frames[0][QP_E0]);
	EXPECT_EQ(ENGINES * (n + 5), tally.qp_frames[1][QP_E1]);
	EXPECT_EQ(ENGINES * 10, tally.qp_frames[1][ROXE_QPN_GSI]);
	EXPECT_EQ(ENGINES * 10, tally.big);
	EXPECT_EQ(bytes[QP_E0], tally.bytes[QP_E0]);
	EXPECT_EQ(bytes[QP_E1], tally.bytes[QP_E1]);

	/* The program's counters agree, byte for byte. */
	ASSERT_EQ(0, roxe_xdp_read_qp_stats(self->xb, QP_E0, &qs));
	EXPECT_EQ(ENGINES * (n + 5), qs.rx_packets);
	EXPECT_EQ(bytes[QP_E0], qs.rx_bytes);
	ASSERT_EQ(0, roxe_xdp_read_qp_stats(self->xb, QP_E1, &qs));
	EXPECT_EQ(ENGINES * (n + 5), qs.rx_packets);
	EXPECT_EQ(bytes[QP_E1], qs.rx_bytes);
	ASSERT_EQ(0, roxe_xdp_read_qp_stats(self->xb, ROXE_QPN_GSI, &qs));
	EXPECT_EQ(ENGINES * 10, qs.rx_packets);
	ASSERT_EQ(0, roxe_xdp_read_stats(self->xb, &st));
	EXPECT_EQ(ENGINES * (2 * n + 20), st.redirected);
	EXPECT_EQ(0, st.redirect_failed);
	EXPECT_EQ(0, st.unknown_qp);

	/* The sender's port counted what it sent. */
	for (unsigned e = 0; e < ENGINES; e++) {
		EXPECT_EQ(2 * n + 20, pa[e]->stats.tx_frames);
		roxe_port_destroy(pa[e]);
	}
	EXPECT_EQ(0, sender_down(self, ga, xa));
}

/*
 * What an engine's receive ring holds while the engine is away: at least
 * two send windows (ROXE_MAX_INFLIGHT PSNs) of 4096-MTU frames (a chain of
 * two buffers each), and at least what the port says it holds (rx_frames:
 * the engine's PSN credit is half of it, credit.c). One window was too
 * few: a go-back-N, or a stash drain that holds the engine while a window
 * arrives, overflowed it (measured at 0.1 % loss through faultwire: bursts
 * of consecutive drops, up to 120,000 frames lost in 3 s); and rx_frames
 * said 1024 frames of a ring that held 512 of these.
 */
/* Not RoCE v2: b's program passes a frame to this UDP port to b's stack. */
#define MARK_PORT	4792

/* A socket of b's stack on MARK_PORT (the caller is in namespace b). */
static int mark_socket(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(MARK_PORT) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd >= 0 && bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* A UDP datagram to MARK_PORT from p, on p's queue like its RoCE frames. */
static int send_mark(struct topo *t, struct roxe_port *p)
{
	struct roxe_buf b;
	int len;

	while (roxe_port_tx_alloc(p, &b, 1) != 1)
		roxe_port_flush(p);
	len = topo_frame(t, b.data, b.cap, false, ROXE_OP_RC_SEND_ONLY, QP_E0, 0, "mark", 4,
			 0xc300);
	if (len < 0) {
		roxe_port_tx_free(p, &b, 1);
		return -1;
	}
	b.data[14 + 20 + 2] = MARK_PORT >> 8;		/* UDP destination port */
	b.data[14 + 20 + 3] = MARK_PORT & 0xff;
	b.data[14 + 20 + 6] = b.data[14 + 20 + 7] = 0;	/* no UDP checksum */
	b.len = (uint32_t)len;
	roxe_port_tx(p, &b, 1);
	roxe_port_flush(p);
	return 0;
}

/* Two send windows of 4154-byte frames and more from pa to QP_E0, b's
 * engine 0 receiving nothing meanwhile; then what its port held. Behind
 * them, on the same queue, a datagram for b's stack: veth's NAPI takes a
 * queue's frames in order, and a poll publishes what it redirected to
 * the AF_XDP rings (xdp_do_flush) before the frames it passed reach a
 * socket (GRO's list, at the poll's end). Once the datagram is in, every
 * frame of the burst is in engine 0's ring or was dropped there. (The
 * program's own count comes too early: it counts before the redirect.)
 * A frame for another engine would not do: the queue's fill ring, which
 * all its sockets share, is spent by then. */
static void unread_burst(struct __test_metadata *_metadata, FIXTURE_DATA(xdp) *self,
			 struct roxe_port *pa, unsigned sent, struct rx_tally *tally)
{
	struct pollfd pfd = { .fd = mark_socket(), .events = POLLIN };
	char mark[64];

	ASSERT_LE(0, pfd.fd);
	ASSERT_NE(0, xsk_send(&self->t, pa, QP_E0, sent, 4096, 0xc300));
	ASSERT_EQ(0, send_mark(&self->t, pa));
	ASSERT_EQ(1, poll(&pfd, 1, (int)(WAIT_S * 1000)));
	ASSERT_LT(0, recv(pfd.fd, mark, sizeof(mark), MSG_DONTWAIT));
	close(pfd.fd);
	drain_held(self->pb, 0, tally, owner_b);
}

TEST_F(xdp, rx_ring_holds_two_windows_of_4096_mtu_frames)
{
	const unsigned want = 2 * ROXE_MAX_INFLIGHT, sent = want + 256;
	struct rx_tally tally = { 0 };
	struct roxe_afxdp *ga;
	struct roxe_xdp *xa;
	struct roxe_port *pa = sender_port(self, &ga, &xa);

	ASSERT_NE(NULL, pa);
	unread_burst(_metadata, self, pa, sent, &tally);
	EXPECT_EQ(0, tally.bad);
	EXPECT_GE(tally.qp_frames[0][QP_E0], want);
	EXPECT_GE(tally.qp_frames[0][QP_E0], self->pb[0]->rx_frames);
	EXPECT_GE(self->pb[0]->rx_frames, want);
	TH_LOG("%u of %u frames held; the port says %u", tally.qp_frames[0][QP_E0], sent,
	       self->pb[0]->rx_frames);

	roxe_port_destroy(pa);
	EXPECT_EQ(0, sender_down(self, ga, xa));
}

/* Receive what is there, up to want frames within secs, remembering which
 * buffer each came in (priv: its chunk and queue); returns the frames. */
static unsigned rx_note_buffers(struct roxe_port *p, unsigned want, double secs,
				uint64_t *seen, unsigned *nseen, unsigned cap)
{
	double end = now_s() + secs;
	unsigned got = 0;

	while (got < want && now_s() < end) {
		struct roxe_buf b[32];
		unsigned n = roxe_port_rx(p, b, 32);

		for (unsigned i = 0; i < n; i++) {
			unsigned j = 0;

			while (j < *nseen && seen[j] != b[i].priv)
				j++;
			if (j == *nseen && *nseen < cap)
				seen[(*nseen)++] = b[i].priv;
		}
		got += n;
		if (n)
			roxe_port_rx_release(p, b, n);
	}
	return got;
}

/*
 * A queue's 2048 receive buffers all in its fill ring go round in order:
 * a stream touched all of them (8 MiB) and ran 9 % slower than with 1024
 * (user/port/afxdp.c). While frames stream in, the ring holds 1024 of them;
 * once the port has been found idle it holds all again, and two send
 * windows that arrive while nobody reads are held, as after start-up
 * (rx_ring_holds_two_windows_of_4096_mtu_frames).
 */
TEST_F(xdp, fill_ring_shallow_while_streaming_full_when_idle)
{
	const unsigned want = 2 * ROXE_MAX_INFLIGHT, sent = want + 256;
	static uint64_t seen[4096];
	unsigned nseen = 0, streamed = 0, empty = 0;
	struct rx_tally tally = { 0 };
	struct roxe_afxdp *ga;
	struct roxe_xdp *xa;
	struct roxe_port *pa = sender_port(self, &ga, &xa);

	ASSERT_NE(NULL, pa);

	/* a stream of small frames, read as they come: 32768 to settle,
	 * then which buffers 8192 more came in */
	for (unsigned r = 0; r < (32768 + 8192) / 128; r++) {
		bool settling = r < 32768 / 128;

		ASSERT_NE(0, xsk_send(&self->t, pa, QP_E0, 128, 64, 0xc400));
		streamed += rx_note_buffers(self->pb[0], 128, WAIT_S, seen, &nseen,
					    settling ? 0 : 4096);
	}
	EXPECT_EQ(32768 + 8192, streamed);
	EXPECT_LE(nseen, 1536);		/* all of them: 2048 */
	TH_LOG("%u frames streamed; the last 8192 came in %u distinct buffers", streamed, nseen);

	/* idle: polled, nothing comes */
	for (unsigned i = 0; i < 4096; i++) {
		struct roxe_buf b[8];
		unsigned n = roxe_port_rx(self->pb[0], b, 8);

		empty += !n;
		if (n)
			roxe_port_rx_release(self->pb[0], b, n);
	}
	EXPECT_EQ(4096, empty);

	unread_burst(_metadata, self, pa, sent, &tally);
	EXPECT_EQ(0, tally.bad);
	EXPECT_GE(tally.qp_frames[0][QP_E0], want);
	TH_LOG("after the idle polls, %u of %u frames held", tally.qp_frames[0][QP_E0], sent);

	roxe_port_destroy(pa);
	EXPECT_EQ(0, sender_down(self, ga, xa));
}

/* RoCE v2 frames the program has judged: each adds one to one of these. */
static uint64_t judged(const struct roxe_stats *s)
{
	return s->redirected + s->redirect_failed + s->unknown_qp + s->unknown_qp_passed +
	       s->bad_ip_len + s->bad_udp_len + s->bad_version + s->bad_opcode +
	       s->bad_hdr_len + s->bad_payload + s->bad_icrc + s->not_local_passed;
}

/* Until the program has judged n frames more than in from (its counters
 * in *now): true, or false once WAIT_S passed. */
static bool judged_since(struct roxe_xdp *x, const struct roxe_stats *from, uint64_t n,
			 struct roxe_stats *now)
{
	return wait_until(!roxe_xdp_read_stats(x, now) && judged(now) - judged(from) >= n,
			  (int)(WAIT_S * 1000));
}

/* Malformed frames from a raw socket: each dropped and counted by reason. */
TEST_F(xdp, malformed_and_unknown_counted)
{
	struct roxe_stats before, after;
	struct roxe_qp_stats qs;
	struct rx_tally tally = { 0 };
	uint8_t f[256], g[256];
	int fd, len, n, l4, bth;

	fd = packet_socket(&self->t);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, roxe_xdp_read_stats(self->xb, &before));
	len = topo_frame(&self->t, f, sizeof(f), false, ROXE_OP_RC_SEND_ONLY, QP_E0, 1,
			 "abcdefgh", 8, 0xc000);
	ASSERT_LT(0, len);
	l4 = 14 + 20;
	bth = l4 + 8;

#define SEND(buf, n, times) for (int i_ = 0; i_ < (times); i_++) \
		ASSERT_EQ((ssize_t)(n), send(fd, buf, n, 0))
	SEND(f, len, 5);				/* good: redirected */
	memcpy(g, f, len);
	g[bth + 7] = QP_UNKNOWN;			/* DestQP low byte */
	SEND(g, len, 3);				/* unknown QP */
	memcpy(g, f, len);
	g[bth + 5] = 0x10;				/* QPN 0x100010: past ROXE_MAX_QPS */
	SEND(g, len, 1);
	memcpy(g, f, len);
	g[bth + 1] |= 1;				/* TVer 1 */
	SEND(g, len, 2);
	memcpy(g, f, len);
	g[bth] = 0x1f;					/* no such opcode */
	SEND(g, len, 2);
	SEND(f, 60, 2);					/* truncated: IP length past the end */
	memcpy(g, f, len);
	g[l4 + 5] += 4;					/* UDP length disagrees with IP */
	SEND(g, len, 1);
	memcpy(g, f, len);
	g[bth] = ROXE_OP_RC_ACKNOWLEDGE;		/* an ACK with 8 bytes of payload */
	SEND(g, len, 1);
	n = topo_frame(&self->t, g, sizeof(g), false, ROXE_OP_RC_SEND_ONLY, QP_E0, 1,
		       NULL, 0, 0xc000);
	g[bth] = ROXE_OP_RC_RDMA_WRITE_ONLY;		/* needs a RETH: 16 B missing */
	SEND(g, n, 4);
	/* all 21 judged, the 5 good ones received */
	ASSERT_TRUE(judged_since(self->xb, &before, 5 + 3 + 1 + 2 + 2 + 2 + 1 + 1 + 4, &after));
	drain(self->pb, ENGINES, 5, WAIT_S, &tally, owner_b);

#define DELTA(f) (after.f - before.f)
	EXPECT_EQ(21, judged(&after) - judged(&before));
	EXPECT_EQ(5, DELTA(redirected));
	EXPECT_EQ(4, DELTA(unknown_qp));
	EXPECT_EQ(0, DELTA(unknown_qp_passed));
	EXPECT_EQ(2, DELTA(bad_version));
	EXPECT_EQ(2, DELTA(bad_opcode));
	EXPECT_EQ(2, DELTA(bad_ip_len));
	EXPECT_EQ(1, DELTA(bad_udp_len));
	EXPECT_EQ(1, DELTA(bad_payload));
	EXPECT_EQ(4, DELTA(bad_hdr_len));
	EXPECT_EQ(0, DELTA(bad_icrc));
	EXPECT_EQ(0, DELTA(redirect_failed));
	EXPECT_EQ(5, tally.qp_frames[0][QP_E0]);
	EXPECT_EQ(0, tally.bad);
	ASSERT_EQ(0, roxe_xdp_read_qp_stats(self->xb, QP_E0, &qs));
	EXPECT_EQ(5, qs.rx_packets);
	EXPECT_EQ(5u * len, qs.rx_bytes);
	/* version, opcode, payload, header length: the BTH named QP_E0 */
	EXPECT_EQ(2 + 2 + 1 + 4, qs.rx_drop_malformed);
	EXPECT_EQ(0, qs.ecn_marked);			/* none was marked CE */

	/* --pass-unknown: the kernel gets unknown-QP frames. */
	ASSERT_EQ(0, roxe_xdp_set_pass_unknown(self->xb, true));
	len = topo_frame(&self->t, f, sizeof(f), false, ROXE_OP_RC_SEND_ONLY, QP_E0, 1,
			 "abcdefgh", 8, 0xc000);
	memcpy(g, f, len);
	g[bth + 7] = QP_UNKNOWN;
	SEND(g, len, 3);
	before = after;
	ASSERT_TRUE(judged_since(self->xb, &before, 3, &after));
	EXPECT_EQ(3, DELTA(unknown_qp_passed));
	EXPECT_EQ(0, DELTA(unknown_qp));

	/* An owner without a socket on the queue: counted, not lost silently. */
	ASSERT_EQ(0, roxe_xdp_set_qp(self->xb, 0x30, 1));
	{
		uint32_t slot = roxe_xsk_slot(0, 1, ENGINES);

		ASSERT_EQ(0, bpf_map_delete_elem(self->xb->xsks_fd, &slot));
		slot = roxe_xsk_slot(1, 1, ENGINES);
		ASSERT_EQ(0, bpf_map_delete_elem(self->xb->xsks_fd, &slot));
	}
	memcpy(g, f, len);
	g[bth + 7] = 0x30;
	SEND(g, len, 2);
	/* and one marked CE on the way: its mark counts, though no engine
	 * ever sees the frame */
	g[14 + 1] |= ROXE_ECN_CE;
	g[14 + 10] = g[14 + 11] = 0;
	n = roxe_ipv4_csum(g + 14, 20);
	g[14 + 10] = (uint8_t)(n >> 8);
	g[14 + 11] = (uint8_t)n;
	SEND(g, len, 1);
	before = after;
	ASSERT_TRUE(judged_since(self->xb, &before, 3, &after));
	EXPECT_EQ(3, DELTA(redirect_failed));
	ASSERT_EQ(0, roxe_xdp_read_qp_stats(self->xb, 0x30, &qs));
	EXPECT_EQ(3, qs.rx_drop_no_socket);
	EXPECT_EQ(1, qs.ecn_marked);
	EXPECT_EQ(0, qs.rx_packets);
	close(fd);
}

/* The engine's half of roxe_qp_stats is written through the mmapped map. */
TEST_F(xdp, qp_stats_mmap_shared)
{
	struct roxe_qp_stats *m = roxe_xdp_qp_stats_map(self->xb), qs;

	ASSERT_NE(NULL, m);
	m[QP_E1].tx_packets = 1234;
	m[QP_E1].nak_seq_err_sent = 7;
	ASSERT_EQ(0, bpf_map_lookup_elem(self->xb->qp_stats_fd, &(uint32_t){ QP_E1 }, &qs));
	EXPECT_EQ(1234, qs.tx_packets);
	EXPECT_EQ(7, qs.nak_seq_err_sent);
}

/* Another XDP program on the interface: roxe refuses and leaves it alone;
 * detaching roxe leaves the interface without XDP. */
TEST_F(xdp, attach_refuses_other_program)
{
	struct roxe_xdp_attach_opts o = { .mode = ROXE_XDP_AUTO, .engines = 1, .no_pin = true };
	struct roxe_pass_bpf *pass;
	struct roxe_xdp *x;
	uint32_t other = 0, id = 0;

	topo_enter(self->t.ns_a);
	pass = roxe_pass_bpf__open_and_load();
	ASSERT_NE(NULL, pass);
	ASSERT_EQ(0, bpf_xdp_attach(self->t.ifindex_a, bpf_program__fd(pass->progs.roxe_pass),
				    XDP_FLAGS_DRV_MODE, NULL));
	ASSERT_EQ(0, bpf_xdp_query_id(self->t.ifindex_a, 0, &id));
	EXPECT_EQ(-EBUSY, roxe_xdp_attach(self->ifa, &o, &x, &other));
	EXPECT_EQ(id, other);
	EXPECT_EQ(-EBUSY, roxe_xdp_detach(self->ifa, &other));
	ASSERT_EQ(0, bpf_xdp_query_id(self->t.ifindex_a, 0, &other));
	EXPECT_EQ(id, other);	/* still there */
	ASSERT_EQ(0, bpf_xdp_detach(self->t.ifindex_a, XDP_FLAGS_DRV_MODE, NULL));
	roxe_pass_bpf__destroy(pass);

	/* Now free: attach (generic this time), then detach restores. */
	o.mode = ROXE_XDP_GENERIC;
	ASSERT_EQ(0, roxe_xdp_attach(self->ifa, &o, &x, &other));
	EXPECT_EQ(ROXE_XDP_GENERIC, x->mode);
	EXPECT_EQ(-EEXIST, roxe_xdp_attach(self->ifa, &o, &x, &other));
	roxe_xdp_close(x);
	EXPECT_EQ(0, roxe_xdp_detach(self->ifa, NULL));
	ASSERT_EQ(0, bpf_xdp_query_id(self->t.ifindex_a, 0, &id));
	EXPECT_EQ(0, id);
	EXPECT_EQ(-ENOENT, roxe_xdp_detach(self->ifa, NULL));
	EXPECT_EQ(-ENODEV, roxe_xdp_attach("rxnosuchif", &o, &x, &other));
	topo_enter(self->t.ns_b);
}

TEST_HARNESS_MAIN

/*
 * A process that closes its AF_XDP sockets and opens them again at once
 * (roxed restarted, `rdma link delete` then `add`) binds the same queues:
 * the kernel frees a closed socket's buffer pool, and the queue with it,
 * from a work item after close() returns, and until then a bind of that
 * queue fails with EBUSY. roxe_afxdp_open waits that out, bounded.
 */
TEST_F(xdp, reopen_right_after_close_binds)
{
	struct roxe_afxdp_config c = { .engines = ENGINES, .ifname = self->ifb,
				       .xsks_map_fd = self->xb->xsks_fd };

	for (unsigned round = 0; round < 50; round++) {
		for (unsigned e = 0; e < ENGINES; e++) {
			roxe_port_destroy(self->pb[e]);
			self->pb[e] = NULL;
		}
		roxe_afxdp_close(self->gb);
		self->gb = roxe_afxdp_open(&c);
		ASSERT_NE(NULL, self->gb) TH_LOG("round %u: %s", round, strerror(errno));
		for (unsigned e = 0; e < ENGINES; e++)
			ASSERT_NE(NULL, (self->pb[e] = roxe_afxdp_port(self->gb, e)));
	}
}
