// SPDX-License-Identifier: GPL-2.0-only
/*
 * Captures for roxe_pcap_test.sh, written with libpcap, and the output
 * roxe-pcap must print for each:
 *
 *   pcap_gen KIND CAPTURE EXPECTED
 *
 *   good    Ethernet: well-formed RoCE v2 frames (IPv4, IPv6, VLAN, jumbo,
 *           Ethernet padding, an FCS cut by the snapshot length) and ARP
 *   mixed   good + bad ICRCs, truncation by the snapshot length, bad IP and
 *           UDP lengths, an unknown opcode, TCP and DNS to port 4791, a runt
 *   sll     mixed, as "tcpdump -i any" writes it (Linux cooked v1)
 *   sll2    mixed, Linux cooked v2
 *   raw     one IPv4 frame as DLT_RAW (a link type roxe-pcap does not read)
 *
 * EXPECTED gets the frame lines and the summary roxe-pcap must print for
 * CAPTURE, given as the same path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <pcap/pcap.h>
#include "roxe/frame.h"
#include "frame_sample.h"

#define SNAPLEN 65535

struct gen {
	pcap_dumper_t *d;
	FILE *expect;
	int dlt;
	unsigned long n, roce, ok, bad, malformed, skipped;
	uint64_t rng;
};

struct frame {
	struct roxe_frame_addr a;
	struct roxe_frame_hdr h;
	struct roxe_pkt pkt;
	int len;
	uint8_t f[10000];
};

/* One record: Ethernet as it is, or with a Linux cooked header instead. */
static void record(struct gen *g, const uint8_t *f, uint32_t caplen, uint32_t len)
{
	static uint8_t rec[sizeof(((struct frame *)0)->f) + 20];
	struct pcap_pkthdr ph = { .caplen = caplen, .len = len };
	uint32_t hdr = 0;

	ph.ts.tv_sec = 1700000000 + (time_t)g->n;
	ph.ts.tv_usec = (suseconds_t)(g->n * 1000);
	g->n++;
	if (g->dlt == DLT_EN10MB || caplen < 14) {
		pcap_dump((u_char *)g->d, &ph, f);
		return;
	}
	if (g->dlt == DLT_LINUX_SLL) {
		hdr = 16;
		memset(rec, 0, hdr);
		rec[1] = 4;		/* sent by us */
		rec[3] = 1;		/* ARPHRD_ETHER */
		rec[5] = 6;		/* address length */
		memcpy(rec + 6, f + 6, 6);
		memcpy(rec + 14, f + 12, 2);
	} else {
		hdr = 20;
		memset(rec, 0, hdr);
		memcpy(rec, f + 12, 2);
		rec[7] = 2;		/* ifindex */
		rec[9] = 1;		/* ARPHRD_ETHER */
		rec[10] = 0;		/* to us */
		rec[11] = 6;
		memcpy(rec + 12, f + 6, 6);
	}
	memcpy(rec + hdr, f + 14, caplen - 14);
	ph.caplen = caplen - 14 + hdr;
	ph.len = len - 14 + hdr;
	pcap_dump((u_char *)g->d, &ph, rec);
}

static struct frame *build(struct gen *g, bool v6, bool vlan, uint8_t op, uint32_t len)
{
	static struct frame fr;
	uint8_t payload[9000];

	sample_addr(&g->rng, v6, vlan, &fr.a);
	sample_hdr(&g->rng, op, &fr.h);
	sample_bytes(&g->rng, payload, len);
	fr.len = roxe_frame_build(fr.f, sizeof(fr.f), &fr.a, &fr.h, payload, len, &fr.pkt);
	if (fr.len < 0) {
		fprintf(stderr, "pcap_gen: cannot build %s\n", roxe_opcode_name(op));
		exit(1);
	}
	return &fr;
}

static void gid_text(char *out, size_t len, const uint8_t gid[16])
{
	char ip[INET6_ADDRSTRLEN];

	if (roxe_gid_is_v4(gid)) {
		inet_ntop(AF_INET, gid + 12, ip, sizeof(ip));
		snprintf(out, len, "%s", ip);
	} else {
		inet_ntop(AF_INET6, gid, ip, sizeof(ip));
		snprintf(out, len, "[%s]", ip);
	}
}

/* "N SRC:SPORT -> DST OPCODE qp 0xQPN psn PSN len LEN " for what was built,
 * N the number the next record gets. */
static void expect_head(struct gen *g, const struct frame *fr)
{
	char src[64], dst[64];

	gid_text(src, sizeof(src), fr->a.sgid);
	gid_text(dst, sizeof(dst), fr->a.dgid);
	fprintf(g->expect, "%lu %s:%u -> %s %s qp 0x%06x psn %u len %u ", g->n + 1, src,
		fr->a.sport, dst, roxe_opcode_name(fr->h.opcode), fr->h.dqpn,
		fr->h.psn, fr->pkt.payload_len);
}

static void good(struct gen *g, const struct frame *fr, uint32_t caplen, uint32_t len)
{
	g->roce++;
	g->ok++;
	expect_head(g, fr);
	fprintf(g->expect, "icrc ok\n");
	record(g, fr->f, caplen, len);
}

static void skipped(struct gen *g, const uint8_t *f, uint32_t len)
{
	g->skipped++;
	record(g, f, len, len);
}

static void malformed(struct gen *g, const struct frame *fr, const char *verdict)
{
	g->roce++;
	g->malformed++;
	fprintf(g->expect, "%lu malformed %s (%d bytes)\n", g->n + 1, verdict, fr->len);
	record(g, fr->f, (uint32_t)fr->len, (uint32_t)fr->len);
}

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }

static void good_frames(struct gen *g)
{
	static const uint8_t zero16[16];
	static const uint8_t arp[42] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 1, 0x08, 0x06,
		0, 1, 0x08, 0x00, 6, 4, 0, 1, 0x02, 0, 0, 0, 0, 1, 10, 0, 0, 1,
		0, 0, 0, 0, 0, 0, 10, 0, 0, 2,
	};
	struct frame *fr;

	fr = build(g, false, false, ROXE_OP_RC_SEND_ONLY, 64);
	good(g, fr, fr->len, fr->len);
	fr = build(g, true, true, ROXE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 1000);
	good(g, fr, fr->len, fr->len);
	fr = build(g, false, true, ROXE_OP_UD_SEND_ONLY, 3);
	good(g, fr, fr->len, fr->len);
	skipped(g, arp, sizeof(arp));
	fr = build(g, true, false, ROXE_OP_RC_ACKNOWLEDGE, 0);
	good(g, fr, fr->len, fr->len);
	fr = build(g, false, false, ROXE_OP_CNP, 16);
	good(g, fr, fr->len, fr->len);
	/* a ConnectX-4 Lx's CNP (its ICRC from the NIC), and one as roxe's
	 * engine sends it (roxe_cnp_addr, roxe_cnp_hdr) */
	g->roce++;
	g->ok++;
	fprintf(g->expect, "%lu 10.0.17.1:0 -> 10.0.18.1 CNP qp 0x000118 psn 0 len 16 icrc ok\n",
		g->n + 1);
	record(g, connectx4_cnp, sizeof(connectx4_cnp), sizeof(connectx4_cnp));
	fr = build(g, true, true, ROXE_OP_CNP, 16);
	roxe_cnp_addr(&fr->a, &fr->a, ROXE_ECN_ECT0);
	roxe_cnp_hdr(&fr->h, fr->h.dqpn);
	fr->len = roxe_frame_build(fr->f, sizeof(fr->f), &fr->a, &fr->h, zero16, 16, &fr->pkt);
	good(g, fr, fr->len, fr->len);
	fr = build(g, false, false, ROXE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, 8192);
	good(g, fr, fr->len, fr->len);

	/* 58 bytes, padded to Ethernet's 60, and an FCS: 64 on the wire. */
	fr = build(g, false, false, ROXE_OP_RC_SEND_ONLY, 0);
	memset(fr->f + fr->len, 0, 60 - fr->len);
	memcpy(fr->f + 60, "\x12\x34\x56\x78", 4);
	good(g, fr, 64, 64);
	/* The snapshot length cut the FCS only. */
	fr = build(g, true, false, ROXE_OP_RC_COMPARE_SWAP, 0);
	good(g, fr, fr->len, fr->len + 4);
}

static void mixed_frames(struct gen *g)
{
	struct frame *fr;
	uint32_t want, got;
	uint8_t *icrc;

	good_frames(g);

	/* A payload byte changed after sealing: the ICRC no longer fits. */
	fr = build(g, false, false, ROXE_OP_RC_SEND_FIRST, 100);
	fr->f[fr->pkt.payload_off + 50] ^= 0x20;
	want = roxe_icrc_compute(fr->f, &fr->pkt);
	got = roxe_icrc_stored(fr->f, &fr->pkt);
	g->roce++;
	g->bad++;
	expect_head(g, fr);
	fprintf(g->expect, "icrc BAD (want 0x%08x got 0x%08x)\n", want, got);
	record(g, fr->f, fr->len, fr->len);

	/* The ICRC itself damaged: "want" is what was sealed. */
	fr = build(g, true, false, ROXE_OP_UC_SEND_ONLY, 7);
	want = roxe_icrc_stored(fr->f, &fr->pkt);
	icrc = fr->f + fr->len - 4;
	icrc[0] ^= 0xef, icrc[1] ^= 0xbe, icrc[2] ^= 0xad, icrc[3] ^= 0xde;
	g->roce++;
	g->bad++;
	expect_head(g, fr);
	fprintf(g->expect, "icrc BAD (want 0x%08x got 0x%08x)\n", want, want ^ 0xdeadbeef);
	record(g, fr->f, fr->len, fr->len);

	/* Cut by the snapshot length: 96 bytes captured. */
	fr = build(g, false, true, ROXE_OP_RC_RDMA_WRITE_FIRST, 1500);
	g->roce++;
	g->malformed++;
	expect_head(g, fr);
	fprintf(g->expect, "truncated (captured 96 of %d bytes)\n", fr->len);
	record(g, fr->f, 96, fr->len);

	/* IP length beyond the frame. */
	fr = build(g, false, false, ROXE_OP_RC_SEND_ONLY, 40);
	put16(fr->f + fr->pkt.l3_off + 2, (uint16_t)(fr->len - fr->pkt.l3_off + 100));
	malformed(g, fr, "bad_ip_len");

	/* UDP length short of the IP length. */
	fr = build(g, true, true, ROXE_OP_RC_SEND_ONLY, 40);
	put16(fr->f + fr->pkt.l4_off + 4, (uint16_t)(fr->len - fr->pkt.l4_off - 4));
	malformed(g, fr, "bad_udp_len");

	/* IBA 1.5: FLUSH (FETH + RETH, no payload) and ATOMIC WRITE (RETH,
	 * 8 bytes); an ATOMIC WRITE carrying 12 is malformed. */
	fr = build(g, true, false, ROXE_OP_RC_FLUSH, 0);
	good(g, fr, fr->len, fr->len);
	fr = build(g, false, true, ROXE_OP_RC_ATOMIC_WRITE, 8);
	good(g, fr, fr->len, fr->len);
	fr = build(g, false, false, ROXE_OP_RC_RDMA_WRITE_ONLY, 12);
	fr->f[fr->pkt.bth_off] = ROXE_OP_RC_ATOMIC_WRITE;
	malformed(g, fr, "bad_payload");

	/* Opcode 0x15 is reserved. */
	fr = build(g, false, false, ROXE_OP_RC_SEND_ONLY, 40);
	fr->f[fr->pkt.bth_off] = 0x15;
	malformed(g, fr, "bad_opcode");

	/* TCP and DNS to port 4791 are not RoCE v2. */
	fr = build(g, false, false, ROXE_OP_RC_SEND_ONLY, 40);
	fr->f[fr->pkt.l3_off + 9] = 6;
	skipped(g, fr->f, (uint32_t)fr->len);
	fr = build(g, true, false, ROXE_OP_RC_SEND_ONLY, 40);
	put16(fr->f + fr->pkt.l4_off + 2, 53);
	skipped(g, fr->f, (uint32_t)fr->len);

	/* A runt. */
	skipped(g, (const uint8_t *)"0123456789", 10);
}

int main(int argc, char **argv)
{
	struct gen g = { .rng = 0x4791 };
	const char *kind;
	pcap_t *p;

	if (argc != 4) {
		fprintf(stderr, "usage: pcap_gen good|mixed|sll|sll2|raw CAPTURE EXPECTED\n");
		return 2;
	}
	kind = argv[1];
	if (!strcmp(kind, "good") || !strcmp(kind, "mixed"))
		g.dlt = DLT_EN10MB;
	else if (!strcmp(kind, "sll"))
		g.dlt = DLT_LINUX_SLL;
	else if (!strcmp(kind, "sll2"))
		g.dlt = DLT_LINUX_SLL2;
	else if (!strcmp(kind, "raw"))
		g.dlt = DLT_RAW;
	else {
		fprintf(stderr, "pcap_gen: unknown kind %s\n", kind);
		return 2;
	}
	p = pcap_open_dead(g.dlt, SNAPLEN);
	g.d = p ? pcap_dump_open(p, argv[2]) : NULL;
	g.expect = fopen(argv[3], "w");
	if (!g.d || !g.expect) {
		fprintf(stderr, "pcap_gen: %s\n", p ? pcap_geterr(p) : "pcap_open_dead failed");
		return 1;
	}

	if (g.dlt == DLT_RAW) {
		struct frame *fr = build(&g, false, false, ROXE_OP_RC_SEND_ONLY, 4);
		struct pcap_pkthdr ph = { .caplen = (uint32_t)fr->len - 14,
					  .len = (uint32_t)fr->len - 14 };

		pcap_dump((u_char *)g.d, &ph, fr->f + 14);
	} else if (!strcmp(kind, "good")) {
		good_frames(&g);
	} else {
		mixed_frames(&g);
	}
	fprintf(g.expect, "%s: %lu frames, %lu roce, %lu icrc ok, %lu icrc bad, "
		"%lu malformed, %lu non-roce skipped\n", argv[2], g.n, g.roce,
		g.ok, g.bad, g.malformed, g.skipped);
	pcap_dump_close(g.d);
	pcap_close(p);
	return fclose(g.expect) ? 1 : 0;
}
