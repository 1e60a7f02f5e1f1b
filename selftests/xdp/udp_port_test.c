// SPDX-License-Identifier: GPL-2.0-only
/*
 * The UDP port backend between two namespaces, IPv4 and IPv6: frames the
 * engine seals go out through a UDP socket and come back as frames whose
 * ICRC is right and whose ECN bits are as sent (CE too), both as rebuilt
 * by the receiving backend and as captured on the wire (which holds the backend's assumption about what Linux puts
 * in the IP header: ID 0 with DF).
 */
#include <poll.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include "kselftest_harness.h"
#include "topo.h"
#include "roxe/port.h"

#define QPN	0x42

static int capture_socket(struct topo *t)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_ifindex = t->ifindex_b,
		.sll_protocol = htons(ETH_P_ALL),
	};
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));

	if (fd >= 0 && bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

FIXTURE(udp) {
	struct topo t;
	struct roxe_port *pa, *pb;
	int cap;
};

FIXTURE_VARIANT(udp) {
	bool v6;
};

FIXTURE_VARIANT_ADD(udp, ipv4) { .v6 = false };
FIXTURE_VARIANT_ADD(udp, ipv6) { .v6 = true };

static void udp_cleanup(FIXTURE_DATA(udp) *self)
{
	roxe_port_destroy(self->pa);
	roxe_port_destroy(self->pb);
	if (self->cap >= 0)
		close(self->cap);
	topo_down(&self->t);
	self->pa = self->pb = NULL;
	self->cap = -1;
}

/* The harness skips teardown when setup fails: clean up before failing. */
#define SETUP_ASSERT(cond) do {						\
		if (!(cond)) {						\
			TH_LOG("setup: %s: %s", #cond, strerror(errno));\
			udp_cleanup(self);				\
			ASSERT_TRUE(0);					\
		}							\
	} while (0)

FIXTURE_SETUP(udp)
{
	self->cap = -1;
	SETUP_ASSERT(topo_up(&self->t, "u", 1, 1500) == 0);
	self->pb = roxe_udp_port_open(variant->v6 ? "fd99::2" : "10.99.0.2");
	SETUP_ASSERT(self->pb);
	self->cap = capture_socket(&self->t);
	SETUP_ASSERT(self->cap >= 0);
	topo_enter(self->t.ns_a);
	self->pa = roxe_udp_port_open(variant->v6 ? "fd99::1" : "10.99.0.1");
	topo_enter(self->t.ns_b);
	SETUP_ASSERT(self->pa);
	EXPECT_EQ(ROXE_UDP_PORT, self->pa->fixed_sport);
}

FIXTURE_TEARDOWN(udp)
{
	udp_cleanup(self);
}

TEST_F(udp, frames_keep_their_icrc)
{
	const unsigned n = 40;
	uint8_t payload[1024];
	unsigned got = 0, good = 0, ecn_good = 0, wire_good = 0, wire_roce = 0;
	uint32_t want_len = 0;

	for (unsigned i = 0; i < n; i++) {
		struct roxe_buf b;
		int len;

		ASSERT_EQ(1, roxe_port_tx_alloc(self->pa, &b, 1));
		memset(payload, (int)i, sizeof(payload));
		len = topo_frame(&self->t, b.data, b.cap, variant->v6, ROXE_OP_UD_SEND_ONLY,
				 QPN, i, payload, 100 + i, self->pa->fixed_sport);
		ASSERT_LT(0, len);
		/* every ECN value, CE among them, PSN i's low bits */
		if (variant->v6)
			b.data[15] = (uint8_t)((b.data[15] & 0xcf) | (i & 3) << 4);
		else
			b.data[15] = (uint8_t)((b.data[15] & 0xfc) | (i & 3));
		b.len = len;
		want_len += len;
		roxe_port_tx(self->pa, &b, 1);
		if (i % 8 == 7)
			roxe_port_flush(self->pa);
	}
	roxe_port_flush(self->pa);
	EXPECT_EQ(n, self->pa->stats.tx_frames);
	EXPECT_EQ(0, self->pa->stats.tx_dropped);

	for (int tries = 0; tries < 100 && got < n; tries++) {
		struct pollfd pfd = { .fd = self->pb->wait_fd, .events = POLLIN };
		struct roxe_buf b[16];
		unsigned k;

		poll(&pfd, 1, 20);
		k = roxe_port_rx(self->pb, b, 16);
		for (unsigned i = 0; i < k; i++) {
			struct roxe_pkt pkt;
			struct roxe_frame_hdr h;
			int v = roxe_parse(b[i].data, b[i].data + b[i].len, b[i].len, &pkt);

			got++;
			want_len -= b[i].len;
			if (v != ROXE_PKT_OK)
				continue;
			roxe_frame_hdr_get(b[i].data, &pkt, &h);
			if (roxe_icrc_check(b[i].data, &pkt) == 0 && h.dqpn == QPN &&
			    pkt.payload_len == 100 + h.psn &&
			    b[i].data[pkt.payload_off] == (uint8_t)h.psn)
				good++;
			if (roxe_pkt_ecn(b[i].data, b[i].data + b[i].len, &pkt) == (int)(h.psn & 3))
				ecn_good++;
		}
		roxe_port_rx_release(self->pb, b, k);
	}
	EXPECT_EQ(n, got);
	EXPECT_EQ(n, good);
	EXPECT_EQ(n, ecn_good);	/* the receiver sees the ECN bits (CE) as sent */
	EXPECT_EQ(0, want_len);	/* same frame lengths as sent */

	/* What really crossed the wire carries the ICRC the sender sealed. */
	for (;;) {
		uint8_t f[2048];
		struct roxe_pkt pkt;
		ssize_t len = recv(self->cap, f, sizeof(f), MSG_DONTWAIT);

		if (len <= 0)
			break;
		if (roxe_parse(f, f + len, len, &pkt) != ROXE_PKT_OK)
			continue;
		wire_roce++;
		if (roxe_icrc_check(f, &pkt) == 0)
			wire_good++;
	}
	EXPECT_EQ(n, wire_roce);
	EXPECT_EQ(n, wire_good);
}

TEST_F(udp, rejects_what_is_not_roce)
{
	struct roxe_buf b;

	ASSERT_EQ(1, roxe_port_tx_alloc(self->pa, &b, 1));
	memset(b.data, 0, 64);
	b.len = 64;
	roxe_port_tx(self->pa, &b, 1);
	roxe_port_flush(self->pa);
	EXPECT_EQ(1, self->pa->stats.tx_dropped);
	EXPECT_EQ(0, self->pa->stats.tx_frames);
}

TEST_HARNESS_MAIN
